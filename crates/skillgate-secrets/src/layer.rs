//! The tower layer: scans what the executor returns and redacts, withholds or reports.
use crate::redact::Mode;
use crate::scanner::{SecretFinding, SecretScanner};
use sha2::{Digest, Sha256};
use skillgate_core::{ExecOutcome, ExecRequest, Finding, LayerName, Location, Status};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Instant;
use tower::{Layer, Service};

/// Layer 6: scans stdout, stderr and every text or gzip artifact of every outcome for secrets.
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
    scanner: Source,
    mode: Mode,
}

/// The layer's scanner: built, or still being built on a thread of its own.
#[derive(Debug, Clone)]
enum Source {
    Ready(SecretScanner),
    Building(Arc<Building>),
}

/// A scanner being built on another thread, taken when the first outcome needs it.
#[derive(Debug)]
struct Building {
    handle: Mutex<Option<JoinHandle<Result<SecretScanner, String>>>>,
    built: OnceLock<Result<SecretScanner, String>>,
}

impl Source {
    /// The scanner, waiting for its thread if it is still at work. A build that failed or
    /// panicked is an error naming why.
    fn get(&self) -> Result<SecretScanner, String> {
        match self {
            Source::Ready(s) => Ok(s.clone()),
            Source::Building(b) => b
                .built
                .get_or_init(|| {
                    let handle = b.handle.lock().ok().and_then(|mut h| h.take());
                    match handle.map(JoinHandle::join) {
                        Some(Ok(built)) => built,
                        Some(Err(_)) => Err("the thread building the secret rules panicked".into()),
                        None => Err("the secret rules' build was lost".into()),
                    }
                })
                .clone(),
        }
    }
}

impl SecretsLayer {
    /// A layer scanning with `scanner` in `mode`.
    pub fn new(scanner: SecretScanner, mode: Mode) -> Self {
        SecretsLayer {
            scanner: Source::Ready(scanner),
            mode,
        }
    }

    /// A layer whose scanner `build` makes on a thread of its own, started now; the first
    /// outcome to scan waits for it. Outcomes come back after the skill has run, so a
    /// fresh process (`skillgate run`) builds its rules while the skill runs, not before.
    /// Should the build fail, every outcome is withheld (`secrets.unavailable`, `error`):
    /// output that cannot be scanned is not let out. Give an already built scanner to
    /// [`new`](Self::new) when a build can fail on the operator's input (their rule files),
    /// so that the error comes before anything runs.
    ///
    /// ```
    /// use skillgate_secrets::{Mode, SecretScanner, SecretsLayer};
    /// let layer = SecretsLayer::building(|| SecretScanner::default_pack().map_err(|e| e.to_string()), Mode::Redact);
    /// assert_eq!(layer.mode(), Mode::Redact);
    /// ```
    pub fn building(
        build: impl FnOnce() -> Result<SecretScanner, String> + Send + 'static,
        mode: Mode,
    ) -> Self {
        let building = Building {
            handle: Mutex::new(None),
            built: OnceLock::new(),
        };
        match std::thread::Builder::new()
            .name("secrets-load".into())
            .spawn(build)
        {
            Ok(handle) => {
                if let Ok(mut slot) = building.handle.lock() {
                    *slot = Some(handle);
                }
            }
            Err(e) => {
                let _ = building.built.set(Err(format!(
                    "cannot start the thread building the secret rules: {e}"
                )));
            }
        }
        SecretsLayer {
            scanner: Source::Building(Arc::new(building)),
            mode,
        }
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
    scanner: Source,
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
            let findings = match scanner.get() {
                Ok(scanner) => scan_outcome(&scanner, mode, &mut out),
                Err(why) => vec![withhold_unscanned(&mut out, &why)],
            };
            out.record_layer(LayerName::Secrets, started.elapsed(), findings);
            Ok(out)
        })
    }
}

/// Fail closed when there is no scanner: the outcome becomes `error`, its output and
/// artifacts withheld, and the finding says why.
fn withhold_unscanned(out: &mut ExecOutcome, why: &str) -> Finding {
    out.status = Status::Error;
    out.stdout.clear();
    out.stderr.clear();
    out.artifacts.clear();
    Finding::new(
        LayerName::Secrets,
        "secrets.unavailable",
        skillgate_core::Severity::High,
        format!("the output was not scanned for secrets ({why}); it is withheld"),
    )
}

/// Whether an artifact is text worth scanning: no NUL byte in its first 8 KiB.
pub fn is_text_artifact(content: &[u8]) -> bool {
    !content[..content.len().min(8192)].contains(&0)
}

/// Most bytes a gzip artifact is decompressed to for scanning. A larger (or corrupt) one is
/// not scanned: a `secrets.not_scanned` finding says so, and outside [`Mode::Report`] the
/// artifact is withheld, since what cannot be scanned cannot be let out (fail closed).
pub const MAX_DECOMPRESSED_BYTES: u64 = 16 * 1024 * 1024;

/// Whether `content` starts like a gzip stream.
fn is_gzip(content: &[u8]) -> bool {
    content.starts_with(&[0x1f, 0x8b])
}

/// Decompresses a gzip artifact (every member), or `None` when it is corrupt or would
/// pass [`MAX_DECOMPRESSED_BYTES`].
fn gunzip(content: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(content)
        .take(MAX_DECOMPRESSED_BYTES + 1)
        .read_to_end(&mut plain)
        .ok()?;
    (plain.len() as u64 <= MAX_DECOMPRESSED_BYTES).then_some(plain)
}

fn gzip(plain: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(plain);
    enc.finish().unwrap_or_default()
}

/// Scans an outcome's stdout, stderr and artifacts (text ones as they are, gzip ones
/// decompressed within [`MAX_DECOMPRESSED_BYTES`]), applies `mode` to it, and returns the
/// report findings. This is the layer's work, usable without tower.
pub fn scan_outcome(scanner: &SecretScanner, mode: Mode, out: &mut ExecOutcome) -> Vec<Finding> {
    let mut report = Vec::new();
    // Scans `bytes`; in redact mode returns the redacted bytes when anything was found.
    let mut process = |place: &str, bytes: &[u8]| -> Option<Vec<u8>> {
        let (redacted, found) = scanner.redact(bytes);
        if found.is_empty() {
            return None;
        }
        report.extend(found.iter().map(|f| to_report(place, f, mode)));
        (mode == Mode::Redact).then_some(redacted)
    };
    if let Some(r) = process("stdout", &out.stdout) {
        out.stdout = r;
    }
    if let Some(r) = process("stderr", &out.stderr) {
        out.stderr = r;
    }
    let mut not_scanned = Vec::new();
    let mut withheld = Vec::new();
    for (i, a) in out.artifacts.iter_mut().enumerate() {
        // gzip first: a stream can be built without a NUL byte in its first 8 KiB (an
        // extra field of text), and would then pass for text and be scanned compressed.
        let redacted = if is_gzip(&a.content) {
            match gunzip(&a.content) {
                Some(plain) => {
                    process(&format!("artifact {} (gzip)", a.name), &plain).map(|r| gzip(&r))
                }
                None => {
                    let fate = if mode == Mode::Report {
                        "it is left in the output (report mode)"
                    } else {
                        withheld.push(i);
                        "it is withheld"
                    };
                    not_scanned.push(Finding::new(
                        LayerName::Secrets,
                        "secrets.not_scanned",
                        skillgate_core::Severity::Medium,
                        format!(
                            "artifact {}: a gzip stream that is corrupt or decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes was not scanned for secrets; {fate}",
                            a.name
                        ),
                    ));
                    None
                }
            }
        } else if is_text_artifact(&a.content) {
            process(&format!("artifact {}", a.name), &a.content)
        } else {
            None
        };
        if let Some(r) = redacted {
            a.content = r;
            a.size = a.content.len() as u64;
            a.sha256 = hex::encode(Sha256::digest(&a.content));
        }
    }
    for i in withheld.into_iter().rev() {
        out.artifacts.remove(i);
    }
    if mode == Mode::Block && !report.is_empty() {
        out.status = Status::Blocked;
        out.stdout.clear();
        out.stderr.clear();
        out.artifacts.clear();
    }
    report.extend(not_scanned);
    report
}

fn to_report(place: &str, f: &SecretFinding, mode: Mode) -> Finding {
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
            "{place}: {} at bytes {}..{}{via}; {}",
            f.description,
            f.start,
            f.end,
            match mode {
                Mode::Redact => "redacted",
                Mode::Block => "output withheld (block mode)",
                Mode::Report => "NOT redacted: left in the output (report mode)",
            }
        ),
    )
    .with_location(Location::at(f.line, f.column))
    .with_snippet(f.preview.clone())
}
