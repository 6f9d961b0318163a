//! The pre-scan as a `tower` layer.
use crate::{PreScanner, Verdict};
use skillgate_core::{Decide, DecideService, ExecRequest, Finding, LayerName, Rejection, Status};
use std::sync::Arc;
use tower::Layer;

/// Scans the skill's code before it runs: the entry and every code file of its folder
/// ([`PreScanner::scan_skill`]). A `block` verdict makes the outcome `blocked`
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
    scanner: Arc<PreScanner>,
}

impl PreScanLayer {
    /// The layer around a scanner.
    pub fn new(scanner: PreScanner) -> Self {
        PreScanLayer {
            scanner: Arc::new(scanner),
        }
    }
}

impl<S> Layer<S> for PreScanLayer {
    type Service = PreScanService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        DecideService::new(inner, self.scanner.clone())
    }
}

/// The service of [`PreScanLayer`].
pub type PreScanService<S> = DecideService<S, PreScanner>;

impl Decide for PreScanner {
    const LAYER: LayerName = LayerName::Prescan;
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
        let report = self.scan_skill_cached(&req.skill);
        if report.verdict == Verdict::Block {
            return Err(Rejection::new(Status::Blocked, report.findings));
        }
        req.findings.extend(report.findings.iter().cloned());
        Ok(report.findings)
    }
}
