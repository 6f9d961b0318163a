//! Start-up work done on threads of its own: each `skillgate run` is a fresh process that
//! parses its policies, opens its state store and loads its skill before the sandbox
//! starts, and these are independent of one another.
//!
//! ```
//! let (a, b) = std::thread::scope(|scope| {
//!     let a = skillgate::background::Pending::start(scope, "sum", || (1..=10).sum::<u32>());
//!     let b = 6 * 7;
//!     (a.wait().unwrap(), b)
//! });
//! assert_eq!((a, b), (55, 42));
//! ```
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// The stack size of each start-up thread: [`skillgate_core::WORKER_STACK`].
pub const STACK: usize = skillgate_core::WORKER_STACK;

/// A result being computed on a scoped thread of its own.
#[derive(Debug)]
pub struct Pending<'scope, T>(Result<ScopedJoinHandle<'scope, (T, Duration)>, String>);

impl<'scope, T: Send + 'scope> Pending<'scope, T> {
    /// Runs `work` on a new thread named `name` (with a [`STACK`]-sized stack) in `scope`.
    pub fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        name: &str,
        work: impl FnOnce() -> T + Send + 'scope,
    ) -> Self {
        let spawned = std::thread::Builder::new()
            .name(name.to_string())
            .stack_size(STACK)
            .spawn_scoped(scope, || {
                let started = Instant::now();
                let out = work();
                (out, started.elapsed())
            })
            .map_err(|e| format!("cannot start the {name} thread: {e}"));
        Pending(spawned)
    }

    /// Waits for the result. A thread that could not start or that panicked is an error
    /// naming it: the caller refuses to go on. With `RUST_LOG=skillgate::timing=debug`,
    /// logs how long the work took and how long the caller waited for it.
    pub fn wait(self) -> Result<T, String> {
        let handle = self.0?;
        let name = handle.thread().name().unwrap_or("start-up").to_string();
        let waiting = Instant::now();
        let (out, took) = handle
            .join()
            .map_err(|_| format!("the {name} thread panicked"))?;
        tracing::debug!(target: "skillgate::timing", thread = %name, ?took, waited = ?waiting.elapsed(), "background start-up work");
        Ok(out)
    }
}
