//! [`MonitorLayer`]: the monitor as the outermost `tower` layer.
use crate::monitor::{Monitor, Verdict};
use crate::signals::{RequestMeta, now_ms};
use crate::store::StoreError;
use skillgate_core::{
    ExecOutcome, ExecRequest, ExecutorSpec, Finding, LayerName, Severity, Status,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tower::{Layer, Service};

/// The monitor as a layer. Put it outermost ([`LayerName::Monitor`]) so it sees every
/// outcome, rejections included.
///
/// On the way in it refuses a throttled agent over its rate (`denied`, finding
/// `monitor.throttled`) and puts an [`ExecutorSpec`] slot on the request; on the way out
/// it records the execution (detections, actions, event, audit record with the spec the
/// executor was given) in one store transaction on tokio's blocking pool, and puts its
/// findings first on the outcome. Whatever comes back is recorded: a cancelled run's
/// outcome, and an infrastructure failure (an `Err`, returned as it is, recorded as
/// `error` with finding `monitor.pipeline_error`). When the execution cannot be recorded, the outcome
/// becomes `error` and its output is withheld (finding `monitor.unrecorded`): an
/// execution that leaves no audit record does not hand back its results.
///
/// Whose a block is ([`Blame`](crate::signals::Blame)) depends on whether the skill is
/// *published*: recorded by the operator (a catalogue record, a registry entry). Say which
/// skills are with [`MonitorLayer::published_by`]; without it no skill is, and every
/// block counts against the calling agent (a folder nobody recorded is its caller's own
/// code, so blaming the skill would let an agent shed its own strikes by wrapping its code
/// in a fresh folder).
#[derive(Clone)]
pub struct MonitorLayer {
    monitor: Arc<Monitor>,
    published: Published,
}

/// Says whether a skill is published (see [`MonitorLayer::published_by`]).
type Published = Arc<dyn Fn(&skillgate_core::Skill) -> bool + Send + Sync>;

impl std::fmt::Debug for MonitorLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MonitorLayer")
            .field("monitor", &self.monitor)
            .finish_non_exhaustive()
    }
}

impl MonitorLayer {
    /// The layer over `monitor`; no skill is published.
    pub fn new(monitor: impl Into<Arc<Monitor>>) -> Self {
        MonitorLayer {
            monitor: monitor.into(),
            published: Arc::new(|_| false),
        }
    }

    /// Says which skills are published (their blocks by their own schema or code count
    /// against the skill, not the caller): for example those the policy's catalogue has a
    /// record of.
    ///
    /// ```
    /// use skillgate_monitor::{Monitor, MonitorLayer, Store, detections::Detections};
    /// let store = std::sync::Arc::new(Store::open_in_memory().unwrap());
    /// let monitor = Monitor::new(store, Detections::builtin(), &Default::default()).unwrap();
    /// let recorded = ["4f2a…", "9c01…"]; // the digests an operator recorded
    /// let layer = MonitorLayer::new(monitor)
    ///     .published_by(move |skill| recorded.contains(&skill.digest.as_str()));
    /// # drop(layer);
    /// ```
    pub fn published_by(
        mut self,
        published: impl Fn(&skillgate_core::Skill) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.published = Arc::new(published);
        self
    }

    /// The monitor.
    pub fn monitor(&self) -> &Arc<Monitor> {
        &self.monitor
    }
}

impl<S> Layer<S> for MonitorLayer {
    type Service = MonitorService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        MonitorService {
            inner,
            monitor: self.monitor.clone(),
            published: self.published.clone(),
        }
    }
}

/// The service of [`MonitorLayer`].
#[derive(Clone)]
pub struct MonitorService<S> {
    inner: S,
    monitor: Arc<Monitor>,
    published: Published,
}

impl<S: std::fmt::Debug> std::fmt::Debug for MonitorService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MonitorService")
            .field("inner", &self.inner)
            .field("monitor", &self.monitor)
            .finish_non_exhaustive()
    }
}

fn unrecorded(mut out: ExecOutcome, e: &StoreError) -> ExecOutcome {
    out.status = Status::Error;
    out.stdout.clear();
    out.stderr.clear();
    out.artifacts.clear();
    out.findings.insert(
        0,
        Finding::new(
            LayerName::Monitor,
            "monitor.unrecorded",
            Severity::High,
            format!("the monitor could not record this execution, so its output is withheld: {e}"),
        ),
    );
    out
}

/// Runs the recording on tokio's blocking pool when there is a runtime, inline otherwise.
async fn record(
    monitor: Arc<Monitor>,
    meta: RequestMeta,
    out: ExecOutcome,
) -> (ExecOutcome, Result<Verdict, StoreError>) {
    let job = move || {
        let r = monitor.observe(&meta, &out);
        (out, r)
    };
    match tokio::runtime::Handle::try_current() {
        Ok(h) => match h.spawn_blocking(job).await {
            Ok(r) => r,
            Err(e) => (
                ExecOutcome::default(),
                Err(StoreError::Db(format!("the recording task failed: {e}"))),
            ),
        },
        Err(_) => job(),
    }
}

/// Syncs the announced intents on tokio's blocking pool while the run goes on (inline
/// when there is no runtime); the future says whether the sync succeeded.
fn sync_beside(monitor: Arc<Monitor>) -> Pin<Box<dyn Future<Output = bool> + Send>> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) => {
            let job = h.spawn_blocking(move || monitor.sync_announced());
            Box::pin(async move { matches!(job.await, Ok(Ok(()))) })
        }
        Err(_) => Box::pin(std::future::ready(monitor.sync_announced().is_ok())),
    }
}

fn finish(
    out: ExecOutcome,
    verdict: Result<Verdict, StoreError>,
    spent: Duration,
    mut extra: Vec<Finding>,
) -> ExecOutcome {
    match verdict {
        Ok(v) => {
            let mut out = out;
            let mut findings = v.findings;
            findings.append(&mut extra);
            out.record_layer(LayerName::Monitor, spent, findings);
            out
        }
        Err(e) => {
            let mut out = unrecorded(out, &e);
            out.record_layer(LayerName::Monitor, spent, extra);
            out
        }
    }
}

impl<S> Service<ExecRequest> for MonitorService<S>
where
    S: Service<ExecRequest, Response = ExecOutcome> + Send + 'static,
    S::Error: std::fmt::Display + Send,
    S::Future: Send + 'static,
{
    type Response = ExecOutcome;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<ExecOutcome, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: ExecRequest) -> Self::Future {
        let started = Instant::now();
        let mut meta = RequestMeta::of(&req).published((self.published)(&req.skill));
        let executor_spec = ExecutorSpec::default();
        req.extensions.insert(executor_spec.clone());
        let monitor = self.monitor.clone();
        let admitted = monitor.admit(&meta.tenant, &meta.agent, now_ms());
        match admitted {
            Ok(None) => {
                // The run's intent goes to the trail before the run starts (a trail that
                // cannot take it refuses the run) and is synced beside it.
                let announced = match monitor.announce(&meta, now_ms()) {
                    Ok(announced) => announced,
                    Err(e) => {
                        let mut out = unrecorded(ExecOutcome::rejected(Status::Error, vec![]), &e);
                        out.record_layer(LayerName::Monitor, started.elapsed(), Vec::new());
                        return Box::pin(std::future::ready(Ok(out)));
                    }
                };
                let synced = announced.then(|| sync_beside(monitor.clone()));
                let spent_in = started.elapsed();
                let fut = self.inner.call(req);
                Box::pin(async move {
                    let out = fut.await;
                    let t = Instant::now();
                    if let Some(synced) = synced {
                        // When the sync failed, the execution record is synced itself.
                        meta.intent_synced = synced.await;
                    }
                    let out = match out {
                        Ok(out) => out,
                        Err(e) => {
                            // An infrastructure failure is returned as it is, but it too
                            // leaves its audit record.
                            let failed = ExecOutcome::rejected(
                                Status::Error,
                                vec![Finding::new(
                                    LayerName::Monitor,
                                    "monitor.pipeline_error",
                                    Severity::High,
                                    format!("the pipeline failed: {e}"),
                                )],
                            );
                            meta.executor_spec = executor_spec.get().cloned();
                            let _ = record(monitor, meta, failed).await;
                            return Err(e);
                        }
                    };
                    meta.executor_spec = executor_spec.get().cloned();
                    let (out, verdict) = record(monitor, meta, out).await;
                    Ok(finish(out, verdict, spent_in + t.elapsed(), Vec::new()))
                })
            }
            Ok(Some(refusal)) => Box::pin(async move {
                let out = ExecOutcome::rejected(Status::Denied, vec![refusal.clone()]);
                let (mut out, verdict) = record(monitor, meta, out).await;
                out.findings.retain(|f| f.rule_id != "monitor.throttled");
                Ok(finish(out, verdict, started.elapsed(), vec![refusal]))
            }),
            Err(e) => Box::pin(async move {
                let out = unrecorded(ExecOutcome::rejected(Status::Error, vec![]), &e);
                let mut out = out;
                out.record_layer(LayerName::Monitor, started.elapsed(), Vec::new());
                Ok(out)
            }),
        }
    }
}
