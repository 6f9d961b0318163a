use serde::{Deserialize, Serialize};
use std::fmt;

/// The name of a pipeline stage. The declaration order is the order a request meets them
/// inside the pipeline (the monitor is outermost, see the architecture), with the
/// stages that are not security layers (`input`, `executor`) in their places.
///
/// ```
/// use skillgate_core::LayerName;
/// assert_eq!("prescan".parse::<LayerName>().unwrap(), LayerName::Prescan);
/// assert!("firewall".parse::<LayerName>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerName {
    /// Layer 7, outermost: behavioural monitor.
    Monitor,
    /// Layer 1: Cedar policy.
    Policy,
    /// The skill's input JSON Schema gate (not optional, not a numbered layer).
    Input,
    /// Layer 2: AST pre-scan.
    Prescan,
    /// Layer 3: isolation spec.
    Isolation,
    /// Layer 4: seccomp profile.
    Seccomp,
    /// Layer 5: network policy.
    Network,
    /// Layer 6: output secret scan.
    Secrets,
    /// The executor at the centre.
    Executor,
}

impl LayerName {
    /// The seven security layers, in the order a request meets them in the architecture's
    /// table (policy first). `--disable` takes these names.
    pub const SECURITY_LAYERS: [LayerName; 7] = [
        LayerName::Policy,
        LayerName::Prescan,
        LayerName::Isolation,
        LayerName::Seccomp,
        LayerName::Network,
        LayerName::Secrets,
        LayerName::Monitor,
    ];

    /// The lowercase name used in reports and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            LayerName::Monitor => "monitor",
            LayerName::Policy => "policy",
            LayerName::Input => "input",
            LayerName::Prescan => "prescan",
            LayerName::Isolation => "isolation",
            LayerName::Seccomp => "seccomp",
            LayerName::Network => "network",
            LayerName::Secrets => "secrets",
            LayerName::Executor => "executor",
        }
    }
}

impl fmt::Display for LayerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for LayerName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            LayerName::Monitor,
            LayerName::Policy,
            LayerName::Input,
            LayerName::Prescan,
            LayerName::Isolation,
            LayerName::Seccomp,
            LayerName::Network,
            LayerName::Secrets,
            LayerName::Executor,
        ]
        .into_iter()
        .find(|l| l.as_str() == s)
        .ok_or_else(|| {
            format!(
                "unknown layer `{s}` (expected one of: policy, prescan, isolation, seccomp, network, secrets, monitor)"
            )
        })
    }
}

/// How long one layer's own work took for one request (its work on the way in plus on the
/// way out, not the time spent inside the layers it wraps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerTiming {
    /// The layer.
    pub name: LayerName,
    /// Microseconds.
    pub duration_us: u64,
}

impl LayerTiming {
    /// A timing from a [`std::time::Duration`].
    pub fn new(name: LayerName, elapsed: std::time::Duration) -> Self {
        LayerTiming {
            name,
            duration_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        }
    }
}
