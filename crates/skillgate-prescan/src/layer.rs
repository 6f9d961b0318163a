//! The pre-scan as a `tower` layer.
use crate::{PreScanner, Verdict};
use skillgate_core::{ExecOutcome, ExecRequest, LayerName, Status};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};

/// Scans the skill's code before it runs. A `block` verdict makes the outcome `blocked`
/// with the findings (rule, line, column, snippet); `warn` findings travel on the request
/// and end in the report; `allow` passes silently.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use skillgate_core::{BoxError, Caller, ExecOutcome, ExecRequest, Language, Skill, Status};
/// use skillgate_prescan::{PreScanLayer, PreScanner};
/// use tower::{Layer, ServiceExt, service_fn};
/// let inner = service_fn(|_req: ExecRequest| async {
///     Ok::<_, BoxError>(ExecOutcome { status: Status::Ok, ..Default::default() })
/// });
/// let svc = PreScanLayer::new(PreScanner::new().unwrap()).layer(inner);
/// let skill = Skill::builder("s", Language::Python, b"import subprocess\n".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = svc.oneshot(req).await.unwrap();
/// assert_eq!(out.status, Status::Blocked);
/// assert_eq!(out.findings[0].rule_id, "py.process.subprocess");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct PreScanLayer {
    scanner: PreScanner,
}

impl PreScanLayer {
    /// The layer around a scanner.
    pub fn new(scanner: PreScanner) -> Self {
        PreScanLayer { scanner }
    }
}

impl<S> Layer<S> for PreScanLayer {
    type Service = PreScanService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        PreScanService {
            inner,
            scanner: self.scanner.clone(),
        }
    }
}

/// The service of [`PreScanLayer`].
#[derive(Debug, Clone)]
pub struct PreScanService<S> {
    inner: S,
    scanner: PreScanner,
}

impl<S> Service<ExecRequest> for PreScanService<S>
where
    S: Service<ExecRequest, Response = ExecOutcome> + Send + 'static,
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
        let report = self.scanner.scan(&req.skill.code, req.skill.language);
        let spent = started.elapsed();
        if report.verdict == Verdict::Block {
            return Box::pin(async move {
                let mut out = ExecOutcome::rejected(Status::Blocked, Vec::new());
                out.record_layer(LayerName::Prescan, spent, report.findings);
                Ok(out)
            });
        }
        req.findings.extend(report.findings.iter().cloned());
        let fut = self.inner.call(req);
        Box::pin(async move {
            let mut out = fut.await?;
            out.record_layer(LayerName::Prescan, spent, report.findings);
            Ok(out)
        })
    }
}
