//! The isolation layer resolves a skill's named runtime: installed ones join the spec;
//! unknown ones, ones of another language, missing or changed ones refuse the run with
//! the fix.
use skillgate::runtimes::Runtimes;
use skillgate::{
    Caller, Capabilities, Config, ExecRequest, IsolationLayer, Language, Limits, Skill,
};
use skillgate_runtime::InstallOptions;
use std::sync::Arc;

fn config(state: &std::path::Path, extra: &str) -> Config {
    let mut c = skillgate::config::from_str(extra, "test").unwrap();
    c.monitor.state_dir = Some(state.to_path_buf());
    c
}

fn caps() -> Capabilities {
    skillgate_sandbox::NativeSandbox::new().capabilities()
}

/// The spec's decision for a Python skill naming `runtime`, or the refusal's message.
fn decide(cfg: &Config, language: Language, runtime: Option<&str>) -> Result<ExecRequest, String> {
    let layer = IsolationLayer::new(Limits::default(), cfg.isolation.clone(), caps())
        .with_runtimes(Arc::new(Runtimes::from_config(cfg).unwrap()));
    let mut b = Skill::builder("s", language, b"print(1)".to_vec());
    if let Some(r) = runtime {
        b = b.runtime(r);
    }
    let mut req = ExecRequest::new(Caller::new("a", "t"), b.build(), serde_json::json!({}));
    match layer.decide_spec(&mut req) {
        Ok(_) => Ok(req),
        Err(findings) => {
            assert_eq!(findings[0].rule_id, "isolation.runtime", "{findings:?}");
            Err(findings[0].message.clone())
        }
    }
}

#[test]
fn an_installed_runtime_joins_the_spec_and_a_missing_one_names_the_fix() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), "");
    let err = decide(&cfg, Language::Python, Some("python")).unwrap_err();
    assert!(err.contains("`skillgate runtime install python`"), "{err}");

    let runtimes = Runtimes::from_config(&cfg).unwrap();
    let def = runtimes.catalog().get("python").unwrap();
    let opts = InstallOptions {
        wheel_cache: t.path().join("wheels"),
        offline: true,
        force: false,
    };
    let installed = runtimes
        .store()
        .unwrap()
        .install(def, &opts, &mut |_| {})
        .unwrap();
    assert!(installed.dir.starts_with(t.path().join("runtimes")));

    let req = decide(&cfg, Language::Python, Some("python")).unwrap();
    let interp = req.spec.interpreter.unwrap();
    assert_eq!(interp.program, installed.dir.join("env/bin/python3"));
    assert_eq!(interp.runtime, "python");
    assert_eq!(interp.tree, Some(installed.dir.join("env")));

    // The language default applies to skills naming none; without one, none is used.
    assert!(
        decide(&cfg, Language::Python, None)
            .unwrap()
            .spec
            .interpreter
            .is_none()
    );
    let with_default = config(t.path(), "[runtimes]\npython = \"python\"\n");
    let req = decide(&with_default, Language::Python, None).unwrap();
    assert_eq!(req.spec.interpreter.unwrap().program, interp.program);

    // Changed after install: refused, naming the fix.
    std::fs::write(installed.dir.join("env/bin/python3.evil"), "x").unwrap();
    let err = decide(&cfg, Language::Python, Some("python")).unwrap_err();
    assert!(err.contains("changed after it was installed"), "{err}");
}

#[test]
fn unknown_runtimes_and_runtimes_of_another_language_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), "");
    let err = decide(&cfg, Language::Python, Some("python-dta")).unwrap_err();
    assert!(
        err.contains("unknown runtime `python-dta`") && err.contains("python-data"),
        "{err}"
    );
    let err = decide(&cfg, Language::Python, Some("node")).unwrap_err();
    assert!(
        err.contains("runtime `node` runs javascript") && err.contains("python-data"),
        "{err}"
    );
    let err = decide(&cfg, Language::JavaScript, Some("python-data")).unwrap_err();
    assert!(err.contains("runs python"), "{err}");

    // Bad defaults refuse to start.
    let bad = config(t.path(), "[runtimes]\njavascript = \"python\"\n");
    let err = Runtimes::from_config(&bad).unwrap_err();
    assert!(err.contains("runs python"), "{err}");
    let bad = config(t.path(), "[runtimes]\npython = \"nope\"\n");
    assert!(Runtimes::from_config(&bad).unwrap_err().contains("nope"));
    assert!(skillgate::config::from_str("[runtimes]\npyhton = \"x\"\n", "t").is_err());

    // A layer offering no runtimes refuses a skill that names one.
    let layer = IsolationLayer::new(Limits::default(), Default::default(), caps());
    let skill = Skill::builder("s", Language::Python, b"".to_vec())
        .runtime("python")
        .build();
    let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    let findings = layer.decide_spec(&mut req).unwrap_err();
    assert!(
        findings[0].message.contains("offers no runtimes"),
        "{findings:?}"
    );
}

#[test]
fn skill_md_names_the_runtime() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("charts");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/main.py"), "print(1)\n").unwrap();
    let md = |runtime: &str| {
        format!(
            "---\nname: charts\ndescription: d\nmetadata:\n  skillgate.runtime: {runtime}\n---\n"
        )
    };
    std::fs::write(dir.join("SKILL.md"), md("python-data")).unwrap();
    let skill = skillgate::skill_dir::load(&dir).unwrap();
    assert_eq!(skill.runtime.as_deref(), Some("python-data"));
    std::fs::write(
        dir.join("SKILL.md"),
        md("python-data\n  skillgate.runtim: x"),
    )
    .unwrap();
    let err = skillgate::skill_dir::load(&dir).unwrap_err().to_string();
    assert!(err.contains("skillgate.runtim"), "{err}");
}
