//! Sessions: a workspace kept as an ordered, append-only log and replayed into
//! disposable sandboxes.
//!
//! No sandbox is durable. The source of truth is a session's log ([`store`]): `step`
//! events (a script, its input, working directory and limits, then its exit code,
//! output and the digest of the workspace after it), `upload` events (a path, a mode and
//! the digest of the bytes) and `skill_mount` events (a skill pinned by the digest of its
//! files). Each event's sequence number is allocated in the transaction that stores it;
//! uploads, mounted skills, artifacts and snapshots are content-addressed blobs kept
//! apart from the log.
//!
//! A step runs in a workspace brought to the state the log describes ([`Sessions`]):
//! the workspace this process holds, or the nearest snapshot plus a replay of the events
//! after it. Every step, replayed or new, goes through the whole pipeline
//! ([`NativeBackend`] runs it with `skillgate::Engine`). Each event carries a chained key
//! ([`key`]); snapshots ([`snapshot`]) are deterministic archives taken every N steps
//! (or once replay would cost M seconds, or right after a step marked non-replayable);
//! a cold replay reports the first step whose result differs from its record. Each
//! session has a lock that holds across processes, with a bounded wait.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use skillgate_session::{NativeBackend, Owner, Sessions, Settings, SqliteLog, StepSpec};
//! use std::sync::Arc;
//! let engine = Arc::new(skillgate::Engine::new(skillgate::Config::default(), &[])?);
//! let store = Arc::new(SqliteLog::open("state".as_ref())?);
//! let sessions = Sessions::new(store, Settings::default(), move |s| {
//!     let caller = skillgate::Caller::new(&s.agent, &s.tenant);
//!     NativeBackend::new(engine.clone(), caller, 256 << 20)
//! });
//! let owner = Owner { tenant: "acme".into(), agent: "analyst-1".into() };
//! let s = sessions.create(&owner)?;
//! sessions.upload(&owner, &s.id, "data.csv", b"a,b\n1,2\n", 0o644)?;
//! let step = StepSpec::new(
//!     skillgate::Language::Python,
//!     "print(open('data.csv').read())",
//! );
//! let report = sessions.exec(&owner, &s.id, step).await?;
//! println!("{}", String::from_utf8_lossy(&report.outcome.stdout));
//! # Ok(()) }
//! ```
pub mod backend;
pub mod env;
mod error;
pub mod fuzz;
pub mod id;
pub mod key;
pub mod model;
mod native;
mod parking;
pub mod paths;
mod sessions;
pub mod snapshot;
pub mod store;

pub use backend::{Action, Backend, BackendCapabilities, Position, Restore};
pub use error::SessionError;
pub use model::{
    ArtifactRef, Event, EventKind, MountRecord, Session, SnapshotRef, StepRecord, StepResult,
    StepSpec, UploadRecord,
};
pub use native::{
    DEFAULT_WORKSPACE_BYTES, EngineProvider, NativeBackend, STEP_SKILL, reclaim_stale_workspaces,
};
pub use parking::ParkingLot;
pub use sessions::{
    BackendFactory, Divergence, ExecReport, Owner, ReplayReport, Restored, Sessions, Settings,
};
pub use store::{GcReport, LogStore, PgLog, SessionLock, SnapshotIn, SqliteLog};

/// The store these settings name: [`PgLog`] at `[store] url`, else [`SqliteLog`] in
/// `state_dir`.
pub fn open_store(
    config: &skillgate_store::StoreConfig,
    state_dir: &std::path::Path,
) -> Result<std::sync::Arc<dyn LogStore>, skillgate_store::StoreError> {
    Ok(match &config.url {
        Some(url) => std::sync::Arc::new(PgLog::open(url)?),
        None => std::sync::Arc::new(SqliteLog::open(state_dir)?),
    })
}
