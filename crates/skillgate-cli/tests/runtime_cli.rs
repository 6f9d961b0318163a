//! `skillgate runtime ...` and `skillgate run` with runtimes, through the real binary:
//! install, no-op reinstall, path, verify catching a change, and the errors a user meets
//! (unknown runtime, unknown key in a definition, not installed, another language).
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skillgate(state: &Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("skillgate")
        .unwrap()
        .current_dir(repo())
        .args(args)
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn install_path_verify_and_a_changed_runtime() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path();
    let out = skillgate(state, &["runtime", "path", "python"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("skillgate runtime install python"),
        "{}",
        text(&out.stderr)
    );

    let out = skillgate(state, &["runtime", "install", "python", "--offline"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = PathBuf::from(text(&out.stdout).trim());
    assert!(dir.starts_with(state.join("runtimes")) && dir.join("env/bin/python3").exists());
    assert!(
        text(&out.stderr).is_empty(),
        "no progress without a TTY: {}",
        text(&out.stderr)
    );
    let again = skillgate(state, &["runtime", "install", "python", "--offline"]);
    assert_eq!(text(&again.stdout), text(&out.stdout));
    let path = skillgate(state, &["runtime", "path", "python"]);
    assert_eq!(text(&path.stdout), text(&out.stdout));
    let list = text(&skillgate(state, &["runtime", "list"]).stdout);
    assert!(
        list.contains(&format!("installed {}", dir.display())),
        "{list}"
    );
    assert!(
        list.contains("python-data") && list.contains("not installed"),
        "{list}"
    );
    let ok = skillgate(state, &["runtime", "verify", "python"]);
    assert!(ok.status.success() && text(&ok.stdout).contains("intact"));
    let image = t.path().join("python.tar");
    let export = skillgate(
        state,
        &[
            "runtime",
            "export",
            "python",
            "--format",
            "oci-archive",
            "-o",
            image.to_str().unwrap(),
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    assert!(
        text(&export.stdout).contains(" sha256:"),
        "{}",
        text(&export.stdout)
    );
    assert!(image.metadata().unwrap().len() > 1 << 20);

    // A planted file: verify names it, a run refuses the runtime.
    std::fs::write(
        dir.join("env/lib/python3.11/site-packages/planted.pth"),
        "import os\n",
    )
    .unwrap();
    let bad = skillgate(state, &["runtime", "verify", "python"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stdout).contains("added: lib/python3.11/site-packages/planted.pth"),
        "{}",
        text(&bad.stdout)
    );
    let script = t.path().join("s.py");
    std::fs::write(&script, "print('{}')\n").unwrap();
    let cfg = t.path().join("skillgate.toml");
    std::fs::write(&cfg, "[runtimes]\npython = \"python\"\n").unwrap();
    let run = skillgate(
        state,
        &[
            "run",
            "--code",
            script.to_str().unwrap(),
            "--lang",
            "python",
            "--disable",
            "policy",
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let report: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["status"], "error", "{report}");
    let msg = report["findings"][0]["message"].as_str().unwrap();
    assert!(msg.contains("changed after it was installed"), "{msg}");
}

#[test]
fn bad_input_gets_a_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path();
    let out = skillgate(state, &["runtime", "install", "pyton"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown runtime `pyton`"),
        "{}",
        text(&out.stderr)
    );

    // A definitions folder with a typo'd key.
    let defs = t.path().join("defs");
    std::fs::create_dir(&defs).unwrap();
    std::fs::write(
        defs.join("mine.toml"),
        "language = \"python\"\ninterpreter = \"/usr/bin/python3\"\npackges = []\n",
    )
    .unwrap();
    let cfg = t.path().join("skillgate.toml");
    std::fs::write(
        &cfg,
        format!("[runtimes]\ndefinitions = \"{}\"\n", defs.display()),
    )
    .unwrap();
    let out = skillgate(
        state,
        &[
            "runtime",
            "install",
            "mine",
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("packges") && err.contains("mine.toml"),
        "{err}"
    );
    assert!(
        !state.join("runtimes").exists()
            || std::fs::read_dir(state.join("runtimes"))
                .unwrap()
                .next()
                .is_none()
    );

    // Skills naming a runtime that is not installed, or one of another language.
    let skill = |runtime: &str| {
        let dir = t.path().join(format!("s-{runtime}"));
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(dir.join("scripts/main.py"), "print('{}')\n").unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: s-{runtime}\ndescription: d\nmetadata:\n  skillgate.runtime: {runtime}\n---\n"),
        )
        .unwrap();
        dir
    };
    for (runtime, want) in [
        ("python-data", "run `skillgate runtime install python-data`"),
        ("node", "runtime `node` runs javascript"),
    ] {
        let dir = skill(runtime);
        let out = skillgate(
            state,
            &[
                "run",
                dir.to_str().unwrap(),
                "--disable",
                "policy",
                "--format",
                "json",
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["status"], "error", "{report}");
        let f = &report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule_id"] == "isolation.runtime")
            .unwrap();
        assert!(f["message"].as_str().unwrap().contains(want), "{f}");
    }
}
