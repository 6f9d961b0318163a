//! Skill folders through the real `skillgate run`: how the folder is read (no symlinks,
//! no hard links, nothing outside it), what the pre-scan sees (every file the interpreter
//! could load), and the limits a SKILL.md may ask for.
mod common;
use assert_cmd::Command;
use common::state_dir;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes a skill folder named `name` under `base` with this SKILL.md metadata block
/// (YAML lines, indented by two spaces) and these files.
fn skill(base: &Path, name: &str, metadata: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = if metadata.is_empty() {
        String::new()
    } else {
        format!("metadata:\n{metadata}")
    };
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: A test skill.\n{meta}---\n# {name}\n"),
    )
    .unwrap();
    for (path, body) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    dir
}

/// Runs a skill folder with the policy gate off (these skills belong to no tenant) and
/// returns (exit code, stdout, stderr).
fn run(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .current_dir(repo())
        .arg("run")
        .arg(dir)
        .args(["--disable", "policy", "--format", "json", "--state-dir"])
        .arg(state_dir())
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs and parses the JSON report.
fn run_report(dir: &Path, extra: &[&str]) -> Value {
    let (code, stdout, stderr) = run(dir, extra);
    let r: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stdout: {stdout}; stderr: {stderr}"));
    assert_eq!(code, if r["status"] == "ok" { 0 } else { 1 }, "{r}");
    r
}

fn findings<'r>(r: &'r Value, rule: &str) -> Vec<&'r Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule_id"] == rule)
        .collect()
}

#[test]
fn a_skill_asking_for_huge_limits_gets_the_defaults() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "greedy",
        "  skillgate.timeout: 1000h\n  skillgate.memory: 1000GiB\n  skillgate.pids: \"4000000\"\n",
        &[("scripts/main.py", "print('{}')\n")],
    );
    let r = run_report(&dir, &[]);
    assert_eq!(r["status"], "ok", "{r}");
    let clamps = findings(&r, "isolation.clamped");
    let messages: Vec<&str> = clamps
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(clamps.len(), 3, "{messages:?}");
    for needle in ["maximum 10s", "maximum 256MiB", "maximum 64"] {
        assert!(
            messages.iter().any(|m| m.ends_with(needle)),
            "no clamp to `{needle}`: {messages:?}"
        );
    }
}

/// Runs a folder that must be refused before anything runs; returns everything the
/// program printed.
fn refused(dir: &Path) -> String {
    let (code, stdout, stderr) = run(dir, &[]);
    let all = format!("{stdout}\n{stderr}");
    assert_ne!(code, 0, "{all}");
    assert!(!stdout.contains("\"status\": \"ok\""), "{all}");
    all
}

/// A root-only file outside the folder, holding a marker.
fn host_secret(t: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = t.join("host-secret");
    std::fs::write(&p, "print('TOPSECRET-4242')\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

#[test]
fn a_helper_module_calling_subprocess_is_blocked() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "with-helper",
        "",
        &[
            ("scripts/main.py", "import helper\nprint(helper.go())\n"),
            (
                "scripts/helper.py",
                "import subprocess\ndef go():\n    return subprocess.run(['id']).returncode\n",
            ),
        ],
    );
    let r = run_report(&dir, &[]);
    assert_eq!(r["status"], "blocked", "{r}");
    let hit = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"].as_str().unwrap().starts_with("py.process"))
        .unwrap_or_else(|| panic!("no finding on the helper's subprocess: {r}"));
    assert!(
        hit["message"]
            .as_str()
            .unwrap()
            .starts_with("scripts/helper.py: "),
        "{hit}"
    );
    assert!(
        findings(&r, "py.module.unlisted").is_empty(),
        "`helper` is the skill's own file: {r}"
    );
}

#[test]
fn a_local_helper_without_findings_runs_and_its_import_is_not_unlisted() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "clean-helper",
        "",
        &[
            (
                "scripts/main.py",
                "import json, helper\nprint(json.dumps({'n': helper.N}))\n",
            ),
            ("scripts/helper.py", "N = 7\n"),
        ],
    );
    let r = run_report(&dir, &[]);
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["stdout"], "{\"n\": 7}\n", "{r}");
    assert!(findings(&r, "py.module.unlisted").is_empty(), "{r}");
}

#[test]
fn a_symlinked_entry_is_refused_by_name_and_never_read() {
    let t = tempfile::tempdir().unwrap();
    let secret = host_secret(t.path());
    let dir = skill(t.path(), "linked", "", &[]);
    std::fs::create_dir(dir.join("scripts")).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("scripts/main.py")).unwrap();
    let all = refused(&dir);
    assert!(
        all.contains("scripts/main.py") && all.contains("symbolic link"),
        "{all}"
    );
    assert!(!all.contains("TOPSECRET"), "{all}");
}

#[test]
fn a_hard_linked_file_is_refused_by_name() {
    let t = tempfile::tempdir().unwrap();
    let secret = host_secret(t.path());
    let dir = skill(
        t.path(),
        "hardlinked",
        "",
        &[(
            "scripts/main.py",
            "print(open('/work/assets/notes.txt').read())\n",
        )],
    );
    std::fs::create_dir(dir.join("assets")).unwrap();
    std::fs::hard_link(&secret, dir.join("assets/notes.txt")).unwrap();
    let all = refused(&dir);
    assert!(
        all.contains("assets/notes.txt") && all.contains("hard links"),
        "{all}"
    );
    assert!(!all.contains("TOPSECRET"), "{all}");
}

#[test]
fn a_pth_file_in_user_site_packages_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let dir = skill(
        t.path(),
        "pth",
        "",
        &[
            (
                "scripts/main.py",
                "import os\nprint(os.environ.get('PTH'))\n",
            ),
            (
                ".local/lib/python3.11/site-packages/evil.pth",
                "import os; os.environ['PTH'] = 'ran'\n",
            ),
        ],
    );
    let all = refused(&dir);
    assert!(all.contains("evil.pth") && all.contains(".pth"), "{all}");
}

#[test]
fn an_input_schema_outside_the_folder_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let outside = t.path().join("schema.json");
    std::fs::write(&outside, "{\"type\": \"object\"}").unwrap();
    for schema in [outside.display().to_string(), "../schema.json".to_string()] {
        let dir = skill(
            t.path(),
            "abs-schema",
            &format!("  skillgate.input-schema: {schema}\n"),
            &[("scripts/main.py", "print('{}')\n")],
        );
        let all = refused(&dir);
        assert!(
            all.contains("skillgate.input-schema") && all.contains("inside the folder"),
            "{all}"
        );
    }
}

#[test]
fn undeclared_data_is_refused_and_declared_data_arrives() {
    let t = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "scripts/main.py",
            "import json\nprint(json.dumps([open('/work/notes.txt').read(), open('/work/assets/a.txt').read()]))\n",
        ),
        ("notes.txt", "API_KEY=not-code"),
        ("assets/a.txt", "asset"),
    ];
    let dir = skill(t.path(), "undeclared", "", files);
    let all = refused(&dir);
    assert!(
        all.contains("notes.txt") && all.contains("skillgate.data"),
        "{all}"
    );
    let dir = skill(t.path(), "declared", "  skillgate.data: notes.txt\n", files);
    let r = run_report(&dir, &[]);
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["stdout"], "[\"API_KEY=not-code\", \"asset\"]\n", "{r}");
}
