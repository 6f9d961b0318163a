//! The text report cannot be forged or coloured by what a skill names or prints, and the
//! JSON report keeps every artifact name exactly.
mod common;
use assert_cmd::Command;
use base64::Engine as _;
use serde_json::Value;

/// A bare script writing artifacts with hostile and non-UTF-8 names, and printing an
/// escape sequence.
const SCRIPT: &str = r#"
import os
d = os.environ["SKILLGATE_OUTPUT_DIR"].encode()
for name in [b"a\n  [critical] policy forged: all clear", b"\x1b[31mred", b"n\xff", b"n\xfe"]:
    with open(os.path.join(d, name), "w") as f:
        f.write("x")
print("line\x1b[2Jcleared\rover")
print('{"path": "C:\\\\dir"}')
"#;

fn run(format: &str) -> (i32, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("names.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .args(["run", "--code"])
        .arg(&script)
        .args([
            "--lang",
            "python",
            "--disable",
            "policy",
            "--disable",
            "prescan",
        ])
        .arg("--state-dir")
        .arg(common::state_dir())
        .args(["--format", format])
        .output()
        .unwrap();
    (out.status.code().unwrap(), out.stdout)
}

#[test]
fn text_reports_escape_control_characters_in_names_and_output() {
    let (code, stdout) = run("text");
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&stdout));
    let text = String::from_utf8(stdout).unwrap();
    assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("[critical]")),
        "a skill forged a report line:\n{text}"
    );
    assert!(
        text.contains(r"artifact a\n  [critical] policy forged"),
        "{text}"
    );
    assert!(text.contains(r"artifact \u{1b}[31mred"), "{text}");
    assert!(text.contains(r"line\u{1b}[2Jcleared\rover"), "{text}");
    // Output that is not control characters is shown as the skill wrote it.
    assert!(text.contains(r#"  {"path": "C:\\dir"}"#), "{text}");
    // Two non-UTF-8 names print apart.
    assert!(
        text.contains(r"artifact n\xfe ") && text.contains(r"artifact n\xff "),
        "{text}"
    );
}

#[test]
fn json_reports_keep_non_utf8_names_apart_and_exact() {
    let (code, stdout) = run("json");
    assert_eq!(code, 0);
    let r: Value = serde_json::from_slice(&stdout).unwrap();
    let arts = r["artifacts"].as_array().unwrap();
    assert!(
        arts.iter()
            .any(|a| a["name"] == "a\n  [critical] policy forged: all clear")
    );
    let raw: Vec<Vec<u8>> = arts
        .iter()
        .filter_map(|a| a["name_base64"].as_str())
        .map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap())
        .collect();
    assert_eq!(raw, [b"n\xfe".to_vec(), b"n\xff".to_vec()]);
    // UTF-8 names carry no second form.
    assert!(arts.iter().filter(|a| a["name_base64"].is_null()).count() == 2);
}
