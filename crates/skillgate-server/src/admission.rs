//! The global concurrency limit with a bounded queue: at most `concurrent` runs at once,
//! at most `queue` more waiting, none of them longer than `max_wait`; beyond that the
//! server sheds load with 429 and `Retry-After`.
//!
//! The wait bound is what keeps the latency of admitted requests close to the unloaded one
//! under overload: a request either starts within `max_wait` or is told to come back. A
//! long queue without it only makes every admitted request slower (its latency is the
//! queue's length times the run time), and shedding at once without any queue turns
//! clients that retry at once into a storm of 429s that takes the CPU from the runs.
//!
//! Admission comes first on the run routes, before the API key is looked up, the body is
//! read or anything is logged: a shed request costs an atomic or two and a short JSON
//! answer. So a caller with a bad key may get 429 (come back later) where an idle server
//! would answer 401. A shed request leaves no audit record and no log line of its own;
//! the server counts them (`skillgate_server_runs_shed_total` in `/metrics`) and logs
//! how many it shed at most once a second.
use crate::ServerState;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Admission control for runs.
#[derive(Debug)]
pub struct Admission {
    permits: Semaphore,
    waiting: AtomicUsize,
    running: AtomicUsize,
    queue: usize,
    max_wait: Duration,
    shed: ShedCount,
}

/// Requests shed so far, and when the log last said how many.
#[derive(Debug)]
struct ShedCount {
    total: AtomicU64,
    /// `total` when the log last said it.
    logged: AtomicU64,
    /// Milliseconds after `since` when the log last said it.
    logged_at_ms: AtomicU64,
    since: Instant,
}

impl ShedCount {
    /// Counts one shed request; says how many were shed since the last line when a second
    /// has passed since it (one line a second at most, however many are shed).
    fn add(&self) {
        let total = self.total.fetch_add(1, Ordering::Relaxed) + 1;
        let now = self.since.elapsed().as_millis() as u64;
        let last = self.logged_at_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= 1000
            && self
                .logged_at_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let before = self.logged.swap(total, Ordering::Relaxed);
            tracing::info!(
                shed = total - before,
                shed_total = total,
                "runs shed with 429 since the last such line"
            );
        }
    }
}

/// Runs at once by default: one per CPU the process may use.
///
/// A run of the embedded sandbox is CPU-bound (starting the interpreter is most of it), so
/// more runs at once than cores only make each one slower: the throughput stays the same
/// and every admitted request waits longer. With one run per core and a queue as long
/// (see [`default_queue`]), an admitted request waits for at most about one run before its
/// own starts, so its latency under overload stays within about twice the unloaded one.
/// A server whose executor runs elsewhere (a container engine on another host, a cluster)
/// sets its own limit (`skillgate serve --max-runs`).
pub fn default_concurrent() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs waiting at most by default (each for at most [`DEFAULT_MAX_WAIT`]). A waiting
/// request costs a task and its body, so the bound is generous: the wait bound, not the
/// queue's length, keeps the latency down, and a request shed at once because the queue
/// is full comes back at once from a client that ignores `Retry-After`.
pub const DEFAULT_QUEUE: usize = 1024;

/// The longest a run waits for a slot by default: under one unloaded run of a small
/// skill on the embedded sandbox (50–80 ms here), so an admitted request takes at most
/// about twice as long as on an idle server.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_millis(50);

/// Seconds a shed client is told to wait.
pub const RETRY_AFTER_SECS: u64 = 1;

impl Admission {
    /// `concurrent` runs at once, `queue` more waiting, each for at most `max_wait`.
    pub fn new(concurrent: usize, queue: usize, max_wait: Duration) -> Admission {
        Admission {
            permits: Semaphore::new(concurrent.max(1)),
            waiting: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            queue,
            max_wait,
            shed: ShedCount {
                total: AtomicU64::new(0),
                logged: AtomicU64::new(0),
                logged_at_ms: AtomicU64::new(0),
                since: Instant::now(),
            },
        }
    }

    /// Requests shed (429) so far.
    pub fn shed_total(&self) -> u64 {
        self.shed.total.load(Ordering::Relaxed)
    }

    /// Runs admitted and not finished.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Runs waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// The gauges in Prometheus text.
    pub fn metrics(&self) -> String {
        format!(
            "# HELP skillgate_server_runs_in_flight Runs the server is serving now.\n\
             # TYPE skillgate_server_runs_in_flight gauge\n\
             skillgate_server_runs_in_flight {}\n\
             # HELP skillgate_server_runs_queued Runs waiting for a slot.\n\
             # TYPE skillgate_server_runs_queued gauge\n\
             skillgate_server_runs_queued {}\n\
             # HELP skillgate_server_runs_shed_total Run requests shed with 429 (no slot, queue full or waited too long).\n\
             # TYPE skillgate_server_runs_shed_total counter\n\
             skillgate_server_runs_shed_total {}\n",
            self.running(),
            self.waiting(),
            self.shed_total()
        )
    }
}

/// A run admitted: running until dropped.
#[derive(Debug)]
pub struct Admitted<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
    running: &'a AtomicUsize,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Why a run was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    /// Every slot is taken and the queue is full.
    Full,
    /// No slot came free within the longest wait.
    Waited,
    /// The server is shutting down.
    Closed,
}

impl Admission {
    /// Admits a run at once, or after waiting in the queue (first come, first served);
    /// refuses it when the queue is full or no slot came free within the longest wait.
    pub async fn enter(&self) -> Result<Admitted<'_>, Shed> {
        let permit = match self.permits.try_acquire() {
            Ok(p) => p,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                    return Err(Shed::Full);
                }
                let p = tokio::time::timeout(self.max_wait, self.permits.acquire()).await;
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                match p {
                    Ok(p) => p.map_err(|_| Shed::Closed)?,
                    Err(_) => return Err(Shed::Waited),
                }
            }
        };
        self.running.fetch_add(1, Ordering::SeqCst);
        Ok(Admitted {
            _permit: permit,
            running: &self.running,
        })
    }
}

/// Admits the request, queues it, or sheds it (429). Put it before the authentication:
/// a shed request is answered without looking at its key or its body. Its answer carries
/// its [`Shed`] in its extensions, so the request log leaves it out.
pub async fn admit(State(state): State<Arc<ServerState>>, req: Request, next: Next) -> Response {
    match state.admission.enter().await {
        Ok(_admitted) => next.run(req).await,
        Err(shed @ (Shed::Full | Shed::Waited)) => {
            state.admission.shed.add();
            let why = if shed == Shed::Full {
                "the server is at its concurrency limit and its queue is full; retry later"
            } else {
                "the server is at its concurrency limit and no slot came free in time; retry later"
            };
            let mut resp =
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "overloaded", why).into_response();
            resp.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from(RETRY_AFTER_SECS),
            );
            resp.extensions_mut().insert(shed);
            resp
        }
        Err(Shed::Closed) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the server is shutting down",
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn beyond_the_slots_and_the_queue_runs_are_shed() {
        let adm = Admission::new(1, 1, Duration::from_secs(3600));
        let first = adm.enter().await.unwrap();
        assert_eq!(adm.running(), 1);
        // The second waits in the queue; the third finds it full.
        let second = adm.enter();
        tokio::pin!(second);
        assert!(futures_poll_once(second.as_mut()).await.is_none());
        assert_eq!(adm.waiting(), 1);
        assert_eq!(adm.enter().await.unwrap_err(), Shed::Full);
        drop(first);
        let second = second.await.unwrap();
        assert_eq!((adm.running(), adm.waiting()), (1, 0));
        drop(second);
        assert_eq!(adm.running(), 0);
        assert!(adm.metrics().contains("skillgate_server_runs_in_flight 0"));
    }

    #[tokio::test]
    async fn a_run_that_finds_no_slot_within_the_longest_wait_is_shed() {
        let adm = Admission::new(1, 8, Duration::from_millis(20));
        let first = adm.enter().await.unwrap();
        assert_eq!(adm.enter().await.unwrap_err(), Shed::Waited);
        assert_eq!((adm.running(), adm.waiting()), (1, 0));
        drop(first);
        // A slot freed while it waits admits it.
        let adm = Admission::new(1, 8, Duration::from_secs(3600));
        let first = adm.enter().await.unwrap();
        let (second, ()) = tokio::join!(adm.enter(), async move { drop(first) });
        assert!(second.is_ok());
    }

    /// Polls `f` once: its output if it is ready.
    async fn futures_poll_once<F: std::future::Future + Unpin>(f: F) -> Option<F::Output> {
        let mut f = f;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
