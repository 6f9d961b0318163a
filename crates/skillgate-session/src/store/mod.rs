//! Where sessions are kept: the [`LogStore`] trait, with [`SqliteLog`] (the embedded
//! default, a file in the state directory) and [`PgLog`] (`[store] url`, a PostgreSQL
//! database several processes share). Both run the same [`MIGRATIONS`] through
//! `skillgate-store`'s runners, and each method is one transaction.
//!
//! The per-session lock ([`LogStore::lock`]) holds across processes: in SQLite a
//! `BEGIN IMMEDIATE` transaction on the session's own lock file (so one session's long
//! step does not stall the others' writes), in PostgreSQL a session-level advisory lock
//! on a connection of its own. Both are released by the operating system or the server
//! when the process dies (`kill -9` included). A second taker waits at most the given
//! time, then gets [`SessionError::Busy`](crate::SessionError::Busy).
mod pg;
mod sqlite;

pub use pg::PgLog;
pub use sqlite::SqliteLog;

use crate::model::{Event, EventKind, Session, SnapshotRef};
use skillgate_store::StoreError;
use std::time::Duration;

/// The component name of the session tables in `skillgate_migrations`.
pub const COMPONENT: &str = "sessions";

/// The migrations of the session tables, for SQLite and PostgreSQL alike: `{blob}` is the
/// binary column type (`BLOB`, `BYTEA`), the only word the two dialects spell
/// differently here.
pub const MIGRATIONS: &[&str] = &["
CREATE TABLE session_sessions (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    default_cwd TEXT NOT NULL,
    next_seq BIGINT NOT NULL
);
CREATE TABLE session_events (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE session_blobs (
    sha256 TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    bytes {blob} NOT NULL
);
CREATE TABLE session_blob_refs (
    session_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, sha256)
);
CREATE TABLE session_snapshots (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    cache_key TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    workspace_digest TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"];

/// The migrations with `{blob}` spelled as `blob`.
pub(crate) fn migrations_for(blob: &str) -> Vec<String> {
    MIGRATIONS
        .iter()
        .map(|m| m.replace("{blob}", blob))
        .collect()
}

/// A blob to store with an event, in the same transaction (an upload's bytes, a step's
/// artifacts).
#[derive(Debug, Clone, Copy)]
pub struct BlobIn<'a> {
    /// Its address (lowercase hex sha256 of `bytes`).
    pub sha256: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

impl<'a> BlobIn<'a> {
    /// `bytes` with its address computed.
    pub fn new(sha256: &'a str, bytes: &'a [u8]) -> BlobIn<'a> {
        BlobIn { sha256, bytes }
    }
}

/// A snapshot to store with the event being appended ([`LogStore::append_with_snapshot`]).
#[derive(Debug, Clone, Copy)]
pub struct SnapshotIn<'a> {
    /// The compressed archive's address (lowercase hex sha256 of `archive`).
    pub sha256: &'a str,
    /// The digest of the tree it holds.
    pub workspace_digest: &'a str,
    /// The compressed archive.
    pub archive: &'a [u8],
}

impl SnapshotIn<'_> {
    /// The stored snapshot's reference once it is at `event`.
    pub fn at(&self, event: &Event) -> SnapshotRef {
        SnapshotRef {
            seq: event.seq,
            key: event.key.clone(),
            sha256: self.sha256.to_string(),
            workspace_digest: self.workspace_digest.to_string(),
        }
    }
}

/// What [`LogStore::gc`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct GcReport {
    /// Snapshots dropped (older than the ones kept per session).
    pub snapshots: u64,
    /// Blobs no session references any more.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// The exclusive lock of one session, held until dropped.
pub trait SessionLock: Send + std::fmt::Debug {
    /// `true` while the lock is still held (a PostgreSQL connection that was lost lost
    /// its lock with it). Checked before an event is appended.
    fn held(&mut self) -> bool;
}

/// Where sessions, their logs, blobs and snapshots are kept. Every method is one
/// transaction; an error means "unknown", and callers refuse on it.
pub trait LogStore: Send + Sync + std::fmt::Debug {
    /// Stores a new session.
    fn create(&self, session: &Session) -> Result<(), StoreError>;
    /// The session `id`.
    fn session(&self, id: &str) -> Result<Option<Session>, StoreError>;
    /// Every session, oldest first.
    fn sessions(&self) -> Result<Vec<Session>, StoreError>;
    /// Removes a session, its log, its snapshots and its references to blobs (the blobs
    /// go at the next [`gc`](Self::gc)); `false` when there was none.
    fn remove(&self, id: &str) -> Result<bool, StoreError>;

    /// Appends an event to session `id`: allocates its sequence number, chains its key on
    /// the previous event's, and stores it with `blobs`, all in one transaction. Nothing
    /// of it is visible unless all of it is.
    fn append(
        &self,
        id: &str,
        kind: &EventKind,
        blobs: &[BlobIn<'_>],
    ) -> Result<Event, StoreError> {
        self.append_with_snapshot(id, kind, blobs, None)
    }
    /// [`append`](Self::append), and in the same transaction `snapshot` (the workspace as
    /// the event leaves it) at the event's sequence number and key: a step and the
    /// snapshot taken after it cost one commit (one disk sync), not two.
    fn append_with_snapshot(
        &self,
        id: &str,
        kind: &EventKind,
        blobs: &[BlobIn<'_>],
        snapshot: Option<SnapshotIn<'_>>,
    ) -> Result<Event, StoreError>;
    /// The events of session `id` after sequence number `after` (0: all), in order.
    fn events(&self, id: &str, after: u64) -> Result<Vec<Event>, StoreError>;
    /// The sequence number and key of session `id`'s last event (`(0, GENESIS)` for none).
    fn head(&self, id: &str) -> Result<(u64, String), StoreError>;

    /// The bytes of blob `sha256`, if stored.
    fn blob(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Stores a snapshot of session `id` and its archive.
    fn add_snapshot(
        &self,
        id: &str,
        snapshot: &SnapshotRef,
        archive: &[u8],
    ) -> Result<(), StoreError>;
    /// Session `id`'s snapshots, newest first.
    fn snapshots(&self, id: &str) -> Result<Vec<SnapshotRef>, StoreError>;

    /// Keeps each session's `keep` newest snapshots, drops the others, then removes every
    /// blob no session references.
    fn gc(&self, keep: usize) -> Result<GcReport, StoreError>;

    /// Takes session `id`'s exclusive lock, waiting at most `wait`; `Ok(None)` when
    /// another holder kept it that long (busy).
    fn lock(&self, id: &str, wait: Duration) -> Result<Option<Box<dyn SessionLock>>, StoreError>;
}

/// Parses a stored event's payload.
pub(crate) fn event_from(
    seq: i64,
    key: String,
    created_ms: i64,
    payload: &str,
) -> Result<Event, StoreError> {
    let kind = serde_json::from_str(payload)
        .map_err(|e| StoreError::Corrupt(format!("event {seq}: {e}")))?;
    Ok(Event {
        seq: seq as u64,
        key,
        created_ms,
        kind,
    })
}

/// The blobs an event references (uploads, mounts and artifacts).
pub(crate) fn referenced(kind: &EventKind) -> Vec<&str> {
    match kind {
        EventKind::Upload(u) => vec![u.sha256.as_str()],
        EventKind::SkillMount(m) => vec![m.sha256.as_str()],
        EventKind::Step(s) => s
            .result
            .artifacts
            .iter()
            .map(|a| a.sha256.as_str())
            .collect(),
    }
}

/// The payload text of an event.
pub(crate) fn payload(kind: &EventKind) -> Result<String, StoreError> {
    serde_json::to_string(kind).map_err(|e| StoreError::Backend(format!("encoding an event: {e}")))
}

/// A blob whose address is not the sha256 of its bytes is refused before it is stored.
pub(crate) fn check_blob(b: &BlobIn<'_>) -> Result<(), StoreError> {
    let actual = crate::key::sha256_hex(b.bytes);
    if actual != b.sha256 {
        return Err(StoreError::Backend(format!(
            "blob addressed {} has sha256 {actual}",
            b.sha256
        )));
    }
    Ok(())
}
