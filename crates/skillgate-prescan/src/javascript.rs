//! The JavaScript semantic pass: `require`/`import` aliases and destructuring, constant
//! folding (concatenation, templates, `String.fromCharCode`, `split/reverse/join`,
//! `atob`, `Buffer.from(.., 'base64'|'hex')`), identifier escapes, computed members,
//! indirect eval, `constructor.constructor`, `createRequire`, `module.constructor._load`.
use crate::decode;
use crate::facts::{Ctx, FILE_OPS, binary_parts, is_file_op, last_segment, walk};
use crate::grammar::{Kinds, field_ids};
use crate::value::{MAX_FOLD_DEPTH, Value};
use skillgate_core::Language;
use std::sync::LazyLock;
use tree_sitter::{Node, TreeCursor};

/// The JavaScript grammar's kind names, by kind id.
static KINDS: LazyLock<Kinds> = LazyLock::new(|| Kinds::load(Language::JavaScript));

field_ids!(struct Fields (Language::JavaScript) { alias, argument, arguments, body, constructor, function, index, key, left, name, object, operator, parameter, parameters, property, right, source, value });

/// The ids of the JavaScript fields this pass reads.
static FIELDS: LazyLock<Fields> = LazyLock::new(Fields::load);

/// Global names that matter to rules or to the folder.
fn is_global(id: &str) -> bool {
    matches!(
        id,
        "eval"
            | "Function"
            | "require"
            | "module"
            | "exports"
            | "process"
            | "globalThis"
            | "global"
            | "window"
            | "self"
            | "fetch"
            | "setTimeout"
            | "setInterval"
            | "setImmediate"
            | "XMLHttpRequest"
            | "WebSocket"
            | "EventSource"
            | "Reflect"
            | "Proxy"
            | "WebAssembly"
            | "Buffer"
            | "atob"
            | "btoa"
            | "String"
            | "Object"
            | "Array"
            | "JSON"
            | "Math"
            | "navigator"
            | "importScripts"
            | "Deno"
            | "Bun"
            | "queueMicrotask"
            | "Worker"
            | "SharedArrayBuffer"
            | "Atomics"
            | "decodeURIComponent"
            | "decodeURI"
            | "unescape"
            | "AsyncFunction"
            | "GeneratorFunction"
            | "ShadowRealm"
    )
}

/// Names of the global object.
const GLOBAL_OBJECTS: &[&str] = &["globalThis", "global", "window", "self"];

/// Extracts the facts of a JavaScript program.
/// Returns the first node nested deeper than `max_depth`, if any.
pub(crate) fn extract<'t>(
    root: Node<'t>,
    max_depth: usize,
    ctx: &mut Ctx<'_>,
) -> Result<(), Node<'t>> {
    let walked = walk(root, max_depth, |node, cursor, ancestors| {
        visit(node, cursor, ancestors, ctx)
    });
    ctx.settle_deferred();
    walked
}

fn ident(ctx: &Ctx<'_>, node: Node<'_>) -> String {
    decode::js_identifier(ctx.text(node))
}

/// The canonical form of a qualified name: `globalThis.eval` is `eval`,
/// `module.require` and `process.mainModule.require` are `require`, `node:fs` is `fs`.
fn canonical(q: String) -> String {
    for prefix in ["globalThis.", "global.", "window.", "self.", "node:"] {
        if let Some(rest) = q.strip_prefix(prefix) {
            return canonical(rest.to_string());
        }
    }
    match q.as_str() {
        "module.require" | "process.mainModule.require" | "require.main.require" => {
            "require".into()
        }
        _ => q,
    }
}

fn name(q: String) -> Value {
    Value::Name(canonical(q))
}

/// Extracts the facts of one node; returns whether its children need a visit.
fn visit(
    node: Node<'_>,
    cursor: &TreeCursor<'_>,
    ancestors: &[Node<'_>],
    ctx: &mut Ctx<'_>,
) -> bool {
    let parent = ancestors.last().copied();
    match KINDS.of(node) {
        // Nothing below a plain string, a regular expression or a comment (templates
        // hold expressions).
        "string" | "regex" | "comment" => return false,
        "import_statement" => import_statement(node, ctx),
        "export_statement" => {
            if let Some(src) = node.child_by_field_id(FIELDS.source)
                && let Value::Str(m) = fold(ctx, src, 0)
            {
                ctx.import(&module_name(&m), src);
            }
        }
        "variable_declarator" => {
            if let (Some(n), Some(v)) = (
                node.child_by_field_id(FIELDS.name),
                node.child_by_field_id(FIELDS.value),
            ) {
                let val = fold(ctx, v, 0);
                bind_pattern(ctx, n, val);
            }
        }
        "assignment_expression" => assignment(node, ctx),
        "function_declaration" | "class_declaration" | "generator_function_declaration" => {
            if parent.is_some_and(|p| KINDS.of(p) == "program")
                && let Some(n) = node.child_by_field_id(FIELDS.name)
            {
                let key = ident(ctx, n);
                ctx.bindings.insert(key, Value::Unknown);
            }
        }
        "call_expression" => call(node, parent, ctx),
        // `{...process}` copies every member: a computed member of each.
        "spread_element" if parent.is_some_and(|p| KINDS.of(p) == "object") => {
            if let Some(Value::Name(q)) = node.named_child(0).map(|e| fold(ctx, e, 0)) {
                computed_member(ctx, &q, node);
            }
        }
        // `with (o) { kill(1) }`: every name in the body may be a member of `o`.
        "with_statement" => {
            ctx.emit("with-statement", node);
            if let Some(Value::Name(q)) = node
                .child_by_field_id(FIELDS.object)
                .map(|o| fold(ctx, o, 0))
            {
                computed_member(ctx, &q, node);
            }
        }
        "unary_expression" => {
            if let Some(a) = node.child_by_field_id(FIELDS.argument)
                && is_empty_coercible(a)
                && matches!(
                    node.child_by_field_id(FIELDS.operator).map(|o| ctx.text(o)),
                    Some("!" | "+" | "-" | "~")
                )
            {
                ctx.emit("coerce-literal", node);
            }
        }
        "new_expression" => {
            if let Some(c) = node.child_by_field_id(FIELDS.constructor) {
                match fold(ctx, c, 0) {
                    Value::Name(q) => {
                        if matches!(q.as_str(), "Worker" | "worker_threads.Worker")
                            && !plain_worker(ctx, node)
                        {
                            ctx.emit("worker-eval", node);
                        }
                        ctx.emit(format!("call:{q}"), node)
                    }
                    _ => {
                        if let Some(m) = member_name(ctx, c) {
                            ctx.emit(format!("call-member:{m}"), node);
                        }
                    }
                }
            }
        }
        "member_expression" => {
            if let Some(p) = node.child_by_field_id(FIELDS.property) {
                let prop = ident(ctx, p);
                if prop == "constructor"
                    && let Some(o) = node.child_by_field_id(FIELDS.object)
                    && member_name(ctx, o).as_deref() == Some("constructor")
                {
                    ctx.emit("constructor-chain", node);
                }
                ctx.emit(format!("attr:{prop}"), p);
            }
            emit_ref(ctx, node, parent);
        }
        "subscript_expression" => {
            if let (Some(o), Some(i)) = (
                node.child_by_field_id(FIELDS.object),
                node.child_by_field_id(FIELDS.index),
            ) {
                match fold(ctx, i, 0) {
                    Value::Str(k) => {
                        if k == "constructor"
                            && member_name(ctx, o).as_deref() == Some("constructor")
                        {
                            ctx.emit("constructor-chain", node);
                        }
                        ctx.emit(format!("attr:{k}"), i);
                    }
                    Value::Int(_) => {}
                    _ => {
                        if let Value::Name(q) = fold(ctx, o, 0) {
                            computed_member(ctx, &q, node);
                        }
                    }
                }
            }
            emit_ref(ctx, node, parent);
        }
        "identifier" | "shorthand_property_identifier"
            if is_reference(parent, cursor.field_name()) =>
        {
            emit_ref(ctx, node, parent)
        }
        _ => {}
    }
    true
}

/// An array or object literal (possibly in parentheses): `![]`, `+{}` coerce them, the
/// building blocks of JSFuck-style encodings.
fn is_empty_coercible(node: Node<'_>) -> bool {
    match KINDS.of(node) {
        "array" | "object" => true,
        "parenthesized_expression" => node.named_child(0).is_some_and(is_empty_coercible),
        _ => false,
    }
}

/// Whether `new Worker(...)` runs a file named by a constant path with literal options
/// that do not mention `eval` (anything else may run a string: `{ eval: true }`, options
/// built elsewhere, a computed script or a `data:` URL).
fn plain_worker(ctx: &Ctx<'_>, node: Node<'_>) -> bool {
    let Some(args) = node.child_by_field_id(FIELDS.arguments) else {
        return false;
    };
    let mut c = args.walk();
    let list: Vec<Node<'_>> = args
        .named_children(&mut c)
        .filter(|n| KINDS.of(*n) != "comment")
        .collect();
    let script_ok = list.first().is_some_and(|s| {
        matches!(fold(ctx, *s, 0), Value::Str(p) if !p.trim_start().to_ascii_lowercase().starts_with("data:"))
    });
    let options_ok = match list.get(1) {
        None => true,
        Some(o) if KINDS.of(*o) == "object" => {
            let mut c = o.walk();
            o.named_children(&mut c).all(|p| {
                KINDS.of(p) == "comment"
                    || KINDS.of(p) == "pair"
                        && p.child_by_field_id(FIELDS.key).is_some_and(|k| {
                            let key = match KINDS.of(k) {
                                "property_identifier" => Some(ident(ctx, k)),
                                _ => fold(ctx, k, 0).as_str().map(str::to_string),
                            };
                            key.is_some_and(|k| k != "eval")
                        })
            })
        }
        Some(_) => false,
    };
    script_ok && options_ok && list.len() <= 2
}

/// The property name of a member or constant-subscript expression.
fn member_name(ctx: &Ctx<'_>, node: Node<'_>) -> Option<String> {
    match KINDS.of(node) {
        "member_expression" => node
            .child_by_field_id(FIELDS.property)
            .map(|p| ident(ctx, p)),
        "subscript_expression" => node
            .child_by_field_id(FIELDS.index)
            .and_then(|i| fold(ctx, i, 0).as_str().map(str::to_string)),
        "parenthesized_expression" => node.named_child(0).and_then(|c| member_name(ctx, c)),
        _ => None,
    }
}

/// A member of `q` looked up by a key the fold cannot name (`o[k]`, or every member at
/// once: `Object.entries(o)`): `computed-member:q`, and `module-member:q` when `q` is a
/// module the file loads (`fs[k]`, `Object.values(require('fs'))`).
fn computed_member(ctx: &mut Ctx<'_>, q: &str, node: Node<'_>) {
    ctx.emit(format!("computed-member:{q}"), node);
    let root = q.split('.').next().unwrap_or(q);
    ctx.emit_if_imported(root, format!("module-member:{q}"), node);
}

/// Whether a reference is used as a value: anything but the callee of a call or of `new`,
/// or the object of a member (`fs.readFileSync` in `[fs.readFileSync]`, `f(fs.readFileSync)`,
/// `{ r: fs.readFileSync }`), except a member that rebinds it (`.bind`).
fn used_as_value(ctx: &Ctx<'_>, node: Node<'_>, parent: Option<Node<'_>>) -> bool {
    let Some(p) = parent else { return false };
    match KINDS.of(p) {
        "call_expression" => p.child_by_field_id(FIELDS.function) != Some(node),
        "new_expression" => p.child_by_field_id(FIELDS.constructor) != Some(node),
        "member_expression" | "subscript_expression" => {
            p.child_by_field_id(FIELDS.object) != Some(node)
                || member_name(ctx, p)
                    .is_some_and(|m| matches!(m.as_str(), "bind" | "call" | "apply"))
        }
        _ => true,
    }
}

fn emit_ref(ctx: &mut Ctx<'_>, node: Node<'_>, parent: Option<Node<'_>>) {
    if let Value::Name(q) = fold(ctx, node, 0) {
        if is_file_op(&q) && used_as_value(ctx, node, parent) {
            ctx.reader_as_value();
        }
        if q == "process.env"
            && !parent.is_some_and(|p| {
                matches!(KINDS.of(p), "member_expression" | "subscript_expression")
                    && p.child_by_field_id(FIELDS.object) == Some(node)
            })
        {
            ctx.emit("env-dump", node);
        }
        ctx.emit(format!("ref:{q}"), node);
    }
}

/// The callee and arguments of a call, seeing through `f.call(this, ..)`,
/// `f.apply(this, [..])` and `Reflect.apply(f, this, [..])`.
fn effective_call(
    ctx: &Ctx<'_>,
    func: Node<'_>,
    args: Vec<Value>,
    d: usize,
) -> (Value, Vec<Value>) {
    let callee = fold(ctx, func, d);
    if callee.as_name() == Some("Reflect.apply") {
        let rest = match args.get(2) {
            Some(Value::List(items)) => items.clone(),
            _ => Vec::new(),
        };
        return (args.first().cloned().unwrap_or_default(), rest);
    }
    if KINDS.of(func) == "member_expression"
        && let (Some(o), Some(p)) = (
            func.child_by_field_id(FIELDS.object),
            func.child_by_field_id(FIELDS.property),
        )
        && let Value::Name(q) = fold(ctx, o, d)
    {
        match ctx.text(p) {
            "call" => return (Value::Name(q), args.into_iter().skip(1).collect()),
            "apply" => {
                let rest = match args.get(1) {
                    Some(Value::List(items)) => items.clone(),
                    _ => Vec::new(),
                };
                return (Value::Name(q), rest);
            }
            _ => {}
        }
    }
    (callee, args)
}

/// Whether a name loads a module from its first argument.
fn is_loader(q: &str) -> bool {
    matches!(q, "require" | "process.getBuiltinModule")
}

fn is_reference(parent: Option<Node<'_>>, field: Option<&'static str>) -> bool {
    if matches!(
        field,
        Some("name" | "label" | "alias" | "key" | "parameter" | "left" | "property")
    ) {
        return false;
    }
    !parent.is_some_and(|p| {
        matches!(
            KINDS.of(p),
            "formal_parameters"
                | "import_specifier"
                | "namespace_import"
                | "import_clause"
                | "export_specifier"
                | "object_pattern"
                | "array_pattern"
                | "rest_pattern"
                | "catch_clause"
                | "labeled_statement"
                | "break_statement"
                | "continue_statement"
        )
    })
}

fn module_name(m: &str) -> String {
    m.strip_prefix("node:").unwrap_or(m).to_string()
}

fn import_statement(node: Node<'_>, ctx: &mut Ctx<'_>) {
    let Some(src) = node.child_by_field_id(FIELDS.source) else {
        return;
    };
    let Value::Str(m) = fold(ctx, src, 0) else {
        return;
    };
    let m = module_name(&m);
    ctx.import(&m, src);
    let mut c = node.walk();
    let clauses: Vec<Node<'_>> = node
        .named_children(&mut c)
        .filter(|n| KINDS.of(*n) == "import_clause")
        .collect();
    for clause in clauses {
        let mut c = clause.walk();
        let parts: Vec<Node<'_>> = clause.named_children(&mut c).collect();
        for part in parts {
            match KINDS.of(part) {
                "identifier" => {
                    let k = ident(ctx, part);
                    ctx.bindings.insert(k, name(m.clone()));
                }
                "namespace_import" => {
                    if let Some(id) = part.named_child(0) {
                        let k = ident(ctx, id);
                        ctx.bindings.insert(k, name(m.clone()));
                    }
                }
                "named_imports" => {
                    let mut c = part.walk();
                    let specs: Vec<Node<'_>> = part
                        .named_children(&mut c)
                        .filter(|s| KINDS.of(*s) == "import_specifier")
                        .collect();
                    for spec in specs {
                        let Some(n) = spec.child_by_field_id(FIELDS.name) else {
                            continue;
                        };
                        let member = match fold(ctx, n, 0) {
                            Value::Str(s) => s,
                            _ => ident(ctx, n),
                        };
                        let local = spec
                            .child_by_field_id(FIELDS.alias)
                            .map_or_else(|| member.clone(), |a| ident(ctx, a));
                        let full = canonical(if member == "default" {
                            m.clone()
                        } else {
                            format!("{m}.{member}")
                        });
                        ctx.emit(format!("ref:{full}"), spec);
                        ctx.bindings.insert(local, Value::Name(full));
                    }
                }
                _ => {}
            }
        }
    }
}

/// Binds an identifier or destructuring pattern to a value.
fn bind_pattern(ctx: &mut Ctx<'_>, pattern: Node<'_>, v: Value) {
    match KINDS.of(pattern) {
        "identifier" if v != Value::Unknown => {
            let k = ident(ctx, pattern);
            ctx.bindings.insert(k, v);
        }
        "object_pattern" => {
            let Value::Name(q) = v else { return };
            let mut c = pattern.walk();
            let props: Vec<Node<'_>> = pattern.named_children(&mut c).collect();
            for p in props {
                match KINDS.of(p) {
                    "shorthand_property_identifier_pattern" => {
                        let k = ident(ctx, p);
                        let full = canonical(format!("{q}.{k}"));
                        ctx.emit(format!("ref:{full}"), p);
                        ctx.bindings.insert(k, Value::Name(full));
                    }
                    "object_assignment_pattern" => {
                        if let Some(l) = p.child_by_field_id(FIELDS.left)
                            && KINDS.of(l) == "shorthand_property_identifier_pattern"
                        {
                            let k = ident(ctx, l);
                            let full = canonical(format!("{q}.{k}"));
                            ctx.emit(format!("ref:{full}"), l);
                            ctx.bindings.insert(k, Value::Name(full));
                        }
                    }
                    "pair_pattern" => {
                        let (Some(k), Some(val)) = (
                            p.child_by_field_id(FIELDS.key),
                            p.child_by_field_id(FIELDS.value),
                        ) else {
                            continue;
                        };
                        let key = match KINDS.of(k) {
                            "property_identifier" => Some(ident(ctx, k)),
                            "computed_property_name" => k
                                .named_child(0)
                                .and_then(|e| fold(ctx, e, 0).as_str().map(str::to_string)),
                            _ => fold(ctx, k, 0).as_str().map(str::to_string),
                        };
                        if let Some(key) = key {
                            let full = canonical(format!("{q}.{key}"));
                            ctx.emit(format!("ref:{full}"), p);
                            bind_pattern(ctx, val, Value::Name(full));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn assignment(node: Node<'_>, ctx: &mut Ctx<'_>) {
    let (Some(left), Some(right)) = (
        node.child_by_field_id(FIELDS.left),
        node.child_by_field_id(FIELDS.right),
    ) else {
        return;
    };
    match KINDS.of(left) {
        "identifier" => {
            let v = fold(ctx, right, 0);
            bind_pattern(ctx, left, v);
        }
        "member_expression" | "subscript_expression" => {
            if let Some(o) = left.child_by_field_id(FIELDS.object)
                && KINDS.of(o) == "identifier"
                && GLOBAL_OBJECTS.contains(&ident(ctx, o).as_str())
                && ctx.lookup(&ident(ctx, o)).is_none()
            {
                let prop = member_name(ctx, left).unwrap_or_else(|| "?".into());
                ctx.emit(format!("assign-global:{prop}"), left);
            }
            if let Value::Name(q) = fold(ctx, left, 0) {
                ctx.emit(format!("assign:{q}"), left);
            }
        }
        "parenthesized_expression" | "object_pattern" => {
            let v = fold(ctx, right, 0);
            bind_pattern(ctx, left, v);
        }
        _ => {}
    }
}

fn arguments(ctx: &Ctx<'_>, node: Node<'_>, depth: usize) -> Vec<Value> {
    let Some(args) = node.child_by_field_id(FIELDS.arguments) else {
        return Vec::new();
    };
    if KINDS.of(args) == "template_string" {
        return vec![fold(ctx, args, depth + 1)];
    }
    let mut out = Vec::new();
    let mut c = args.walk();
    for a in args.named_children(&mut c) {
        match KINDS.of(a) {
            "comment" => {}
            "spread_element" => match a.named_child(0).map(|e| fold(ctx, e, depth + 1)) {
                Some(Value::List(items)) => out.extend(items),
                _ => out.push(Value::Unknown),
            },
            _ => out.push(fold(ctx, a, depth + 1)),
        }
    }
    out
}

fn call(node: Node<'_>, parent: Option<Node<'_>>, ctx: &mut Ctx<'_>) {
    let Some(func) = node.child_by_field_id(FIELDS.function) else {
        return;
    };
    let args = arguments(ctx, node, 0);
    let first_str = args.first().and_then(Value::as_str).map(str::to_string);
    if KINDS.of(func) == "import" {
        ctx.emit("dynamic-import", node);
        match &first_str {
            Some(m) => ctx.import(&module_name(m), node),
            None => ctx.emit("dynamic-import-unresolved", node),
        }
        return;
    }
    let (callee, args) = effective_call(ctx, func, args, 0);
    let first_str = args.first().and_then(Value::as_str).map(str::to_string);
    // A callee the fold cannot name (a parameter, `o[k]`, `f.bind(null)`): its constant
    // first argument is a `path:` fact if a file operation is used as a value in the file.
    if !matches!(callee, Value::Name(_)) {
        match args.first() {
            Some(Value::Str(p)) => ctx.opaque_path(p, node),
            // `Reflect.apply.bind(null, fs.readFileSync, fs)(['/etc/shadow'])`
            Some(Value::List(items)) => {
                for p in items.iter().filter_map(Value::as_str) {
                    ctx.opaque_path(p, node);
                }
            }
            _ => {}
        }
    }
    match &callee {
        Value::Name(q) => {
            ctx.emit(format!("call:{q}"), node);
            match q.as_str() {
                // Every member at once, or one by a computed key: `Object.entries(process)`,
                // `Object.getOwnPropertyDescriptor(fs, k)`, `Object.assign({}, process)`.
                "Object.entries" | "Object.values" | "Object.getOwnPropertyDescriptors" => {
                    if let Some(Value::Name(o)) = args.first() {
                        computed_member(ctx, o, node);
                    }
                }
                "Object.getOwnPropertyDescriptor" | "Reflect.getOwnPropertyDescriptor"
                    if !matches!(args.get(1), Some(Value::Str(_))) =>
                {
                    if let Some(Value::Name(o)) = args.first() {
                        computed_member(ctx, o, node);
                    }
                }
                "Object.assign" => {
                    for o in args.iter().skip(1).filter_map(Value::as_name) {
                        computed_member(ctx, o, node);
                    }
                }
                q if is_loader(q) => match &first_str {
                    Some(m) => ctx.import(&module_name(m), node),
                    None => ctx.emit("dynamic-import-unresolved", node),
                },
                "setTimeout" | "setInterval" | "setImmediate" | "queueMicrotask"
                    if matches!(args.first(), Some(Value::Str(_))) =>
                {
                    ctx.emit("string-timer", node)
                }
                // A function's `constructor` reached through its property descriptor.
                "Object.getOwnPropertyDescriptor"
                | "Reflect.getOwnPropertyDescriptor"
                | "Reflect.get"
                    if args.get(1).and_then(Value::as_str) == Some("constructor") =>
                {
                    ctx.emit("constructor-chain", node)
                }
                _ => {}
            }
        }
        _ => {
            if let Some(m) = member_name(ctx, func) {
                ctx.emit(format!("call-member:{m}"), node);
            }
        }
    }
    if let Value::Name(q) = fold(ctx, node, 0) {
        // `[Reflect.get(fs, 'readFileSync')]`: a file operation the call returns, as a value.
        if is_file_op(&q) && used_as_value(ctx, node, parent) {
            ctx.reader_as_value();
        }
        ctx.emit(format!("ref:{q}"), node);
    }
    let op = match &callee {
        Value::Name(q) => Some(last_segment(q).to_string()),
        _ => member_name(ctx, func),
    };
    if let Some(op) = op
        && FILE_OPS.contains(&op.as_str())
        && let Some(p) = first_str
    {
        ctx.emit(format!("path:{p}"), node);
    }
}

/// Folds an expression to a [`Value`].
pub(crate) fn fold(ctx: &Ctx<'_>, node: Node<'_>, depth: usize) -> Value {
    if depth > MAX_FOLD_DEPTH || !ctx.step() {
        return Value::Unknown;
    }
    let d = depth + 1;
    match KINDS.of(node) {
        "identifier" | "shorthand_property_identifier" => lookup(ctx, &ident(ctx, node)),
        "member_expression" => {
            let (Some(o), Some(p)) = (
                node.child_by_field_id(FIELDS.object),
                node.child_by_field_id(FIELDS.property),
            ) else {
                return Value::Unknown;
            };
            let prop = ident(ctx, p);
            if prop == "constructor" && is_function_value(ctx, o) {
                return Value::Name("Function".into());
            }
            if matches!(prop.as_str(), "value" | "get")
                && let Some(q) = descriptor_of(ctx, o, d)
            {
                return name(q);
            }
            match fold(ctx, o, d) {
                Value::Name(q)
                    if q == "process.env" && matches!(prop.as_str(), "HOME" | "USERPROFILE") =>
                {
                    Value::Str("~".into())
                }
                Value::Name(q) => name(format!("{q}.{prop}")),
                _ => Value::Unknown,
            }
        }
        "subscript_expression" => {
            let (Some(o), Some(i)) = (
                node.child_by_field_id(FIELDS.object),
                node.child_by_field_id(FIELDS.index),
            ) else {
                return Value::Unknown;
            };
            match (fold(ctx, o, d), fold(ctx, i, d)) {
                (_, Value::Str(k)) if k == "constructor" && is_function_value(ctx, o) => {
                    Value::Name("Function".into())
                }
                (Value::Name(q), Value::Str(k)) => name(format!("{q}.{k}")),
                (Value::List(items), Value::Int(i)) => usize::try_from(i)
                    .ok()
                    .and_then(|i| items.get(i).cloned())
                    .unwrap_or_default(),
                (Value::Str(s), Value::Int(i)) => usize::try_from(i)
                    .ok()
                    .and_then(|i| s.chars().nth(i))
                    .map_or(Value::Unknown, |c| Value::Str(c.into())),
                _ => Value::Unknown,
            }
        }
        "string" => {
            let t = ctx.text(node);
            let body = t.get(1..t.len().saturating_sub(1)).unwrap_or_default();
            Value::string(decode::unescape(body, false))
        }
        "template_string" => {
            let mut out = String::new();
            let mut c = node.walk();
            for part in node.named_children(&mut c) {
                match KINDS.of(part) {
                    "template_substitution" => match part.named_child(0).map(|e| fold(ctx, e, d)) {
                        Some(Value::Str(s)) => out.push_str(&s),
                        Some(Value::Int(i)) => out.push_str(&i.to_string()),
                        _ => return Value::Unknown,
                    },
                    _ => out.push_str(&decode::unescape(ctx.text(part), false)),
                }
            }
            Value::string(out)
        }
        "number" => crate::value::parse_int(ctx.text(node)).map_or(Value::Unknown, Value::Int),
        "unary_expression" => match (
            ctx.text(node).starts_with('-'),
            node.child_by_field_id(FIELDS.argument)
                .map(|a| fold(ctx, a, d)),
        ) {
            (true, Some(Value::Int(i))) => Value::Int(i.saturating_neg()),
            _ => Value::Unknown,
        },
        "parenthesized_expression" | "await_expression" => node
            .named_child(0)
            .map_or(Value::Unknown, |c| fold(ctx, c, d)),
        "sequence_expression" => {
            let n = node.named_child_count();
            node.named_child(n.saturating_sub(1))
                .map_or(Value::Unknown, |c| fold(ctx, c, d))
        }
        "array" => {
            let mut c = node.walk();
            let items: Vec<Value> = node
                .named_children(&mut c)
                .filter(|n| KINDS.of(*n) != "comment")
                .map(|n| fold(ctx, n, d))
                .collect();
            Value::List(items)
        }
        "binary_expression" => binary(ctx, node, d),
        "call_expression" => fold_call(ctx, node, d),
        _ => Value::Unknown,
    }
}

fn lookup(ctx: &Ctx<'_>, id: &str) -> Value {
    if let Some(v) = ctx.lookup(id) {
        return v;
    }
    if is_global(id) {
        return name(id.to_string());
    }
    Value::Unknown
}

fn binary(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let Some((l, op, r)) = binary_parts(node) else {
        return Value::Unknown;
    };
    let (a, b) = (fold(ctx, l, d), fold(ctx, r, d));
    if let Some(v) = Value::int_op(ctx.text(op), &a, &b) {
        return v;
    }
    match (ctx.text(op), a.text(), b.text()) {
        ("+", Some(x), Some(y)) => Value::string(x + &y),
        _ => Value::Unknown,
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let h = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Applies a one-parameter arrow function or a known function to each item.
fn map_items(ctx: &Ctx<'_>, f: Node<'_>, items: Vec<Value>, d: usize) -> Value {
    if items.len() > 4096 {
        return Value::Unknown;
    }
    if let Value::Name(q) = fold(ctx, f, d) {
        return match q.as_str() {
            "String.fromCharCode" => from_char_codes(&utf16_units(&items)),
            "String.fromCodePoint" => from_char_codes(&items),
            "String" => Value::List(
                items
                    .iter()
                    .map(|v| v.text().map_or(Value::Unknown, Value::Str))
                    .collect(),
            ),
            _ => Value::Unknown,
        };
    }
    if KINDS.of(f) != "arrow_function" {
        return Value::Unknown;
    }
    let param = f.child_by_field_id(FIELDS.parameter).or_else(|| {
        f.child_by_field_id(FIELDS.parameters)
            .filter(|p| p.named_child_count() == 1)
            .and_then(|p| p.named_child(0))
    });
    let (Some(param), Some(body)) = (param, f.child_by_field_id(FIELDS.body)) else {
        return Value::Unknown;
    };
    if KINDS.of(param) != "identifier" {
        return Value::Unknown;
    }
    let var = ident(ctx, param);
    Value::List(ctx.with_each(&var, items, || fold(ctx, body, d)))
}

/// Character codes as `String.fromCharCode` reads them: each taken modulo 2^16 (a UTF-16
/// code unit); surrogates are left as they are (and then fail to fold).
fn utf16_units(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .map(|v| match v {
            Value::Int(n) => Value::Int(n.rem_euclid(0x1_0000)),
            v => v.clone(),
        })
        .collect()
}

/// Whether JavaScript's `trim` removes `c`: white space, line terminators and the BOM.
fn js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

fn from_char_codes(items: &[Value]) -> Value {
    let mut out = String::new();
    for v in items {
        match v {
            Value::Int(n) => match decode::chr(*n) {
                Some(c) => out.push(c),
                None => return Value::Unknown,
            },
            _ => return Value::Unknown,
        }
    }
    Value::string(out)
}

fn fold_call(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let Some(func) = node.child_by_field_id(FIELDS.function) else {
        return Value::Unknown;
    };
    let args = arguments(ctx, node, d);
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    if KINDS.of(func) == "import" {
        return match arg(0) {
            Value::Str(m) => Value::Name(module_name(&m)),
            _ => Value::Unknown,
        };
    }
    if KINDS.of(func) == "member_expression"
        && let (Some(o), Some(p)) = (
            func.child_by_field_id(FIELDS.object),
            func.child_by_field_id(FIELDS.property),
        )
    {
        let method = ident(ctx, p);
        match fold(ctx, o, d) {
            Value::Str(s) => {
                return match method.as_str() {
                    // A limit, a form or an encoding the folder ignored would give a
                    // wrong constant: such calls do not fold.
                    "split" if args.len() <= 1 => match arg(0) {
                        Value::Str(sep) if sep.is_empty() => {
                            Value::List(s.chars().map(|c| Value::Str(c.into())).collect())
                        }
                        Value::Str(sep) => Value::List(
                            s.split(sep.as_str())
                                .map(|x| Value::Str(x.into()))
                                .collect(),
                        ),
                        _ => Value::Unknown,
                    },
                    "replace" | "replaceAll" => match (arg(0), arg(1)) {
                        (Value::Str(a), Value::Str(b)) if !a.is_empty() => {
                            if method == "replace" {
                                Value::string(s.replacen(&a, &b, 1))
                            } else {
                                Value::string(s.replace(&a, &b))
                            }
                        }
                        _ => Value::Unknown,
                    },
                    "concat" => {
                        let rest: Option<Vec<String>> = args.iter().map(Value::text).collect();
                        rest.map_or(Value::Unknown, |r| Value::string(s.clone() + &r.concat()))
                    }
                    "toLowerCase" => Value::Str(s.to_lowercase()),
                    "toUpperCase" => Value::Str(s.to_uppercase()),
                    "trim" => Value::Str(s.trim_matches(js_space).into()),
                    "trimStart" => Value::Str(s.trim_start_matches(js_space).into()),
                    "trimEnd" => Value::Str(s.trim_end_matches(js_space).into()),
                    "toString" | "valueOf" if args.is_empty() => Value::Str(s),
                    // A Buffer's `toString(enc)`: only UTF-8 reads back what was folded.
                    "toString" => match arg(0) {
                        Value::Str(e)
                            if matches!(e.to_ascii_lowercase().as_str(), "utf8" | "utf-8") =>
                        {
                            Value::Str(s)
                        }
                        _ => Value::Unknown,
                    },
                    "normalize" => {
                        use unicode_normalization::UnicodeNormalization;
                        match arg(0) {
                            Value::Unknown if args.is_empty() => Value::Str(s.nfc().collect()),
                            Value::Str(f) if f == "NFC" => Value::Str(s.nfc().collect()),
                            Value::Str(f) if f == "NFD" => Value::Str(s.nfd().collect()),
                            Value::Str(f) if f == "NFKC" => Value::Str(s.nfkc().collect()),
                            Value::Str(f) if f == "NFKD" => Value::Str(s.nfkd().collect()),
                            _ => Value::Unknown,
                        }
                    }
                    "slice" | "substring" => {
                        let a = match arg(0) {
                            Value::Int(i) => Some(i),
                            _ => None,
                        };
                        let b = match arg(1) {
                            Value::Int(i) => Some(i),
                            _ => None,
                        };
                        decode::slice(&s, a, b, None).map_or(Value::Unknown, Value::Str)
                    }
                    "charAt" | "at" => match arg(0) {
                        Value::Int(i) => decode::slice(
                            &s,
                            Some(i),
                            Some(if i == -1 { i64::MAX } else { i + 1 }),
                            None,
                        )
                        .map_or(Value::Unknown, Value::Str),
                        _ => Value::Unknown,
                    },
                    "repeat" => match arg(0) {
                        Value::Int(n)
                            if n >= 0
                                && s.len().saturating_mul(n as usize)
                                    <= crate::value::MAX_FOLDED_LEN =>
                        {
                            Value::Str(s.repeat(n as usize))
                        }
                        _ => Value::Unknown,
                    },
                    _ => Value::Unknown,
                };
            }
            Value::List(mut items) => {
                return match method.as_str() {
                    "reverse" => {
                        items.reverse();
                        Value::List(items)
                    }
                    "join" => {
                        let sep = match arg(0) {
                            Value::Str(s) => s,
                            Value::Unknown if args.is_empty() => ",".into(),
                            _ => return Value::Unknown,
                        };
                        let parts: Option<Vec<String>> = items.iter().map(Value::text).collect();
                        parts.map_or(Value::Unknown, |p| Value::string(p.join(&sep)))
                    }
                    "concat" => {
                        for a in args {
                            match a {
                                Value::List(more) => items.extend(more),
                                v => items.push(v),
                            }
                        }
                        Value::List(items)
                    }
                    "map" => {
                        let Some(f) = node
                            .child_by_field_id(FIELDS.arguments)
                            .and_then(|a| a.named_child(0))
                        else {
                            return Value::Unknown;
                        };
                        map_items(ctx, f, items, d)
                    }
                    _ => Value::Unknown,
                };
            }
            _ => {}
        }
    }
    let (callee, args) = effective_call(ctx, func, args, d);
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let Value::Name(q) = callee else {
        return Value::Unknown;
    };
    match q.as_str() {
        q if is_loader(q) => match arg(0) {
            Value::Str(m) => Value::Name(module_name(&m)),
            _ => Value::Unknown,
        },
        "os.homedir" => Value::Str("~".into()),
        "path.join" | "path.resolve" | "path.posix.join" | "path.posix.resolve" => {
            Value::join_path(&args)
        }
        "module.createRequire" | "module.Module.createRequire" | "createRequire" => {
            Value::Name("require".into())
        }
        "String.fromCharCode" => from_char_codes(&utf16_units(&args)),
        "String.fromCodePoint" => from_char_codes(&args),
        "String" => match arg(0) {
            v @ Value::Str(_) => v,
            Value::Int(i) => Value::Str(i.to_string()),
            _ => Value::Unknown,
        },
        "atob" => arg(0)
            .as_str()
            .and_then(decode::base64)
            .map_or(Value::Unknown, Value::string),
        "Buffer.from" => match (arg(0), arg(1)) {
            (Value::Str(s), Value::Str(enc)) => match enc.to_ascii_lowercase().as_str() {
                "base64" | "base64url" => decode::base64(&s).map_or(Value::Unknown, Value::string),
                "hex" => decode::hex(&s).map_or(Value::Unknown, Value::string),
                "utf8" | "utf-8" => Value::Str(s),
                "latin1" | "binary" | "ascii" if s.is_ascii() => Value::Str(s),
                // utf16le, ucs2 and the rest give other bytes.
                _ => Value::Unknown,
            },
            (Value::Str(s), Value::Unknown) => Value::Str(s),
            (Value::List(items), _) => {
                Value::bytes_to_string(&items).map_or(Value::Unknown, Value::string)
            }
            _ => Value::Unknown,
        },
        "decodeURIComponent" | "decodeURI" | "unescape" => arg(0)
            .as_str()
            .and_then(percent_decode)
            .map_or(Value::Unknown, Value::string),
        // An object whose prototype is `o` has `o`'s members: `Object.create(process).kill`.
        "Object.create" => match arg(0) {
            Value::Name(o) => Value::Name(o),
            _ => Value::Unknown,
        },
        "Reflect.get" => match (arg(0), arg(1)) {
            (Value::Name(o), Value::Str(k)) => name(format!("{o}.{k}")),
            _ => Value::Unknown,
        },
        _ => Value::Unknown,
    }
}

/// The property a property descriptor describes, whose `.value` (or getter) is that
/// property: `Object.getOwnPropertyDescriptor(o, 'k')` (or `Reflect`'s), and
/// `Object.getOwnPropertyDescriptors(o).k` (or `['k']`), are `o.k`.
fn descriptor_of(ctx: &Ctx<'_>, node: Node<'_>, depth: usize) -> Option<String> {
    let callee_is = |call: Node<'_>, names: &[&str]| {
        KINDS.of(call) == "call_expression"
            && call.child_by_field_id(FIELDS.function).is_some_and(
                |f| matches!(fold(ctx, f, depth), Value::Name(q) if names.contains(&q.as_str())),
            )
    };
    match KINDS.of(node) {
        "parenthesized_expression" => descriptor_of(ctx, node.named_child(0)?, depth),
        "call_expression"
            if callee_is(
                node,
                &[
                    "Object.getOwnPropertyDescriptor",
                    "Reflect.getOwnPropertyDescriptor",
                ],
            ) =>
        {
            match arguments(ctx, node, depth).as_slice() {
                [Value::Name(o), Value::Str(k), ..] => Some(format!("{o}.{k}")),
                _ => None,
            }
        }
        "member_expression" | "subscript_expression" => {
            let call = node.child_by_field_id(FIELDS.object)?;
            if !callee_is(call, &["Object.getOwnPropertyDescriptors"]) {
                return None;
            }
            let key = member_name(ctx, node)?;
            match arguments(ctx, call, depth).first() {
                Some(Value::Name(o)) => Some(format!("{o}.{key}")),
                _ => None,
            }
        }
        _ => None,
    }
}

/// An expression known to be a function, so that its `constructor` is `Function`: a
/// function or class literal; `Object.getPrototypeOf`/`Reflect.getPrototypeOf` of one
/// (`Function.prototype`, itself a function); a built-in method reached from a literal
/// (`[].filter`, `''['big']`: any member but `constructor` and `length`).
fn is_function_value(ctx: &Ctx<'_>, node: Node<'_>) -> bool {
    match KINDS.of(node) {
        "parenthesized_expression" => node
            .named_child(0)
            .is_some_and(|c| is_function_value(ctx, c)),
        "call_expression" => {
            node.child_by_field_id(FIELDS.function).is_some_and(|f| {
                matches!(
                    fold(ctx, f, 0).as_name(),
                    Some("Object.getPrototypeOf" | "Reflect.getPrototypeOf")
                )
            }) && node
                .child_by_field_id(FIELDS.arguments)
                .and_then(|a| a.named_child(0))
                .is_some_and(|a| is_function_value(ctx, a))
        }
        "member_expression" | "subscript_expression" => {
            node.child_by_field_id(FIELDS.object)
                .is_some_and(is_literal)
                && member_name(ctx, node).is_some_and(|m| m != "constructor" && m != "length")
        }
        _ => is_function_literal(node),
    }
}

/// An array, object, string, template, number or regular-expression literal, possibly in
/// parentheses.
fn is_literal(node: Node<'_>) -> bool {
    match KINDS.of(node) {
        "array" | "object" | "string" | "template_string" | "number" | "regex" => true,
        "parenthesized_expression" => node.named_child(0).is_some_and(is_literal),
        _ => false,
    }
}

/// A function or class literal, possibly in parentheses: its `constructor` is `Function`.
fn is_function_literal(node: Node<'_>) -> bool {
    match KINDS.of(node) {
        "arrow_function" | "function_expression" | "function" | "generator_function" | "class" => {
            true
        }
        "parenthesized_expression" => node.named_child(0).is_some_and(is_function_literal),
        _ => false,
    }
}
