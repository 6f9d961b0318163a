//! The records a session's log holds: the session, its ordered events (`step`, `upload`,
//! `skill_mount`) and the references to content-addressed blobs (uploads, artifacts,
//! snapshots), which are kept apart and never in the log itself.
use serde::{Deserialize, Serialize};
use skillgate_core::{Language, LimitOverrides, Status};
use std::collections::BTreeMap;

/// A session: whose it is and where its steps start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Its id (32 lowercase hex digits, random).
    pub id: String,
    /// The tenant it belongs to.
    pub tenant: String,
    /// The agent that created it (the only one that may use it).
    pub agent: String,
    /// Created, milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// The default working directory of its steps, relative to the workspace (`""`:
    /// its root).
    pub default_cwd: String,
}

/// One entry of a session's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Its position: 1, 2, 3… per session, allocated in the transaction that stores it.
    pub seq: u64,
    /// The chained cache key `H(key_{seq-1} ‖ canonical(event))` (see [`crate::key`]).
    pub key: String,
    /// Appended, milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// What happened.
    pub kind: EventKind,
}

/// What an event records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// A script or a shell command line that ran in the workspace.
    Step(Box<StepRecord>),
    /// Bytes written to a path of the workspace.
    Upload(UploadRecord),
    /// A skill's files, pinned by their digest, placed under `skills/<name>/`.
    SkillMount(MountRecord),
}

impl EventKind {
    /// `step`, `upload` or `skill_mount`.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Step(_) => "step",
            EventKind::Upload(_) => "upload",
            EventKind::SkillMount(_) => "skill_mount",
        }
    }
}

/// What a step is asked to do: the part of a step that its cache key covers, plus its
/// limits (which are recorded, never keyed: a change of limits in the configuration
/// does not invalidate a session's cache).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSpec {
    /// Its language: `python` or `javascript` for a script, `shell` for a shell step
    /// (run by `dash`, authorised with the Cedar action `run_command`).
    pub language: Language,
    /// The script, or the shell command line (pre-scanned like any skill).
    pub code: String,
    /// The JSON it reads on stdin.
    pub input: serde_json::Value,
    /// Its working directory, relative to the workspace (`""`: the session's default).
    #[serde(default)]
    pub cwd: String,
    /// The limits asked for (clamped by the isolation layer like a skill's).
    #[serde(default)]
    pub limits: LimitOverrides,
    /// `false` for a step whose outcome cannot be repeated (the network, the clock):
    /// a snapshot is taken right after it, so a restore does not run it again.
    #[serde(default = "yes")]
    pub replayable: bool,
    /// The named runtime it runs on (`python-data`), as a skill names one in `SKILL.md`
    /// (`skillgate.runtime`); `None`: the language's default (`[runtimes]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Environment variables it is given, beyond the sandbox's own: names on the
    /// allow-list only (see [`crate::env`]; nothing of the caller's own environment).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

impl StepSpec {
    /// A replayable step of `code` in `language`: input `{}`, the session's default
    /// working directory, the configured limits and the language's default runtime.
    pub fn new(language: Language, code: impl Into<String>) -> StepSpec {
        StepSpec {
            language,
            code: code.into(),
            input: serde_json::json!({}),
            cwd: String::new(),
            limits: LimitOverrides::default(),
            replayable: true,
            runtime: None,
            env: BTreeMap::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// A step as the log keeps it: what was asked and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// What was asked.
    #[serde(flatten)]
    pub spec: StepSpec,
    /// What came of it (the canonical observation, also when a replay differs).
    pub result: StepResult,
}

/// The recorded outcome of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// The pipeline's status.
    pub status: Status,
    /// The exit code, when the process exited.
    pub exit_code: Option<i32>,
    /// Its standard output (after the secret scan), lossily decoded.
    pub stdout: String,
    /// Its standard error, likewise.
    pub stderr: String,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The digest of its output (see [`crate::key::output_digest`]).
    pub output_digest: String,
    /// The digest of the workspace after it (see [`crate::snapshot`]).
    pub workspace_digest: String,
    /// The files it wrote to `$SKILLGATE_OUTPUT_DIR`, stored by digest.
    #[serde(default)]
    pub artifacts: Vec<ArtifactRef>,
}

/// An artifact: a content-addressed blob with its metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// Its name (relative to the output directory).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// The lowercase hex sha256 of its bytes (the blob's address).
    pub sha256: String,
}

/// An upload as the log keeps it (the bytes are a blob).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadRecord {
    /// Where it goes, relative to the workspace.
    pub path: String,
    /// The lowercase hex sha256 of its bytes (the blob's address).
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits (`0o644`, `0o755`; nothing beyond `0o777`).
    pub mode: u32,
}

/// A skill mounted into the workspace, pinned by the digest of its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountRecord {
    /// The skill's name: its files go to `skills/<name>/`.
    pub skill: String,
    /// The skill's digest when it was mounted (its version).
    pub version: String,
    /// The lowercase hex sha256 of the pinned archive of its files (the blob's address).
    pub sha256: String,
}

/// A stored snapshot of a session's workspace after event `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRef {
    /// The last event it contains.
    pub seq: u64,
    /// That event's cache key.
    pub key: String,
    /// The address of the compressed archive (sha256 of its bytes).
    pub sha256: String,
    /// The workspace digest it restores (the digest of the uncompressed archive).
    pub workspace_digest: String,
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
