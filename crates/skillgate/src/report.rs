//! The JSON report of one execution, as `skillgate run --format json` prints it.
use base64::Engine;
use serde::Serialize;
use skillgate_core::{ExecOutcome, LayerTiming, Status};
use std::time::Duration;

/// One finding, flattened for the report.
#[derive(Debug, Clone, Serialize)]
pub struct ReportFinding {
    /// Layer name.
    pub layer: String,
    /// Rule id.
    pub rule_id: String,
    /// Severity.
    pub severity: String,
    /// Message.
    pub message: String,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// Snippet, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// One artifact with its content in base64.
#[derive(Debug, Clone, Serialize)]
pub struct ReportArtifact {
    /// Path relative to the output directory: exact when it is UTF-8, else a lossy
    /// rendering (then `name_base64` holds the exact bytes).
    pub name: String,
    /// The name's exact bytes in base64, present only when the name is not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_base64: Option<String>,
    /// The name's exact bytes (not serialized: `name` and `name_base64` carry them).
    #[serde(skip)]
    pub name_bytes: Vec<u8>,
    /// Size in bytes.
    pub size: u64,
    /// Lowercase hex sha256.
    pub sha256: String,
    /// The content, base64 (standard alphabet, padded).
    pub content_base64: String,
}

/// The report: the contract other tools read. Field names never change meaning.
///
/// ```
/// use skillgate::{ExecOutcome, Report, Status};
/// let r = Report::new(&ExecOutcome::rejected(Status::Denied, vec![]), std::time::Duration::from_millis(3));
/// let v = serde_json::to_value(&r).unwrap();
/// assert_eq!(v["status"], "denied");
/// assert!(v["exit_code"].is_null());
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The status.
    pub status: Status,
    /// Exit code or null.
    pub exit_code: Option<i32>,
    /// Signal or null.
    pub signal: Option<i32>,
    /// stdout as text (invalid UTF-8 replaced).
    pub stdout: String,
    /// stderr as text (invalid UTF-8 replaced).
    pub stderr: String,
    /// stdout was cut at its cap.
    pub stdout_truncated: bool,
    /// stderr was cut at its cap.
    pub stderr_truncated: bool,
    /// Wall time of the whole request through the pipeline, in milliseconds.
    pub duration_ms: u64,
    /// Findings of every layer, outermost first.
    pub findings: Vec<ReportFinding>,
    /// Artifacts.
    pub artifacts: Vec<ReportArtifact>,
    /// Each layer's own time, outermost first.
    pub layers: Vec<LayerTiming>,
}

impl Report {
    /// Builds the report of an outcome that took `elapsed` end to end.
    pub fn new(out: &ExecOutcome, elapsed: Duration) -> Report {
        Report {
            status: out.status,
            exit_code: out.exit_code,
            signal: out.signal,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            stdout_truncated: out.stdout_truncated,
            stderr_truncated: out.stderr_truncated,
            duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            findings: out
                .findings
                .iter()
                .map(|f| ReportFinding {
                    layer: f.layer.to_string(),
                    rule_id: f.rule_id.clone(),
                    severity: f.severity.to_string(),
                    message: f.message.clone(),
                    line: f.location.map(|l| l.line),
                    column: f.location.map(|l| l.column),
                    snippet: f.snippet.clone(),
                })
                .collect(),
            artifacts: out
                .artifacts
                .iter()
                .map(|a| ReportArtifact {
                    name: a.name.clone(),
                    name_base64: a
                        .raw_name
                        .as_ref()
                        .map(|b| base64::engine::general_purpose::STANDARD.encode(b)),
                    name_bytes: a.name_bytes().to_vec(),
                    size: a.size,
                    sha256: a.sha256.clone(),
                    content_base64: base64::engine::general_purpose::STANDARD.encode(&a.content),
                })
                .collect(),
            layers: out.layers.clone(),
        }
    }
}

/// `bytes` made safe to print on a terminal, one line: control characters (newlines,
/// escape sequences, carriage returns, tabs), line separators and bidirectional-text
/// overrides become Rust-style escapes (`\n`, `\u{1b}`, `\u{202e}`),
/// bytes that are not UTF-8 become `\xNN`, and a backslash becomes `\\`, so two different
/// inputs never print alike.
///
/// ```
/// use skillgate::report::escape_for_terminal;
/// assert_eq!(escape_for_terminal(b"a.txt"), "a.txt");
/// assert_eq!(escape_for_terminal(b"x\n\x1b[31mok"), "x\\n\\u{1b}[31mok");
/// assert_eq!(escape_for_terminal(b"n\xff"), "n\\xff");
/// assert_ne!(escape_for_terminal(b"n\xff"), escape_for_terminal(b"n\\xff"));
/// ```
pub fn escape_for_terminal(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' || needs_escape(c) {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// A line of text (a skill's output) made safe to print on a terminal: as
/// [`escape_for_terminal`], except that tabs and backslashes stay as they are (the text
/// is shown, not identified, so it need not be reversible; JSON output keeps its `\"`).
///
/// ```
/// use skillgate::report::escape_line;
/// assert_eq!(escape_line("{\"a\": \"x\\ny\"}\tz"), "{\"a\": \"x\\ny\"}\tz");
/// assert_eq!(escape_line("ok\x1b[2J\rforged"), "ok\\u{1b}[2J\\rforged");
/// ```
pub fn escape_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c != '\t' && needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that could move the cursor, colour the terminal, break the line or reorder
/// what is shown.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}
