//! Meaning-preserving rewrites of dangerous JavaScript programs (the `prescan_rewrites`
//! target): `module.attr(args)` of a rule example, with the module required, the property
//! read, the function aliased and the call wrapped in ways the fuzzer picks.
use crate::names::{Names, base64, codes, hex, pick, reversed, split};
use arbitrary::Unstructured;

/// Where the dangerous function lives.
#[derive(Debug, Clone, Copy)]
pub enum Home {
    /// A module reached with `require`.
    Module(&'static str),
    /// A global object (`process`).
    Global(&'static str),
    /// The function is itself a global (`eval`).
    Bare,
}

/// A dangerous call from a rule's examples.
#[derive(Debug, Clone, Copy)]
pub struct Base {
    /// The rule whose example it is.
    pub rule: &'static str,
    /// Where the function lives.
    pub home: Home,
    /// The function.
    pub attr: &'static str,
    /// The call's arguments.
    pub args: &'static str,
}

/// The base programs (each the example, or a `must_match`, of the rule named).
pub const BASES: &[Base] = &[
    Base {
        rule: "js.process.child-process",
        home: Home::Module("child_process"),
        attr: "execSync",
        args: "'id'",
    },
    Base {
        rule: "js.process.signal",
        home: Home::Global("process"),
        attr: "kill",
        args: "1, 'SIGKILL'",
    },
    Base {
        rule: "js.dynamic.eval",
        home: Home::Bare,
        attr: "eval",
        args: "'1'",
    },
    Base {
        rule: "js.dynamic.eval",
        home: Home::Bare,
        attr: "Function",
        args: "'return process'",
    },
    Base {
        rule: "js.files.credentials",
        home: Home::Module("fs"),
        attr: "readFileSync",
        args: "'/proc/self/environ'",
    },
];

/// A generated program and the rewrites that made it.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The base program's index in [`BASES`].
    pub base: usize,
    /// The program text.
    pub code: String,
    /// One label per rewrite applied (`js.module.alias`, `js.str.hex`, ...).
    pub rewrites: Vec<String>,
}

#[derive(Default)]
struct Builder {
    top: Vec<String>,
    rewrites: Vec<String>,
    names: Names,
}

impl Builder {
    fn tag(&mut self, label: &str) {
        self.rewrites.push(label.to_string());
    }

    /// `s` as a JavaScript expression, encoded in a way the fuzzer picks.
    fn string(&mut self, u: &mut Unstructured, s: &str) -> String {
        let (a, b) = split(u, s);
        let (label, expr) = match pick(u, 12) {
            0 => return format!("'{s}'"),
            1 => ("concat", format!("'{a}' + '{b}'")),
            2 => (
                "join",
                format!(
                    "[{}].join('')",
                    s.chars()
                        .map(|c| format!("'{c}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            3 => (
                "hex",
                format!("Buffer.from('{}', 'hex').toString()", hex(s)),
            ),
            4 => ("atob", format!("atob('{}')", base64(s))),
            5 => ("fromCharCode", format!("String.fromCharCode({})", codes(s))),
            6 => (
                "reverse",
                format!("'{}'.split('').reverse().join('')", reversed(s)),
            ),
            7 => ("template", format!("`{a}${{'{b}'}}`")),
            8 => ("replace", format!("'{a}_@_{b}'.replace('_@_', '')")),
            9 => (
                "base64",
                format!("Buffer.from('{}', 'base64').toString()", base64(s)),
            ),
            10 => (
                "hex-escape",
                format!(
                    "'{}'",
                    s.bytes().map(|c| format!("\\x{c:02x}")).collect::<String>()
                ),
            ),
            _ => (
                "unicode-escape",
                format!(
                    "'{}'",
                    s.chars()
                        .map(|c| format!("\\u{:04x}", c as u32))
                        .collect::<String>()
                ),
            ),
        };
        self.tag(&format!("js.str.{label}"));
        expr
    }

    /// An expression for the object holding the function (`Err`: the function itself).
    fn home(&mut self, u: &mut Unstructured, base: &Base) -> Result<String, String> {
        match base.home {
            Home::Module(m) => self.module(u, m, base.attr),
            Home::Global(g) => Ok(match pick(u, 7) {
                0 => g.to_string(),
                1 => {
                    self.tag("js.global.globalThis");
                    format!("globalThis.{g}")
                }
                2 => {
                    self.tag("js.global.global-index");
                    format!("global[{}]", self.string(u, g))
                }
                3 => {
                    self.tag("js.global.assign");
                    let a = self.names.fresh(u);
                    self.top.push(format!("const {a} = {g};"));
                    a
                }
                4 => {
                    self.tag("js.global.require");
                    format!("require({})", self.string(u, g))
                }
                5 => {
                    self.tag("js.global.globalThis-index");
                    format!("globalThis[{}]", self.string(u, g))
                }
                _ => {
                    self.tag("js.global.reflect-get");
                    format!("Reflect.get(globalThis, {})", self.string(u, g))
                }
            }),
            Home::Bare => match pick(u, 4) {
                0 => Err(base.attr.to_string()),
                1 => {
                    self.tag("js.bare.globalThis");
                    Ok("globalThis".into())
                }
                2 => {
                    self.tag("js.bare.global");
                    Ok("global".into())
                }
                _ => {
                    self.tag("js.bare.assign-globalThis");
                    let a = self.names.fresh(u);
                    self.top.push(format!("const {a} = globalThis;"));
                    Ok(a)
                }
            },
        }
    }

    fn module(&mut self, u: &mut Unstructured, m: &str, attr: &str) -> Result<String, String> {
        let (label, expr) = match pick(u, 8) {
            0 => return Ok(format!("require('{m}')")),
            1 => {
                let a = self.names.fresh(u);
                let name = self.string(u, m);
                self.top.push(format!("const {a} = require({name});"));
                ("assign", a)
            }
            2 => (
                "node-prefix",
                format!("require({})", self.string(u, &format!("node:{m}"))),
            ),
            3 => {
                let a = self.names.fresh(u);
                let name = self.string(u, m);
                self.top
                    .push(format!("const {{ {attr}: {a} }} = require({name});"));
                self.tag("js.module.destructure-as");
                return Err(a);
            }
            4 => {
                let name = self.string(u, m);
                self.top
                    .push(format!("const {{ {attr} }} = require({name});"));
                self.tag("js.module.destructure");
                return Err(attr.to_string());
            }
            5 => (
                "mainModule",
                format!("process.mainModule.require({})", self.string(u, m)),
            ),
            6 => (
                "module-require",
                format!("module.require({})", self.string(u, m)),
            ),
            _ => {
                let r = self.names.fresh(u);
                self.top.push(format!("const {r} = require;"));
                ("require-alias", format!("{r}({})", self.string(u, m)))
            }
        };
        self.tag(&format!("js.module.{label}"));
        Ok(expr)
    }

    /// The function, read from `object` in a way the fuzzer picks.
    fn property(&mut self, u: &mut Unstructured, object: &str, attr: &str) -> String {
        let (label, expr) = match pick(u, 6) {
            0 => return format!("{object}.{attr}"),
            1 => ("index", format!("{object}[{}]", self.string(u, attr))),
            2 => (
                "reflect-get",
                format!("Reflect.get({object}, {})", self.string(u, attr)),
            ),
            3 => {
                let a = self.names.fresh(u);
                self.top
                    .push(format!("const {{ {attr}: {a} }} = {object};"));
                ("destructure", a)
            }
            4 => (
                "descriptor",
                format!(
                    "Object.getOwnPropertyDescriptor({object}, {}).value",
                    self.string(u, attr)
                ),
            ),
            _ => (
                "entries",
                format!(
                    "Object.entries({object}).find(([k]) => k === {})[1]",
                    self.string(u, attr)
                ),
            ),
        };
        self.tag(&format!("js.prop.{label}"));
        expr
    }

    /// The call of `func` through aliases the fuzzer picks; statements go to `body`.
    fn call(
        &mut self,
        u: &mut Unstructured,
        func: &str,
        args: &str,
        body: &mut Vec<String>,
    ) -> String {
        let (label, expr) = match pick(u, 7) {
            0 => return format!("{func}({args})"),
            1 => {
                let a = self.names.fresh(u);
                body.push(format!("const {a} = {func};"));
                ("assign", format!("{a}({args})"))
            }
            2 => ("call", format!("{func}.call(null, {args})")),
            3 => ("apply", format!("{func}.apply(null, [{args}])")),
            4 => (
                "reflect-apply",
                format!("Reflect.apply({func}, null, [{args}])"),
            ),
            5 => ("bind", format!("{func}.bind(null)({args})")),
            _ => ("array-map", format!("[{func}].map((f) => f({args}))[0]")),
        };
        self.tag(&format!("js.call.{label}"));
        expr
    }

    /// Wraps `body` and `expr` once, as the fuzzer picks.
    fn wrap(
        &mut self,
        u: &mut Unstructured,
        body: Vec<String>,
        expr: String,
    ) -> (Vec<String>, String) {
        let inner = body.join(" ");
        let (label, lines, value) = match pick(u, 10) {
            0 => return (body, expr),
            1 => {
                let f = self.names.fresh(u);
                (
                    "function",
                    vec![format!("function {f}() {{ {inner} return {expr}; }}")],
                    format!("{f}()"),
                )
            }
            2 => (
                "arrow-iife",
                vec![],
                format!("(() => {{ {inner} return {expr}; }})()"),
            ),
            3 => (
                "array-map",
                vec![],
                format!("[0].map(() => {{ {inner} return {expr}; }})"),
            ),
            4 => {
                let k = self.names.fresh(u);
                (
                    "static-block",
                    vec![format!(
                        "class {k} {{ static {{ {inner} {k}.r = {expr}; }} }}"
                    )],
                    format!("{k}.r"),
                )
            }
            5 => {
                let k = self.names.fresh(u);
                (
                    "class-method",
                    vec![format!("class {k} {{ m() {{ {inner} return {expr}; }} }}")],
                    format!("new {k}().m()"),
                )
            }
            6 => (
                "set-timeout",
                vec![],
                format!("setTimeout(() => {{ {inner} {expr}; }}, 0)"),
            ),
            7 => (
                "promise",
                vec![],
                format!("new Promise((r) => {{ {inner} r({expr}); }})"),
            ),
            8 => {
                let f = self.names.fresh(u);
                (
                    "async-function",
                    vec![format!("async function {f}() {{ {inner} return {expr}; }}")],
                    format!("{f}()"),
                )
            }
            _ => {
                let f = self.names.fresh(u);
                (
                    "generator",
                    vec![format!("function* {f}() {{ {inner} yield {expr}; }}")],
                    format!("{f}().next().value"),
                )
            }
        };
        self.tag(&format!("js.wrap.{label}"));
        (lines, value)
    }
}

/// The variant of a base program that `u` picks (the base program itself when `u` is
/// empty).
pub fn variant(u: &mut Unstructured) -> Variant {
    let index = pick(u, BASES.len());
    let base = BASES[index];
    let mut b = Builder::default();
    let func = match b.home(u, &base) {
        Ok(object) => b.property(u, &object, base.attr),
        Err(func) => func,
    };
    let mut body = Vec::new();
    let mut expr = b.call(u, &func, base.args, &mut body);
    for _ in 0..pick(u, 3) {
        (body, expr) = b.wrap(u, body, expr);
    }
    let mut lines = b.top.clone();
    lines.extend(body);
    lines.push(format!("{expr};"));
    Variant {
        base: index,
        code: lines.join("\n") + "\n",
        rewrites: b.rewrites,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_is_the_base_program() {
        let v = variant(&mut Unstructured::new(&[]));
        assert_eq!(v.code, "require('child_process').execSync('id');\n");
        assert!(v.rewrites.is_empty());
    }

    #[test]
    fn every_base_program_is_blocked() {
        for (i, base) in BASES.iter().enumerate() {
            let v = variant(&mut Unstructured::new(&[i as u8]));
            assert_eq!(v.base, i);
            assert!(
                crate::prescan::blocks(&v.code, skillgate::Language::JavaScript),
                "{} base not blocked:\n{}",
                base.rule,
                v.code
            );
        }
    }
}
