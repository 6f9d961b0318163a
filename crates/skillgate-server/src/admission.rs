//! The global concurrency limit with a bounded queue: at most `concurrent` runs at once,
//! at most `queue` more waiting; beyond that the server sheds load with 429 and
//! `Retry-After`.
use crate::ServerState;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Semaphore;

/// Admission control for runs.
#[derive(Debug)]
pub struct Admission {
    permits: Semaphore,
    waiting: AtomicUsize,
    running: AtomicUsize,
    queue: usize,
}

/// Runs at once by default.
pub const DEFAULT_CONCURRENT: usize = 32;
/// Runs waiting by default.
pub const DEFAULT_QUEUE: usize = 64;

/// Seconds a shed client is told to wait.
pub const RETRY_AFTER_SECS: u64 = 1;

impl Admission {
    /// `concurrent` runs at once, `queue` more waiting.
    pub fn new(concurrent: usize, queue: usize) -> Admission {
        Admission {
            permits: Semaphore::new(concurrent.max(1)),
            waiting: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            queue,
        }
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
             skillgate_server_runs_queued {}\n",
            self.running(),
            self.waiting()
        )
    }
}

/// Counts a run as running until dropped.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Admits the request, queues it, or sheds it (429).
pub async fn admit(State(state): State<Arc<ServerState>>, req: Request, next: Next) -> Response {
    let adm = &state.admission;
    let _permit = match adm.permits.try_acquire() {
        Ok(p) => p,
        Err(_) => {
            if adm.waiting.fetch_add(1, Ordering::SeqCst) >= adm.queue {
                adm.waiting.fetch_sub(1, Ordering::SeqCst);
                let mut resp = ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "overloaded",
                    "the server is at its concurrency limit and its queue is full; retry later",
                )
                .into_response();
                resp.headers_mut().insert(
                    http::header::RETRY_AFTER,
                    http::HeaderValue::from(RETRY_AFTER_SECS),
                );
                return resp;
            }
            let p = adm.permits.acquire().await;
            adm.waiting.fetch_sub(1, Ordering::SeqCst);
            match p {
                Ok(p) => p,
                Err(_) => {
                    return ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "shutting_down",
                        "the server is shutting down",
                    )
                    .into_response();
                }
            }
        }
    };
    adm.running.fetch_add(1, Ordering::SeqCst);
    let _running = Running(&adm.running);
    next.run(req).await
}
