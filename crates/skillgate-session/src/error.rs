//! What a session operation can fail with.
use skillgate_store::StoreError;

/// A session operation that did not happen. Nothing was appended to the log.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The store failed (fail closed: nothing is assumed).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No such session for this caller (another tenant's or agent's is not shown).
    #[error("no session `{0}` for this agent")]
    NotFound(String),
    /// Another process or task held the session's lock for longer than the wait.
    #[error("session `{0}` is busy: another step holds its lock (try again)")]
    Busy(String),
    /// The lock was lost before the event could be appended (the database connection
    /// dropped): the result was not recorded.
    #[error("session `{0}` lost its lock (the database connection dropped); nothing was recorded")]
    LockLost(String),
    /// Bad input: a path, a mode, a size.
    #[error("{0}")]
    Invalid(String),
    /// The log cannot be replayed into a workspace.
    #[error("session `{id}`: replaying event {seq}: {why}")]
    Replay {
        /// The session.
        id: String,
        /// The event that could not be replayed.
        seq: u64,
        /// Why.
        why: String,
    },
    /// The backend failed (a workspace, a sandbox).
    #[error("session backend: {0}")]
    Backend(String),
}
