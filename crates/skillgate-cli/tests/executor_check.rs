//! `skillgate executor check --config F`: the conformance kit against the configured
//! executor, one line per check, exit 0 only when every claimed capability holds.
use assert_cmd::Command;
use std::path::Path;

/// Runs the check on a config of `text`; its exit code and stdout.
fn check(text: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skillgate.toml");
    std::fs::write(&config, text).unwrap();
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .args(["executor", "check", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The verdict (`ok`, `FAIL`, `not claimed`) of check `name` in the printed lines.
fn verdict<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| {
            let (verdict, rest) = match l.strip_prefix("not claimed ") {
                Some(rest) => ("not claimed", rest),
                None => l.split_once(' ')?,
            };
            let check = rest.split_whitespace().next()?.trim_end_matches(':');
            (check == name).then_some(verdict)
        })
        .unwrap_or_else(|| panic!("no line for {name}: {stdout}"))
}

#[test]
fn the_native_sandbox_holds_every_claim() {
    let (code, stdout, stderr) = check("[executor]\nkind = \"native\"\n");
    assert_eq!(code, 0, "{stdout}{stderr}");
    for name in [
        "json",
        "exit_code",
        "streams",
        "output_cap",
        "timeout",
        "memory",
        "pids",
        "pids_reported",
        "network_none",
        "read_only_root",
        "uid",
        "seccomp_errno",
        "seccomp_kill",
        "artifacts",
        "out_capped",
    ] {
        assert_eq!(verdict(&stdout, name), "ok", "{stdout}");
    }
    // No cleanup probe for the native sandbox: said, not passed.
    assert!(stdout.contains("not claimed cleanup"), "{stdout}");
}

#[test]
fn the_oci_executor_under_runc_holds_every_claim_and_cleans_up() {
    let state = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = check(&format!(
        "[executor]\nkind = \"oci\"\nruntime = \"runc\"\nstate_root = \"{}\"\n",
        state.path().display()
    ));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(verdict(&stdout, "cleanup"), "ok", "{stdout}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
}

/// An executor that cannot keep its contract under this config (its Python is not a
/// Python): the checks fail with their reasons, and the exit code is 1.
#[test]
fn a_config_the_executor_cannot_keep_its_claims_under_fails() {
    let truth = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("true(1)");
    let (code, stdout, stderr) = check(&format!(
        "[executor]\nkind = \"native\"\n[interpreters]\npython = \"{truth}\"\n"
    ));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(verdict(&stdout, "json"), "FAIL", "{stdout}");
    assert!(stdout.contains("FAIL        uid: wanted"), "{stdout}");
}

#[test]
fn a_config_naming_a_missing_runtime_is_a_usage_error() {
    let (code, stdout, stderr) =
        check("[executor]\nkind = \"oci\"\nruntime = \"/nonexistent/runc\"\n");
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("/nonexistent/runc"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}
