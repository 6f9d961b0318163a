//! Custom rule directories: replacing needs both languages (and says so), `extends =
//! "builtin"` adds to the built-in packs; the built-in allow-list takes `time`.
use skillgate_core::Language;
use skillgate_prescan::{PreScanner, RuleSet};

const PY_RULE: &str = r#"
[modules]
allowed = ["acme_sdk"]

[[rule]]
id = "py.custom.pickle_loads"
severity = "high"
message = "pickle.loads runs code"
what = "Calls of pickle.loads."
why = "Unpickling runs arbitrary code."
example = "import pickle\npickle.loads(b'')"
facts = ["ref:pickle.loads"]
must_match = ["import pickle\npickle.loads(b'')"]
must_not_match = ["import json\njson.loads('1')"]
"#;

fn dir_with_python_only(pack_toml: Option<&str>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("python")).unwrap();
    std::fs::write(d.path().join("python/custom.toml"), PY_RULE).unwrap();
    if let Some(t) = pack_toml {
        std::fs::write(d.path().join("pack.toml"), t).unwrap();
    }
    d
}

#[test]
fn a_replacing_folder_without_javascript_says_both_are_needed_or_to_extend() {
    let d = dir_with_python_only(None);
    let err = RuleSet::load_dir(d.path()).unwrap_err().to_string();
    assert!(
        err.contains("javascript/")
            && err.contains("both")
            && err.contains("extends = \"builtin\""),
        "{err}"
    );
}

#[test]
fn an_extending_folder_adds_rules_and_modules_to_the_builtin_packs() {
    let d = dir_with_python_only(Some("extends = \"builtin\"\n"));
    let set = RuleSet::load_dir(d.path()).unwrap();
    let builtin = RuleSet::embedded().unwrap();
    assert_eq!(set.rules().len(), builtin.rules().len() + 1);
    assert!(set.get("py.custom.pickle_loads").is_some());
    // The built-in JavaScript rules are still there.
    assert!(
        set.rules()
            .iter()
            .any(|r| r.language == Language::JavaScript)
    );
    let py = set.allowed_modules(Language::Python);
    assert!(py.contains(&"acme_sdk") && py.contains(&"json"), "{py:?}");
}

#[test]
fn an_extending_folder_cannot_redefine_a_builtin_rule_and_pack_toml_is_checked() {
    let d = dir_with_python_only(Some("extends = \"builtin\"\n"));
    let builtin = RuleSet::embedded().unwrap();
    let builtin_py = builtin
        .rules()
        .iter()
        .find(|r| r.language == Language::Python)
        .unwrap();
    let dup = PY_RULE
        .replace("py.custom.pickle_loads", &builtin_py.id)
        .replace("[modules]\nallowed = [\"acme_sdk\"]", "");
    std::fs::write(d.path().join("python/dup.toml"), dup).unwrap();
    let err = RuleSet::load_dir(d.path()).unwrap_err().to_string();
    assert!(err.contains(&builtin_py.id), "{err}");

    let d = dir_with_python_only(Some("extends = \"everything\"\n"));
    let err = RuleSet::load_dir(d.path()).unwrap_err().to_string();
    assert!(err.contains("pack.toml"), "{err}");
}

#[test]
fn time_is_on_the_python_allow_list() {
    let scanner = PreScanner::new().unwrap();
    let report = scanner.scan(b"import time\ntime.sleep(0)\n", Language::Python);
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.rule_id != "py.module.unlisted"),
        "{:?}",
        report.findings
    );
}

// A module listed twice in one file is a typo signal (the built-in list had `time` twice).
#[test]
fn a_module_listed_twice_is_an_error_naming_it() {
    let d = dir_with_python_only(Some("extends = \"builtin\"\n"));
    std::fs::write(
        d.path().join("python/modules.toml"),
        "[modules]\nallowed = [\"yaml\", \"toml\", \"yaml\"]\n",
    )
    .unwrap();
    let err = RuleSet::load_dir(d.path()).unwrap_err().to_string();
    assert!(err.contains("`yaml` is listed twice"), "{err}");
    assert!(err.contains("modules.toml"), "{err}");
}
