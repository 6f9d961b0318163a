//! Meaning-preserving rewrites of dangerous Python programs (the `prescan_rewrites`
//! target): the program `module.attr(args)` of a rule example, with the module reached,
//! the attribute looked up, the function aliased and the call wrapped in ways the fuzzer
//! picks. Every variant does what the base program does, so the pre-scan must block it.
use crate::names::{Names, base64, codes, hex, pick, reversed, rot13, split};
use arbitrary::Unstructured;
use std::collections::BTreeSet;

/// A dangerous call from a rule's examples.
#[derive(Debug, Clone, Copy)]
pub struct Base {
    /// The rule whose example it is.
    pub rule: &'static str,
    /// The module the function lives in (`None`: a builtin).
    pub module: Option<&'static str>,
    /// The function.
    pub attr: &'static str,
    /// The call's arguments.
    pub args: &'static str,
}

/// The base programs (each the example, or a `must_match`, of the rule named).
pub const BASES: &[Base] = &[
    Base {
        rule: "py.process.os-exec",
        module: Some("os"),
        attr: "system",
        args: "'id'",
    },
    Base {
        rule: "py.process.os-exec",
        module: Some("os"),
        attr: "popen",
        args: "'id'",
    },
    Base {
        rule: "py.process.signal",
        module: Some("os"),
        attr: "kill",
        args: "1, 9",
    },
    Base {
        rule: "py.dynamic.exec",
        module: None,
        attr: "eval",
        args: "'1+1'",
    },
    Base {
        rule: "py.dynamic.exec",
        module: None,
        attr: "exec",
        args: "'x = 1'",
    },
    Base {
        rule: "py.files.credentials",
        module: None,
        attr: "open",
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
    /// One label per rewrite applied (`py.module.alias`, `py.str.hex`, ...).
    pub rewrites: Vec<String>,
}

#[derive(Default)]
struct Builder {
    imports: BTreeSet<String>,
    top: Vec<String>,
    rewrites: Vec<String>,
    names: Names,
}

impl Builder {
    fn tag(&mut self, label: &str) {
        self.rewrites.push(label.to_string());
    }

    /// `s` as a Python expression, encoded in a way the fuzzer picks.
    fn string(&mut self, u: &mut Unstructured, s: &str) -> String {
        let (a, b) = split(u, s);
        let (label, expr) = match pick(u, 12) {
            0 => return format!("'{s}'"),
            1 => ("concat", format!("'{a}' + '{b}'")),
            2 => (
                "join",
                format!(
                    "''.join([{}])",
                    s.chars()
                        .map(|c| format!("'{c}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            3 => ("hex", format!("bytes.fromhex('{}').decode()", hex(s))),
            4 => ("reverse", format!("'{}'[::-1]", reversed(s))),
            5 => (
                "chr",
                s.chars()
                    .map(|c| format!("chr({})", c as u32))
                    .collect::<Vec<_>>()
                    .join(" + "),
            ),
            6 => {
                self.imports.insert("import base64".into());
                (
                    "base64",
                    format!("base64.b64decode('{}').decode()", base64(s)),
                )
            }
            7 => {
                self.imports.insert("import codecs".into());
                ("rot13", format!("codecs.decode('{}', 'rot13')", rot13(s)))
            }
            8 => ("fstring", format!("f\"{{'{a}'}}{b}\"")),
            9 => ("percent", format!("'%s%s' % ('{a}', '{b}')")),
            10 => ("map-chr", format!("''.join(map(chr, [{}]))", codes(s))),
            _ => ("replace", format!("'{a}_@_{b}'.replace('_@_', '')")),
        };
        self.tag(&format!("py.str.{label}"));
        expr
    }

    /// An expression for the module (`Err`: the function itself, when the rewrite binds it
    /// by name).
    fn module(&mut self, u: &mut Unstructured, base: &Base) -> Result<String, String> {
        let Some(m) = base.module else {
            return match pick(u, 6) {
                0 => Err(base.attr.to_string()),
                1 => {
                    self.tag("py.builtins.import");
                    self.imports.insert("import builtins".into());
                    Ok("builtins".into())
                }
                2 => {
                    self.tag("py.builtins.import-as");
                    let alias = self.names.fresh(u);
                    self.imports.insert(format!("import builtins as {alias}"));
                    Ok(alias)
                }
                3 => {
                    self.tag("py.builtins.dunder");
                    Ok("__builtins__".into())
                }
                4 => {
                    self.tag("py.builtins.__import__");
                    Ok(format!("__import__({})", self.string(u, "builtins")))
                }
                _ => {
                    self.tag("py.builtins.globals");
                    let key = self.string(u, "__builtins__");
                    Ok(format!("globals()[{key}]"))
                }
            };
        };
        let plain = format!("import {m}");
        Ok(match pick(u, 11) {
            0 => {
                self.imports.insert(plain);
                m.to_string()
            }
            1 => {
                self.tag("py.module.import-as");
                let alias = self.names.fresh(u);
                self.imports.insert(format!("import {m} as {alias}"));
                alias
            }
            2 => {
                self.tag("py.module.__import__");
                format!("__import__({})", self.string(u, m))
            }
            3 => {
                self.tag("py.module.importlib");
                self.imports.insert("import importlib".into());
                format!("importlib.import_module({})", self.string(u, m))
            }
            4 => {
                self.tag("py.module.sys-modules");
                self.imports.insert("import sys".into());
                format!("sys.modules[{}]", self.string(u, m))
            }
            5 => {
                self.tag("py.module.assign-__import__");
                let alias = self.names.fresh(u);
                let name = self.string(u, m);
                self.top.push(format!("{alias} = __import__({name})"));
                alias
            }
            6 => {
                self.tag("py.module.assign");
                let alias = self.names.fresh(u);
                self.imports.insert(plain);
                self.top.push(format!("{alias} = {m}"));
                alias
            }
            7 => {
                self.tag("py.module.globals");
                self.imports.insert(plain);
                format!("globals()[{}]", self.string(u, m))
            }
            8 => {
                self.tag("py.module.star-import");
                self.imports.insert(format!("from {m} import *"));
                return Err(base.attr.to_string());
            }
            9 => {
                self.tag("py.module.from-import-as");
                let alias = self.names.fresh(u);
                self.imports
                    .insert(format!("from {m} import {} as {alias}", base.attr));
                return Err(alias);
            }
            _ => {
                self.tag("py.module.from-import");
                self.imports
                    .insert(format!("from {m} import {}", base.attr));
                return Err(base.attr.to_string());
            }
        })
    }

    /// The function, looked up on `module` in a way the fuzzer picks.
    fn attribute(&mut self, u: &mut Unstructured, module: &str, attr: &str) -> String {
        let (label, expr) = match pick(u, 6) {
            0 => return format!("{module}.{attr}"),
            1 => (
                "getattr",
                format!("getattr({module}, {})", self.string(u, attr)),
            ),
            2 => (
                "__dict__",
                format!("{module}.__dict__[{}]", self.string(u, attr)),
            ),
            3 => ("vars", format!("vars({module})[{}]", self.string(u, attr))),
            4 => {
                self.imports.insert("import operator".into());
                (
                    "attrgetter",
                    format!("operator.attrgetter({})({module})", self.string(u, attr)),
                )
            }
            _ => (
                "__getattribute__",
                format!("{module}.__getattribute__({})", self.string(u, attr)),
            ),
        };
        self.tag(&format!("py.attr.{label}"));
        expr
    }

    /// The call of `func`, through aliases the fuzzer picks; statements it needs go to
    /// `body`.
    fn call(
        &mut self,
        u: &mut Unstructured,
        func: &str,
        args: &str,
        body: &mut Vec<String>,
    ) -> String {
        let (label, expr) = match pick(u, 6) {
            0 => return format!("{func}({args})"),
            1 => {
                let alias = self.names.fresh(u);
                body.push(format!("{alias} = {func}"));
                ("assign", format!("{alias}({args})"))
            }
            2 => {
                let (a, b) = (self.names.fresh(u), self.names.fresh(u));
                body.push(format!("{a} = {func}"));
                body.push(format!("{b} = {a}"));
                ("assign-chain", format!("{b}({args})"))
            }
            3 => {
                self.imports.insert("import functools".into());
                ("partial", format!("functools.partial({func}, {args})()"))
            }
            4 => {
                let a = self.names.fresh(u);
                ("lambda-arg", format!("(lambda {a}: {a}({args}))({func})"))
            }
            _ => {
                let d = self.names.fresh(u);
                body.push(format!("{d} = {{'k': {func}}}"));
                ("dict", format!("{d}['k']({args})"))
            }
        };
        self.tag(&format!("py.call.{label}"));
        expr
    }

    /// Wraps `body` (statements) and `expr` (the value) once, as the fuzzer picks.
    fn wrap(
        &mut self,
        u: &mut Unstructured,
        body: Vec<String>,
        expr: String,
    ) -> (Vec<String>, String) {
        let indent =
            |lines: &[String]| lines.iter().map(|l| format!("    {l}")).collect::<Vec<_>>();
        let (label, lines, value) = match pick(u, 9) {
            0 => return (body, expr),
            1 => {
                let f = self.names.fresh(u);
                let mut lines = vec![format!("def {f}():")];
                lines.extend(indent(&body));
                lines.push(format!("    return {expr}"));
                ("def", lines, format!("{f}()"))
            }
            2 => ("lambda", body, format!("(lambda: {expr})()")),
            3 => ("listcomp", body, format!("[{expr} for _ in range(1)]")),
            4 => ("genexp", body, format!("list({expr} for _ in [0])")),
            5 => {
                let (d, f) = (self.names.fresh(u), self.names.fresh(u));
                let mut lines = vec![
                    format!("def {d}(g):"),
                    "    return g()".to_string(),
                    format!("@{d}"),
                    format!("def {f}():"),
                ];
                lines.extend(indent(&body));
                lines.push(format!("    return {expr}"));
                ("decorator", lines, f)
            }
            6 => {
                let k = self.names.fresh(u);
                let mut lines = vec![format!("class {k}:")];
                lines.extend(indent(&body));
                lines.push(format!("    r = {expr}"));
                ("class-body", lines, format!("{k}.r"))
            }
            7 => {
                let v = self.names.fresh(u);
                let mut lines = vec!["try:".to_string()];
                lines.extend(indent(&body));
                lines.push(format!("    {v} = {expr}"));
                lines.push("except Exception:".into());
                lines.push(format!("    {v} = None"));
                ("try", lines, v)
            }
            _ => {
                let v = self.names.fresh(u);
                let mut lines = vec!["if __name__ == '__main__':".to_string()];
                lines.extend(indent(&body));
                lines.push(format!("    {v} = {expr}"));
                ("main-guard", lines, v)
            }
        };
        self.tag(&format!("py.wrap.{label}"));
        (lines, value)
    }
}

/// The variant of a base program that `u` picks (the base program itself when `u` is
/// empty).
pub fn variant(u: &mut Unstructured) -> Variant {
    let index = pick(u, BASES.len());
    let base = BASES[index];
    let mut b = Builder::default();
    let func = match b.module(u, &base) {
        Ok(module) => b.attribute(u, &module, base.attr),
        Err(func) => func,
    };
    let mut body = Vec::new();
    let mut expr = b.call(u, &func, base.args, &mut body);
    for _ in 0..pick(u, 3) {
        (body, expr) = b.wrap(u, body, expr);
    }
    let mut lines: Vec<String> = b.imports.iter().cloned().collect();
    lines.extend(b.top.iter().cloned());
    lines.extend(body);
    lines.push(expr);
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
        assert_eq!(v.code, "import os\nos.system('id')\n");
        assert!(v.rewrites.is_empty());
    }

    #[test]
    fn every_base_program_is_blocked() {
        for (i, base) in BASES.iter().enumerate() {
            let v = variant(&mut Unstructured::new(&[i as u8]));
            assert_eq!(v.base, i);
            assert!(
                crate::prescan::blocks(&v.code, skillgate::Language::Python),
                "{} base not blocked:\n{}",
                base.rule,
                v.code
            );
        }
    }
}
