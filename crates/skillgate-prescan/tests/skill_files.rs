//! A whole skill: every code file of the folder is scanned, and local imports resolve to
//! the folder's own files.
use skillgate_core::{FileKind, Language, Skill};
use skillgate_prescan::{PreScanner, ScanReport, Verdict};

const PY: FileKind = FileKind::Code(Language::Python);
const JS: FileKind = FileKind::Code(Language::JavaScript);

fn scan(lang: Language, entry: &str, code: &str, files: &[(&str, FileKind, &str)]) -> ScanReport {
    let mut b = Skill::builder("s", lang, code.as_bytes().to_vec()).entry(entry);
    for (path, kind, body) in files {
        b = b.file(*path, *kind, body.as_bytes().to_vec());
    }
    PreScanner::new().unwrap().scan_skill(&b.build())
}

fn rules(r: &ScanReport) -> Vec<&str> {
    r.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

#[test]
fn a_helper_next_to_the_entry_is_scanned_and_named() {
    let r = scan(
        Language::Python,
        "scripts/main.py",
        "import helper\nhelper.go()\n",
        &[(
            "scripts/helper.py",
            PY,
            "import subprocess\ndef go():\n    subprocess.run(['id'])\n",
        )],
    );
    assert_eq!(r.verdict, Verdict::Block, "{r:?}");
    let sub = r
        .findings
        .iter()
        .find(|f| f.rule_id.starts_with("py.process"))
        .expect("the helper's subprocess is found");
    assert!(sub.message.starts_with("scripts/helper.py: "), "{sub:?}");
    assert_eq!(sub.location.unwrap().line, 1);
    assert!(
        !rules(&r).contains(&"py.module.unlisted"),
        "`helper` is a file of the skill, not an unlisted module: {r:?}"
    );
}

#[test]
fn local_python_modules_and_packages_resolve_and_missing_ones_stay_unlisted() {
    let r = scan(
        Language::Python,
        "scripts/main.py",
        "import util\nfrom pkg.sub import f\nimport missing\nimport json\n",
        &[
            ("scripts/util.py", PY, "X = 1\n"),
            ("scripts/pkg/__init__.py", PY, ""),
            ("scripts/pkg/sub.py", PY, "def f():\n    return 1\n"),
            // A module beside the folder's root, not beneath the entry's folder, is not
            // on sys.path.
            ("missing.py", PY, ""),
        ],
    );
    assert_eq!(r.verdict, Verdict::Warn, "{r:?}");
    let unlisted: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.rule_id == "py.module.unlisted")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        unlisted,
        ["module `missing` is not on the allow-list"],
        "{r:?}"
    );
}

#[test]
fn javascript_relative_requires_resolve_to_code_and_json_but_not_other_data() {
    let r = scan(
        Language::JavaScript,
        "scripts/main.js",
        "const h = require('./lib/helper');\nconst c = require('../config.json');\nconst m = require('./nowhere');\n",
        &[
            ("scripts/lib/helper.cjs", JS, "module.exports = 1;\n"),
            ("config.json", FileKind::Data, "{}"),
        ],
    );
    let unlisted: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.rule_id == "js.module.unlisted")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        unlisted,
        ["module `./nowhere` is not on the allow-list"],
        "{r:?}"
    );
    assert_eq!(r.verdict, Verdict::Warn, "{r:?}");

    // Node runs a required file of any other extension as JavaScript.
    let r = scan(
        Language::JavaScript,
        "main.js",
        "require('./notes.txt');\n",
        &[(
            "notes.txt",
            FileKind::Data,
            "require('child_process').exec('id')",
        )],
    );
    assert_eq!(r.verdict, Verdict::Block, "{r:?}");
    assert_eq!(rules(&r), ["prescan.data-as-code"], "{r:?}");
}

#[test]
fn a_file_that_does_not_parse_blocks_the_skill() {
    let r = scan(
        Language::Python,
        "main.py",
        "print(1)\n",
        &[("tool.py", PY, "API_KEY=abc\n{\"k\": }\n")],
    );
    assert_eq!(r.verdict, Verdict::Block, "{r:?}");
    assert_eq!(rules(&r), ["prescan.parse-error"]);
    assert!(r.findings[0].message.starts_with("tool.py: "));
}

#[test]
fn data_files_are_not_scanned_as_code() {
    let r = scan(
        Language::Python,
        "main.py",
        "print(1)\n",
        &[("assets/keys.txt", FileKind::Data, "import subprocess\n")],
    );
    assert_eq!(r.verdict, Verdict::Allow, "{r:?}");
}
