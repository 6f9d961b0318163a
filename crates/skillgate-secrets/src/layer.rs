//! The tower layer: scans what the executor returns and redacts, withholds or reports.
use crate::redact::Mode;
use crate::scanner::{SecretFinding, SecretScanner};
use sha2::{Digest, Sha256};
use skillgate_core::{ExecOutcome, ExecRequest, Finding, LayerName, Location, Status};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};

/// Layer 6: scans stdout, stderr and every text artifact of every outcome for secrets.
///
/// In [`Mode::Redact`] (the default) each secret is replaced with `[REDACTED:<rule-id>]`;
/// in [`Mode::Block`] an outcome with a secret becomes `blocked` and its output and
/// artifacts are withheld; in [`Mode::Report`] the output passes as it is. In every mode
/// the findings (with masked previews, never the secret) go into the report.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use skillgate_core::{BoxError, Caller, ExecOutcome, ExecRequest, Language, Skill, Status};
/// use skillgate_secrets::{Mode, SecretScanner, SecretsLayer};
/// use tower::{Layer, ServiceExt, service_fn};
/// let inner = service_fn(|_req: ExecRequest| async {
///     Ok::<_, BoxError>(ExecOutcome {
///         status: Status::Ok,
///         stdout: b"{\"key\": \"AKIAZ3MSJV4WXQ7LTN2H\"}".to_vec(),
///         ..Default::default()
///     })
/// });
/// let layer = SecretsLayer::new(SecretScanner::default_pack().unwrap(), Mode::Redact);
/// let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = layer.layer(inner).oneshot(req).await.unwrap();
/// assert_eq!(out.stdout, b"{\"key\": \"[REDACTED:aws-access-key-id]\"}");
/// assert_eq!(out.findings[0].rule_id, "aws-access-key-id");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct SecretsLayer {
    scanner: SecretScanner,
    mode: Mode,
}

impl SecretsLayer {
    /// A layer scanning with `scanner` in `mode`.
    pub fn new(scanner: SecretScanner, mode: Mode) -> Self {
        SecretsLayer { scanner, mode }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

impl<S> Layer<S> for SecretsLayer {
    type Service = SecretsService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        SecretsService {
            inner,
            scanner: self.scanner.clone(),
            mode: self.mode,
        }
    }
}

/// The service of [`SecretsLayer`].
#[derive(Debug, Clone)]
pub struct SecretsService<S> {
    inner: S,
    scanner: SecretScanner,
    mode: Mode,
}

impl<S> Service<ExecRequest> for SecretsService<S>
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

    fn call(&mut self, req: ExecRequest) -> Self::Future {
        let fut = self.inner.call(req);
        let scanner = self.scanner.clone();
        let mode = self.mode;
        Box::pin(async move {
            let mut out = fut.await?;
            let started = Instant::now();
            let findings = scan_outcome(&scanner, mode, &mut out);
            out.record_layer(LayerName::Secrets, started.elapsed(), findings);
            Ok(out)
        })
    }
}

/// Whether an artifact is text worth scanning: no NUL byte in its first 8 KiB.
pub fn is_text_artifact(content: &[u8]) -> bool {
    !content[..content.len().min(8192)].contains(&0)
}

/// Scans an outcome's stdout, stderr and text artifacts, applies `mode` to it, and returns
/// the report findings. This is the layer's work, usable without tower.
pub fn scan_outcome(scanner: &SecretScanner, mode: Mode, out: &mut ExecOutcome) -> Vec<Finding> {
    let mut report = Vec::new();
    let mut process = |place: &str, bytes: &mut Vec<u8>| -> bool {
        let (redacted, found) = scanner.redact(bytes);
        if found.is_empty() {
            return false;
        }
        report.extend(found.iter().map(|f| to_report(place, f)));
        if mode == Mode::Redact {
            *bytes = redacted;
        }
        true
    };
    process("stdout", &mut out.stdout);
    process("stderr", &mut out.stderr);
    for a in &mut out.artifacts {
        if is_text_artifact(&a.content)
            && process(&format!("artifact {}", a.name), &mut a.content)
            && mode == Mode::Redact
        {
            a.size = a.content.len() as u64;
            a.sha256 = hex::encode(Sha256::digest(&a.content));
        }
    }
    if mode == Mode::Block && !report.is_empty() {
        out.status = Status::Blocked;
        out.stdout.clear();
        out.stderr.clear();
        out.artifacts.clear();
    }
    report
}

fn to_report(place: &str, f: &SecretFinding) -> Finding {
    let via = if f.decoded_from.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = f.decoded_from.iter().map(|e| e.as_str()).collect();
        format!(" (decoded from {})", names.join(" > "))
    };
    Finding::new(
        LayerName::Secrets,
        f.rule_id.clone(),
        f.severity,
        format!(
            "{place}: {} at bytes {}..{}{via}",
            f.description, f.start, f.end
        ),
    )
    .with_location(Location::at(f.line, f.column))
    .with_snippet(f.preview.clone())
}
