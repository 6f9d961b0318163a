//! The audit trail: one JSON Lines record per request (and per release of a quarantine or
//! clearing of a skill's flag), appended to
//! `audit.jsonl` in the state directory.
//!
//! - **Append-only**: the file is opened with `O_APPEND` and each record is one `write`
//!   of one line, so records of concurrent processes never interleave.
//! - **Order and completeness**: a record is written inside the store's write
//!   transaction, before it commits. Every committed execution therefore has its record;
//!   a crash between the write and the commit leaves a record the store does not have
//!   (the trail may hold more than the store, never less).
//! - **fsync**: with [`Durability::Sync`](crate::Durability::Sync) (the default) nothing
//!   is handed back before the trail holds it durably (the trail's directory entry is
//!   synced when the file is created). A run through [`MonitorLayer`](crate::MonitorLayer)
//!   first appends an `intent` record (who, which skill, the request id), whose
//!   `fdatasync` runs while the pipeline runs; its `execution` record then needs no sync
//!   of its own before the answer, unless its commit changes enforcement state (see
//!   below). Power loss can therefore take a run's `execution` record, never the fact that
//!   it ran: an `intent` without its `execution` ([`Trail::unfinished`]) is a run whose
//!   outcome was not recorded. A record written without an intent before it (a refusal
//!   by the throttle, an operator's release) is `fdatasync`ed before its commit. With
//!   `Flush` every record survives a crash of the process (kill -9), not of the machine.
//! - **Never less than the store**: a commit that changes enforcement state (a strike,
//!   quarantine, throttle or skill flag) is synced, and its record is synced before it, so
//!   the trail never lacks a record of an enforcement decision the store kept.
//! - **No secrets**: the monitor is the outermost layer, so the outcome it sees was
//!   already redacted by the secrets layer; even so the record holds only sizes and
//!   sha256 digests of stdout, stderr and artifacts, never their content, and only the
//!   names of the spec's environment variables.
//! - **The run as it was enforced**: `spec` is the sandbox spec the executor was given
//!   (limits after clamping, uid, network, runtime; the seccomp profile by name, default
//!   action, rule count and digest; `relied_on`, the operator's statement the isolation
//!   layer relied on, when it did), `null` for a request that never reached the
//!   executor. A run the host ended because it was told to stop (the sandbox's
//!   `sandbox.cancelled` finding) is marked `cancelled`.
//! - A torn last line (a crash in the middle of a write) is skipped by [`read`].
use crate::signals::{Blame, RequestMeta};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use skillgate_core::{ExecOutcome, Finding, LayerTiming, ResourceUsage, SandboxSpec, Status};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Version of the record format. Version 2: `spec` is the executor's spec (was the spec
/// the request entered with), `cancelled`, `monitor.blame`, `monitor.skill_flagged`, and
/// `unflag` records. Version 3: `intent` records. [`parse`] reads every version.
pub const FORMAT_VERSION: u32 = 3;

/// The finding id the sandbox gives a run it ended because its host was told to stop
/// (SIGTERM, SIGINT).
pub const CANCELLED_FINDING: &str = "sandbox.cancelled";

/// One captured stream, as the trail keeps it: its size and digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamDigest {
    /// Bytes captured.
    pub bytes: u64,
    /// sha256 of the (redacted) bytes, lowercase hex.
    pub sha256: String,
    /// It passed its cap.
    pub truncated: bool,
}

impl StreamDigest {
    fn of(bytes: &[u8], truncated: bool) -> Self {
        StreamDigest {
            bytes: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(bytes)),
            truncated,
        }
    }
}

/// An artifact, as the trail keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactDigest {
    /// Relative path.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// sha256, lowercase hex.
    pub sha256: String,
}

/// What the output was, without what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputDigest {
    /// stdout.
    pub stdout: StreamDigest,
    /// stderr.
    pub stderr: StreamDigest,
    /// Artifacts.
    pub artifacts: Vec<ArtifactDigest>,
}

/// The caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallerRecord {
    /// Tenant.
    pub tenant: String,
    /// Agent id.
    pub agent: String,
    /// Asserted groups.
    pub groups: Vec<String>,
}

/// The skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRecord {
    /// Name.
    pub name: String,
    /// sha256 of the code.
    pub digest: String,
    /// Language.
    pub language: String,
}

/// What the monitor decided about this request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MonitorRecord {
    /// The agent was quarantined when the request arrived.
    pub was_quarantined: bool,
    /// Ids of the detections that fired.
    pub detections: Vec<String>,
    /// Strikes this request added.
    pub strikes: u32,
    /// This request put the agent in quarantine.
    pub quarantined: bool,
    /// This request throttled the agent (or was refused by the throttle).
    pub throttled: bool,
    /// Whom the outcome counted against: the agent, or the skill (a block its own schema
    /// or code caused).
    #[serde(default)]
    pub blame: Blame,
    /// The skill is flagged (before or by this request).
    #[serde(default)]
    pub skill_flagged: bool,
}

/// One line of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AuditRecord {
    /// A run is about to start: written (and synced) before its results can be handed
    /// back; its [`Execution`](AuditRecord::Execution) record follows.
    Intent(IntentRecord),
    /// A request and its outcome.
    Execution(Box<ExecutionRecord>),
    /// An operator lifted an agent's quarantine.
    Release(ReleaseRecord),
    /// An operator cleared a skill's flag.
    Unflag(UnflagRecord),
    /// A service refused a request's credential (missing, malformed, unknown, revoked).
    AuthFailure(AuthFailureRecord),
}

/// A run is about to start (see the module's **fsync**).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentRecord {
    /// Format version.
    pub v: u32,
    /// When, milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// When, RFC 3339.
    pub time: String,
    /// The request id (its execution record's).
    pub request_id: String,
    /// Who asked.
    pub caller: CallerRecord,
    /// What is to run.
    pub skill: SkillRecord,
}

/// A service (`skillgate serve`) refused a request's credential.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthFailureRecord {
    /// Format version.
    pub v: u32,
    /// When, milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// When, RFC 3339.
    pub time: String,
    /// The request id.
    pub request_id: String,
    /// Why: `missing`, `malformed`, `unknown`, `revoked`, `tenant_mismatch`, ...
    pub reason: String,
    /// The key's public id, when the credential named a known key.
    pub key_id: Option<String>,
    /// The method and path asked for (cut to 200 characters).
    pub target: String,
}

/// A request and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionRecord {
    /// Format version.
    pub v: u32,
    /// When, milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// When, RFC 3339.
    pub time: String,
    /// The request id.
    pub request_id: String,
    /// Who asked.
    pub caller: CallerRecord,
    /// What ran.
    pub skill: SkillRecord,
    /// The sandbox spec the executor was given (environment values removed, the seccomp
    /// profile summarised); `null` when the request never reached the executor.
    pub spec: serde_json::Value,
    /// The outcome's status.
    pub status: Status,
    /// The host ended the run because it was told to stop (a `sandbox.cancelled` finding).
    #[serde(default)]
    pub cancelled: bool,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Signal.
    pub signal: Option<i32>,
    /// Resource usage.
    pub usage: ResourceUsage,
    /// Output sizes and digests.
    pub output: OutputDigest,
    /// Every layer's time, outermost first.
    pub layers: Vec<LayerTiming>,
    /// Every layer's findings (policy decisions, blocks, secrets, anomalies), outermost first.
    pub findings: Vec<Finding>,
    /// The monitor's own decisions.
    pub monitor: MonitorRecord,
}

/// An operator lifted an agent's quarantine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseRecord {
    /// Format version.
    pub v: u32,
    /// When, milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// When, RFC 3339.
    pub time: String,
    /// Tenant.
    pub tenant: String,
    /// Agent.
    pub agent: String,
    /// Who released it (the OS user, or what the caller passed).
    pub by: String,
    /// Why it had been quarantined.
    pub reason: String,
    /// Since when, milliseconds since the Unix epoch.
    pub quarantined_since_ms: i64,
}

/// An operator cleared a skill's flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnflagRecord {
    /// Format version.
    pub v: u32,
    /// When, milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// When, RFC 3339.
    pub time: String,
    /// The skill's code digest.
    pub digest: String,
    /// The skill's name when it was flagged.
    pub skill: String,
    /// Who cleared it.
    pub by: String,
    /// Why it had been flagged.
    pub reason: String,
    /// Since when, milliseconds since the Unix epoch.
    pub flagged_since_ms: i64,
}

/// RFC 3339 time of a millisecond timestamp.
pub fn rfc3339(ts_ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ts_ms.max(0) as u64);
    humantime::format_rfc3339_millis(t).to_string()
}

/// The spec as the trail keeps it: environment values removed, and the seccomp profile
/// (hundreds of rules) summarised as its name, default action, rule count and the sha256
/// of its JSON form, which identifies it exactly.
fn spec_record(spec: Option<&SandboxSpec>) -> serde_json::Value {
    let Some(spec) = spec else {
        return serde_json::Value::Null;
    };
    let mut v = serde_json::to_value(spec).unwrap_or(serde_json::Value::Null);
    if let Some(env) = v.get_mut("env").and_then(|e| e.as_object_mut()) {
        for val in env.values_mut() {
            *val = serde_json::Value::String("<redacted>".into());
        }
    }
    if let (Some(slot), Some(profile)) = (v.get_mut("seccomp"), &spec.seccomp) {
        let json = serde_json::to_vec(profile).unwrap_or_default();
        *slot = serde_json::json!({
            "name": profile.name,
            "default_action": profile.default_action,
            "rules": profile.syscalls.len(),
            "sha256": hex::encode(Sha256::digest(&json)),
        });
    }
    v
}

fn caller_record(meta: &RequestMeta) -> CallerRecord {
    CallerRecord {
        tenant: meta.tenant.clone(),
        agent: meta.agent.clone(),
        groups: meta.groups.clone(),
    }
}

fn skill_record(meta: &RequestMeta) -> SkillRecord {
    SkillRecord {
        name: meta.skill.clone(),
        digest: meta.digest.clone(),
        language: meta.language.as_str().into(),
    }
}

/// Builds the intent record of the run `meta` describes.
pub fn intent_record(meta: &RequestMeta, ts_ms: i64) -> AuditRecord {
    AuditRecord::Intent(IntentRecord {
        v: FORMAT_VERSION,
        ts_ms,
        time: rfc3339(ts_ms),
        request_id: meta.request_id.clone(),
        caller: caller_record(meta),
        skill: skill_record(meta),
    })
}

/// Builds the execution record; `findings` are all findings, the monitor's first.
pub fn execution_record(
    meta: &RequestMeta,
    outcome: &ExecOutcome,
    findings: Vec<Finding>,
    monitor: MonitorRecord,
    ts_ms: i64,
) -> AuditRecord {
    AuditRecord::Execution(Box::new(ExecutionRecord {
        v: FORMAT_VERSION,
        ts_ms,
        time: rfc3339(ts_ms),
        request_id: meta.request_id.clone(),
        caller: caller_record(meta),
        skill: skill_record(meta),
        spec: spec_record(meta.executor_spec.as_ref()),
        status: outcome.status,
        cancelled: outcome
            .findings
            .iter()
            .any(|f| f.rule_id == CANCELLED_FINDING),
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        usage: outcome.usage,
        output: OutputDigest {
            stdout: StreamDigest::of(&outcome.stdout, outcome.stdout_truncated),
            stderr: StreamDigest::of(&outcome.stderr, outcome.stderr_truncated),
            artifacts: outcome
                .artifacts
                .iter()
                .map(|a| ArtifactDigest {
                    name: a.name.clone(),
                    size: a.size,
                    sha256: a.sha256.clone(),
                })
                .collect(),
        },
        layers: outcome.layers.clone(),
        findings,
        monitor,
    }))
}

/// Serialises a record as one line, newline included.
pub fn encode(record: &AuditRecord) -> Vec<u8> {
    let mut line = serde_json::to_vec(record).unwrap_or_else(|e| {
        // Every field is plain data; this cannot fail, but an audit trail never panics.
        format!(
            "{{\"kind\":\"encoding_error\",\"error\":{:?}}}",
            e.to_string()
        )
        .into_bytes()
    });
    line.push(b'\n');
    line
}

/// Where records go.
#[derive(Debug)]
pub(crate) enum Sink {
    /// An `O_APPEND` file; `synced` counts its syncs.
    File { file: File, sync: bool, synced: u64 },
    /// Memory (an in-memory store, for tests and benches).
    Memory(Vec<u8>),
}

impl Sink {
    /// Opens the trail at `path`, creating it if needed. With `sync`, a trail this call
    /// creates has its directory entry synced too: each record's `fdatasync` then makes it
    /// durable, even the first.
    pub(crate) fn open(path: &Path, sync: bool) -> std::io::Result<Sink> {
        let mut opts = std::fs::OpenOptions::new();
        opts.append(true);
        let file = match opts.open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                opts.create(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
                let file = opts.open(path)?;
                if sync {
                    sync_parent_dir(path)?;
                }
                file
            }
            other => other?,
        };
        Ok(Sink::File {
            file,
            sync,
            synced: 0,
        })
    }

    /// Appends one encoded line with a single write, and syncs it when the sink syncs
    /// and `covered` is false (`covered`: an earlier synced record, the run's intent,
    /// stands for this one).
    pub(crate) fn append(&mut self, line: &[u8], covered: bool) -> std::io::Result<()> {
        match self {
            Sink::File { file, sync, synced } => {
                write_line(file, line)?;
                if *sync && !covered {
                    file.sync_data()?;
                    *synced += 1;
                }
                Ok(())
            }
            Sink::Memory(buf) => {
                buf.extend_from_slice(line);
                Ok(())
            }
        }
    }

    pub(crate) fn memory(&self) -> Option<&[u8]> {
        match self {
            Sink::Memory(b) => Some(b),
            Sink::File { .. } => None,
        }
    }

    /// How many records were synced.
    pub(crate) fn synced(&self) -> u64 {
        match self {
            Sink::File { synced, .. } => *synced,
            Sink::Memory(_) => 0,
        }
    }
}

/// Appends one line to an `O_APPEND` file with a single write, so that lines of
/// concurrent writers never interleave.
pub(crate) fn write_line(mut file: &File, line: &[u8]) -> std::io::Result<()> {
    let n = file.write(line)?;
    if n != line.len() {
        // O_APPEND regular files take the whole buffer or fail; finish it anyway.
        file.write_all(&line[n..])?;
    }
    Ok(())
}

/// Syncs the directory holding `path`, making a file just created there durable.
fn sync_parent_dir(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// What [`read`] found in a trail.
#[derive(Debug, Default)]
pub struct Trail {
    /// The complete records, in order.
    pub records: Vec<AuditRecord>,
    /// A last line without its newline (a crash mid-write), skipped.
    pub torn_tail: bool,
}

impl Trail {
    /// The runs whose intent is in the trail but not their execution record: runs whose
    /// outcome was lost (power loss before the record reached the disk, or a process
    /// killed during the run), or still running while the trail was read.
    ///
    /// ```
    /// use skillgate_monitor::audit::{self, AuditRecord};
    /// let trail = audit::parse(br#"{"kind":"intent","v":3,"ts_ms":0,"time":"1970-01-01T00:00:00.000Z","request_id":"r1","caller":{"tenant":"t","agent":"a","groups":[]},"skill":{"name":"s","digest":"d","language":"python"}}
    /// "#).unwrap();
    /// let open: Vec<_> = trail.unfinished().map(|i| i.request_id.as_str()).collect();
    /// assert_eq!(open, ["r1"]);
    /// ```
    pub fn unfinished(&self) -> impl Iterator<Item = &IntentRecord> {
        let done: std::collections::HashSet<&str> = self
            .records
            .iter()
            .filter_map(|r| match r {
                AuditRecord::Execution(e) => Some(e.request_id.as_str()),
                _ => None,
            })
            .collect();
        self.records.iter().filter_map(move |r| match r {
            AuditRecord::Intent(i) if !done.contains(i.request_id.as_str()) => Some(i),
            _ => None,
        })
    }

    /// The execution records, in order.
    pub fn executions(&self) -> impl Iterator<Item = &ExecutionRecord> {
        self.records.iter().filter_map(|r| match r {
            AuditRecord::Execution(e) => Some(&**e),
            _ => None,
        })
    }
}

/// Parses a trail. A complete line that is not a record is an error naming its line
/// number; an incomplete last line is reported in [`Trail::torn_tail`].
pub fn parse(bytes: &[u8]) -> Result<Trail, String> {
    let mut trail = Trail::default();
    let mut rest = bytes;
    let mut line_no = 0;
    while !rest.is_empty() {
        line_no += 1;
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            trail.torn_tail = true;
            break;
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        let rec = serde_json::from_slice(line)
            .map_err(|e| format!("audit line {line_no} is not a valid record: {e}"))?;
        trail.records.push(rec);
    }
    Ok(trail)
}

/// Reads and parses a trail file.
pub fn read(path: &Path) -> Result<Trail, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate_core::{Caller, ExecRequest, Language, Skill};

    #[test]
    fn records_digests_not_content_and_no_env_values() {
        let skill = Skill::builder("s", Language::Python, b"x".to_vec()).build();
        let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        req.spec
            .env
            .insert("API_TOKEN".into(), "tok-very-secret-value".into());
        let mut meta = RequestMeta::of(&req);
        meta.executor_spec = Some(req.spec.clone());
        let out = ExecOutcome {
            status: Status::Ok,
            stdout: b"the answer is [REDACTED] and more text".to_vec(),
            ..Default::default()
        };
        let line = encode(&execution_record(
            &meta,
            &out,
            vec![],
            MonitorRecord::default(),
            1,
        ));
        let text = String::from_utf8(line.clone()).unwrap();
        assert!(!text.contains("tok-very-secret-value"), "{text}");
        assert!(!text.contains("the answer is"), "{text}");
        assert!(text.contains("API_TOKEN"));
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let trail = parse(&line).unwrap();
        assert_eq!(trail.records.len(), 1);
        let AuditRecord::Execution(r) = &trail.records[0] else {
            panic!("not an execution record")
        };
        assert_eq!(r.output.stdout.bytes, out.stdout.len() as u64);
    }

    #[test]
    fn a_torn_tail_is_skipped_and_garbage_is_an_error() {
        let t = parse(b"").unwrap();
        assert!(t.records.is_empty() && !t.torn_tail);
        let rel = AuditRecord::Release(ReleaseRecord {
            v: 1,
            ts_ms: 0,
            time: rfc3339(0),
            tenant: "t".into(),
            agent: "a".into(),
            by: "op".into(),
            reason: "r".into(),
            quarantined_since_ms: 0,
        });
        let mut bytes = encode(&rel);
        bytes.extend_from_slice(b"{\"kind\":\"exec");
        let t = parse(&bytes).unwrap();
        assert_eq!(t.records.len(), 1);
        assert!(t.torn_tail);
        let err = parse(b"not json\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
    }
}
