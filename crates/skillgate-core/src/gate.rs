//! The service shape of every layer that decides on the request before the executor runs
//! it (policy, input, pre-scan, isolation, seccomp, network): decide, then either answer
//! with a rejection or pass the request on, recording the layer's time and findings on the
//! way back.
use crate::{ExecOutcome, ExecRequest, Finding, LayerName, Status};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::Service;

/// Why a request goes no further: the outcome's status and the layer's findings.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The status the outcome gets (`denied`, `blocked`, `error`, ...).
    pub status: Status,
    /// What the layer found; recorded under its name.
    pub findings: Vec<Finding>,
}

impl Rejection {
    /// A rejection with `status` and `findings`.
    pub fn new(status: Status, findings: Vec<Finding>) -> Self {
        Rejection { status, findings }
    }
}

/// A layer's decision on a request before the inner service runs it.
///
/// ```
/// use skillgate_core::{
///     Caller, Decide, DecideService, ExecOutcome, ExecRequest, Finding, LayerName, Language,
///     Rejection, Severity, Skill, Status,
/// };
/// use std::sync::Arc;
/// use tower::{ServiceExt, service_fn};
///
/// /// Refuses skills with an empty name.
/// struct Named;
/// impl Decide for Named {
///     const LAYER: LayerName = LayerName::Input;
///     fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
///         if req.skill.name.is_empty() {
///             let f = Finding::new(LayerName::Input, "name", Severity::High, "no name");
///             return Err(Rejection::new(Status::Blocked, vec![f]));
///         }
///         Ok(Vec::new())
///     }
/// }
///
/// let exec = service_fn(|_req: ExecRequest| async {
///     Ok::<_, std::convert::Infallible>(ExecOutcome::default())
/// });
/// let svc = DecideService::new(exec, Arc::new(Named));
/// let skill = Skill::builder("", Language::Python, b"".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = futures_lite_block_on(svc.oneshot(req)).unwrap();
/// assert_eq!(out.status, Status::Blocked);
/// assert!(out.layer_timing(LayerName::Input).is_some());
/// # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let waker = std::task::Waker::noop();
/// #     let mut cx = std::task::Context::from_waker(&waker);
/// #     let mut f = std::pin::pin!(f);
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
/// #     }
/// # }
/// ```
pub trait Decide: Send + Sync + 'static {
    /// The layer's name in reports.
    const LAYER: LayerName;
    /// Amends the request (its spec, findings, extensions) and passes it on with the
    /// findings to record on the way back, or rejects it.
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection>;
}

/// The service of a [`Decide`] layer around the inner service `S`.
#[derive(Debug)]
pub struct DecideService<S, D> {
    inner: S,
    decider: Arc<D>,
}

impl<S, D> DecideService<S, D> {
    /// `decider` in front of `inner`.
    pub fn new(inner: S, decider: Arc<D>) -> Self {
        DecideService { inner, decider }
    }
}

impl<S: Clone, D> Clone for DecideService<S, D> {
    fn clone(&self) -> Self {
        DecideService {
            inner: self.inner.clone(),
            decider: Arc::clone(&self.decider),
        }
    }
}

impl<S, D> Service<ExecRequest> for DecideService<S, D>
where
    S: Service<ExecRequest, Response = ExecOutcome> + Send + 'static,
    S::Future: Send + 'static,
    D: Decide,
{
    type Response = ExecOutcome;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<ExecOutcome, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: ExecRequest) -> Self::Future {
        let started = Instant::now();
        let decided = self.decider.decide(&mut req);
        let spent = started.elapsed();
        match decided {
            Err(Rejection { status, findings }) => Box::pin(async move {
                let mut out = ExecOutcome::rejected(status, Vec::new());
                out.record_layer(D::LAYER, spent, findings);
                Ok(out)
            }),
            Ok(findings) => {
                let fut = self.inner.call(req);
                Box::pin(async move {
                    let mut out = fut.await?;
                    out.record_layer(D::LAYER, spent, findings);
                    Ok(out)
                })
            }
        }
    }
}
