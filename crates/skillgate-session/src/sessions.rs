//! [`Sessions`]: the operations on sessions (new, exec, upload, mount, download, log,
//! replay, rm, gc) over a [`LogStore`] and a [`Backend`].
//!
//! The log is the source of truth. A step runs in a workspace brought to the state the
//! log describes, then its record is appended (one transaction); a step whose process
//! never ran (denied, blocked, an infrastructure error) is not. A workspace this
//! process already holds at the log's head is reused (warm); otherwise the newest usable
//! snapshot is restored and only the events after it are replayed (cold), each step
//! again through the full pipeline, and the first replayed step whose exit code, output
//! or workspace differs from the record is reported (the record stays canonical).
use crate::SessionError;
use crate::backend::{Action, Backend, Position, Restore};
use crate::key::{output_digest, sha256_hex};
use crate::model::{
    ArtifactRef, Event, EventKind, MountRecord, Session, SnapshotRef, StepRecord, StepResult,
    StepSpec, UploadRecord, now_ms,
};
use crate::snapshot::Packed;
use crate::store::{BlobIn, GcReport, LogStore, SessionLock, SnapshotIn};
use serde::Serialize;
use skillgate_core::{ExecOutcome, Skill, Status};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How sessions behave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Take a snapshot after this many steps since the last one.
    pub snapshot_every: u32,
    /// …or once the steps since the last one took this long (a replay would cost that).
    pub snapshot_after: Duration,
    /// The longest a second operation on a busy session waits for its lock.
    pub lock_wait: Duration,
    /// The largest upload accepted, in bytes (checked when it is accepted).
    pub max_upload_bytes: u64,
    /// The largest file a download returns, in bytes.
    pub max_download_bytes: u64,
    /// The snapshots `gc` keeps per session.
    pub keep_snapshots: usize,
    /// The most workspaces this process keeps warm (each a tmpfs holding a session's
    /// files); beyond it the least recently used one is dropped, and its session's next
    /// step restores it from a snapshot and the log. What keeps a long-running server
    /// (`serve`) from holding a workspace for every session it ever ran.
    pub max_warm: usize,
    /// The environment variables a step may set (see [`crate::env`]).
    pub env_allow: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            snapshot_every: 8,
            snapshot_after: Duration::from_secs(5),
            lock_wait: Duration::from_secs(5),
            max_upload_bytes: 64 * 1024 * 1024,
            max_download_bytes: 64 * 1024 * 1024,
            keep_snapshots: 2,
            max_warm: 32,
            env_allow: crate::env::default_allow(),
        }
    }
}

impl Settings {
    /// The defaults, with what `config`'s `[sessions]` section sets (the step allow-list);
    /// `Err` names the key that is wrong.
    pub fn from_config(config: &skillgate::Config) -> Result<Settings, String> {
        Ok(Settings {
            env_allow: crate::env::allow_list(config.sessions.env_allow.as_deref())?,
            ..Settings::default()
        })
    }
}

/// Who asks: a session is used only by the agent (and tenant) that created it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The tenant.
    pub tenant: String,
    /// The agent.
    pub agent: String,
}

/// The first replayed step whose result differs from its record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// The step's sequence number.
    pub seq: u64,
    /// What differed: `exit_code`, `output` or `workspace`.
    pub what: String,
    /// The recorded value (a digest for the output and the workspace).
    pub recorded: String,
    /// The replayed value.
    pub replayed: String,
    /// Whether the step was marked replayable.
    pub replayable: bool,
}

/// How a workspace was brought to the log's head.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Restored {
    /// The workspace was one this process held, or one an earlier process left (see
    /// `parked`), on the log's history: only the events after it were applied.
    pub warm: bool,
    /// That workspace was parked by an earlier process (see [`crate::ParkingLot`]).
    pub parked: bool,
    /// The snapshot restored (its sequence number), if any.
    pub snapshot: Option<u64>,
    /// Snapshots that could not be used (lost, or not what they claim).
    pub unusable_snapshots: Vec<u64>,
    /// Events replayed.
    pub replayed: u64,
    /// The first divergence among the replayed steps.
    pub divergence: Option<Divergence>,
}

/// What `exec` did.
#[derive(Debug)]
pub struct ExecReport {
    /// The pipeline's outcome of the step.
    pub outcome: ExecOutcome,
    /// The appended event (`None` when the step did not run: denied, blocked, an error).
    pub event: Option<Event>,
    /// How the workspace was prepared.
    pub restored: Restored,
    /// The snapshot taken after the step, if one was.
    pub snapshot: Option<SnapshotRef>,
}

impl ExecReport {
    /// The step's answer as `skillgate session exec --format json` prints it and
    /// `POST /v1/sessions/{id}/steps` returns it: the session, the event appended (`seq`
    /// and `key`, `null` when the step did not run), how the workspace was restored, the
    /// snapshot taken, and `report` (the pipeline's report of the step).
    pub fn to_json(&self, session: &str, report: &skillgate::Report) -> serde_json::Value {
        serde_json::json!({
            "session": session,
            "seq": self.event.as_ref().map(|e| e.seq),
            "key": self.event.as_ref().map(|e| e.key.clone()),
            "restored": self.restored,
            "snapshot": self.snapshot,
            "report": report,
        })
    }
}

/// What `replay` found.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// How the workspace was rebuilt.
    pub restored: Restored,
    /// The log's head.
    pub head: u64,
    /// The workspace's digest after the replay.
    pub workspace_digest: String,
    /// The digest the log recorded for the head's workspace (the last step's, or the
    /// latest snapshot's at the head), when it records one.
    pub recorded_digest: Option<String>,
}

/// Where [`Sessions::to_head`] may start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// The workspace this process holds or one parked, else the newest usable snapshot.
    Warm,
    /// The newest usable snapshot (a replay that rebuilds).
    Snapshot,
    /// An empty workspace (a cold replay of the whole log).
    Empty,
}

/// A workspace this process holds, at event `seq` (key `key`) of its session.
struct Warm<B> {
    backend: B,
    /// When it was last kept ([`Sessions::keep_warm`]'s clock).
    used: u64,
    seq: u64,
    key: String,
    steps_since_snapshot: u32,
    ms_since_snapshot: u64,
}

/// Makes a backend for a session.
pub type BackendFactory<B> = dyn Fn(&Session) -> Result<B, SessionError> + Send + Sync;

/// Sessions over a store and a backend.
pub struct Sessions<B: Backend> {
    store: Arc<dyn LogStore>,
    settings: Settings,
    backends: Box<BackendFactory<B>>,
    warm: Mutex<HashMap<String, Warm<B>>>,
    /// The clock of [`Warm::used`].
    clock: std::sync::atomic::AtomicU64,
}

impl<B: Backend> std::fmt::Debug for Sessions<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("store", &self.store)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// A step's process ran (its effects on the workspace are real and must be recorded).
pub(crate) fn ran(o: &ExecOutcome) -> bool {
    o.exit_code.is_some()
        || o.signal.is_some()
        || matches!(
            o.status,
            Status::Timeout | Status::ResourceExhausted | Status::SecurityViolation
        )
}

impl<B: Backend> Sessions<B> {
    /// Sessions kept in `store`, whose workspaces `backends` makes.
    pub fn new(
        store: Arc<dyn LogStore>,
        settings: Settings,
        backends: impl Fn(&Session) -> Result<B, SessionError> + Send + Sync + 'static,
    ) -> Sessions<B> {
        Sessions {
            store,
            settings,
            backends: Box::new(backends),
            warm: Mutex::new(HashMap::new()),
            clock: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How these sessions behave.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn LogStore> {
        &self.store
    }

    fn warm_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Warm<B>>> {
        self.warm
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps `warm` as session `id`'s workspace, dropping the least recently kept ones
    /// beyond [`Settings::max_warm`].
    /// A backend that can park it ([`Backend::park`]) leaves it parked instead (the lot
    /// may evict it, so it is taken over again from there, never held here).
    fn keep_warm(&self, id: &str, mut warm: Warm<B>) {
        let at = Position {
            seq: warm.seq,
            key: warm.key.clone(),
            steps_since_snapshot: warm.steps_since_snapshot,
            ms_since_snapshot: warm.ms_since_snapshot,
        };
        match warm.backend.park(&at) {
            Ok(true) => return,
            Ok(false) => {}
            // The step is recorded; the next step restores from the log instead.
            Err(e) => {
                tracing::warn!(session = id, "{e}");
                return;
            }
        }
        warm.used = self
            .clock
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut map = self.warm_map();
        map.insert(id.to_string(), warm);
        while map.len() > self.settings.max_warm {
            let Some(oldest) = map
                .iter()
                .min_by_key(|(_, w)| w.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            map.remove(&oldest);
        }
    }

    /// A new session of `owner`.
    pub fn create(&self, owner: &Owner) -> Result<Session, SessionError> {
        let session = Session {
            id: crate::id::new().map_err(SessionError::Backend)?,
            tenant: owner.tenant.clone(),
            agent: owner.agent.clone(),
            created_ms: now_ms(),
            default_cwd: String::new(),
        };
        self.store.create(&session)?;
        Ok(session)
    }

    /// Session `id`, if `owner`'s.
    pub fn get(&self, owner: &Owner, id: &str) -> Result<Session, SessionError> {
        crate::id::check(id).map_err(SessionError::Invalid)?;
        match self.store.session(id)? {
            Some(s) if s.tenant == owner.tenant && s.agent == owner.agent => Ok(s),
            _ => Err(SessionError::NotFound(id.to_string())),
        }
    }

    fn lock(&self, id: &str) -> Result<Box<dyn SessionLock>, SessionError> {
        self.store
            .lock(id, self.settings.lock_wait)?
            .ok_or_else(|| SessionError::Busy(id.to_string()))
    }

    /// Runs a step in session `id` and appends its record.
    pub async fn exec(
        &self,
        owner: &Owner,
        id: &str,
        mut spec: StepSpec,
    ) -> Result<ExecReport, SessionError> {
        let session = self.get(owner, id)?;
        crate::paths::check_cwd(&spec.cwd).map_err(SessionError::Invalid)?;
        crate::env::check(&spec.env, &self.settings.env_allow).map_err(SessionError::Invalid)?;
        if spec.cwd.is_empty() {
            spec.cwd = session.default_cwd.clone();
        }
        let begun = std::time::Instant::now();
        let mut lock = self.lock(id)?;
        let locked = std::time::Instant::now();
        let (mut warm, restored) = self.to_head(&session, Start::Warm).await?;
        let started = std::time::Instant::now();
        let outcome = warm
            .backend
            .apply(Action::Step(&spec))
            .await?
            .ok_or_else(|| SessionError::Backend("a step gave no outcome".into()))?;
        let stepped = std::time::Instant::now();
        let duration_ms = (stepped - started).as_millis() as u64;
        if !ran(&outcome) {
            // Nothing ran, so nothing changed: the workspace stays warm.
            if outcome.status == Status::Denied || outcome.status == Status::Blocked {
                self.keep_warm(id, warm);
            }
            return Ok(ExecReport {
                outcome,
                event: None,
                restored,
                snapshot: None,
            });
        }
        // A snapshot due after this step is packed now: its walk of the workspace gives
        // the step's digest too (one walk instead of two).
        let due = !spec.replayable || self.snapshot_due(&warm, duration_ms);
        let packed = if due {
            Some(warm.backend.snapshot()?)
        } else {
            None
        };
        let packed_at = std::time::Instant::now();
        let workspace_digest = match &packed {
            Some(p) => p.workspace_digest.clone(),
            None => warm.backend.digest()?,
        };
        let artifacts: Vec<ArtifactRef> = outcome
            .artifacts
            .iter()
            .map(|a| ArtifactRef {
                name: a.name.clone(),
                size: a.content.len() as u64,
                sha256: sha256_hex(&a.content),
            })
            .collect();
        let blobs: Vec<BlobIn<'_>> = artifacts
            .iter()
            .zip(&outcome.artifacts)
            .map(|(r, a)| BlobIn::new(&r.sha256, &a.content))
            .collect();
        let record = StepRecord {
            spec,
            result: StepResult {
                status: outcome.status,
                exit_code: outcome.exit_code,
                stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
                duration_ms,
                output_digest: output_digest(&outcome.stdout, &outcome.stderr),
                workspace_digest,
                artifacts: artifacts.clone(),
            },
        };
        if !lock.held() {
            return Err(SessionError::LockLost(id.to_string()));
        }
        // The step and the snapshot after it are one transaction (one commit).
        let with = packed.as_ref().map(|p| SnapshotIn {
            sha256: &p.sha256,
            workspace_digest: &p.workspace_digest,
            archive: &p.archive,
        });
        let event = self.store.append_with_snapshot(
            id,
            &EventKind::Step(Box::new(record)),
            &blobs,
            with,
        )?;
        warm.seq = event.seq;
        warm.key = event.key.clone();
        warm.steps_since_snapshot += 1;
        warm.ms_since_snapshot += duration_ms;
        let snapshot = with.map(|s| {
            warm.steps_since_snapshot = 0;
            warm.ms_since_snapshot = 0;
            s.at(&event)
        });
        let us = |a: std::time::Instant, b: std::time::Instant| (b - a).as_micros();
        let ended = std::time::Instant::now();
        tracing::debug!(
            target: "skillgate_session::timing",
            lock_us = us(begun, locked),
            to_head_us = us(locked, started),
            step_us = us(started, stepped),
            pack_us = us(stepped, packed_at),
            digest_and_record_us = us(packed_at, ended),
            warm = restored.warm,
            replayed = restored.replayed,
            "session step"
        );
        self.keep_warm(id, warm);
        drop(lock);
        Ok(ExecReport {
            outcome,
            event: Some(event),
            restored,
            snapshot,
        })
    }

    /// Whether a snapshot is due once a step of `step_ms` has been added to `w`.
    fn snapshot_due(&self, w: &Warm<B>, step_ms: u64) -> bool {
        w.steps_since_snapshot + 1 >= self.settings.snapshot_every.max(1)
            || Duration::from_millis(w.ms_since_snapshot + step_ms) >= self.settings.snapshot_after
    }

    fn take_snapshot(&self, id: &str, w: &mut Warm<B>) -> Result<SnapshotRef, SessionError> {
        let packed = w.backend.snapshot()?;
        self.store_snapshot(id, w, packed)
    }

    /// Stores `packed`, the workspace of `w` at its position, as a snapshot.
    fn store_snapshot(
        &self,
        id: &str,
        w: &mut Warm<B>,
        packed: Packed,
    ) -> Result<SnapshotRef, SessionError> {
        let s = SnapshotRef {
            seq: w.seq,
            key: w.key.clone(),
            sha256: packed.sha256,
            workspace_digest: packed.workspace_digest,
        };
        self.store.add_snapshot(id, &s, &packed.archive)?;
        w.steps_since_snapshot = 0;
        w.ms_since_snapshot = 0;
        Ok(s)
    }

    /// Appends an upload of `bytes` to `path` (checked now, written at the next step).
    pub fn upload(
        &self,
        owner: &Owner,
        id: &str,
        path: &str,
        bytes: &[u8],
        mode: u32,
    ) -> Result<Event, SessionError> {
        self.get(owner, id)?;
        let parts = crate::paths::components(path).map_err(SessionError::Invalid)?;
        if mode & !0o777 != 0 {
            return Err(SessionError::Invalid(format!(
                "upload mode {mode:o} has bits beyond 0777"
            )));
        }
        if bytes.len() as u64 > self.settings.max_upload_bytes {
            return Err(SessionError::Invalid(format!(
                "upload of {} bytes is over the {} byte limit",
                bytes.len(),
                self.settings.max_upload_bytes
            )));
        }
        let sha256 = sha256_hex(bytes);
        let kind = EventKind::Upload(UploadRecord {
            path: parts.join("/"),
            sha256: sha256.clone(),
            size: bytes.len() as u64,
            mode,
        });
        let mut lock = self.lock(id)?;
        if !lock.held() {
            return Err(SessionError::LockLost(id.to_string()));
        }
        Ok(self
            .store
            .append(id, &kind, &[BlobIn::new(&sha256, bytes)])?)
    }

    /// Mounts `skill` into the workspace under `skills/<name>/`, pinned: its files as
    /// loaded now are stored by digest, and later changes to its folder change nothing.
    pub fn mount(&self, owner: &Owner, id: &str, skill: &Skill) -> Result<Event, SessionError> {
        self.get(owner, id)?;
        if crate::paths::components(&skill.name)
            .map_err(SessionError::Invalid)?
            .len()
            != 1
        {
            return Err(SessionError::Invalid(format!(
                "skill name `{}` must be one path component",
                skill.name
            )));
        }
        let dir = tempfile::tempdir()
            .map_err(|e| SessionError::Backend(format!("packing a skill: {e}")))?;
        for f in skill.files.iter() {
            crate::paths::write(dir.path(), &f.path, &f.bytes, 0o644)
                .map_err(|e| SessionError::Invalid(format!("skill file: {e}")))?;
        }
        crate::paths::write(dir.path(), &skill.entry, &skill.code, 0o644)
            .map_err(|e| SessionError::Invalid(format!("skill entry: {e}")))?;
        let packed = crate::snapshot::pack(dir.path())
            .map_err(|e| SessionError::Backend(format!("packing a skill: {e}")))?;
        let kind = EventKind::SkillMount(MountRecord {
            skill: skill.name.clone(),
            version: skill.digest.clone(),
            sha256: packed.sha256.clone(),
        });
        let mut lock = self.lock(id)?;
        if !lock.held() {
            return Err(SessionError::LockLost(id.to_string()));
        }
        Ok(self
            .store
            .append(id, &kind, &[BlobIn::new(&packed.sha256, &packed.archive)])?)
    }

    /// The file `path` of session `id`'s workspace at the log's head, read from a
    /// snapshot at the head (taken now, from the nearest snapshot and the events after
    /// it, when there is none yet). `None` when there is no such file.
    pub async fn download(
        &self,
        owner: &Owner,
        id: &str,
        path: &str,
    ) -> Result<Option<Vec<u8>>, SessionError> {
        let session = self.get(owner, id)?;
        crate::paths::components(path).map_err(SessionError::Invalid)?;
        let cap = self.settings.max_download_bytes;
        let (head, _) = self.store.head(id)?;
        if let Some(s) = self
            .store
            .snapshots(id)?
            .into_iter()
            .find(|s| s.seq == head)
        {
            if let Some(archive) = self.usable(&s)? {
                return read_archive(&archive, path, cap);
            }
        }
        let lock = self.lock(id)?;
        let (mut warm, _) = self.to_head(&session, Start::Warm).await?;
        let s = self.take_snapshot(id, &mut warm)?;
        self.keep_warm(id, warm);
        drop(lock);
        let archive = self
            .usable(&s)?
            .ok_or_else(|| SessionError::Backend("the snapshot just stored is missing".into()))?;
        read_archive(&archive, path, cap)
    }

    /// Session `id`'s log.
    pub fn log(&self, owner: &Owner, id: &str) -> Result<Vec<Event>, SessionError> {
        self.get(owner, id)?;
        Ok(self.store.events(id, 0)?)
    }

    /// Rebuilds session `id`'s workspace: from the nearest snapshot, or from nothing
    /// (`cold`), replaying the events after it and comparing each step with its record.
    pub async fn replay(
        &self,
        owner: &Owner,
        id: &str,
        cold: bool,
    ) -> Result<ReplayReport, SessionError> {
        let session = self.get(owner, id)?;
        let lock = self.lock(id)?;
        self.warm_map().remove(id);
        let start = if cold { Start::Empty } else { Start::Snapshot };
        let (warm, restored) = self.to_head(&session, start).await?;
        let workspace_digest = warm.backend.digest()?;
        let head = warm.seq;
        let recorded_digest = self.recorded_digest(id, head)?;
        self.keep_warm(id, warm);
        drop(lock);
        Ok(ReplayReport {
            restored,
            head,
            workspace_digest,
            recorded_digest,
        })
    }

    /// The workspace digest the log records for event `head`: the latest snapshot's at
    /// the head, else the last step's when no upload or mount followed it.
    fn recorded_digest(&self, id: &str, head: u64) -> Result<Option<String>, SessionError> {
        if let Some(s) = self
            .store
            .snapshots(id)?
            .into_iter()
            .find(|s| s.seq == head)
        {
            return Ok(Some(s.workspace_digest));
        }
        if head == 0 {
            return Ok(None);
        }
        Ok(match self.store.events(id, head - 1)?.pop() {
            Some(Event {
                kind: EventKind::Step(s),
                ..
            }) => Some(s.result.workspace_digest),
            _ => None,
        })
    }

    /// Removes session `id` (waiting for a running step to end).
    pub fn remove(&self, owner: &Owner, id: &str) -> Result<bool, SessionError> {
        self.get(owner, id)?;
        let lock = self.lock(id)?;
        self.warm_map().remove(id);
        let removed = self.store.remove(id)?;
        drop(lock);
        Ok(removed)
    }

    /// Drops old snapshots and blobs nothing references (every tenant's).
    pub fn gc(&self) -> Result<GcReport, SessionError> {
        Ok(self.store.gc(self.settings.keep_snapshots)?)
    }

    /// The archive of snapshot `s`, when it is stored and is what it claims to be.
    fn usable(&self, s: &SnapshotRef) -> Result<Option<Vec<u8>>, SessionError> {
        Ok(self
            .store
            .blob(&s.sha256)?
            .filter(|bytes| sha256_hex(bytes) == s.sha256))
    }

    /// A workspace at the log's head: with [`Start::Warm`], the one this process holds or
    /// an earlier process parked (caught up with the events appended since), else the
    /// newest usable snapshot (none for [`Start::Empty`]) plus a replay of the events
    /// after it.
    async fn to_head(
        &self,
        session: &Session,
        start: Start,
    ) -> Result<(Warm<B>, Restored), SessionError> {
        let id = &session.id;
        let (head, head_key) = self.store.head(id)?;
        let held = self.warm_map().remove(id.as_str());
        let mut restored = Restored::default();
        let warm_start = start == Start::Warm;
        let (mut warm, events) = match held {
            Some(w) if warm_start && w.seq <= head => match self.continuation(id, &w)? {
                Some(events) => {
                    restored.warm = true;
                    (w, events)
                }
                // The log does not continue what this process holds: start over.
                None => self.restore(session, w.backend, head, start, &mut restored)?,
            },
            Some(w) => self.restore(session, w.backend, head, start, &mut restored)?,
            None => {
                let mut backend = (self.backends)(session)?;
                match backend.adopted().filter(|at| warm_start && at.seq <= head) {
                    Some(at) => {
                        let w = Warm {
                            backend,
                            used: 0,
                            seq: at.seq,
                            key: at.key,
                            steps_since_snapshot: at.steps_since_snapshot,
                            ms_since_snapshot: at.ms_since_snapshot,
                        };
                        match self.continuation(id, &w)? {
                            Some(events) => {
                                restored.warm = true;
                                restored.parked = true;
                                (w, events)
                            }
                            None => self.restore(session, w.backend, head, start, &mut restored)?,
                        }
                    }
                    None => self.restore(session, backend, head, start, &mut restored)?,
                }
            }
        };
        for e in events {
            self.replay_event(id, &mut warm, &e, &mut restored).await?;
            warm.seq = e.seq;
            warm.key = e.key;
            restored.replayed += 1;
        }
        if warm.seq != head || warm.key != head_key {
            return Err(SessionError::Replay {
                id: id.clone(),
                seq: head,
                why: "the log changed while it was replayed".into(),
            });
        }
        Ok((warm, restored))
    }

    /// The events after `w`'s position, when the log has `w`'s key there and they
    /// continue its key chain.
    fn continuation(&self, id: &str, w: &Warm<B>) -> Result<Option<Vec<Event>>, SessionError> {
        let mut events = self.store.events(id, w.seq.saturating_sub(1))?;
        let at = match w.seq {
            0 => Some(crate::key::GENESIS.to_string()),
            _ if events.first().is_some_and(|e| e.seq == w.seq) => Some(events.remove(0).key),
            _ => None,
        };
        if at.as_deref() != Some(w.key.as_str()) {
            return Ok(None);
        }
        let mut key = w.key.clone();
        for e in &events {
            key = crate::key::chain(&key, &e.kind);
            if key != e.key {
                return Ok(None);
            }
        }
        Ok(Some(events))
    }

    /// `backend`'s workspace brought to the newest usable snapshot at or before `head`
    /// (an empty one for [`Start::Empty`]), and the events to replay after it.
    fn restore(
        &self,
        session: &Session,
        mut backend: B,
        head: u64,
        start: Start,
        restored: &mut Restored,
    ) -> Result<(Warm<B>, Vec<Event>), SessionError> {
        let id = &session.id;
        let mut from = (0, crate::key::GENESIS.to_string());
        if start != Start::Empty {
            for s in self.store.snapshots(id)? {
                if s.seq > head {
                    continue;
                }
                let Some(archive) = self.usable(&s)? else {
                    restored.unusable_snapshots.push(s.seq);
                    continue;
                };
                if backend.materialize(Restore::Snapshot(&archive))? != s.workspace_digest {
                    restored.unusable_snapshots.push(s.seq);
                    continue;
                }
                restored.snapshot = Some(s.seq);
                from = (s.seq, s.key);
                break;
            }
        }
        if restored.snapshot.is_none() {
            backend.materialize(Restore::Empty)?;
        }
        let warm = Warm {
            backend,
            used: 0,
            seq: from.0,
            key: from.1,
            steps_since_snapshot: 0,
            ms_since_snapshot: 0,
        };
        match self.continuation(id, &warm)? {
            Some(events) => Ok((warm, events)),
            None => Err(SessionError::Replay {
                id: id.clone(),
                seq: warm.seq + 1,
                why: "its cache key does not follow from the events before it (a log edited \
                      behind skillgate's back, or a snapshot of another history)"
                    .into(),
            }),
        }
    }

    async fn replay_event(
        &self,
        id: &str,
        warm: &mut Warm<B>,
        e: &Event,
        restored: &mut Restored,
    ) -> Result<(), SessionError> {
        let fail = |why: String| SessionError::Replay {
            id: id.to_string(),
            seq: e.seq,
            why,
        };
        let blob = |sha: &str| -> Result<Vec<u8>, SessionError> {
            self.store
                .blob(sha)?
                .filter(|b| sha256_hex(b) == sha)
                .ok_or_else(|| fail(format!("its blob {sha} is missing or damaged")))
        };
        match &e.kind {
            EventKind::Upload(u) => {
                let bytes = blob(&u.sha256)?;
                warm.backend
                    .apply(Action::Upload {
                        path: &u.path,
                        bytes: &bytes,
                        mode: u.mode,
                    })
                    .await?;
            }
            EventKind::SkillMount(m) => {
                let archive = blob(&m.sha256)?;
                warm.backend
                    .apply(Action::Mount {
                        skill: &m.skill,
                        archive: &archive,
                    })
                    .await?;
            }
            EventKind::Step(s) => {
                // A name taken off the allow-list since is not set again (fail closed).
                crate::env::check(&s.spec.env, &self.settings.env_allow).map_err(fail)?;
                let outcome = warm
                    .backend
                    .apply(Action::Step(&s.spec))
                    .await?
                    .ok_or_else(|| fail("the step gave no outcome".into()))?;
                if !ran(&outcome) {
                    return Err(fail(format!(
                        "the step did not run again ({}): the workspace cannot be rebuilt",
                        outcome.status
                    )));
                }
                warm.steps_since_snapshot += 1;
                warm.ms_since_snapshot += s.result.duration_ms;
                if restored.divergence.is_none() {
                    restored.divergence = diverges(e.seq, s, &outcome, &warm.backend.digest()?);
                }
            }
        }
        Ok(())
    }
}

/// The first difference between step `seq`'s record and its replay.
fn diverges(seq: u64, s: &StepRecord, o: &ExecOutcome, workspace: &str) -> Option<Divergence> {
    let show = |c: Option<i32>| c.map_or_else(|| "none".to_string(), |c| c.to_string());
    let out = output_digest(&o.stdout, &o.stderr);
    let (what, recorded, replayed) = if s.result.exit_code != o.exit_code {
        ("exit_code", show(s.result.exit_code), show(o.exit_code))
    } else if s.result.output_digest != out {
        ("output", s.result.output_digest.clone(), out)
    } else if s.result.workspace_digest != workspace {
        (
            "workspace",
            s.result.workspace_digest.clone(),
            workspace.to_string(),
        )
    } else {
        return None;
    };
    Some(Divergence {
        seq,
        what: what.into(),
        recorded,
        replayed,
        replayable: s.spec.replayable,
    })
}

fn read_archive(archive: &[u8], path: &str, cap: u64) -> Result<Option<Vec<u8>>, SessionError> {
    crate::snapshot::read_file(archive, path, cap).map_err(|e| SessionError::Invalid(e.to_string()))
}
