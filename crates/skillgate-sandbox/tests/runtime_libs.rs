//! What a runtime needs inside the native sandbox: Debian's numpy finds `libblas.so.3`
//! through `/etc/alternatives`, the time zone is there, the host's `/etc` is not, and a
//! runtime's interpreter (`SandboxSpec::interpreter`) is the one that runs.
use skillgate_core::{
    Caller, ExecOutcome, ExecRequest, Language, RuntimeInterpreter, Skill, Status,
};
use skillgate_sandbox::NativeSandbox;
use tower::ServiceExt;

fn run(skill: Skill, interpreter: Option<&str>) -> Result<ExecOutcome, String> {
    let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    req.spec.interpreter = interpreter.map(|p| RuntimeInterpreter {
        runtime: "debian".into(),
        program: p.into(),
        prefix: "/usr".into(),
        tree: None,
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(NativeSandbox::new().oneshot(req))
        .map_err(|e| e.to_string())
}

fn python(code: &str) -> Skill {
    Skill::builder("t", Language::Python, code.as_bytes().to_vec()).build()
}

#[test]
fn debian_numpy_finds_blas_through_etc_alternatives() {
    assert!(
        std::path::Path::new("/usr/lib/python3/dist-packages/numpy").is_dir(),
        "python3-numpy is missing: run scripts/install-test-deps"
    );
    let code = r#"
import json, numpy, os, time
m = numpy.array([[2.0, 1.0], [1.0, 3.0]])
print(json.dumps({
    "det": round(float(numpy.linalg.det(m)), 6),
    "dot": float(numpy.dot(m, m).sum()),
    "tz": time.tzname[0],
    "etc": sorted(os.listdir("/etc")),
    "alternatives_all_libraries": all(".so" in n for n in os.listdir("/etc/alternatives")),
}))
"#;
    let out = run(python(code), Some("/usr/bin/python3")).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        (out.status, out.exit_code),
        (Status::Ok, Some(0)),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["det"], 5.0);
    assert_eq!(v["dot"], 25.0);
    assert_eq!(v["tz"], "UTC");
    assert_eq!(v["alternatives_all_libraries"], true);
    let etc: Vec<&str> = v["etc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for absent in ["shadow", "ssh", "hostname.orig", "resolv.conf"] {
        assert!(!etc.contains(&absent), "{etc:?}");
    }
}

#[test]
fn a_skill_naming_a_runtime_nobody_resolved_is_refused() {
    let skill = Skill::builder("t", Language::Python, b"print(1)".to_vec())
        .runtime("python-data")
        .build();
    let err = run(skill, None).unwrap_err();
    assert!(err.contains("runtime `python-data`"), "{err}");
}
