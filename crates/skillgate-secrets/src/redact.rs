//! Redaction: every secret becomes `[REDACTED:<rule-id>]`; every other byte stays.
use crate::scanner::{SecretFinding, SecretScanner};
use serde::{Deserialize, Serialize};

/// What the layer does when output holds a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Replace each secret with `[REDACTED:<rule-id>]` (the default).
    #[default]
    Redact,
    /// Withhold the whole output; the status becomes `blocked`.
    Block,
    /// Leave the output as it is; only report findings.
    Report,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "redact" => Ok(Mode::Redact),
            "block" => Ok(Mode::Block),
            "report" => Ok(Mode::Report),
            _ => Err(format!(
                "unknown secrets mode `{s}` (expected redact, block or report)"
            )),
        }
    }
}

/// Replaces the bytes of every finding in `hay` with `[REDACTED:<rule-id>]`. Overlapping
/// findings merge into one replacement named after the first.
///
/// ```
/// let scanner = skillgate_secrets::SecretScanner::default_pack().unwrap();
/// let text = b"id=AKIAZ3MSJV4WXQ7LTN2H done";
/// let out = skillgate_secrets::redact(text, &scanner.scan(text));
/// assert_eq!(out, b"id=[REDACTED:aws-access-key-id] done");
/// ```
pub fn redact(hay: &[u8], findings: &[SecretFinding]) -> Vec<u8> {
    let mut spans: Vec<(usize, usize, &str)> = findings
        .iter()
        .filter(|f| f.start < f.end && f.end <= hay.len())
        .map(|f| (f.start, f.end, f.rule_id.as_str()))
        .collect();
    spans.sort_by_key(|s| (s.0, std::cmp::Reverse(s.1)));
    let mut out = Vec::with_capacity(hay.len());
    let mut at = 0;
    let mut i = 0;
    while i < spans.len() {
        let (start, mut end, id) = spans[i];
        i += 1;
        while i < spans.len() && spans[i].0 < end {
            end = end.max(spans[i].1);
            i += 1;
        }
        let start = start.max(at);
        out.extend_from_slice(&hay[at..start]);
        out.extend_from_slice(b"[REDACTED:");
        out.extend_from_slice(id.as_bytes());
        out.push(b']');
        at = end.max(at);
    }
    out.extend_from_slice(&hay[at..]);
    out
}

impl SecretScanner {
    /// Scans `hay` and returns it redacted, with the findings.
    pub fn redact(&self, hay: &[u8]) -> (Vec<u8>, Vec<SecretFinding>) {
        let findings = self.scan(hay);
        (redact(hay, &findings), findings)
    }
}
