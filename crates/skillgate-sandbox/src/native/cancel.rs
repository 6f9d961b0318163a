//! Ending every native run of this process at once, when it is asked to stop (the CLI
//! calls [`cancel_runs`] on SIGTERM or SIGINT): each run kills its sandbox and returns an
//! `error` outcome with a `sandbox.cancelled` finding, so the layers above still report
//! and audit it.
use super::child::Msg;
use skillgate_core::{ExecOutcome, Finding, LayerName, Severity, Status};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

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

/// A run listening for [`cancel_runs`] until dropped.
pub(crate) struct Registered(u64);

impl Registered {
    /// Registers a run's message channel; a run registered after [`cancel_runs`] is
    /// cancelled at once.
    pub(crate) fn new(tx: mpsc::Sender<Msg>) -> Registered {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut runs = runs();
        if cancelled() {
            cancel(&tx);
        }
        runs.insert(id, tx);
        Registered(id)
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
        "the run was cancelled: skillgate was told to stop (SIGTERM or SIGINT) and killed \
         the sandbox",
    ));
}
