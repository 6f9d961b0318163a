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
    let mut out = Vec::with_capacity(hay.len());
    let mut at = 0;
    for (start, end, id) in replacements(hay, findings) {
        out.extend_from_slice(&hay[at..start]);
        out.extend_from_slice(b"[REDACTED:");
        out.extend_from_slice(id.as_bytes());
        out.push(b']');
        at = end;
    }
    out.extend_from_slice(&hay[at..]);
    out
}

/// The spans to replace: in order, disjoint (overlapping findings merged, named after the
/// first), inside `hay`.
fn replacements<'f>(hay: &[u8], findings: &'f [SecretFinding]) -> Vec<(usize, usize, &'f str)> {
    let mut spans: Vec<(usize, usize, &str)> = findings
        .iter()
        .filter(|f| f.start < f.end && f.end <= hay.len())
        .map(|f| (f.start, f.end, f.rule_id.as_str()))
        .collect();
    spans.sort_by_key(|s| (s.0, std::cmp::Reverse(s.1)));
    let mut merged: Vec<(usize, usize, &str)> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.0 < last.1 => last.1 = last.1.max(span.1),
            _ => merged.push(span),
        }
    }
    merged
}

/// Most rounds of redact-and-rescan (see [`SecretScanner::redact`]).
pub const MAX_REDACTION_ROUNDS: usize = 4;

/// The rule id of the finding that says a text was withheld whole because its redaction
/// did not converge in [`MAX_REDACTION_ROUNDS`] rounds.
pub const REDACTION_INCOMPLETE: &str = "redaction-incomplete";

fn incomplete(hay: &[u8]) -> SecretFinding {
    SecretFinding {
        rule_id: REDACTION_INCOMPLETE.into(),
        description: format!(
            "the text still held a secret after {MAX_REDACTION_ROUNDS} rounds of redaction: all of it is withheld"
        ),
        severity: skillgate_core::Severity::High,
        line: 1,
        column: 1,
        start: 0,
        end: hay.len(),
        preview: "(withheld)".into(),
        decoded_from: Vec::new(),
    }
}

impl SecretScanner {
    /// Scans `hay` and returns it redacted, with the findings.
    ///
    /// Replacing a secret changes its neighbours' context (a token glued to a removed
    /// key now starts after `]`), so the redacted text is scanned again and what appears
    /// is redacted too, up to [`MAX_REDACTION_ROUNDS`] rounds. Findings of later rounds
    /// are mapped back to offsets in `hay`.
    ///
    /// Text still holding a finding after the last round is withheld whole: it becomes
    /// one `[REDACTED:redaction-incomplete]` marker, and a
    /// [`REDACTION_INCOMPLETE`] finding over all of `hay` says so (no rule of the default
    /// pack is known to get there; a rule pack that does is not trusted to have redacted).
    pub fn redact(&self, hay: &[u8]) -> (Vec<u8>, Vec<SecretFinding>) {
        let mut findings = self.scan(hay);
        let mut out = redact(hay, &findings);
        if findings.is_empty() {
            return (out, findings);
        }
        for round in 1..=MAX_REDACTION_ROUNDS {
            let more = self.scan(&out);
            if more.is_empty() {
                break;
            }
            if round == MAX_REDACTION_ROUNDS {
                findings.push(incomplete(hay));
                return (
                    format!("[REDACTED:{REDACTION_INCOMPLETE}]").into_bytes(),
                    findings,
                );
            }
            let map = OffsetMap::new(hay, &findings);
            for mut f in more {
                f.start = map.to_original(f.start, false);
                f.end = map.to_original(f.end, true);
                let (line, column) = line_column(hay, f.start);
                f.line = line;
                f.column = column;
                findings.push(f);
            }
            findings.sort_by_key(|f| (f.start, f.end));
            out = redact(hay, &findings);
        }
        (out, findings)
    }
}

/// Where the replacements of one [`redact`] call are: (redacted start, redacted end,
/// original start, original end), in order.
struct OffsetMap(Vec<(usize, usize, usize, usize)>);

impl OffsetMap {
    fn new(hay: &[u8], findings: &[SecretFinding]) -> Self {
        let mut map = Vec::new();
        let (mut at, mut shift_out) = (0usize, 0usize);
        for (start, end, id) in replacements(hay, findings) {
            let out_start = start - at + shift_out;
            let out_end = out_start + "[REDACTED:]".len() + id.len();
            map.push((out_start, out_end, start, end));
            shift_out = out_end;
            at = end;
        }
        OffsetMap(map)
    }

    fn to_original(&self, pos: usize, is_end: bool) -> usize {
        let mut last_out = 0;
        let mut last_orig = 0;
        for &(os, oe, s, e) in &self.0 {
            if pos < os {
                break;
            }
            if pos < oe || (is_end && pos == oe) {
                return if is_end && pos > os { e } else { s };
            }
            last_out = oe;
            last_orig = e;
        }
        last_orig + (pos - last_out)
    }
}

fn line_column(hay: &[u8], at: usize) -> (u32, u32) {
    let before = &hay[..at];
    let line = memchr::memchr_iter(b'\n', before).count() as u32 + 1;
    let start = memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
    let col = before[start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count() as u32
        + 1;
    (line, col)
}
