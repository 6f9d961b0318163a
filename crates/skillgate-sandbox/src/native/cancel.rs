//! Ending every native run of this process at once, when it is asked to stop (the CLI
//! calls [`cancel_runs`] on SIGTERM or SIGINT): each run kills its sandbox and returns an
//! `error` outcome with a `sandbox.cancelled` finding, so the layers above still report
//! and audit it.
//!
//! One run ends the same way when its future is dropped before it is done (a server whose
//! client cancelled the request): [`RunCancel`] links the future to its run.
use super::child::Msg;
use skillgate_core::{ExecOutcome, Finding, LayerName, Severity, Status};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

/// Sent by [`cancel_runs`] to a run's message loop (never by a sandbox).
pub(crate) const MSG_CANCEL: u32 = 100;
/// Sent by a run's status reader when the init's status pipe closed (never by a sandbox).
pub(crate) const MSG_GONE: u32 = 101;

static CANCELLED: AtomicBool = AtomicBool::new(false);
static NEXT: AtomicU64 = AtomicU64::new(0);
static RUNS: Mutex<BTreeMap<u64, mpsc::Sender<Msg>>> = Mutex::new(BTreeMap::new());

fn runs() -> std::sync::MutexGuard<'static, BTreeMap<u64, mpsc::Sender<Msg>>> {
    RUNS.lock().unwrap_or_else(|p| p.into_inner())
}

fn cancel(tx: &mpsc::Sender<Msg>) {
    let _ = tx.send(Msg {
        kind: MSG_CANCEL,
        ..Msg::default()
    });
}

/// Cancels every native sandbox run of this process, running or yet to start: the process
/// is shutting down. Each run kills its sandbox and ends `error` with a
/// `sandbox.cancelled` finding. Safe to call from any thread, any number of times (not
/// from a signal handler: it takes a lock).
pub fn cancel_runs() {
    CANCELLED.store(true, Ordering::SeqCst);
    for tx in runs().values() {
        cancel(tx);
    }
}

/// Whether [`cancel_runs`] was called.
pub(crate) fn cancelled() -> bool {
    CANCELLED.load(Ordering::SeqCst)
}

/// A run listening for [`cancel_runs`] (and its own [`RunCancel`]) until dropped.
pub(crate) struct Registered(u64);

impl Registered {
    /// Registers a run's message channel; a run registered after [`cancel_runs`], or after
    /// its own `run` was cancelled, is cancelled at once.
    pub(crate) fn new(tx: mpsc::Sender<Msg>, run: &RunCancel) -> Registered {
        run.attach(tx.clone());
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut runs = runs();
        if cancelled() {
            cancel(&tx);
        }
        runs.insert(id, tx);
        Registered(id)
    }
}

/// One run's cancellation: the run's future holds a [`CancelOnDrop`] of it, the run
/// attaches its message channel to it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunCancel(Arc<Mutex<RunCancelState>>);

#[derive(Debug, Default)]
struct RunCancelState {
    cancelled: bool,
    tx: Option<mpsc::Sender<Msg>>,
}

impl RunCancel {
    fn state(&self) -> std::sync::MutexGuard<'_, RunCancelState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the run was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.state().cancelled
    }

    /// Cancels the run now or, when it has not attached yet, as it attaches.
    pub(crate) fn cancel(&self) {
        let mut state = self.state();
        state.cancelled = true;
        if let Some(tx) = &state.tx {
            cancel(tx);
        }
    }

    fn attach(&self, tx: mpsc::Sender<Msg>) {
        let mut state = self.state();
        if state.cancelled {
            cancel(&tx);
        }
        state.tx = Some(tx);
    }
}

/// Cancels its run when dropped: held by the run's future, so dropping the future before
/// the run is done kills the sandbox (after it is done, cancelling changes nothing).
#[derive(Debug)]
pub(crate) struct CancelOnDrop(pub(crate) RunCancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        runs().remove(&self.0);
    }
}

/// Makes `outcome` say the run was cancelled.
pub(crate) fn mark(outcome: &mut ExecOutcome) {
    outcome.status = Status::Error;
    outcome.findings.push(Finding::new(
        LayerName::Executor,
        "sandbox.cancelled",
        Severity::High,
        "the run was cancelled: skillgate was told to stop (SIGTERM or SIGINT), or the \
         request was abandoned, and killed the sandbox",
    ));
}
