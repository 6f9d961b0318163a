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
//! A freed slot goes to the newest waiter by default ([`QueueOrder::NewestFirst`]): under
//! overload the queue is never empty, so the request admitted is one that has hardly
//! waited, and the ones that have waited longest are the ones shed (they would have been
//! the slowest answers). The wait then parks the clients that will be shed, which keeps
//! clients that retry at once from spinning, without adding to the latency of the
//! admitted ones. First come, first served ([`QueueOrder::OldestFirst`]) is fairer to a
//! single request, but under overload every admitted request has waited the longest.
//!
//! Admission comes first on the run routes, before the body is read or anything is logged:
//! a request that finds a free slot takes it, and one that finds every slot taken and the
//! queue full is shed at once, without its key being looked up (an atomic or two and a
//! short JSON answer). So a caller with a bad key may get 429 (come back later) where an
//! idle server would answer 401. A shed request leaves no audit record and no log line of
//! its own; the server counts them (`skillgate_server_runs_shed_total` in `/metrics`) and
//! logs how many it shed at most once a second.
//!
//! Shed answers are paced ([`ShedPace`]): beyond a modest rate of 429s a second, each
//! further one is held a moment before it is sent, so a client that ignores `Retry-After`
//! and retries at once cannot turn the shedding into a storm that takes the CPU from the
//! admitted runs.
//!
//! Only a caller whose key holds waits in the queue: a request that would wait is
//! authenticated first (a bad key gets its 401 and its audit record there, as on an idle
//! server). So a flood of requests without a valid key never takes a queue place from a
//! keyed caller: it costs one key lookup each while the queue has room, and nothing but
//! the 429 once the keyed callers have filled it.
use crate::ServerState;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Which waiter a freed slot goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueOrder {
    /// The newest: under overload, the admitted requests are the ones that waited least.
    #[default]
    NewestFirst,
    /// The oldest: first come, first served.
    OldestFirst,
}

impl std::str::FromStr for QueueOrder {
    type Err = String;

    fn from_str(s: &str) -> Result<QueueOrder, String> {
        match s {
            "newest-first" => Ok(QueueOrder::NewestFirst),
            "oldest-first" => Ok(QueueOrder::OldestFirst),
            other => Err(format!(
                "unknown queue order `{}` (expected newest-first or oldest-first)",
                crate::error::elide(other)
            )),
        }
    }
}

/// Admission control for runs.
#[derive(Debug)]
pub struct Admission {
    slots: Mutex<Slots>,
    waiting: AtomicUsize,
    running: AtomicUsize,
    queue: usize,
    max_wait: Duration,
    order: QueueOrder,
    shed: ShedCount,
    pace: ShedPace,
}

/// How fast shed answers go out. Up to [`ShedPace::per_second`] 429s a second are
/// answered as soon as they are decided; beyond that rate each further one is held for
/// [`ShedPace::hold`] before it is answered (at most [`ShedPace::max_held`] at once; past
/// that, at once again).
///
/// A client that ignores `Retry-After` and retries at once turns every 429 into another
/// request: at a few thousand a second the answers alone (the key lookup, the queue, the
/// JSON error) and the client's own work take a core of the CPU the admitted runs need.
/// Holding the answers beyond a modest rate slows such a client to one request per hold
/// per connection, while a client that honours `Retry-After` (which waits a second anyway)
/// and a light overload (sheds under the rate) see no difference. A held request costs a
/// task and its connection, no CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShedPace {
    /// 429s a second answered at once (0: every one at once, nothing held).
    pub per_second: u32,
    /// How long each 429 beyond that rate is held.
    pub hold: Duration,
    /// The most 429s held at once.
    pub max_held: usize,
}

impl Default for ShedPace {
    fn default() -> Self {
        ShedPace {
            per_second: DEFAULT_SHED_RATE,
            hold: DEFAULT_SHED_HOLD,
            max_held: DEFAULT_QUEUE,
        }
    }
}

/// 429s a second answered at once by default: several times what the embedded sandbox
/// runs a second on a small machine, so a light overload never has an answer held.
pub const DEFAULT_SHED_RATE: u32 = 200;

/// How long a 429 beyond [`DEFAULT_SHED_RATE`] is held by default: a quarter of the
/// `Retry-After` second.
pub const DEFAULT_SHED_HOLD: Duration = Duration::from_millis(250);

/// The immediate-answer budget of [`ShedPace`]: a token bucket refilled at `per_second`,
/// holding at most that many, and the count of answers held now.
#[derive(Debug)]
struct PaceState {
    tokens: f64,
    /// Tokio's clock (the real one, or a test's paused one).
    refilled: tokio::time::Instant,
    held: usize,
}

/// The free slots and the waiters (some of which may have given up already).
#[derive(Debug)]
struct Slots {
    free: usize,
    waiters: VecDeque<Arc<Waiter>>,
}

/// A request waiting for a slot. Its state moves once, from `WAITING` to `GRANTED` (a
/// freed slot is now its own) or to `GAVE_UP` (it stopped waiting): whoever moves it
/// decides, so a slot is never handed to a request that has left.
#[derive(Debug, Default)]
struct Waiter {
    state: AtomicU8,
    granted: Notify,
}

const WAITING: u8 = 0;
const GRANTED: u8 = 1;
const GAVE_UP: u8 = 2;

impl Waiter {
    /// Gives up waiting; false if a slot was granted first (the slot is the caller's).
    fn give_up(&self) -> bool {
        self.state
            .compare_exchange(WAITING, GAVE_UP, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
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
    /// Shed answers held so far (see [`ShedPace`]).
    held: AtomicU64,
    /// The immediate-answer budget and the answers held now.
    pace: Mutex<PaceState>,
}

impl ShedCount {
    /// A held answer goes out.
    fn end_hold(&self) {
        let mut st = self.pace.lock().unwrap_or_else(|p| p.into_inner());
        st.held = st.held.saturating_sub(1);
    }

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
/// skill on the embedded sandbox (50–80 ms here), so even a request admitted after the
/// whole wait takes at most about twice as long as on an idle server. With
/// [`QueueOrder::NewestFirst`] under overload, the admitted requests hardly wait, and the
/// wait mostly parks the requests that will be shed: a client that retries at once comes
/// back once per wait, not in a loop.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_millis(50);

/// Seconds a shed client is told to wait.
pub const RETRY_AFTER_SECS: u64 = 1;

impl Admission {
    /// `concurrent` runs at once, `queue` more waiting, each for at most `max_wait`; a
    /// freed slot goes to the waiter `order` says.
    pub fn new(
        concurrent: usize,
        queue: usize,
        max_wait: Duration,
        order: QueueOrder,
    ) -> Admission {
        Admission {
            slots: Mutex::new(Slots {
                free: concurrent.max(1),
                waiters: VecDeque::new(),
            }),
            waiting: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            queue,
            max_wait,
            order,
            shed: ShedCount {
                total: AtomicU64::new(0),
                logged: AtomicU64::new(0),
                logged_at_ms: AtomicU64::new(0),
                since: Instant::now(),
                held: AtomicU64::new(0),
                pace: Mutex::new(PaceState {
                    tokens: f64::from(DEFAULT_SHED_RATE),
                    refilled: tokio::time::Instant::now(),
                    held: 0,
                }),
            },
            pace: ShedPace::default(),
        }
    }

    /// The same admission, its shed answers paced by `pace` instead of the default.
    pub fn with_shed_pace(mut self, pace: ShedPace) -> Admission {
        self.pace = pace;
        if let Ok(mut st) = self.shed.pace.lock() {
            st.tokens = f64::from(pace.per_second);
        }
        self
    }

    /// Holds a shed answer when 429s are going out faster than the pace allows (see
    /// [`ShedPace`]); returns at once otherwise.
    pub async fn pace_shed(&self) {
        if !self.must_hold() {
            return;
        }
        tokio::time::sleep(self.pace.hold).await;
        self.shed.end_hold();
    }

    /// Whether this shed answer must be held (and counts it as held).
    fn must_hold(&self) -> bool {
        if self.pace.per_second == 0 || self.pace.hold.is_zero() {
            return false;
        }
        let mut st = self.shed.pace.lock().unwrap_or_else(|p| p.into_inner());
        let now = tokio::time::Instant::now();
        let rate = f64::from(self.pace.per_second);
        let refill = now.duration_since(st.refilled).as_secs_f64() * rate;
        st.tokens = (st.tokens + refill).min(rate);
        st.refilled = now;
        if st.tokens >= 1.0 {
            st.tokens -= 1.0;
            return false;
        }
        if st.held >= self.pace.max_held {
            return false;
        }
        st.held += 1;
        self.shed.held.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Shed answers held now.
    pub fn shed_held(&self) -> usize {
        self.shed.pace.lock().map_or(0, |st| st.held)
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
             skillgate_server_runs_shed_total {}\n\
             # HELP skillgate_server_runs_shed_held_total Shed answers held back because 429s went out faster than the shed pace.\n\
             # TYPE skillgate_server_runs_shed_held_total counter\n\
             skillgate_server_runs_shed_held_total {}\n",
            self.running(),
            self.waiting(),
            self.shed_total(),
            self.shed.held.load(Ordering::Relaxed)
        )
    }
}

/// A run admitted: running until dropped, which frees its slot.
#[derive(Debug)]
pub struct Admitted<'a> {
    admission: &'a Admission,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.admission.running.fetch_sub(1, Ordering::SeqCst);
        self.admission.release();
    }
}

/// Why a run was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    /// Every slot is taken and the queue is full.
    Full,
    /// No slot came free within the longest wait.
    Waited,
}

/// A request in the queue; leaving it (also by being dropped: the client went away)
/// gives back a slot granted to it meanwhile.
struct InQueue<'a> {
    admission: &'a Admission,
    waiter: Arc<Waiter>,
    /// The request took the slot granted to it.
    took: bool,
}

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        self.admission.waiting.fetch_sub(1, Ordering::SeqCst);
        if !self.took
            && !self.waiter.give_up()
            && self.waiter.state.load(Ordering::SeqCst) == GRANTED
        {
            // Granted, and dropped before it could run: the slot goes on.
            self.admission.release();
        }
    }
}

impl Admission {
    fn slots(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A run started.
    fn admitted(&self) -> Admitted<'_> {
        self.running.fetch_add(1, Ordering::SeqCst);
        Admitted { admission: self }
    }

    /// Hands a freed slot to a waiter (the newest or the oldest, by the queue order), or
    /// keeps it free when none waits.
    fn release(&self) {
        let mut slots = self.slots();
        loop {
            let next = match self.order {
                QueueOrder::NewestFirst => slots.waiters.pop_back(),
                QueueOrder::OldestFirst => slots.waiters.pop_front(),
            };
            let Some(waiter) = next else {
                slots.free += 1;
                return;
            };
            if waiter
                .state
                .compare_exchange(WAITING, GRANTED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                waiter.granted.notify_one();
                return;
            }
        }
    }

    /// A slot at once, if one is free.
    fn try_now(&self) -> Option<Admitted<'_>> {
        let mut slots = self.slots();
        if slots.free == 0 {
            return None;
        }
        slots.free -= 1;
        drop(slots);
        Some(self.admitted())
    }

    /// Whether a request that finds no free slot would be shed for want of a queue place.
    fn queue_is_full(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) >= self.queue
    }

    /// Admits a run at once, or after waiting in the queue; refuses it when the queue is
    /// full or no slot came to it within the longest wait.
    pub async fn enter(&self) -> Result<Admitted<'_>, Shed> {
        let waiter = {
            let mut slots = self.slots();
            if slots.free > 0 {
                slots.free -= 1;
                drop(slots);
                return Ok(self.admitted());
            }
            if self.queue_is_full() {
                return Err(Shed::Full);
            }
            // Waiters that gave up stay in the queue until a slot passes them over; sweep
            // them out before they outnumber the live ones.
            if slots.waiters.len() >= 2 * self.queue.max(8) {
                slots
                    .waiters
                    .retain(|w| w.state.load(Ordering::SeqCst) == WAITING);
            }
            let waiter = Arc::new(Waiter::default());
            slots.waiters.push_back(waiter.clone());
            self.waiting.fetch_add(1, Ordering::SeqCst);
            waiter
        };
        let mut in_queue = InQueue {
            admission: self,
            waiter,
            took: false,
        };
        let _ = tokio::time::timeout(self.max_wait, in_queue.waiter.granted.notified()).await;
        if in_queue.waiter.give_up() {
            return Err(Shed::Waited);
        }
        // Granted (perhaps just as the wait ran out): the slot is this request's.
        in_queue.took = true;
        drop(in_queue);
        Ok(self.admitted())
    }
}
/// Admits the request, queues it, or sheds it (429). Put it before the authentication
/// ([`crate::auth::require_key`]): a request shed because the queue is full is answered
/// without looking at its key or its body, and a request that would wait is authenticated
/// first, so only keyed callers hold queue places. A shed answer carries its [`Shed`] in
/// its extensions, so the request log leaves it out.
pub async fn admit(
    State(state): State<Arc<ServerState>>,
    mut req: Request,
    next: Next,
) -> Response {
    let admitted = match state.admission.try_now() {
        Some(slot) => Ok(slot),
        None if state.admission.queue_is_full() => Err(Shed::Full),
        None => {
            if let Err(refused) = crate::auth::authenticate(&state, &mut req).await {
                return refused;
            }
            state.admission.enter().await
        }
    };
    match admitted {
        Ok(_admitted) => next.run(req).await,
        Err(shed) => {
            state.admission.shed.add();
            state.admission.pace_shed().await;
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn beyond_the_slots_and_the_queue_runs_are_shed() {
        let adm = Admission::new(1, 1, Duration::from_secs(3600), QueueOrder::NewestFirst);
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
        let adm = Admission::new(1, 8, Duration::from_millis(20), QueueOrder::NewestFirst);
        let first = adm.enter().await.unwrap();
        assert_eq!(adm.enter().await.unwrap_err(), Shed::Waited);
        assert_eq!((adm.running(), adm.waiting()), (1, 0));
        drop(first);
        // A slot freed while it waits admits it.
        let adm = Admission::new(1, 8, Duration::from_secs(3600), QueueOrder::NewestFirst);
        let first = adm.enter().await.unwrap();
        let (second, ()) = tokio::join!(adm.enter(), async move { drop(first) });
        assert!(second.is_ok());
    }

    /// With one slot taken and two requests waiting (`a` first, then `b`): which of them
    /// the freed slot admits.
    async fn who_gets_the_freed_slot(order: QueueOrder) -> &'static str {
        let adm = Admission::new(1, 8, Duration::from_secs(3600), order);
        let first = adm.enter().await.unwrap();
        let mut a = Box::pin(adm.enter());
        let mut b = Box::pin(adm.enter());
        assert!(futures_poll_once(a.as_mut()).await.is_none());
        assert!(futures_poll_once(b.as_mut()).await.is_none());
        assert_eq!(adm.waiting(), 2);
        drop(first);
        let (admitted, _slot) = match (
            futures_poll_once(a.as_mut()).await,
            futures_poll_once(b.as_mut()).await,
        ) {
            (Some(Ok(slot)), None) => ("a", slot),
            (None, Some(Ok(slot))) => ("b", slot),
            other => panic!("exactly one of them must be admitted: {other:?}"),
        };
        // The other one still waits.
        assert_eq!((adm.running(), adm.waiting()), (1, 1));
        admitted
    }

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_newest_waiter_or_the_oldest_as_configured() {
        assert_eq!(who_gets_the_freed_slot(QueueOrder::NewestFirst).await, "b");
        assert_eq!(who_gets_the_freed_slot(QueueOrder::OldestFirst).await, "a");
        assert_eq!("newest-first".parse(), Ok(QueueOrder::NewestFirst));
        assert_eq!("oldest-first".parse(), Ok(QueueOrder::OldestFirst));
        assert!("lifo".parse::<QueueOrder>().unwrap_err().contains("lifo"));
    }

    #[tokio::test]
    async fn a_slot_granted_to_a_request_that_went_away_is_not_lost() {
        let adm = Admission::new(1, 8, Duration::from_secs(3600), QueueOrder::NewestFirst);
        let first = adm.enter().await.unwrap();
        let mut gone = Box::pin(adm.enter());
        assert!(futures_poll_once(gone.as_mut()).await.is_none());
        // The slot is granted to it, but its client disconnects before it runs.
        drop(first);
        drop(gone);
        assert_eq!((adm.running(), adm.waiting()), (0, 0));
        let again = adm.enter();
        tokio::pin!(again);
        assert!(matches!(futures_poll_once(again).await, Some(Ok(_))));
    }

    #[tokio::test]
    async fn a_waiter_that_gave_up_is_passed_over() {
        let adm = Admission::new(1, 8, Duration::from_millis(10), QueueOrder::NewestFirst);
        let first = adm.enter().await.unwrap();
        assert_eq!(adm.enter().await.unwrap_err(), Shed::Waited);
        // The slot it no longer waits for stays free for the next request.
        drop(first);
        let next = adm.enter();
        tokio::pin!(next);
        assert!(matches!(futures_poll_once(next).await, Some(Ok(_))));
        assert_eq!(adm.waiting(), 0);
    }

    /// Shed answers beyond the pace's rate are held for its hold, as many as it allows
    /// at once; under the rate, or with a rate of 0, none is. (Tokio's clock is paused:
    /// time moves only when every task waits, so this checks the logic, not timings.)
    #[tokio::test(start_paused = true)]
    async fn shed_answers_beyond_the_pace_are_held_and_the_rest_go_at_once() {
        let pace = ShedPace {
            per_second: 2,
            hold: Duration::from_millis(250),
            max_held: 1,
        };
        let adm = Admission::new(1, 8, Duration::from_millis(10), QueueOrder::NewestFirst)
            .with_shed_pace(pace);
        // Two at once (the bucket's budget for the second).
        for _ in 0..2 {
            let f = adm.pace_shed();
            tokio::pin!(f);
            assert!(futures_poll_once(f).await.is_some());
        }
        // The third is held until the hold has passed; a fourth meanwhile goes at once
        // (at most one held).
        let held = adm.pace_shed();
        tokio::pin!(held);
        assert!(futures_poll_once(held.as_mut()).await.is_none());
        assert_eq!(adm.shed_held(), 1);
        let over = adm.pace_shed();
        tokio::pin!(over);
        assert!(futures_poll_once(over).await.is_some());
        let before = tokio::time::Instant::now();
        held.await;
        assert_eq!(before.elapsed(), Duration::from_millis(250));
        assert_eq!(adm.shed_held(), 0);
        assert!(
            adm.metrics()
                .contains("skillgate_server_runs_shed_held_total 1")
        );
        // A second later the budget is back: at once again.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let f = adm.pace_shed();
        tokio::pin!(f);
        assert!(futures_poll_once(f).await.is_some());
        // A rate of 0 holds nothing.
        let adm = Admission::new(1, 8, Duration::from_millis(10), QueueOrder::NewestFirst)
            .with_shed_pace(ShedPace {
                per_second: 0,
                ..pace
            });
        for _ in 0..10 {
            let f = adm.pace_shed();
            tokio::pin!(f);
            assert!(futures_poll_once(f).await.is_some());
        }
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
