use crate::LayerName;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How serious a finding is. Ordered: `Info < Low < Medium < High < Critical`.
///
/// ```
/// use skillgate_core::Severity;
/// assert!(Severity::High > Severity::Medium);
/// assert_eq!("critical".parse::<Severity>().unwrap(), Severity::Critical);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, never a reason to stop.
    Info,
    /// Unusual but rarely harmful.
    Low,
    /// Suspicious.
    Medium,
    /// Dangerous: blocks by default.
    High,
    /// Dangerous beyond doubt.
    Critical,
}

impl Severity {
    /// The lowercase name used in reports and rule files.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Severity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "info" => Ok(Severity::Info),
            "low" => Ok(Severity::Low),
            "medium" => Ok(Severity::Medium),
            "high" => Ok(Severity::High),
            "critical" => Ok(Severity::Critical),
            _ => Err(format!(
                "unknown severity `{s}` (expected info, low, medium, high or critical)"
            )),
        }
    }
}

/// Where in a file (1-based lines and columns) a finding points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Location {
    /// 1-based line of the start.
    pub line: u32,
    /// 1-based column (in characters) of the start.
    pub column: u32,
    /// 1-based line of the end, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// 1-based column of the end, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
}

impl Location {
    /// A point location.
    pub fn at(line: u32, column: u32) -> Self {
        Location {
            line,
            column,
            end_line: None,
            end_column: None,
        }
    }
}

/// Something a layer noticed: a policy decision, a dangerous pattern, a leaked secret, an
/// anomaly. Findings travel on the request (downstream layers see them) and end in the
/// outcome's report.
///
/// ```
/// use skillgate_core::{Finding, LayerName, Severity};
/// let f = Finding::new(LayerName::Prescan, "py.subprocess", Severity::High, "subprocess is blocked")
///     .at(3, 1);
/// assert_eq!(f.location.unwrap().line, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The layer that produced it.
    pub layer: LayerName,
    /// The rule, policy or detector id.
    pub rule_id: String,
    /// How serious it is.
    pub severity: Severity,
    /// One human sentence.
    pub message: String,
    /// Where, when it points into code or output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// The offending text (never a secret: secret findings carry a masked preview).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

impl Finding {
    /// A finding without a location.
    pub fn new(
        layer: LayerName,
        rule_id: impl Into<String>,
        severity: Severity,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            layer,
            rule_id: rule_id.into(),
            severity,
            message: message.into(),
            location: None,
            snippet: None,
        }
    }

    /// Sets a point location.
    pub fn at(mut self, line: u32, column: u32) -> Self {
        self.location = Some(Location::at(line, column));
        self
    }

    /// Sets a full location.
    pub fn with_location(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    /// Sets the snippet.
    pub fn with_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.snippet = Some(snippet.into());
        self
    }
}
