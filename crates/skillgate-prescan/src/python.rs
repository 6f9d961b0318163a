//! The Python semantic pass: imports and aliases, constant folding, NFKC identifiers,
//! getattr and namespace escapes, the coding declaration.
use crate::decode;
use crate::facts::{Ctx, FILE_OPS, binary_parts, is_file_op, last_segment, walk};
use crate::grammar::{Kinds, field_ids};
use crate::value::{MAX_FOLD_DEPTH, Value};
use skillgate_core::Language;
use std::borrow::Cow;
use std::sync::LazyLock;
use tree_sitter::{Node, TreeCursor};
use unicode_normalization::UnicodeNormalization;

/// The Python grammar's kind names, by kind id.
static KINDS: LazyLock<Kinds> = LazyLock::new(|| Kinds::load(Language::Python));

field_ids!(struct Fields (Language::Python) { alias, argument, arguments, attribute, body, expression, function, left, module_name, name, object, right, subscript, value });

/// The ids of the Python fields this pass reads.
static FIELDS: LazyLock<Fields> = LazyLock::new(Fields::load);

/// Names Python resolves without an import (the ones that matter to rules, plus the
/// helpers the folder understands).
fn is_builtin(id: &str) -> bool {
    matches!(
        id,
        "eval"
            | "exec"
            | "compile"
            | "__import__"
            | "getattr"
            | "setattr"
            | "delattr"
            | "hasattr"
            | "vars"
            | "globals"
            | "locals"
            | "open"
            | "input"
            | "breakpoint"
            | "help"
            | "memoryview"
            | "__builtins__"
            | "__loader__"
            | "__spec__"
            | "chr"
            | "ord"
            | "str"
            | "bytes"
            | "bytearray"
            | "map"
            | "list"
            | "tuple"
            | "reversed"
            | "type"
            | "object"
            | "dir"
            | "id"
            | "super"
            | "classmethod"
            | "staticmethod"
            | "property"
            | "print"
            | "exit"
            | "quit"
            | "__build_class__"
    )
}

/// Extracts the facts of a Python module.
/// Returns the first node nested deeper than `max_depth`, if any.
pub(crate) fn extract<'t>(
    root: Node<'t>,
    max_depth: usize,
    ctx: &mut Ctx<'_>,
) -> Result<(), Node<'t>> {
    coding_declaration(root, ctx);
    let walked = walk(root, max_depth, |node, cursor, ancestors| {
        visit(node, cursor, ancestors, ctx)
    });
    ctx.settle_deferred();
    ctx.settle_free();
    walked
}

/// A Python coding declaration other than UTF-8 is a fact: Python would decode the file
/// differently from the scanner (`utf-7` hides code in "comments").
fn coding_declaration(root: Node<'_>, ctx: &mut Ctx<'_>) {
    let text = String::from_utf8_lossy(ctx.src);
    for line in text.lines().take(2) {
        let line = line.trim_start_matches('\u{feff}').trim_start();
        if !line.starts_with('#') {
            continue;
        }
        let Some(pos) = line.find("coding") else {
            continue;
        };
        let rest = &line[pos + "coding".len()..];
        if !(rest.starts_with(':') || rest.starts_with('=')) {
            continue;
        }
        let enc: String = rest[1..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect::<String>()
            .to_ascii_lowercase()
            .replace('_', "-");
        if !matches!(enc.as_str(), "utf-8" | "utf8") {
            let enc = if enc.is_empty() { "?".into() } else { enc };
            ctx.emit(format!("coding:{enc}"), root);
        }
        return;
    }
}

/// An identifier as Python sees it: NFKC-normalised.
fn ident<'a>(ctx: &Ctx<'a>, node: Node<'_>) -> Cow<'a, str> {
    let raw = ctx.text(node);
    if raw.is_ascii() {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(raw.nfkc().collect())
    }
}

/// A dotted name (`os.path`) with each part normalised.
fn dotted(ctx: &Ctx<'_>, node: Node<'_>) -> String {
    let mut parts = Vec::new();
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        parts.push(ident(ctx, child).into_owned());
    }
    if parts.is_empty() {
        ident(ctx, node).into_owned()
    } else {
        parts.join(".")
    }
}

/// The canonical form of a qualified name: `builtins.eval` is `eval`.
fn canonical(q: String) -> String {
    for prefix in ["builtins.", "__builtins__."] {
        if let Some(rest) = q.strip_prefix(prefix)
            && !rest.starts_with("__dict__")
        {
            return canonical(rest.to_string());
        }
    }
    if q == "__builtins__" {
        return "builtins".into();
    }
    if let Some(rest) = q.strip_prefix("__builtins__.") {
        return format!("builtins.{rest}");
    }
    q
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
        // Nothing below a plain string or a comment (f-strings hold expressions).
        "string" => return is_fstring(ctx, node),
        "comment" => return false,
        // The handlers read the names of an import; below them only names are left.
        "import_statement" => {
            import_statement(node, ctx);
            return false;
        }
        "import_from_statement" => {
            import_from(node, ctx);
            return false;
        }
        "assignment" | "augmented_assignment" => assignment(node, ctx),
        "named_expression" => {
            if let (Some(n), Some(v)) = (
                node.child_by_field_id(FIELDS.name),
                node.child_by_field_id(FIELDS.value),
            ) {
                let val = fold(ctx, v, 0);
                bind(ctx, n, val);
            }
        }
        "function_definition" | "class_definition" => {
            let grand = ancestors.len().checked_sub(2).map(|i| ancestors[i]);
            let top = parent.is_some_and(|p| {
                KINDS.of(p) == "module"
                    || (KINDS.of(p) == "decorated_definition"
                        && grand.is_some_and(|g| KINDS.of(g) == "module"))
            });
            if let (true, Some(n)) = (top, node.child_by_field_id(FIELDS.name)) {
                // A module-level definition shadows a builtin of the same name.
                let key = ident(ctx, n).into_owned();
                ctx.bindings.insert(key, Value::Unknown);
            }
        }
        "call" => call(node, parent, ctx),
        "decorator" => {
            if let Some(expr) = node.named_child(0)
                && KINDS.of(expr) != "call"
            {
                ctx.take_free();
                if let Value::Name(q) = fold(ctx, expr, 0) {
                    let free = ctx.take_free();
                    ctx.emit_reading(format!("call:{q}"), node, &free);
                }
            }
        }
        "attribute" => {
            if let Some(a) = node.child_by_field_id(FIELDS.attribute) {
                let attr = ident(ctx, a).into_owned();
                ctx.emit(format!("attr:{attr}"), a);
            }
            emit_ref(ctx, node, parent);
        }
        "subscript" => {
            computed_subscript(ctx, node);
            emit_ref(ctx, node, parent)
        }
        "identifier" => {
            let field = cursor.field_name();
            if is_reference(parent, field) {
                emit_ref(ctx, node, parent)
            } else {
                note_binding(ctx, node, ancestors, field)
            }
        }
        _ => {}
    }
    true
}

/// Whether a string literal is an f-string (or a t-string): its prefix, before the first
/// quote, has an `f` or a `t`.
fn is_fstring(ctx: &Ctx<'_>, node: Node<'_>) -> bool {
    ctx.src
        .get(node.start_byte()..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| !matches!(b, b'"' | b'\''))
        .any(|b| matches!(b.to_ascii_lowercase(), b'f' | b't'))
}

fn emit_ref(ctx: &mut Ctx<'_>, node: Node<'_>, parent: Option<Node<'_>>) {
    ctx.take_free();
    let v = fold(ctx, node, 0);
    let free = ctx.take_free();
    if let Value::Name(q) = v {
        if is_file_op(&q) && used_as_value(node, parent) {
            ctx.reader_as_value();
        }
        if matches!(q.as_str(), "os.environ" | "os.environb" | "posix.environ")
            && !single_key_use(ctx, node, parent)
        {
            ctx.emit_reading("env-dump", node, &free);
        }
        if env_key(ctx, &q, node, parent).as_deref() == Some(OUTPUT_DIR_VAR) {
            // The documented way to find where artifacts go: not a credential read.
            ctx.emit_reading(format!("env:{OUTPUT_DIR_VAR}"), node, &free);
            return;
        }
        ctx.emit_reading(format!("ref:{q}"), node, &free);
    }
}

/// Whether a reference is used as a value: anything but the callee of a call, the object
/// of an attribute or a decorator (`open` in `f(open)`, `{'k': open}`, `[open]`, `g = open`).
fn used_as_value(node: Node<'_>, parent: Option<Node<'_>>) -> bool {
    let Some(p) = parent else { return false };
    match KINDS.of(p) {
        "call" => p.child_by_field_id(FIELDS.function) != Some(node),
        "attribute" => p.child_by_field_id(FIELDS.object) != Some(node),
        "decorator" => false,
        _ => true,
    }
}

/// A call whose callee the fold cannot name (a parameter, `d[k]`, a call's result, a
/// method of an unknown object: `SimpleNamespace(r=open).r(p)`), with a constant first
/// argument: its `path:` fact counts when a file operation is used as a value in the file
/// (`(lambda f: f('/proc/self/environ'))(open)`, `{'k': open}['k'](p)`). Only credential
/// paths are findings, so `rows.append('x')` costs a fold of `'x'` and nothing more.
fn opaque_call_path(ctx: &mut Ctx<'_>, node: Node<'_>) {
    let Some(first) = node
        .child_by_field_id(FIELDS.arguments)
        .and_then(|a| a.named_child(0))
    else {
        return;
    };
    if !matches!(
        KINDS.of(first),
        "string" | "concatenated_string" | "binary_operator"
    ) {
        return;
    }
    if let Value::Str(p) = fold(ctx, first, 0) {
        ctx.opaque_path(&p, node);
    }
    ctx.take_free();
}

/// Notes a name the file binds (a target, a parameter, a definition) when it is one the
/// pass would otherwise read as a module while free, with the scope it is bound in: the
/// innermost function, lambda, class or comprehension around it (a parameter's is its
/// function; a definition's name is bound around the definition), else the whole file. A
/// name bound in one function does not hide a free use elsewhere.
fn note_binding(
    ctx: &mut Ctx<'_>,
    node: Node<'_>,
    ancestors: &[Node<'_>],
    field: Option<&'static str>,
) {
    let Some(&p) = ancestors.last() else { return };
    let binds = match field {
        Some("name") => matches!(
            KINDS.of(p),
            "function_definition"
                | "class_definition"
                | "named_expression"
                | "default_parameter"
                | "typed_default_parameter"
        ),
        Some("alias") => true,
        Some("left") => matches!(
            KINDS.of(p),
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause"
        ),
        _ => matches!(
            KINDS.of(p),
            "parameters"
                | "lambda_parameters"
                | "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
                | "list_splat_pattern"
                | "dictionary_splat_pattern"
                | "typed_parameter"
                | "as_pattern_target"
        ),
    };
    if !binds {
        return;
    }
    let n = ident(ctx, node);
    if !ctx.free.contains(&n) {
        return;
    }
    // A definition's own name belongs to the scope around the definition.
    let around = match (field, KINDS.of(p)) {
        (Some("name"), "function_definition" | "class_definition") => {
            &ancestors[..ancestors.len() - 1]
        }
        _ => ancestors,
    };
    let scope = around
        .iter()
        .rev()
        .find(|a| {
            matches!(
                KINDS.of(**a),
                "function_definition"
                    | "lambda"
                    | "class_definition"
                    | "list_comprehension"
                    | "set_comprehension"
                    | "dictionary_comprehension"
                    | "generator_expression"
            )
        })
        .map_or((0, ctx.src.len()), |a| (a.start_byte(), a.end_byte()));
    let n = n.into_owned();
    ctx.bind_in_scope(n, scope);
}

/// A lookup with a key that cannot be folded in a module's namespace (`vars(os)[k]`,
/// `os.__dict__[k]`, `sys.modules[k]`, `builtins`, `globals()[k]`): it may reach any of
/// the module's members, so it is a `dynamic-getattr` of the module.
fn computed_subscript(ctx: &mut Ctx<'_>, node: Node<'_>) {
    let (Some(v), Some(s)) = (
        node.child_by_field_id(FIELDS.value),
        node.child_by_field_id(FIELDS.subscript),
    ) else {
        return;
    };
    if KINDS.of(s) == "slice" {
        return;
    }
    ctx.take_free();
    let owner = match fold(ctx, v, 0) {
        Value::Name(q) => namespace_owner(&q).map(str::to_string),
        Value::Scope => Some("globals".to_string()),
        _ => None,
    };
    let free = ctx.take_free();
    if let Some(owner) = owner
        && !matches!(fold(ctx, s, 0), Value::Str(_))
    {
        ctx.emit_reading(format!("dynamic-getattr:{owner}"), node, &free);
    }
}

/// The module whose namespace `q` is, when indexing `q` looks up the module's members.
fn namespace_owner(q: &str) -> Option<&str> {
    match q {
        "sys.modules" | "builtins" => Some(q),
        _ => q.strip_suffix(".__dict__"),
    }
}

/// The variable naming the directory whose files come back as artifacts.
const OUTPUT_DIR_VAR: &str = "SKILLGATE_OUTPUT_DIR";

/// The constant key of a one-variable environment read: `os.environ['K']`,
/// `os.environ.get('K', ...)` (both the mapping and its `get`), `os.getenv('K', ...)`.
fn env_key<'t>(ctx: &Ctx<'_>, q: &str, node: Node<'t>, parent: Option<Node<'t>>) -> Option<String> {
    let p = parent?;
    fn first_arg(call: Node<'_>) -> Option<Node<'_>> {
        call.child_by_field_id(FIELDS.arguments)?.named_child(0)
    }
    let key = match (q, KINDS.of(p)) {
        ("os.environ", "subscript") if p.child_by_field_id(FIELDS.value) == Some(node) => {
            p.child_by_field_id(FIELDS.subscript)?
        }
        ("os.environ", "attribute") if single_key_use(ctx, node, parent) => {
            let call = p.parent().filter(|c| KINDS.of(*c) == "call")?;
            first_arg(call)?
        }
        ("os.getenv" | "os.environ.get", "call")
            if p.child_by_field_id(FIELDS.function) == Some(node) =>
        {
            first_arg(p)?
        }
        _ => return None,
    };
    match fold(ctx, key, 0) {
        Value::Str(k) => Some(k.to_string()),
        _ => None,
    }
}

/// Whether a mapping is used for one key (`m['K']`, `m.get('K')`) rather than whole.
fn single_key_use(ctx: &Ctx<'_>, node: Node<'_>, parent: Option<Node<'_>>) -> bool {
    let Some(p) = parent else { return false };
    match KINDS.of(p) {
        "subscript" => p.child_by_field_id(FIELDS.value) == Some(node),
        "attribute" => {
            p.child_by_field_id(FIELDS.object) == Some(node)
                && p.child_by_field_id(FIELDS.attribute)
                    .is_some_and(|a| ctx.text(a) == "get")
        }
        _ => false,
    }
}

/// The environment variables that name the home directory fold to `~`.
fn home_var(key: &str) -> bool {
    matches!(key, "HOME" | "USERPROFILE")
}

/// Whether an identifier is a use of a name (not a parameter, a keyword, an attribute
/// name or an assignment target).
fn is_reference(parent: Option<Node<'_>>, field: Option<&'static str>) -> bool {
    if matches!(
        field,
        Some("attribute" | "name" | "alias" | "left" | "parameters")
    ) {
        return false;
    }
    !parent.is_some_and(|p| {
        matches!(
            KINDS.of(p),
            "dotted_name"
                | "parameters"
                | "lambda_parameters"
                | "global_statement"
                | "nonlocal_statement"
                | "pattern_list"
                | "tuple_pattern"
                | "list_splat_pattern"
                | "dictionary_splat_pattern"
                | "typed_parameter"
                | "default_parameter"
                | "typed_default_parameter"
                | "as_pattern_target"
                | "keyword_pattern"
        )
    })
}

fn import_statement(node: Node<'_>, ctx: &mut Ctx<'_>) {
    let mut c = node.walk();
    let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
    for n in names {
        let (module, alias) = match KINDS.of(n) {
            "aliased_import" => {
                let Some(m) = n.child_by_field_id(FIELDS.name) else {
                    continue;
                };
                let alias = n
                    .child_by_field_id(FIELDS.alias)
                    .map(|a| ident(ctx, a).into_owned());
                (dotted(ctx, m), alias)
            }
            _ => (dotted(ctx, n), None),
        };
        ctx.import(&module, n);
        match alias {
            Some(a) => {
                ctx.bindings.insert(a, name(module));
            }
            None => {
                let first = module.split('.').next().unwrap_or(&module).to_string();
                ctx.bindings.insert(first.clone(), name(first));
            }
        }
    }
}

fn import_from(node: Node<'_>, ctx: &mut Ctx<'_>) {
    let Some(m) = node.child_by_field_id(FIELDS.module_name) else {
        return;
    };
    if KINDS.of(m) == "relative_import" {
        ctx.emit("import-relative", m);
        return;
    }
    let module = dotted(ctx, m);
    ctx.emit(format!("import:{module}"), m);
    let mut c = node.walk();
    let mut any = false;
    for child in node.named_children(&mut c) {
        if KINDS.of(child) == "wildcard_import" {
            ctx.import(&module, child);
            ctx.emit(format!("import-star:{module}"), child);
            if !ctx.star_imports.contains(&module) {
                ctx.star_imports.push(module.clone());
            }
            any = true;
        }
    }
    let mut c = node.walk();
    let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
    for n in names {
        let (member, alias) = match KINDS.of(n) {
            "aliased_import" => {
                let Some(x) = n.child_by_field_id(FIELDS.name) else {
                    continue;
                };
                let alias = n
                    .child_by_field_id(FIELDS.alias)
                    .map(|a| ident(ctx, a).into_owned());
                (dotted(ctx, x), alias)
            }
            _ => (dotted(ctx, n), None),
        };
        let full = format!("{module}.{member}");
        ctx.import(&full, n);
        ctx.emit(format!("ref:{}", canonical(full.clone())), n);
        ctx.bindings.insert(alias.unwrap_or(member), name(full));
        any = true;
    }
    if !any {
        ctx.import(&module, m);
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
        "attribute" | "subscript" => {
            ctx.take_free();
            if let Value::Name(q) = fold(ctx, left, 0) {
                let free = ctx.take_free();
                ctx.emit_reading(format!("assign:{q}"), left, &free);
            }
        }
        "identifier" if KINDS.of(node) == "assignment" => {
            let v = fold(ctx, right, 0);
            bind(ctx, left, v);
        }
        "pattern_list" | "tuple_pattern" => {
            if let Value::List(items) = fold(ctx, right, 0) {
                let mut c = left.walk();
                let targets: Vec<Node<'_>> = left.named_children(&mut c).collect();
                for (t, v) in targets.into_iter().zip(items) {
                    if KINDS.of(t) == "identifier" {
                        bind(ctx, t, v);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Records a binding when its value is known; an unknown value never hides a name the
/// scanner resolved before (fail closed).
fn bind(ctx: &mut Ctx<'_>, target: Node<'_>, v: Value) {
    if KINDS.of(target) != "identifier" || v == Value::Unknown {
        return;
    }
    let key = ident(ctx, target).into_owned();
    ctx.bindings.insert(key, v);
}

/// Positional and keyword arguments of a call, folded.
fn args(ctx: &Ctx<'_>, node: Node<'_>, depth: usize) -> (Vec<Value>, Vec<(String, Value)>) {
    let mut pos = Vec::new();
    let mut kw = Vec::new();
    let Some(list) = node.child_by_field_id(FIELDS.arguments) else {
        return (pos, kw);
    };
    if KINDS.of(list) == "generator_expression" {
        pos.push(fold(ctx, list, depth + 1));
        return (pos, kw);
    }
    let mut c = list.walk();
    for a in list.named_children(&mut c) {
        match KINDS.of(a) {
            "keyword_argument" => {
                if let (Some(n), Some(v)) = (
                    a.child_by_field_id(FIELDS.name),
                    a.child_by_field_id(FIELDS.value),
                ) {
                    kw.push((ident(ctx, n).into_owned(), fold(ctx, v, depth + 1)));
                }
            }
            "comment" => {}
            _ => pos.push(fold(ctx, a, depth + 1)),
        }
    }
    (pos, kw)
}

fn call(node: Node<'_>, parent: Option<Node<'_>>, ctx: &mut Ctx<'_>) {
    let Some(func) = node.child_by_field_id(FIELDS.function) else {
        return;
    };
    ctx.take_free();
    let callee = fold(ctx, func, 0);
    let callee_free = ctx.take_free();
    if !matches!(callee, Value::Name(_)) {
        opaque_call_path(ctx, node);
    }
    if !args_matter(ctx, func, &callee) {
        // A call of a local function or of a method on an unknown object: its arguments
        // are visited on their own; folding them here could only feed facts it has none of.
        return;
    }
    let (pos, kw) = args(ctx, node, 0);
    let mut free = callee_free.clone();
    free.extend(ctx.take_free());
    let first_str = pos.first().and_then(Value::as_str).map(str::to_string);
    // A file operation passed with its path: `functools.partial(open, p)`.
    if pos.iter().any(|v| v.as_name().is_some_and(is_file_op)) {
        for p in pos.iter().filter_map(Value::as_str) {
            ctx.emit(format!("path:{p}"), node);
        }
    }
    if let Value::Name(q) = &callee {
        ctx.emit_reading(format!("call:{q}"), node, &callee_free);
        match q.as_str() {
            "__import__" | "importlib.import_module" | "importlib.__import__" => {
                ctx.emit("dynamic-import", node);
                match &first_str {
                    Some(m) => ctx.import(m, node),
                    None => ctx.emit("dynamic-import-unresolved", node),
                }
            }
            "getattr" | "setattr" | "delattr" | "hasattr" => {
                let target = pos.first().and_then(Value::as_name).map(str::to_string);
                match (target, pos.get(1).and_then(Value::as_str)) {
                    (Some(t), None) => {
                        ctx.emit_reading(format!("dynamic-getattr:{t}"), node, &free)
                    }
                    (Some(t), Some(a)) if q == "setattr" || q == "delattr" => {
                        let target = canonical(format!("{t}.{a}"));
                        ctx.emit_reading(format!("assign:{target}"), node, &free)
                    }
                    _ => {}
                }
            }
            // A name picked at run time from any object.
            "operator.attrgetter" | "operator.methodcaller"
                if !matches!(pos.first(), Some(Value::Str(_))) =>
            {
                ctx.emit("dynamic-getattr:operator", node)
            }
            q if q.ends_with(".__dict__.get") && !matches!(pos.first(), Some(Value::Str(_))) => {
                let owner = q.trim_end_matches(".__dict__.get");
                ctx.emit_reading(format!("dynamic-getattr:{owner}"), node, &free)
            }
            _ => {}
        }
    }
    // `globals().get(k)`, `vars().get(k)` with a computed key.
    if KINDS.of(func) == "attribute"
        && func
            .child_by_field_id(FIELDS.attribute)
            .is_some_and(|a| ctx.text(a) == "get")
        && func
            .child_by_field_id(FIELDS.object)
            .is_some_and(|o| fold(ctx, o, 0) == Value::Scope)
        && !matches!(pos.first(), Some(Value::Str(_)))
    {
        ctx.emit("dynamic-getattr:globals", node);
    }
    // The call's own value, from the callee and arguments folded above.
    let value = fold_call_parts(ctx, func, Some(&callee), &pos, &kw, 1);
    free.extend(ctx.take_free());
    if let Value::Name(q) = value {
        // `[getattr(builtins, 'open')]`: a file operation the call returns, as a value.
        if is_file_op(&q) && used_as_value(node, parent) {
            ctx.reader_as_value();
        }
        ctx.emit_reading(format!("ref:{q}"), node, &free);
    }
    // File operations with a constant path.
    let op: Option<String> = match &callee {
        Value::Name(q) => Some(last_segment(q).to_string()),
        _ if KINDS.of(func) == "attribute" => func
            .child_by_field_id(FIELDS.attribute)
            .map(|a| ident(ctx, a).into_owned()),
        _ => None,
    };
    if let Some(op) = op
        && FILE_OPS.contains(&op.as_str())
    {
        let receiver = func
            .child_by_field_id(FIELDS.object)
            .and_then(|o| fold(ctx, o, 0).as_str().map(str::to_string));
        if let Some(p) = receiver.or(first_str) {
            ctx.emit(format!("path:{p}"), node);
        }
    }
}

/// Whether a call's folded arguments can yield a fact: its callee resolves to a name, it is
/// a call of a call (`operator.attrgetter('x')(m)`), or a method that looks names up or
/// opens files (`x.get(k)`, `x.__getattribute__(k)`, `p.read_text()`).
fn args_matter(ctx: &Ctx<'_>, func: Node<'_>, callee: &Value) -> bool {
    if matches!(callee, Value::Name(_)) {
        return true;
    }
    match KINDS.of(func) {
        "call" => true,
        "attribute" => func.child_by_field_id(FIELDS.attribute).is_some_and(|a| {
            let m = ident(ctx, a);
            m == "get" || m == "__getattribute__" || FILE_OPS.contains(&m.as_ref())
        }),
        _ => false,
    }
}

/// Folds an expression to a [`Value`].
pub(crate) fn fold(ctx: &Ctx<'_>, node: Node<'_>, depth: usize) -> Value {
    if depth > MAX_FOLD_DEPTH || !ctx.step() {
        return Value::Unknown;
    }
    let d = depth + 1;
    match KINDS.of(node) {
        "identifier" => lookup(ctx, &ident(ctx, node)),
        "attribute" => {
            let (Some(o), Some(a)) = (
                node.child_by_field_id(FIELDS.object),
                node.child_by_field_id(FIELDS.attribute),
            ) else {
                return Value::Unknown;
            };
            match fold(ctx, o, d) {
                Value::Name(q) => name(format!("{q}.{}", ident(ctx, a))),
                _ => Value::Unknown,
            }
        }
        "string" => fold_string(ctx, node, d),
        "concatenated_string" => {
            let mut out = String::new();
            let mut c = node.walk();
            for s in node.named_children(&mut c) {
                match fold(ctx, s, d) {
                    Value::Str(x) => out.push_str(&x),
                    _ => return Value::Unknown,
                }
            }
            Value::string(out)
        }
        "integer" => crate::value::parse_int(ctx.text(node)).map_or(Value::Unknown, Value::Int),
        "unary_operator" => match (
            ctx.text(node).starts_with('-'),
            node.child_by_field_id(FIELDS.argument)
                .map(|a| fold(ctx, a, d)),
        ) {
            (true, Some(Value::Int(i))) => Value::Int(i.saturating_neg()),
            (false, Some(v @ Value::Int(_))) => v,
            _ => Value::Unknown,
        },
        "parenthesized_expression" | "expression_statement" => node
            .named_child(0)
            .map_or(Value::Unknown, |c| fold(ctx, c, d)),
        "list" | "tuple" | "expression_list" | "set" => {
            let mut c = node.walk();
            let items: Vec<Value> = node
                .named_children(&mut c)
                .filter(|n| KINDS.of(*n) != "comment")
                .map(|n| fold(ctx, n, d))
                .collect();
            Value::List(items)
        }
        "binary_operator" => binary(ctx, node, d),
        "subscript" => subscript(ctx, node, d),
        "call" => fold_call(ctx, node, d),
        "generator_expression" | "list_comprehension" => comprehension(ctx, node, d),
        "conditional_expression" => Value::Unknown,
        _ => Value::Unknown,
    }
}

fn lookup(ctx: &Ctx<'_>, id: &str) -> Value {
    if let Some(v) = ctx.lookup(id) {
        return v;
    }
    if is_builtin(id) {
        return name(id.to_string());
    }
    // A name no import binds (a star import's or an injected global) may be the module of
    // that name: `os.system` with no `import os` (the fact is kept only if nothing in the
    // file binds `os`).
    if ctx.free.contains(id) {
        ctx.used_free(id);
        return name(id.to_string());
    }
    // `from M import *` makes any free name possibly M's.
    if let Some(m) = ctx.star_imports.first() {
        return name(format!("{m}.{id}"));
    }
    Value::Unknown
}

fn fold_string(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let mut out = String::new();
    let mut raw = false;
    let mut c = node.walk();
    for part in node.children(&mut c) {
        match KINDS.of(part) {
            "string_start" => {
                let p = ctx.text(part).to_ascii_lowercase();
                raw = p.contains('r');
            }
            "string_end" => {}
            "interpolation" => {
                let Some(e) = part.child_by_field_id(FIELDS.expression) else {
                    return Value::Unknown;
                };
                match fold(ctx, e, d) {
                    Value::Str(s) => out.push_str(&s),
                    Value::Int(i) => out.push_str(&i.to_string()),
                    _ => return Value::Unknown,
                }
            }
            _ => {
                let t = ctx.text(part);
                if raw {
                    out.push_str(t);
                } else {
                    out.push_str(&decode::unescape(t, true));
                }
            }
        }
    }
    Value::string(out)
}

fn binary(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let Some((l, op, r)) = binary_parts(node) else {
        return Value::Unknown;
    };
    let (a, b) = (fold(ctx, l, d), fold(ctx, r, d));
    match (ctx.text(op), a, b) {
        (op, a @ Value::Int(_), b @ Value::Int(_)) => Value::int_op(op, &a, &b).unwrap_or_default(),
        ("+", Value::Str(x), Value::Str(y)) => Value::string(x + &y),
        ("+", Value::List(mut x), Value::List(y)) => {
            x.extend(y);
            Value::List(x)
        }
        ("*", Value::Str(s), Value::Int(n)) | ("*", Value::Int(n), Value::Str(s)) => {
            match usize::try_from(n) {
                Ok(n) if s.len().saturating_mul(n) <= crate::value::MAX_FOLDED_LEN => {
                    Value::Str(s.repeat(n))
                }
                _ => Value::Unknown,
            }
        }
        ("/", Value::Str(x), Value::Str(y)) => {
            Value::string(format!("{}/{}", x.trim_end_matches('/'), y))
        }
        ("%", Value::Str(f), args) => percent_format(&f, args),
        _ => Value::Unknown,
    }
}

fn percent_format(f: &str, args: Value) -> Value {
    let args = match args {
        Value::List(v) => v,
        v => vec![v],
    };
    let mut it = args.into_iter();
    let mut out = String::new();
    let mut chars = f.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s' | 'd' | 'i') => match it.next().as_ref().and_then(Value::text) {
                Some(s) => out.push_str(&s),
                None => return Value::Unknown,
            },
            Some('c') => match it.next() {
                Some(Value::Int(n)) => match decode::chr(n) {
                    Some(ch) => out.push(ch),
                    None => return Value::Unknown,
                },
                Some(Value::Str(s)) => out.push_str(&s),
                _ => return Value::Unknown,
            },
            _ => return Value::Unknown,
        }
    }
    Value::string(out)
}

fn brace_format(f: &str, pos: &[Value], kw: &[(String, Value)]) -> Value {
    let mut out = String::new();
    let mut next = 0usize;
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                    field.push(c);
                }
                let (key, spec) = match field.find([':', '!']) {
                    Some(i) => (&field[..i], &field[i..]),
                    None => (field.as_str(), ""),
                };
                // A format spec or conversion (`{:.3}`, `{!r}`) changes the text; `{!s}`
                // and an empty spec do not.
                if !matches!(spec, "" | ":" | "!s") {
                    return Value::Unknown;
                }
                let v = if key.is_empty() {
                    next += 1;
                    pos.get(next - 1)
                } else if let Ok(i) = key.parse::<usize>() {
                    pos.get(i)
                } else {
                    kw.iter().find(|(k, _)| k == key).map(|(_, v)| v)
                };
                match v.and_then(Value::text) {
                    Some(s) => out.push_str(&s),
                    None => return Value::Unknown,
                }
            }
            c => out.push(c),
        }
    }
    Value::string(out)
}

fn subscript(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let (Some(v), Some(s)) = (
        node.child_by_field_id(FIELDS.value),
        node.child_by_field_id(FIELDS.subscript),
    ) else {
        return Value::Unknown;
    };
    let base = fold(ctx, v, d);
    if KINDS.of(s) == "slice" {
        let Value::Str(text) = base else {
            return Value::Unknown;
        };
        // The parts of `a:b:c` are told apart by the colons before them.
        let mut parts: [Option<i64>; 3] = [None, None, None];
        let mut idx = 0;
        let mut c = s.walk();
        for child in s.children(&mut c) {
            if KINDS.of(child) == ":" {
                idx += 1;
            } else if child.is_named() && idx < 3 {
                match fold(ctx, child, d) {
                    Value::Int(i) => parts[idx] = Some(i),
                    _ => return Value::Unknown,
                }
            }
        }
        return decode::slice(&text, parts[0], parts[1], parts[2])
            .map_or(Value::Unknown, Value::string);
    }
    let key = fold(ctx, s, d);
    match (base, key) {
        (Value::Name(q), Value::Str(k)) => {
            if q == "os.environ" && home_var(&k) {
                Value::Str("~".into())
            } else if let Some(owner) = q.strip_suffix(".__dict__") {
                name(format!("{owner}.{k}"))
            } else if q == "sys.modules" || q == "builtins" {
                name(k)
            } else {
                Value::Unknown
            }
        }
        (Value::Scope, Value::Str(k)) => lookup(ctx, &k.nfkc().collect::<String>()),
        (Value::List(items), Value::Int(i)) => {
            let len = items.len() as i64;
            let i = if i < 0 { i + len } else { i };
            usize::try_from(i)
                .ok()
                .and_then(|i| items.get(i).cloned())
                .unwrap_or_default()
        }
        (Value::Str(s), Value::Int(i)) => decode::slice(
            &s,
            Some(i),
            Some(if i == -1 { i64::MAX } else { i + 1 }),
            None,
        )
        .map_or(Value::Unknown, Value::Str),
        _ => Value::Unknown,
    }
}

fn comprehension(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let Some(body) = node.child_by_field_id(FIELDS.body) else {
        return Value::Unknown;
    };
    let mut c = node.walk();
    let clauses: Vec<Node<'_>> = node
        .named_children(&mut c)
        .filter(|n| KINDS.of(*n) != "comment")
        .skip(1)
        .collect();
    let [clause] = clauses.as_slice() else {
        return Value::Unknown;
    };
    if KINDS.of(*clause) != "for_in_clause" {
        return Value::Unknown;
    }
    let (Some(var), Some(src)) = (
        clause.child_by_field_id(FIELDS.left),
        clause.child_by_field_id(FIELDS.right),
    ) else {
        return Value::Unknown;
    };
    if KINDS.of(var) != "identifier" {
        return Value::Unknown;
    }
    let items = match fold(ctx, src, d) {
        Value::List(v) => v,
        Value::Str(s) => s.chars().map(|c| Value::Str(c.to_string())).collect(),
        _ => return Value::Unknown,
    };
    if items.len() > 4096 {
        return Value::Unknown;
    }
    // Fold the body once per element with the loop variable bound.
    let var = ident(ctx, var).into_owned();
    Value::List(ctx.with_each(&var, items, || fold(ctx, body, d)))
}

fn str_list(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::List(items) => items.iter().map(Value::text).collect(),
        Value::Str(s) => Some(s.chars().map(String::from).collect()),
        _ => None,
    }
}

fn bytes_of(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.clone()),
        Value::List(items) => Value::bytes_to_string(items),
        _ => None,
    }
}

/// Whether Python's `str.isspace` holds: Unicode white space and the four information
/// separators `\x1c`..`\x1f`, which `strip()` and `split()` remove too.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// The codec named by a call's first remaining positional argument or its `encoding=`
/// keyword: `None` when none is given (UTF-8), `Some(None)`-like unknown as `"?"`.
fn encoding_arg<'a>(pos: &'a [Value], kw: &'a [(String, Value)]) -> Option<&'a str> {
    let named = kw.iter().find(|(k, _)| k == "encoding").map(|(_, v)| v);
    match pos.first().or(named) {
        None => None,
        Some(Value::Str(e)) => Some(e),
        // A codec the folder cannot read: no constant.
        Some(_) => Some("?"),
    }
}

/// `s` decoded or encoded with the codec `enc` (UTF-8 when `None`), when the folder knows
/// the result: text codecs only on text they map to itself (ASCII for UTF-8 and ASCII,
/// code points below 256 for Latin-1, as bytes and text are both folded to text), never
/// for a codec it does not know (`cp1026`, `utf-16`, `unicode_escape`...).
fn codec(s: &str, enc: Option<&str>) -> Value {
    let enc = enc
        .unwrap_or("utf-8")
        .to_ascii_lowercase()
        .replace(['_', '-', ' '], "");
    let out = match enc.as_str() {
        "rot13" | "rot13codec" => Some(decode::rot13(s)),
        "hex" | "hexcodec" => decode::hex(s),
        "base64" | "base64codec" => decode::base64(s),
        "utf8" | "u8" | "utf" | "ascii" | "usascii" if s.is_ascii() => Some(s.to_string()),
        "latin1" | "latin" | "l1" | "iso88591" | "8859" | "cp819"
            if s.chars().all(|c| u32::from(c) < 256) =>
        {
            Some(s.to_string())
        }
        _ => None,
    };
    out.map_or(Value::Unknown, Value::string)
}

fn fold_call(ctx: &Ctx<'_>, node: Node<'_>, d: usize) -> Value {
    let Some(func) = node.child_by_field_id(FIELDS.function) else {
        return Value::Unknown;
    };
    let (pos, kw) = args(ctx, node, d);
    fold_call_parts(ctx, func, None, &pos, &kw, d)
}

/// Folds a call from its callee node, the callee's value when the caller already folded
/// it, and the folded arguments.
fn fold_call_parts(
    ctx: &Ctx<'_>,
    func: Node<'_>,
    callee: Option<&Value>,
    pos: &[Value],
    kw: &[(String, Value)],
    d: usize,
) -> Value {
    let arg = |i: usize| pos.get(i).cloned().unwrap_or_default();
    let mut callee = callee.cloned();
    // Methods of constant strings.
    if KINDS.of(func) == "attribute"
        && let (Some(o), Some(m)) = (
            func.child_by_field_id(FIELDS.object),
            func.child_by_field_id(FIELDS.attribute),
        )
    {
        let method = ident(ctx, m);
        let recv = fold(ctx, o, d);
        // The callee is the receiver's attribute: no need to fold the receiver again.
        callee.get_or_insert_with(|| match &recv {
            Value::Name(q) => name(format!("{q}.{method}")),
            _ => Value::Unknown,
        });
        if let Value::Str(s) = &recv {
            return match method.as_ref() {
                "join" => str_list(&arg(0)).map_or(Value::Unknown, |p| Value::string(p.join(s))),
                // Only calls whose every argument is understood fold: a count, a
                // maxsplit, a codec or a format spec ignored would give a wrong constant.
                "replace" if pos.len() == 2 && kw.is_empty() => match (arg(0), arg(1)) {
                    (Value::Str(a), Value::Str(b)) if !a.is_empty() => {
                        Value::string(s.replace(&a, &b))
                    }
                    _ => Value::Unknown,
                },
                "lower" => Value::Str(s.to_lowercase()),
                // `casefold` maps more than lowercasing does (`ß` to `ss`).
                "casefold" if s.is_ascii() => Value::Str(s.to_ascii_lowercase()),
                "upper" => Value::Str(s.to_uppercase()),
                "strip" | "lstrip" | "rstrip" if pos.is_empty() && kw.is_empty() => {
                    Value::Str(match method.as_ref() {
                        "strip" => s.trim_matches(py_space).into(),
                        "lstrip" => s.trim_start_matches(py_space).into(),
                        _ => s.trim_end_matches(py_space).into(),
                    })
                }
                "format" => brace_format(s, pos, kw),
                "decode" | "encode" if pos.len() <= 2 => codec(s, encoding_arg(pos, kw)),
                "split" if pos.len() <= 1 && kw.is_empty() => match arg(0) {
                    Value::Str(sep) if !sep.is_empty() => Value::List(
                        s.split(sep.as_str())
                            .map(|x| Value::Str(x.into()))
                            .collect(),
                    ),
                    Value::Unknown if pos.is_empty() => Value::List(
                        s.split(py_space)
                            .filter(|x| !x.is_empty())
                            .map(|x| Value::Str(x.into()))
                            .collect(),
                    ),
                    _ => Value::Unknown,
                },
                "joinpath" => match arg(0) {
                    Value::Str(x) => Value::string(format!("{}/{}", s.trim_end_matches('/'), x)),
                    _ => Value::Unknown,
                },
                "expanduser" | "resolve" | "absolute" => Value::Str(s.clone()),
                _ => Value::Unknown,
            };
        }
        if method == "__getattribute__"
            && let (Value::Name(q), Value::Str(a)) = (&recv, arg(0))
        {
            return name(format!("{q}.{a}"));
        }
        if method == "get"
            && let (Value::Name(q), Value::Str(k)) = (&recv, arg(0))
        {
            if q == "sys.modules" {
                return name(k);
            }
            if q == "os.environ" && home_var(&k) {
                return Value::Str("~".into());
            }
            if let Some(owner) = q.strip_suffix(".__dict__") {
                return name(format!("{owner}.{k}"));
            }
        }
        if method == "get"
            && let (Value::Scope, Value::Str(k)) = (&recv, arg(0))
        {
            return lookup(ctx, &k);
        }
    }
    // `operator.attrgetter('name')(obj)`, `operator.methodcaller('name', ...)(obj)`
    if KINDS.of(func) == "call"
        && let Some(inner) = func.child_by_field_id(FIELDS.function)
        && matches!(
            fold(ctx, inner, d).as_name(),
            Some("operator.attrgetter" | "operator.methodcaller")
        )
        && let (Some(Value::Str(a)), Value::Name(o)) = (args(ctx, func, d).0.first(), arg(0))
    {
        return name(format!("{o}.{a}"));
    }
    let Value::Name(q) = callee.unwrap_or_else(|| fold(ctx, func, d)) else {
        return Value::Unknown;
    };
    match q.as_str() {
        "pathlib.Path.home" | "pathlib.PosixPath.home" => Value::Str("~".into()),
        "os.getenv" => match arg(0) {
            Value::Str(k) if home_var(&k) => Value::Str("~".into()),
            _ => Value::Unknown,
        },
        "str" if pos.len() > 1 || !kw.is_empty() => match arg(0) {
            // `str(b'...', 'cp1026')` decodes.
            Value::Str(s) => codec(&s, encoding_arg(&pos[1.min(pos.len())..], kw)),
            _ => Value::Unknown,
        },
        "str" => match arg(0) {
            v @ Value::Str(_) => v,
            Value::Int(i) => Value::Str(i.to_string()),
            _ => Value::Unknown,
        },
        "chr" => match arg(0) {
            Value::Int(n) => decode::chr(n).map_or(Value::Unknown, |c| Value::Str(c.into())),
            _ => Value::Unknown,
        },
        "bytes" | "bytearray" if pos.len() > 1 || !kw.is_empty() => match arg(0) {
            // `bytes('...', 'cp1026')` encodes.
            Value::Str(s) => codec(&s, encoding_arg(&pos[1.min(pos.len())..], kw)),
            _ => Value::Unknown,
        },
        "bytes" | "bytearray" => bytes_of(&arg(0)).map_or(Value::Unknown, Value::string),
        "bytes.fromhex" | "bytearray.fromhex" | "binascii.unhexlify" | "binascii.a2b_hex"
        | "base64.b16decode" => arg(0)
            .as_str()
            .and_then(decode::hex)
            .map_or(Value::Unknown, Value::string),
        "base64.b64decode"
        | "base64.standard_b64decode"
        | "base64.urlsafe_b64decode"
        | "base64.decodebytes"
        | "base64.decodestring"
        | "binascii.a2b_base64" => arg(0)
            .as_str()
            .and_then(decode::base64)
            .map_or(Value::Unknown, Value::string),
        "codecs.decode" | "codecs.encode" => match arg(0) {
            Value::Str(s) => codec(&s, encoding_arg(&pos[1.min(pos.len())..], kw)),
            _ => Value::Unknown,
        },
        "map" => match (arg(0), str_list_or_ints(&arg(1))) {
            (Value::Name(f), Some(items)) if f == "chr" => {
                let chars: Option<Vec<Value>> = items
                    .into_iter()
                    .map(|v| match v {
                        Value::Int(n) => decode::chr(n).map(|c| Value::Str(c.into())),
                        _ => None,
                    })
                    .collect();
                chars.map_or(Value::Unknown, Value::List)
            }
            (Value::Name(f), Some(items)) if f == "str" => Value::List(
                items
                    .iter()
                    .map(|v| v.text().map_or(Value::Unknown, Value::Str))
                    .collect(),
            ),
            _ => Value::Unknown,
        },
        "list" | "tuple" => match arg(0) {
            v @ Value::List(_) => v,
            Value::Str(s) => Value::List(s.chars().map(|c| Value::Str(c.into())).collect()),
            _ => Value::Unknown,
        },
        "reversed" => match arg(0) {
            Value::List(mut v) => {
                v.reverse();
                Value::List(v)
            }
            Value::Str(s) => Value::List(s.chars().rev().map(|c| Value::Str(c.into())).collect()),
            _ => Value::Unknown,
        },
        "__import__" | "importlib.import_module" | "importlib.__import__" => match arg(0) {
            Value::Str(m) => name(m),
            _ => Value::Unknown,
        },
        "getattr" => match (arg(0), arg(1)) {
            (Value::Name(o), Value::Str(a)) => {
                name(format!("{o}.{}", a.nfkc().collect::<String>()))
            }
            (Value::Scope, Value::Str(a)) => lookup(ctx, &a),
            _ => Value::Unknown,
        },
        "vars" => match arg(0) {
            Value::Name(o) => Value::Name(format!("{o}.__dict__")),
            Value::Unknown if pos.is_empty() => Value::Scope,
            _ => Value::Unknown,
        },
        "globals" | "locals" => Value::Scope,
        "os.path.join" | "posixpath.join" | "pathlib.Path" | "pathlib.PurePath"
        | "pathlib.PosixPath" => Value::join_path(pos),
        "os.path.expanduser" | "os.path.abspath" | "os.path.realpath" | "os.path.normpath" => {
            arg(0)
        }
        "operator.attrgetter" => Value::Unknown,
        _ => Value::Unknown,
    }
}

fn str_list_or_ints(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::List(items) => Some(items.clone()),
        _ => None,
    }
}
