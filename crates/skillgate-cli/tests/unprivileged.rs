//! As a non-root user the native sandbox refuses, and says plainly that unprivileged use is
//! not supported and what the alternatives cost (issue 20, item 17).
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

#[test]
fn a_non_root_user_is_told_that_unprivileged_use_is_not_supported() {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = d.path().join("s.py");
    std::fs::write(&script, "print('{}')\n").unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .args(["run", "--code"])
        .arg(&script)
        .args([
            "--lang",
            "python",
            "--disable",
            "policy",
            "--format",
            "json",
        ])
        .arg("--state-dir")
        .arg(d.path().join("state"))
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "error", "{r}");
    assert!(
        stderr.contains("needs root") && stderr.contains("not supported"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no isolation") && stderr.contains("--disable isolation"),
        "{stderr}"
    );
}
