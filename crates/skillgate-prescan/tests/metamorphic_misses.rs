//! The ten programs the `prescan_rewrites` walk found allowed (`docs/FUZZING.md`, issue
//! 19), and shapes of the same kind, each doing what a blocked base program does: every one
//! is blocked now, by the rule of its base or by the rule that blocks the unknown lookup
//! behind it. And the rewrites
//! did not make honest code a finding: the same shapes without a credential path, a
//! sensitive object or a loaded module stay allowed.
use skillgate_core::Language;
mod common;

use common::scan;
use skillgate_prescan::Verdict;

#[test]
fn the_ten_reported_rewrites_are_blocked_by_the_expected_rule() {
    let cases: &[(Language, &str, &str)] = &[
        (
            Language::JavaScript,
            "Object.getOwnPropertyDescriptor(process, 'kill').value(1, 'SIGKILL');",
            "js.process.signal",
        ),
        (
            Language::JavaScript,
            "Object.getOwnPropertyDescriptor(globalThis, 'eval').value('1');",
            "js.dynamic.eval",
        ),
        (
            Language::JavaScript,
            "const g = global;\nObject.getOwnPropertyDescriptor(g, 'Function').value('return 1')();",
            "js.dynamic.eval",
        ),
        (
            Language::JavaScript,
            "Object.getOwnPropertyDescriptor(require('fs'), 'readFileSync').value('/proc/self/environ');",
            "js.files.credentials",
        ),
        (
            Language::JavaScript,
            "Object.entries(process).find(([k]) => k === 'kill')[1](1, 'SIGKILL');",
            "js.globals.tamper",
        ),
        (
            Language::JavaScript,
            "Object.entries(globalThis).find(([k]) => k === 'eval')[1]('1');",
            "js.globals.tamper",
        ),
        (
            Language::JavaScript,
            "[require('fs').readFileSync].map((f) => f('/proc/self/environ'))[0];",
            "js.files.credentials",
        ),
        (
            Language::JavaScript,
            "require('fs').readFileSync.bind(null)('/proc/self/environ');",
            "js.files.credentials",
        ),
        (
            Language::Python,
            "v = {'k': open}\nv['k']('/proc/self/environ')",
            "py.files.credentials",
        ),
        (
            Language::Python,
            "(lambda f: f('/proc/self/environ'))(open)",
            "py.files.credentials",
        ),
        (
            Language::Python,
            "import functools\nfunctools.partial(open, '/proc/self/environ')()",
            "py.files.credentials",
        ),
        // The escape may come after the call it feeds: the analysis is flow-insensitive.
        (
            Language::Python,
            "def run(f):\n    return f('/etc/shadow')\nprint(run(open).read())",
            "py.files.credentials",
        ),
        (
            Language::JavaScript,
            "const fs = require('fs');\nconst call = (f) => f('/root/.aws/credentials');\ncall(fs.readFileSync);",
            "js.files.credentials",
        ),
        // Shapes found next to them by hand: a spread, a prototype, `with`, a bound
        // `Reflect.apply`, a method of a namespace object.
        (
            Language::JavaScript,
            "({...process}).kill(1, 'SIGKILL');",
            "js.globals.tamper",
        ),
        (
            Language::JavaScript,
            "const p = Object.create(process);\np.kill(1);",
            "js.process.signal",
        ),
        (
            Language::JavaScript,
            "with (process) { kill(1); }",
            "js.globals.tamper",
        ),
        (
            Language::JavaScript,
            "const f = require('fs');\nconst r = Reflect.apply.bind(null, f.readFileSync, f);\nr(['/proc/self/environ']);",
            "js.files.credentials",
        ),
        (
            Language::JavaScript,
            "const o = { r: require('fs').readFileSync };\no.r('/proc/self/environ');",
            "js.files.credentials",
        ),
        (
            Language::Python,
            "import types\nns = types.SimpleNamespace(r=open)\nns.r('/proc/self/environ')",
            "py.files.credentials",
        ),
        // A module's member by a computed key, the module loaded inside the expression.
        (
            Language::JavaScript,
            "const k = process.argv[2];\nrequire('fs')[k]('/proc/self/environ');",
            "js.dynamic.module-member",
        ),
    ];
    for (lang, code, rule) in cases {
        let (verdict, ids) = scan(code, *lang);
        assert_eq!(verdict, Verdict::Block, "{code}\n  findings: {ids:?}");
        assert!(
            ids.iter().any(|i| i == rule),
            "{code}\n  no {rule} in {ids:?}"
        );
    }
}

#[test]
fn the_same_shapes_in_honest_code_stay_allowed() {
    let cases: &[(Language, &str)] = &[
        (
            Language::Python,
            "import json, sys\nrows = json.load(sys.stdin)\nfmt = {'n': len}\nprint(json.dumps({'n': fmt['n'](rows)}))",
        ),
        (
            Language::Python,
            "import json, sys\nfiles = list(map(open, ['/tmp/a.csv']))\nlabel = (lambda s: s.upper())('total')\nprint(json.dumps({'label': label}))",
        ),
        (
            Language::JavaScript,
            "const fs = require('fs');\nconst input = JSON.parse(fs.readFileSync(0, 'utf8'));\nconst totals = {};\nfor (const [k, v] of Object.entries(input.rows)) totals[k] = v;\nconsole.log(JSON.stringify(Object.values(totals)));",
        ),
        (
            Language::JavaScript,
            "const ops = { add: (a, b) => a + b };\nconst input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\nconsole.log(ops[input.op](1, 2), Math[input.fn](4));",
        ),
        (
            Language::JavaScript,
            "const d = Object.getOwnPropertyDescriptor(Array.prototype, 'length');\nconsole.log(JSON.stringify({ writable: d.writable }));",
        ),
    ];
    for (lang, code) in cases {
        let (verdict, ids) = scan(code, *lang);
        assert_eq!(verdict, Verdict::Allow, "{code}\n  findings: {ids:?}");
    }
}
