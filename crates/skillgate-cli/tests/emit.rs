//! `skillgate emit`: the documents it writes parse as what platforms read.
use assert_cmd::Command;

fn skillgate() -> Command {
    Command::cargo_bin("skillgate").unwrap()
}

#[test]
fn emit_seccomp_writes_oci_json_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seccomp.json");
    skillgate()
        .args([
            "emit", "seccomp", "--preset", "node", "--kill", "--arch", "x86_64", "--format", "oci",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["defaultAction"], "SCMP_ACT_KILL_PROCESS");
    assert_eq!(v["architectures"], serde_json::json!(["SCMP_ARCH_X86_64"]));
}

#[test]
fn emit_seccomp_json_is_the_profile_model_and_bad_presets_are_usage_errors() {
    let out = skillgate()
        .args(["emit", "seccomp", "--preset", "strict", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "strict");
    let out = skillgate()
        .args(["emit", "seccomp", "--preset", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}

#[test]
fn emit_network_writes_a_kubernetes_network_policy() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("net.toml");
    std::fs::write(&policy, "mode = \"allow_list\"\n[[allow]]\ncidr = \"0.0.0.0/0\"\nports = [{ start = 443, end = 443 }]\n").unwrap();
    let out = skillgate()
        .args(["emit", "network", "--format", "k8s", "--policy"])
        .arg(&policy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert!(
        yaml.contains("kind: NetworkPolicy")
            && yaml.contains("169.254.0.0/16")
            && yaml.contains("- Egress"),
        "{yaml}"
    );
    let out = skillgate()
        .args(["emit", "network", "--format", "k8s"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("egress: []"),
        "default-deny"
    );
}
