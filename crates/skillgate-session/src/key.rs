//! Content addresses and the chained cache keys of a session's log.
//!
//! `key_0` is a fixed constant and `key_i = H(key_{i-1} ‖ canonical(event_i))`, with H
//! sha256. The canonical form of an event is a length-prefixed encoding of what
//! determines its effect on the workspace:
//! - a step: its language (`shell` for a shell step, whose code is the command line),
//!   code, input, working directory, named runtime and
//!   environment variables (never its limits, so a change of limits in the
//!   configuration invalidates nothing);
//! - an upload: its path, mode and the digest of its bytes (uploads are keyed by content,
//!   not by their position);
//! - a skill mount: the skill's name, version and the digest of its pinned files.
use crate::model::EventKind;
use sha2::{Digest, Sha256};

/// The key before the first event.
pub const GENESIS: &str = "skillgate-session-v1";

/// The lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Appends one length-prefixed field.
fn field(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

/// `H(prev ‖ canonical(kind))`, lowercase hex.
pub fn chain(prev: &str, kind: &EventKind) -> String {
    let mut h = Sha256::new();
    field(&mut h, prev.as_bytes());
    field(&mut h, kind.name().as_bytes());
    match kind {
        EventKind::Step(s) => {
            field(&mut h, s.spec.language.as_str().as_bytes());
            field(&mut h, s.spec.code.as_bytes());
            field(&mut h, s.spec.input.to_string().as_bytes());
            field(&mut h, s.spec.cwd.as_bytes());
            // Keyed only when named, so the keys of steps on the default runtime stay
            // what they were before steps could name one.
            if let Some(runtime) = &s.spec.runtime {
                field(&mut h, b"runtime");
                field(&mut h, runtime.as_bytes());
            }
            // Likewise only when the step sets any: names and values, sorted by name.
            if !s.spec.env.is_empty() {
                field(&mut h, b"env");
                for (name, value) in &s.spec.env {
                    field(&mut h, name.as_bytes());
                    field(&mut h, value.as_bytes());
                }
            }
        }
        EventKind::Upload(u) => {
            field(&mut h, u.path.as_bytes());
            field(&mut h, &u.mode.to_be_bytes());
            field(&mut h, u.sha256.as_bytes());
        }
        EventKind::SkillMount(m) => {
            field(&mut h, m.skill.as_bytes());
            field(&mut h, m.version.as_bytes());
            field(&mut h, m.sha256.as_bytes());
        }
    }
    hex::encode(h.finalize())
}

/// The digest a replayed step's output is compared by: its stdout and stderr, each
/// length-prefixed.
pub fn output_digest(stdout: &[u8], stderr: &[u8]) -> String {
    let mut h = Sha256::new();
    field(&mut h, stdout);
    field(&mut h, stderr);
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{StepRecord, StepResult, StepSpec, UploadRecord};
    use skillgate_core::{Language, LimitOverrides, Status};

    fn step(code: &str, limits: LimitOverrides) -> EventKind {
        EventKind::Step(Box::new(StepRecord {
            spec: StepSpec {
                language: Language::Python,
                code: code.into(),
                input: serde_json::json!({"a": 1}),
                cwd: String::new(),
                limits,
                replayable: true,
                runtime: None,
                env: Default::default(),
            },
            result: StepResult {
                status: Status::Ok,
                exit_code: Some(0),
                stdout: "out".into(),
                stderr: String::new(),
                duration_ms: 5,
                output_digest: String::new(),
                workspace_digest: String::new(),
                artifacts: Vec::new(),
            },
        }))
    }

    #[test]
    fn limits_and_results_are_not_part_of_the_key() {
        let a = step("print(1)", LimitOverrides::default());
        let mut b = step(
            "print(1)",
            LimitOverrides {
                memory_bytes: Some(1 << 30),
                ..Default::default()
            },
        );
        if let EventKind::Step(s) = &mut b {
            s.result.stdout = "different".into();
            s.result.duration_ms = 99;
        }
        assert_eq!(chain(GENESIS, &a), chain(GENESIS, &b));
        assert_ne!(
            chain(GENESIS, &a),
            chain(GENESIS, &step("print(2)", LimitOverrides::default()))
        );
    }

    #[test]
    fn a_named_runtime_is_keyed_and_the_default_keeps_the_earlier_key() {
        let plain = step("print(1)", LimitOverrides::default());
        // The key of a step on the default runtime, as computed before steps could name
        // one: language, code, input and cwd only.
        let mut h = Sha256::new();
        for f in [GENESIS, "step", "python", "print(1)", r#"{"a":1}"#, ""] {
            field(&mut h, f.as_bytes());
        }
        assert_eq!(chain(GENESIS, &plain), hex::encode(h.finalize()));
        let mut named = plain.clone();
        if let EventKind::Step(s) = &mut named {
            s.spec.runtime = Some("python-data".into());
        }
        assert_ne!(chain(GENESIS, &plain), chain(GENESIS, &named));
        let mut with_env = plain.clone();
        if let EventKind::Step(s) = &mut with_env {
            s.spec.env.insert("TZ".into(), "UTC".into());
        }
        let mut other_value = with_env.clone();
        if let EventKind::Step(s) = &mut other_value {
            s.spec.env.insert("TZ".into(), "Asia/Tokyo".into());
        }
        assert_ne!(chain(GENESIS, &plain), chain(GENESIS, &with_env));
        assert_ne!(chain(GENESIS, &with_env), chain(GENESIS, &other_value));
    }

    #[test]
    fn keys_chain_on_the_previous_key_and_uploads_on_their_content() {
        let up = |sha: &str| {
            EventKind::Upload(UploadRecord {
                path: "data.csv".into(),
                sha256: sha.into(),
                size: 3,
                mode: 0o644,
            })
        };
        let k1 = chain(GENESIS, &up("aa"));
        assert_eq!(k1, chain(GENESIS, &up("aa")));
        assert_ne!(k1, chain(GENESIS, &up("bb")));
        let s = step("print(1)", LimitOverrides::default());
        assert_ne!(chain(&k1, &s), chain(GENESIS, &s));
    }

    #[test]
    fn a_shell_step_is_keyed_and_recorded_apart_from_a_script_of_the_same_text() {
        let script = step("ls", LimitOverrides::default());
        let mut shell = script.clone();
        if let EventKind::Step(s) = &mut shell {
            s.spec.language = Language::Shell;
        }
        assert_ne!(chain(GENESIS, &script), chain(GENESIS, &shell));
        let json = serde_json::to_value(&shell).unwrap();
        assert_eq!(json["language"], "shell");
        assert_eq!(serde_json::from_value::<EventKind>(json).unwrap(), shell);
    }

    #[test]
    fn the_output_digest_tells_the_streams_apart() {
        assert_ne!(output_digest(b"ab", b""), output_digest(b"a", b"b"));
    }
}
