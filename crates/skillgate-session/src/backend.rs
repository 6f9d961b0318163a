//! The seam between a session and what runs its steps: a [`Backend`] holds one
//! workspace, brings it to a state ([`materialize`](Backend::materialize) from a
//! snapshot or from nothing), applies events to it, snapshots it and reads from it.
//! [`NativeBackend`](crate::NativeBackend) is the first; Docker and OCI backends follow
//! the executors issue.
use crate::SessionError;
use crate::model::StepSpec;
use crate::snapshot::Packed;
use skillgate_core::ExecOutcome;
use std::future::Future;

/// What a backend provides.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BackendCapabilities {
    /// Its name, for reports.
    pub name: String,
    /// Its steps run through the full pipeline (policy, pre-scan, seccomp, network, the
    /// secret scan, the monitor).
    pub pipeline: bool,
    /// It can restore a snapshot (else every cold start replays the whole log).
    pub snapshots: bool,
    /// The most bytes its workspace holds.
    pub workspace_bytes: u64,
}

/// Where [`Backend::materialize`] starts from.
#[derive(Debug, Clone, Copy)]
pub enum Restore<'a> {
    /// An empty workspace.
    Empty,
    /// A snapshot's archive (see [`crate::snapshot`]).
    Snapshot(&'a [u8]),
}

/// One event applied to a workspace.
#[derive(Debug, Clone, Copy)]
pub enum Action<'a> {
    /// Runs a step (its `cwd` already resolved against the session's default).
    Step(&'a StepSpec),
    /// Writes an upload's bytes.
    Upload {
        /// Where, relative to the workspace.
        path: &'a str,
        /// What.
        bytes: &'a [u8],
        /// Permission bits.
        mode: u32,
    },
    /// Places a skill's pinned files under `skills/<skill>/`.
    Mount {
        /// The skill's name (one path component).
        skill: &'a str,
        /// The archive of its files (see [`crate::snapshot`]).
        archive: &'a [u8],
    },
}

/// Where a workspace stands in its session's log: after event `seq`, whose chained key is
/// `key`, with what has passed since the last snapshot (what the snapshot policy counts).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    /// The last event applied.
    pub seq: u64,
    /// Its key (see [`crate::key`]).
    pub key: String,
    /// Steps applied since the last snapshot.
    pub steps_since_snapshot: u32,
    /// Their recorded run time, in milliseconds.
    pub ms_since_snapshot: u64,
}

/// A workspace and the means to run steps in it.
pub trait Backend: Send {
    /// What it provides.
    fn capabilities(&self) -> BackendCapabilities;

    /// Replaces the workspace's content with `from`; returns the digest of the workspace
    /// it made (what [`digest`](Self::digest) would give, which for a snapshot is the
    /// digest of the tree its archive holds).
    fn materialize(&mut self, from: Restore<'_>) -> Result<String, SessionError>;

    /// Applies one event: a step gives the pipeline's outcome, files give `None`.
    fn apply<'a>(
        &'a mut self,
        action: Action<'a>,
    ) -> impl Future<Output = Result<Option<ExecOutcome>, SessionError>> + Send + 'a;

    /// The digest of the workspace as it is (see [`crate::snapshot::digest`]).
    fn digest(&self) -> Result<String, SessionError>;

    /// A snapshot of the workspace as it is.
    fn snapshot(&self) -> Result<Packed, SessionError>;

    /// The regular file `path` of the workspace (at most `cap` bytes), `None` when absent.
    fn read(&self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, SessionError>;

    /// Where the workspace this backend was made with stands, when it is one an earlier
    /// process left behind ([`park`](Self::park)) and this backend took over; `None` for a
    /// new workspace (the default). Asked once: the caller either continues from that
    /// position or [`materialize`](Self::materialize)s.
    fn adopted(&mut self) -> Option<Position> {
        None
    }

    /// Leaves the workspace, standing at `at`, for a later process (or a later backend
    /// of this one) to take over; `true` when it did, and then this backend is to be
    /// dropped, not used again. A backend that cannot does nothing and says `false` (the
    /// default).
    fn park(&mut self, at: &Position) -> Result<bool, SessionError> {
        let _ = at;
        Ok(false)
    }
}
