use crate::{Finding, LayerName, LayerTiming, Status};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A file the skill wrote to its output directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// Path relative to the output directory, `/`-separated. Exact when the file's name is
    /// UTF-8; otherwise a lossy rendering, and [`Artifact::raw_name`] holds the bytes.
    pub name: String,
    /// The name's bytes when they are not UTF-8 (two such names may render alike in
    /// `name`; these bytes tell them apart). `None` when `name` is exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_name: Option<Vec<u8>>,
    /// Size in bytes.
    pub size: u64,
    /// Lowercase hex sha256 of the content.
    pub sha256: String,
    /// The content.
    #[serde(skip)]
    pub content: Vec<u8>,
}

impl Artifact {
    /// The `name` and `raw_name` of a file whose relative path is `bytes`: the text when
    /// it is UTF-8, else a lossy rendering plus the bytes.
    ///
    /// ```
    /// use skillgate_core::Artifact;
    /// assert_eq!(Artifact::name_fields(b"a/b.txt"), ("a/b.txt".to_string(), None));
    /// let (name, raw) = Artifact::name_fields(b"x\xff");
    /// assert_eq!(name, "x\u{fffd}");
    /// assert_eq!(raw.as_deref(), Some(&b"x\xff"[..]));
    /// ```
    pub fn name_fields(bytes: &[u8]) -> (String, Option<Vec<u8>>) {
        match std::str::from_utf8(bytes) {
            Ok(s) => (s.to_owned(), None),
            Err(_) => (
                String::from_utf8_lossy(bytes).into_owned(),
                Some(bytes.to_vec()),
            ),
        }
    }

    /// The name's exact bytes.
    pub fn name_bytes(&self) -> &[u8] {
        self.raw_name.as_deref().unwrap_or(self.name.as_bytes())
    }
}

/// What the run cost, as the kernel accounts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Wall-clock time of the run.
    #[serde(with = "crate::units::duration")]
    pub wall: Duration,
    /// User CPU time of the process tree.
    #[serde(with = "crate::units::duration")]
    pub user_cpu: Duration,
    /// System CPU time of the process tree.
    #[serde(with = "crate::units::duration")]
    pub system_cpu: Duration,
    /// Peak resident memory in bytes (largest process, or the cgroup's peak).
    pub max_rss_bytes: u64,
}

/// The structured result of one request: always returned, also for rejections.
///
/// ```
/// use skillgate_core::{ExecOutcome, Finding, LayerName, Severity, Status};
/// let f = Finding::new(LayerName::Policy, "tenant-isolation", Severity::High, "other tenant");
/// let out = ExecOutcome::rejected(Status::Denied, vec![f]);
/// assert_eq!(out.status, Status::Denied);
/// assert_eq!(out.exit_code, None);
/// assert_eq!(out.findings.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExecOutcome {
    /// The overall status.
    pub status: Status,
    /// The process's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Captured stdout (at most the cap).
    pub stdout: Vec<u8>,
    /// Captured stderr (at most the cap).
    pub stderr: Vec<u8>,
    /// stdout passed its cap; the rest was dropped.
    pub stdout_truncated: bool,
    /// stderr passed its cap; the rest was dropped.
    pub stderr_truncated: bool,
    /// Files written to the output directory.
    pub artifacts: Vec<Artifact>,
    /// What the run cost.
    pub usage: ResourceUsage,
    /// Findings of every layer, outermost layer's first.
    pub findings: Vec<Finding>,
    /// Each layer's own time, outermost first.
    pub layers: Vec<LayerTiming>,
}

impl ExecOutcome {
    /// An outcome for a request that never ran: denied, blocked, refused.
    pub fn rejected(status: Status, findings: Vec<Finding>) -> Self {
        ExecOutcome {
            status,
            findings,
            ..ExecOutcome::default()
        }
    }

    /// Records a layer's work on the way out: its findings go before the findings of the
    /// layers it wraps, its timing before theirs, so reports read outermost first.
    pub fn record_layer(&mut self, name: LayerName, elapsed: Duration, findings: Vec<Finding>) {
        if !findings.is_empty() {
            self.findings.splice(0..0, findings);
        }
        self.layers.insert(0, LayerTiming::new(name, elapsed));
    }

    /// The time a layer recorded, if it did.
    pub fn layer_timing(&self, name: LayerName) -> Option<LayerTiming> {
        self.layers.iter().copied().find(|t| t.name == name)
    }
}
