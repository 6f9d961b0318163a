//! The scanner's behaviour: verdicts, locations, bounds, suppression comments, rule
//! loading errors.
use skillgate_core::{Language, Severity};
use skillgate_prescan::{
    PreScanner, RuleError, RuleSet, ScanLimits, ScanOptions, UnknownModuleAction, Verdict,
    engine_rules,
};
use std::sync::Arc;
use std::time::Duration;

fn scanner() -> PreScanner {
    PreScanner::new().expect("default packs load")
}

fn ids(code: &str, lang: Language) -> (Verdict, Vec<String>) {
    let r = scanner().scan(code.as_bytes(), lang);
    (
        r.verdict,
        r.findings.into_iter().map(|f| f.rule_id).collect(),
    )
}

#[test]
fn the_example_skills_pass() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skills");
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let scripts = entry.unwrap().path().join("scripts");
        for f in std::fs::read_dir(&scripts).unwrap() {
            let path = f.unwrap().path();
            let lang =
                Language::from_extension(path.extension().unwrap().to_str().unwrap()).unwrap();
            let report = scanner().scan(&std::fs::read(&path).unwrap(), lang);
            assert_ne!(
                report.verdict,
                Verdict::Block,
                "{}: {:?}",
                path.display(),
                report.findings
            );
            seen += 1;
        }
    }
    assert!(seen >= 2);
}

#[test]
fn findings_carry_rule_line_column_and_snippet() {
    let code = "import json\n\nx = 1;  import subprocess\n";
    let r = scanner().scan(code.as_bytes(), Language::Python);
    assert_eq!(r.verdict, Verdict::Block);
    let f = &r.findings[0];
    assert_eq!(f.rule_id, "py.process.subprocess");
    let loc = f.location.unwrap();
    assert_eq!((loc.line, loc.column), (3, 16));
    assert_eq!(f.snippet.as_deref(), Some("subprocess"));
}

#[test]
fn columns_count_characters_not_bytes() {
    let code = "s = 'ééé'; eval(s)\n";
    let r = scanner().scan(code.as_bytes(), Language::Python);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule_id == "py.dynamic.exec")
        .unwrap();
    assert_eq!(f.location.unwrap().column, 12);
}

#[test]
fn suppression_comments_are_ignored() {
    for (code, lang) in [
        ("import os\nos.system('id')  # nosec\n", Language::Python),
        (
            "import os  # noqa\nos.system('id')  # noqa: S605\n",
            Language::Python,
        ),
        (
            "# nosec\n# skillgate: ignore\neval('1')\n",
            Language::Python,
        ),
        (
            "// eslint-disable-next-line\neval('1') // eslint-disable-line\n",
            Language::JavaScript,
        ),
        (
            "/* eslint-disable */\nrequire('child_process') // nosec\n",
            Language::JavaScript,
        ),
    ] {
        assert_eq!(ids(code, lang).0, Verdict::Block, "{code}");
    }
}

#[test]
fn unknown_modules_warn_by_default_and_block_when_configured() {
    let (v, f) = ids("import yaml\n", Language::Python);
    assert_eq!(v, Verdict::Warn);
    assert_eq!(f, vec![engine_rules::PY_UNLISTED]);
    let (v, f) = ids("const _ = require('lodash');\n", Language::JavaScript);
    assert_eq!(v, Verdict::Warn);
    assert_eq!(f, vec![engine_rules::JS_UNLISTED]);
    let strict = PreScanner::with_rules(
        Arc::new(RuleSet::embedded().unwrap()),
        ScanOptions {
            unknown_module: UnknownModuleAction::Block,
            ..ScanOptions::default()
        },
    );
    assert_eq!(
        strict.scan(b"import yaml\n", Language::Python).verdict,
        Verdict::Block
    );
    // Allowed modules and their submodules give nothing.
    assert_eq!(
        ids(
            "import matplotlib.pyplot as plt\nfrom urllib.parse import quote\n",
            Language::Python
        )
        .0,
        Verdict::Allow
    );
    assert_eq!(
        ids(
            "const fsp = require('node:fs/promises');\n",
            Language::JavaScript
        )
        .0,
        Verdict::Allow
    );
}

#[test]
fn the_threshold_decides_between_warn_and_block() {
    let code = b"import os\nprint(os.environ['HOME'])\n";
    assert_eq!(
        scanner().scan(code, Language::Python).verdict,
        Verdict::Warn
    );
    let strict = PreScanner::with_rules(
        Arc::new(RuleSet::embedded().unwrap()),
        ScanOptions {
            threshold: Severity::Medium,
            ..ScanOptions::default()
        },
    );
    assert_eq!(strict.scan(code, Language::Python).verdict, Verdict::Block);
}

#[test]
fn syntax_errors_block_with_a_location() {
    let r = scanner().scan(b"def f(:\n    pass\n", Language::Python);
    assert_eq!(r.verdict, Verdict::Block);
    assert_eq!(r.findings[0].rule_id, engine_rules::PARSE_ERROR);
    assert_eq!(r.findings[0].location.unwrap().line, 1);
    let r = scanner().scan(b"function ( {\n", Language::JavaScript);
    assert_eq!(r.findings[0].rule_id, engine_rules::PARSE_ERROR);
}

#[test]
fn deep_nesting_blocks_without_overflowing_the_stack() {
    let deep = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    let r = scanner().scan(deep.as_bytes(), Language::Python);
    assert_eq!(r.verdict, Verdict::Block);
    assert_eq!(
        r.findings[0].rule_id,
        engine_rules::TOO_DEEP,
        "{:?}",
        r.findings
    );
    let deep = format!("x = {}1{};\n", "[".repeat(5000), "]".repeat(5000));
    let r = scanner().scan(deep.as_bytes(), Language::JavaScript);
    assert_eq!(
        r.findings[0].rule_id,
        engine_rules::TOO_DEEP,
        "{:?}",
        r.findings
    );
}

#[test]
fn long_concatenation_chains_fold_without_overflowing() {
    // A flat-looking chain is a deep left-nested tree; the fold gives up past its depth
    // bound instead of recursing without end, and an import it cannot resolve blocks.
    let chain = (0..150).map(|_| "'a'").collect::<Vec<_>>().join(" + ");
    let r = scanner().scan(format!("x = {chain}\n").as_bytes(), Language::Python);
    assert_eq!(r.verdict, Verdict::Allow, "{:?}", r.findings);
    let r = scanner().scan(
        format!("__import__('o' + {chain} + 's')\n").as_bytes(),
        Language::Python,
    );
    assert_eq!(r.verdict, Verdict::Block);
    assert!(
        r.findings.iter().any(|f| f.rule_id == "py.dynamic.import"),
        "{:?}",
        r.findings
    );
}

#[test]
fn oversized_and_non_utf8_code_blocks() {
    let small = PreScanner::with_rules(
        Arc::new(RuleSet::embedded().unwrap()),
        ScanOptions {
            limits: ScanLimits {
                max_bytes: 10,
                ..ScanLimits::default()
            },
            ..ScanOptions::default()
        },
    );
    let r = small.scan(b"print('hello world')\n", Language::Python);
    assert_eq!(
        (r.verdict, r.findings[0].rule_id.as_str()),
        (Verdict::Block, engine_rules::TOO_LARGE)
    );
    let r = scanner().scan(b"x = '\xff\xfe'\n", Language::Python);
    assert_eq!(r.findings[0].rule_id, engine_rules::NOT_UTF8);
}

#[test]
fn a_parse_that_passes_its_time_budget_blocks() {
    let hurried = PreScanner::with_rules(
        Arc::new(RuleSet::embedded().unwrap()),
        ScanOptions {
            limits: ScanLimits {
                parse_timeout: Duration::ZERO,
                ..ScanLimits::default()
            },
            ..ScanOptions::default()
        },
    );
    let code = "x = 1\n".repeat(20_000);
    let r = hurried.scan(code.as_bytes(), Language::Python);
    assert_eq!(r.verdict, Verdict::Block);
    assert_eq!(r.findings[0].rule_id, engine_rules::TIMEOUT);
}

#[test]
fn a_broken_rule_file_names_the_file_and_the_rule() {
    let good = |t: &str| (Language::Python, "good.toml".to_string(), t.to_string());
    let rule = |extra: &str| {
        format!(
            "[[rule]]\nid = \"t.one\"\nseverity = \"high\"\nmessage = \"m\"\nwhat = \"w\"\nwhy = \"y\"\nexample = \"e\"\nmust_match = [\"eval('1')\"]\n{extra}"
        )
    };
    let err = RuleSet::from_sources(vec![good(&rule("queries = [\"(call (nonsense_node))\"]"))])
        .unwrap_err();
    assert!(
        matches!(&err, RuleError::Rule { rule, file, .. } if rule == "t.one" && file == "good.toml"),
        "{err}"
    );
    let err = RuleSet::from_sources(vec![good(&rule(""))])
        .unwrap_err()
        .to_string();
    assert!(err.contains("t.one") && err.contains("facts"), "{err}");
    let err = RuleSet::from_sources(vec![good("[[rule]]\nid = 3\n")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("good.toml"), "{err}");
    let err = RuleSet::from_sources(vec![good(&rule("facts = [\"ref:eval\"]\nseverty = \"x\""))])
        .unwrap_err()
        .to_string();
    assert!(err.contains("severty"), "{err}");
    let ok = RuleSet::from_sources(vec![good(&rule("facts = [\"ref:eval\"]"))]).unwrap();
    assert_eq!(ok.rules().len(), 1);
}

#[test]
fn rules_load_from_a_directory_like_the_repository() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/prescan");
    let from_dir = RuleSet::load_dir(&dir).unwrap();
    assert_eq!(
        from_dir.rules().len(),
        RuleSet::embedded().unwrap().rules().len()
    );
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        RuleSet::load_dir(tmp.path())
            .unwrap_err()
            .to_string()
            .contains("python")
    );
}

#[test]
fn obfuscated_python_is_seen_through() {
    for code in [
        "o = __import__('o' + 's')\no.system('id')\n",
        "import importlib as il\nm = il.import_module(''.join(['sub', 'process']))\n",
        "s = __import__('builtins').__dict__['__imp' + 'ort__']('os')\n",
        "getattr(__import__('os'), 'sys' 'tem')('id')\n",
        "x = '%c%c' % (111, 115)\n__import__(x).system('id')\n",
        "from os import *\nexecl('/bin/sh', 'sh')\n",
        "import os\nf = getattr(os, 'popen')\n",
        "ｅｘｅｃ('print(1)')\n",
        "import ｓｕｂｐｒｏｃｅｓｓ\n",
        "(lambda: 0).__globals__['__builtins__']\n",
        "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'Popen']\n",
        "__import__(''.join(chr(c) for c in [111, 115])).system('id')\n",
        "__import__('so'[::-1])\n",
        "__import__(b'\\x6f\\x73'.decode())\n",
    ] {
        let (v, f) = ids(code, Language::Python);
        assert_eq!(v, Verdict::Block, "{code} => {f:?}");
    }
}

#[test]
fn obfuscated_javascript_is_seen_through() {
    for code in [
        "const g = globalThis; g['ev' + 'al']('1');\n",
        "const k = 'child' + '_process'; require(k).exec('id');\n",
        "const r = module.require; r('child_process');\n",
        "this.constructor.constructor('return process')();\n",
        "const m = 'fro' + 'mCharCode'; eval(String[m](49));\n",
        "Reflect.get(globalThis, 'eval')('1');\n",
        "const {execSync} = require('child_process');\nexecSync('id');\n",
        "new (Object.getPrototypeOf(function(){}).constructor)('return 1');\n",
        "window[decodeURIComponent('%65val')]('1');\n",
        "const [a] = [eval]; a('1');\n",
    ] {
        let (v, f) = ids(code, Language::JavaScript);
        assert_eq!(v, Verdict::Block, "{code} => {f:?}");
    }
}

#[test]
fn benign_look_alikes_are_allowed() {
    for code in [
        "import re\npattern = re.compile(r'\\d+')\nm = pattern.match('12')\n",
        "import platform\n",
        "data = {'exec': 1, 'system': 2, 'socket': 3}\nprint(data['exec'])\n",
        "# we never call eval or exec here; subprocess is banned\nx = 'os.system'\n",
        "import pandas as pd\nimport numpy as np\ndf = pd.DataFrame({'a': np.arange(3)})\nprint(df.describe().to_json())\n",
        "import json, sys\nreq = json.load(sys.stdin)\nprint(json.dumps({'n': len(req)}))\n",
    ] {
        let (v, f) = ids(code, Language::Python);
        assert_ne!(v, Verdict::Block, "{code} => {f:?}");
    }
    for code in [
        "const re = /(\\d+)/g; let m; while ((m = re.exec('1 2'))) { console.log(m[1]); }\n",
        "const input = JSON.parse(require('fs').readFileSync('/dev/stdin', 'utf8'));\nconsole.log(JSON.stringify({ system: input.system }));\n",
        "const words = ['eval', 'exec', 'spawn'];\nconsole.log(words.map((w) => w.toUpperCase()).join(','));\n",
        "class Exec { run() { return 1; } }\nnew Exec().run();\n",
    ] {
        let (v, f) = ids(code, Language::JavaScript);
        assert_ne!(v, Verdict::Block, "{code} => {f:?}");
    }
}

#[test]
fn folding_that_multiplies_without_bound_fails_closed() {
    let list = (0..300)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let code = format!("L = [{list}]\nx = [[[chr(a) for a in L] for b in L] for c in L]\n");
    let r = scanner().scan(code.as_bytes(), Language::Python);
    assert_eq!(r.verdict, Verdict::Block);
    assert_eq!(r.findings[0].rule_id, engine_rules::TOO_COMPLEX);
    let code = format!(
        "const L = [{list}];\nconst x = L.map((a) => L.map((b) => L.map((c) => String.fromCharCode(c))));\n"
    );
    let r = scanner().scan(code.as_bytes(), Language::JavaScript);
    assert_eq!(
        r.findings[0].rule_id,
        engine_rules::TOO_COMPLEX,
        "{:?}",
        r.findings
    );
}

#[test]
fn scanning_many_files_at_once_matches_scanning_each() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files = Vec::new();
    for (dir, lang) in [
        ("python/benign", Language::Python),
        ("python/malicious", Language::Python),
        ("javascript/benign", Language::JavaScript),
        ("javascript/malicious", Language::JavaScript),
    ] {
        let read = std::fs::read_dir(root.join(dir)).expect("corpus dir");
        files.extend(
            read.flatten()
                .map(|e| (std::fs::read(e.path()).expect("file"), lang)),
        );
    }
    // Code that cannot be scanned keeps its place too.
    files.push((b"def f(:\n".to_vec(), Language::Python));
    files.push((vec![0xff, 0xfe], Language::JavaScript));
    assert!(files.len() > 10);
    let s = scanner();
    let inputs: Vec<(&[u8], Language)> = files.iter().map(|(c, l)| (c.as_slice(), *l)).collect();
    let all = s.scan_all(&inputs);
    assert_eq!(all.len(), inputs.len());
    for ((code, lang), report) in inputs.iter().zip(&all) {
        assert_eq!(report, &s.scan(code, *lang));
    }
    assert!(all.iter().any(|r| r.verdict == Verdict::Block));
    assert!(all.iter().any(|r| r.verdict == Verdict::Allow));
    assert!(s.scan_all(&[]).is_empty());
}
