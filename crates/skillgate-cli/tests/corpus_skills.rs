//! The corpus of realistic skills (`corpora/skills/`) through the real `skillgate run`:
//! every layer on, the example config, the native sandbox, each skill on its named
//! runtime. Each must end `ok` with exit 0 and its expected answer, with no finding above
//! `info` and nothing on stderr but what it logs itself (`expected-stderr.txt`); charts
//! come back as PNG artifacts (and inline base64 PNGs decode to PNGs).
//!
//! The runtimes are installed once per target directory with `skillgate runtime install
//! --offline`, from the wheel cache `scripts/install-test-deps` fills (no network here).
mod common;
use assert_cmd::Command;
use base64::Engine;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
/// What an expected answer says where the skill returns an inline PNG.
const PNG_PLACEHOLDER: &str = "<png-base64>";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skillgate() -> Command {
    let mut c = Command::cargo_bin("skillgate").unwrap();
    c.current_dir(repo());
    c
}

/// The example config with the runtimes kept in this target directory.
fn config() -> PathBuf {
    common::config_with_runtimes("corpus-skills")
}

fn install(config: &Path, name: &str) {
    common::install_runtime(config, name);
}

/// Compares an answer with the expected one; inline PNGs are checked by their magic.
fn same_answer(expected: &Value, actual: &Value, path: &str, why: &mut Vec<String>) {
    match (expected, actual) {
        (Value::String(e), Value::String(a)) if e == PNG_PLACEHOLDER => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(a);
            if !bytes.is_ok_and(|b| b.starts_with(PNG_MAGIC)) {
                why.push(format!("{path}: not a base64 PNG"));
            }
        }
        (Value::Object(e), Value::Object(a)) => {
            let keys = |m: &serde_json::Map<String, Value>| {
                m.keys().cloned().collect::<std::collections::BTreeSet<_>>()
            };
            if keys(e) != keys(a) {
                why.push(format!("{path}: keys {:?} != {:?}", keys(e), keys(a)));
            }
            for (k, v) in e {
                if let Some(av) = a.get(k) {
                    same_answer(v, av, &format!("{path}.{k}"), why);
                }
            }
        }
        _ if expected != actual => why.push(format!("{path}: expected {expected}, got {actual}")),
        _ => {}
    }
}

/// Runs one skill; returns what is wrong with its run.
fn check(config: &Path, dir: &Path) -> Vec<String> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f));
    let out = skillgate()
        .arg("run")
        .arg(dir)
        .arg("--input-file")
        .arg(dir.join("sample-input.json"))
        .arg("--config")
        .arg(config)
        .args([
            "--agent",
            "analyst-1",
            "--tenant",
            "acme",
            "--format",
            "json",
        ])
        .arg("--state-dir")
        .arg(common::state_dir())
        .output()
        .unwrap();
    let Ok(report) = serde_json::from_slice::<Value>(&out.stdout) else {
        return vec![format!(
            "no JSON report; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )];
    };
    let mut why = Vec::new();
    if out.status.code() != Some(0) || report["status"] != "ok" || report["exit_code"] != 0 {
        why.push(format!(
            "status {} exit {} (process {:?}); stderr: {}; findings: {}",
            report["status"],
            report["exit_code"],
            out.status.code(),
            report["stderr"],
            report["findings"]
        ));
        return why;
    }
    for f in report["findings"].as_array().into_iter().flatten() {
        if f["severity"] != "info" {
            why.push(format!("finding above info: {f}"));
        }
    }
    let expected: Value = serde_json::from_str(&read("expected-output.json").unwrap()).unwrap();
    match serde_json::from_str::<Value>(report["stdout"].as_str().unwrap_or("")) {
        Ok(answer) => same_answer(&expected, &answer, "stdout", &mut why),
        Err(e) => why.push(format!("stdout is not JSON ({e}): {}", report["stdout"])),
    }
    // What the skill logs, else nothing (no library noise on stderr).
    let stderr = report["stderr"].as_str().unwrap_or("");
    let want_stderr = read("expected-stderr.txt").unwrap_or_default();
    if stderr != want_stderr {
        why.push(format!("stderr {stderr:?}, expected {want_stderr:?}"));
    }
    let want: Vec<String> = read("expected-artifacts.json")
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_default();
    let artifacts = report["artifacts"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = artifacts
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    if names != want {
        why.push(format!("artifacts {names:?}, expected {want:?}"));
    }
    for a in &artifacts {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(a["content_base64"].as_str().unwrap_or(""))
            .unwrap_or_default();
        if !bytes.starts_with(PNG_MAGIC) {
            why.push(format!("artifact {} is not a PNG", a["name"]));
        }
    }
    why
}

#[test]
fn every_corpus_skill_runs_ok_with_its_expected_answer_and_no_warning() {
    let config = config();
    for runtime in ["python", "python-data", "node"] {
        install(&config, runtime);
    }
    corpus_runs_ok(&config);
}

/// The same corpus on the OCI executor under runc (`[executor] kind = "oci"`), on the
/// same installed runtimes, each mounted read-only in the skill's bundle.
#[test]
fn every_corpus_skill_runs_ok_on_the_oci_executor() {
    let native = config();
    for runtime in ["python", "python-data", "node"] {
        install(&native, runtime);
    }
    let state = tempfile::tempdir().unwrap();
    let section = format!(
        "[executor]\nkind = \"oci\"\nruntime = \"runc\"\nstate_root = \"{}\"\n",
        state.path().display()
    );
    corpus_runs_ok(&common::with_executor(&native, "oci", &section));
}

/// The same corpus in pods (`[executor] kind = "kubernetes"`) on the one-node cluster
/// `scripts/services up k8s` starts, each skill in its runtime's image (exported with
/// `skillgate runtime export` and imported into the cluster).
#[test]
fn every_corpus_skill_runs_ok_in_kubernetes_pods() {
    let native = config();
    let (_k8s, section) = common::Service::up("k8s");
    let images = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-skills-images");
    std::fs::create_dir_all(&images).unwrap();
    for runtime in ["python", "python-data", "node"] {
        install(&native, runtime);
        let archive = images.join(format!("{runtime}.oci.tar"));
        common::succeeds(
            skillgate()
                .args(["runtime", "export", runtime, "--output"])
                .arg(&archive)
                .arg("--config")
                .arg(&native),
        );
        common::services(&[
            "load",
            "k8s",
            archive.to_str().unwrap(),
            &format!("skillgate-runtime-{runtime}:latest"),
        ]);
        std::fs::remove_file(&archive).unwrap();
    }
    corpus_runs_ok(&common::with_executor(&native, "k8s", &section));
}

/// The same corpus in Docker Engine containers (`[executor] kind = "docker"`) on the
/// engine `scripts/services up docker` starts, each skill in its runtime's image (loaded
/// with `skillgate runtime load`).
#[test]
fn every_corpus_skill_runs_ok_in_docker_containers() {
    let native = config();
    let (_docker, section) = common::Service::up("docker");
    let config = common::with_executor(&native, "docker", &section);
    for runtime in ["python", "python-data", "node"] {
        install(&native, runtime);
        let image = common::succeeds(
            skillgate()
                .args(["runtime", "load", runtime, "--config"])
                .arg(&config),
        );
        assert_eq!(image.trim(), format!("skillgate-runtime-{runtime}:latest"));
    }
    // Loading needs a container engine's executor; another is told what to do instead.
    let out = skillgate()
        .args(["runtime", "load", "python", "--config"])
        .arg(&native)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("runtime export"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    corpus_runs_ok(&config);
}

/// Every skill of the corpus through `config`: each ends ok with its expected answer.
fn corpus_runs_ok(config: &Path) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo().join("corpora/skills"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 30, "{} skills", dirs.len());
    let charts = dirs
        .iter()
        .filter(|d| d.join("expected-artifacts.json").is_file())
        .count();
    assert!(charts >= 2, "{charts} chart skills");

    // Two at a time: the machine's cores, not the skills, are the limit.
    let queue = Mutex::new(dirs.clone());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(dir) = queue.lock().unwrap().pop() {
                    let why = check(config, &dir);
                    if !why.is_empty() {
                        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{name}:\n  {}", why.join("\n  ")));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} skills failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}
