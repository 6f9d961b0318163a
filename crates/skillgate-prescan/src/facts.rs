//! Semantic facts: what the code does, named as `kind:value` strings that rules match.
//!
//! | fact | emitted for |
//! |------|-------------|
//! | `import:M` | a module imported statically or dynamically (`import:subprocess`, `import:child_process`) |
//! | `ref:Q` | any use of a resolved qualified name (`ref:os.system`, `ref:eval`); in Python a name no import binds is read as the module of that name (`os.system` with no `import os`) unless a scope around the use binds it |
//! | `call:Q` | a call (or decorator, or `new`) whose callee resolves to `Q` |
//! | `attr:N` | an attribute or member access named `N`, whatever the object (`attr:__subclasses__`) |
//! | `assign:Q` | an assignment to a resolved attribute (`assign:builtins.open`) |
//! | `path:P` | a constant path given to a file operation (`path:/proc/self/environ`) |
//! | `dynamic-import` | `__import__`, `importlib.import_module`, `import()` |
//! | `dynamic-import-unresolved` | a dynamic import or `require` whose module name cannot be folded |
//! | `dynamic-getattr:Q` | `getattr`/`setattr` with a computed attribute name on a resolved object `Q`, or a computed key in a module's namespace (`vars(os)[k]`, `os.__dict__.get(k)`, `sys.modules[k]`, `globals()[k]`, `operator.attrgetter(k)`) |
//! | `computed-member` | a JavaScript computed member with a key that cannot be folded, on a resolved object |
//! | `call-member:N` | a call of a member named `N` on an unknown object (`call-member:constructor`) |
//! | `string-timer` | `setTimeout`/`setInterval` given a string |
//! | `constructor-chain` | `x.constructor.constructor`, or a `constructor` read through a property descriptor or `Reflect.get` |
//! | `coerce-literal` | unary `!`, `+`, `-`, `~` on an array or object literal (JSFuck-style `![]`, `+[]`) |
//! | `worker-eval` | `new Worker(...)` that may run a string: options not a literal without `eval`, a computed script, a `data:` URL |
//! | `coding:E` | a Python coding declaration naming a non-UTF-8 encoding `E` |
use crate::value::Value;
use foldhash::{HashMap, HashMapExt, HashSet};
use std::cell::{Cell, RefCell};
use tree_sitter::{Node, TreeCursor};

/// One semantic fact with the byte range of the code it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// `kind:value`, or a bare kind.
    pub name: String,
    /// Start byte in the source.
    pub start: usize,
    /// End byte in the source.
    pub end: usize,
}

/// Most facts one file may produce; past it the scan fails closed.
pub(crate) const MAX_FACTS: usize = 200_000;

/// Most binding scopes of one name checked for one use of it (see
/// [`Ctx::settle_free`]).
const MAX_SCOPE_STEPS: usize = 64;

/// Most folding steps one file may take (nested comprehensions over long constant lists
/// multiply); past it the scan fails closed.
pub(crate) const FOLD_BUDGET: u64 = 500_000;

/// The state of one extraction pass.
pub(crate) struct Ctx<'s> {
    pub(crate) src: &'s [u8],
    /// The source as text, checked once (node texts are slices of it).
    text: &'s str,
    pub(crate) facts: Vec<Fact>,
    /// Module-level bindings, flow-insensitive after their first assignment.
    pub(crate) bindings: HashMap<String, Value>,
    /// Temporary bindings of comprehension variables while folding (set and cleared by
    /// the fold, which only reads the context otherwise).
    temps: RefCell<Vec<(String, Value)>>,
    /// Modules imported with `*`, in source order: a free name may be theirs.
    pub(crate) star_imports: Vec<String>,
    /// Modules imported, with the byte range of the import, for the allow-list check.
    pub(crate) imports: Vec<(String, usize, usize)>,
    /// Set when the fact cap was reached.
    pub(crate) overflow: bool,
    /// Folding steps left.
    budget: Cell<u64>,
    /// The names that, bound by nothing in the file, are read as the module of that name.
    pub(crate) free: &'s FreeNames,
    /// The free names the folds since the last [`take_free`](Self::take_free) resolved.
    free_used: RefCell<Vec<String>>,
    /// Names of [`free`](Self::free) the file binds (assigned, a parameter, a definition,
    /// a loop or `with` target...), each with the byte ranges of the scopes that bind it
    /// (a function's, a lambda's, a comprehension's, or the whole file).
    bound: HashMap<String, Vec<(usize, usize)>>,
    /// Facts that read a free name as a module, with those names: kept at the end of the
    /// pass only when the file binds none of them.
    tentative: Vec<(Vec<String>, Fact)>,
    /// A file operation was used as a value (passed, stored, bound: `(lambda f: f(p))(open)`,
    /// `{'k': open}`, `[fs.readFileSync]`, `fs.readFileSync.bind(null)`): any call whose
    /// callee the fold cannot name may be that operation.
    reader_as_value: bool,
    /// The `path:` facts of such calls (a constant first argument), kept at the end of the
    /// pass when [`reader_as_value`](Self::reader_as_value) is set.
    opaque_paths: Vec<Fact>,
    /// Facts about a member of a name, kept at the end of the pass when the name's first
    /// segment is a module the file imports (anywhere: `require('fs')[k]` is visited
    /// before the `require` inside it).
    module_facts: Vec<(String, Fact)>,
}

/// Which names a semantic pass may read as a module when nothing in the file binds them
/// (a star import or an injected global may): the first segments of the names the rules
/// match (`os` of `ref:os.system`), so free names no rule could match cost nothing.
#[derive(Debug, Default)]
pub(crate) struct FreeNames {
    /// Every name (a rule matches `ref:*`).
    any: bool,
    roots: HashSet<String>,
}

impl FreeNames {
    /// The roots of a language's fact patterns (`ref:`, `call:` and `assign:` ones).
    pub(crate) fn of_patterns<'a>(patterns: impl Iterator<Item = &'a str>) -> FreeNames {
        let mut out = FreeNames::default();
        for p in patterns {
            let Some(q) = ["ref:", "call:", "assign:"]
                .iter()
                .find_map(|k| p.strip_prefix(k))
            else {
                continue;
            };
            let root = q.split('.').next().unwrap_or(q);
            if root.contains('*') {
                out.any = true;
            } else {
                out.roots.insert(root.to_string());
            }
        }
        out
    }

    /// Whether a free `name` is read as the module of that name.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.any || self.roots.contains(name)
    }
}

impl<'s> Ctx<'s> {
    pub(crate) fn new(src: &'s [u8], free: &'s FreeNames) -> Self {
        Ctx {
            src,
            text: std::str::from_utf8(src).unwrap_or(""),
            facts: Vec::new(),
            bindings: HashMap::new(),
            temps: RefCell::default(),
            star_imports: Vec::new(),
            imports: Vec::new(),
            overflow: false,
            budget: Cell::new(FOLD_BUDGET),
            free,
            free_used: RefCell::default(),
            bound: HashMap::new(),
            tentative: Vec::new(),
            reader_as_value: false,
            opaque_paths: Vec::new(),
            module_facts: Vec::new(),
        }
    }

    /// Notes that a file operation is used as a value somewhere in the file.
    pub(crate) fn reader_as_value(&mut self) {
        self.reader_as_value = true;
    }

    /// Records the constant first argument `path` of a call at `node` whose callee the
    /// fold cannot name: a `path:` fact if a file operation is used as a value anywhere in
    /// the file (see [`settle_deferred`](Self::settle_deferred)).
    pub(crate) fn opaque_path(&mut self, path: &str, node: Node<'_>) {
        if self.facts.len() + self.opaque_paths.len() >= MAX_FACTS {
            self.overflow = true;
            return;
        }
        self.opaque_paths.push(Fact {
            name: format!("path:{path}"),
            start: node.start_byte(),
            end: node.end_byte(),
        });
    }

    /// Records the fact `name` at `node`, kept if the file imports the module `root`
    /// (see [`settle_deferred`](Self::settle_deferred)).
    pub(crate) fn emit_if_imported(&mut self, root: &str, name: String, node: Node<'_>) {
        if self.facts.len() + self.module_facts.len() >= MAX_FACTS {
            self.overflow = true;
            return;
        }
        let fact = Fact {
            name,
            start: node.start_byte(),
            end: node.end_byte(),
        };
        self.module_facts.push((root.to_string(), fact));
    }

    /// Settles the facts that depend on the whole file: the paths of the calls of unnamed
    /// callees, kept when a file operation was used as a value, and the facts about the
    /// members of imported modules. Flow-insensitive, as the fold is: the order of the
    /// use and of the import or the escape does not matter.
    pub(crate) fn settle_deferred(&mut self) {
        let paths = std::mem::take(&mut self.opaque_paths);
        let mut kept = if self.reader_as_value {
            paths
        } else {
            Vec::new()
        };
        for (root, fact) in std::mem::take(&mut self.module_facts) {
            if self.imports.iter().any(|(m, _, _)| *m == root) {
                kept.push(fact);
            }
        }
        for fact in kept {
            if self.facts.len() >= MAX_FACTS {
                self.overflow = true;
                return;
            }
            self.facts.push(fact);
        }
    }

    /// Folds with `var` bound to each of `items` in turn (a comprehension, a `map`).
    pub(crate) fn with_each<T>(
        &self,
        var: &str,
        items: Vec<Value>,
        mut f: impl FnMut() -> T,
    ) -> Vec<T> {
        items
            .into_iter()
            .map(|item| {
                self.temps.borrow_mut().push((var.to_string(), item));
                let v = f();
                self.temps.borrow_mut().pop();
                v
            })
            .collect()
    }

    /// Notes that a fold read the free name `name` as a module.
    pub(crate) fn used_free(&self, name: &str) {
        let mut used = self.free_used.borrow_mut();
        if !used.iter().any(|n| n == name) {
            used.push(name.to_string());
        }
    }

    /// The free names read since the last call (clearing the list).
    pub(crate) fn take_free(&self) -> Vec<String> {
        self.free_used.take()
    }

    /// Records a fact whose name came from reading the free names `free` as modules: at
    /// once when there are none, else at the end of the pass unless the file binds one.
    pub(crate) fn emit_reading(
        &mut self,
        name: impl Into<String>,
        node: Node<'_>,
        free: &[String],
    ) {
        if free.is_empty() {
            return self.emit(name, node);
        }
        if self.facts.len() + self.tentative.len() >= MAX_FACTS {
            self.overflow = true;
            return;
        }
        let fact = Fact {
            name: name.into(),
            start: node.start_byte(),
            end: node.end_byte(),
        };
        self.tentative.push((free.to_vec(), fact));
    }

    /// Notes that `name` is bound in the scope spanning `scope` (byte range).
    pub(crate) fn bind_in_scope(&mut self, name: String, scope: (usize, usize)) {
        let scopes = self.bound.entry(name).or_default();
        // Bindings come in source order: a scope's names arrive together.
        if scopes.last() != Some(&scope) {
            scopes.push(scope);
        }
    }

    /// Keeps the tentative facts none of whose free names is bound in a scope around them.
    /// Each look-up checks at most [`MAX_SCOPE_STEPS`] scopes (the nearest before the use);
    /// past that the name counts as unbound and the fact is kept (fail closed), so a file
    /// of many bindings cannot make this quadratic.
    pub(crate) fn settle_free(&mut self) {
        for scopes in self.bound.values_mut() {
            scopes.sort_unstable();
            scopes.dedup();
        }
        for (names, fact) in std::mem::take(&mut self.tentative) {
            let shadowed = |n: &String| {
                self.bound.get(n).is_some_and(|scopes| {
                    let before = scopes.partition_point(|&(s, _)| s <= fact.start);
                    scopes[..before]
                        .iter()
                        .rev()
                        .take(MAX_SCOPE_STEPS)
                        .any(|&(_, e)| fact.end <= e)
                })
            };
            if names.iter().any(shadowed) {
                continue;
            }
            if self.facts.len() >= MAX_FACTS {
                self.overflow = true;
                return;
            }
            self.facts.push(fact);
        }
    }

    /// Takes one folding step; false when the budget is spent.
    pub(crate) fn step(&self) -> bool {
        let left = self.budget.get();
        if left == 0 {
            return false;
        }
        self.budget.set(left - 1);
        true
    }

    /// Whether the fact cap or the folding budget was passed.
    pub(crate) fn exhausted(&self) -> bool {
        self.overflow || self.budget.get() == 0
    }

    /// The source text of a node ("" if it does not fall on character boundaries).
    pub(crate) fn text(&self, node: Node<'_>) -> &'s str {
        match self.text.get(node.byte_range()) {
            Some(t) => t,
            None => std::str::from_utf8(self.src.get(node.byte_range()).unwrap_or_default())
                .unwrap_or(""),
        }
    }

    /// Records a fact at a node.
    pub(crate) fn emit(&mut self, name: impl Into<String>, node: Node<'_>) {
        if self.facts.len() >= MAX_FACTS {
            self.overflow = true;
            return;
        }
        self.facts.push(Fact {
            name: name.into(),
            start: node.start_byte(),
            end: node.end_byte(),
        });
    }

    /// Records an import of `module` at a node.
    pub(crate) fn import(&mut self, module: &str, node: Node<'_>) {
        self.emit(format!("import:{module}"), node);
        self.imports
            .push((module.to_string(), node.start_byte(), node.end_byte()));
    }

    /// A comprehension variable or a binding.
    pub(crate) fn lookup(&self, name: &str) -> Option<Value> {
        let temps = self.temps.borrow();
        match temps.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Some(v.clone()),
            None => self.bindings.get(name).cloned(),
        }
    }
}

/// Visits every node of a tree in preorder without recursion, calling `f` with the node,
/// the cursor standing on it (for the name of the field it fills in its parent, asked only
/// where it matters: it costs a lookup), and its ancestors (root first); `f` returns
/// whether to visit the node's children (a string without interpolations has nothing to
/// visit). Stops at the first node nested deeper than `max_depth` (the root is at depth 0)
/// and returns it, so one walk both bounds the tree and extracts from it.
pub(crate) fn walk<'t>(
    root: Node<'t>,
    max_depth: usize,
    mut f: impl FnMut(Node<'t>, &TreeCursor<'t>, &[Node<'t>]) -> bool,
) -> Result<(), Node<'t>> {
    let mut cursor = root.walk();
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        if ancestors.len() > max_depth {
            return Err(node);
        }
        if f(node, &cursor, &ancestors) && cursor.goto_first_child() {
            ancestors.push(node);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(());
            }
            ancestors.pop();
        }
    }
}

/// The file operations whose first constant argument becomes a `path:` fact.
pub(crate) const FILE_OPS: &[&str] = &[
    "open",
    "Path",
    "PurePath",
    "PosixPath",
    "read_text",
    "read_bytes",
    "readFileSync",
    "readFile",
    "createReadStream",
    "openSync",
    "readdirSync",
    "readdir",
    "listdir",
    "scandir",
    "walk",
    "glob",
    "iglob",
    "copy",
    "copyfile",
    "copyFileSync",
    "copyFile",
    "cp",
    "cpSync",
    "opendir",
    "opendirSync",
    "expanduser",
    "loadtxt",
    "read_csv",
    "fromfile",
    "watch",
    "existsSync",
    "statSync",
    "stat",
];

/// Whether a qualified name is one of the [`FILE_OPS`] (its last segment).
pub(crate) fn is_file_op(q: &str) -> bool {
    FILE_OPS.contains(&last_segment(q))
}

/// The last dotted segment of a qualified name.
pub(crate) fn last_segment(q: &str) -> &str {
    q.rsplit('.').next().unwrap_or(q)
}

/// The left operand, operator and right operand of a binary expression (both grammars
/// name the fields alike).
pub(crate) fn binary_parts(node: Node<'_>) -> Option<(Node<'_>, Node<'_>, Node<'_>)> {
    Some((
        node.child_by_field_name("left")?,
        node.child_by_field_name("operator")?,
        node.child_by_field_name("right")?,
    ))
}
