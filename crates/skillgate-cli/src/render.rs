//! Printing reports: JSON for machines, text (coloured on a terminal) for people.
use anstyle::{AnsiColor, Style};
use skillgate::report::{escape_for_terminal, escape_line};
use skillgate::{Report, Status};
use std::io::Write;

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// For people (coloured on a terminal).
    Text,
    /// JSON on stdout, for programs.
    Json,
}

fn status_style(s: Status) -> Style {
    let c = match s {
        Status::Ok => AnsiColor::Green,
        Status::Denied | Status::Blocked => AnsiColor::Yellow,
        _ => AnsiColor::Red,
    };
    Style::new().fg_color(Some(c.into())).bold()
}

/// Prints a report on stdout in `format`.
pub(crate) fn print_report(r: &Report, format: Format) {
    let mut out = anstream::stdout().lock();
    // A closed stdout (`| head`) is not worth a panic.
    let _ = match format {
        Format::Json => serde_json::to_writer_pretty(&mut out, r)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(out)),
        Format::Text => write_text(&mut out, r),
    };
}

fn write_text(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let bold = Style::new().bold();
    let dim = Style::new().dimmed();
    let st = status_style(r.status);
    let exit = match (r.exit_code, r.signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "did not run".into(),
    };
    writeln!(out, "{st}{}{st:#}  {exit}  {} ms", r.status, r.duration_ms)?;
    for (name, text, cut) in [
        ("stdout", &r.stdout, r.stdout_truncated),
        ("stderr", &r.stderr, r.stderr_truncated),
    ] {
        if text.is_empty() {
            continue;
        }
        let note = if cut { " (truncated)" } else { "" };
        writeln!(out, "{bold}{name}{bold:#}{note}")?;
        for line in text.lines() {
            writeln!(out, "  {}", escape_line(line))?;
        }
    }
    if !r.findings.is_empty() {
        writeln!(out, "{bold}findings{bold:#}")?;
        for f in &r.findings {
            let at = match (f.line, f.column) {
                (Some(l), Some(c)) => format!(" at {l}:{c}"),
                _ => String::new(),
            };
            // Messages quote what a skill chose (file names, code): one line each.
            writeln!(
                out,
                "  [{}] {} {}{at}: {}",
                f.severity,
                f.layer,
                escape_for_terminal(f.rule_id.as_bytes()),
                escape_for_terminal(f.message.as_bytes())
            )?;
        }
    }
    for a in &r.artifacts {
        writeln!(
            out,
            "{bold}artifact{bold:#} {} ({} bytes, sha256 {})",
            escape_for_terminal(&a.name_bytes),
            a.size,
            a.sha256
        )?;
    }
    if !r.layers.is_empty() {
        let timings: Vec<String> = r
            .layers
            .iter()
            .map(|l| format!("{} {}µs", l.name, l.duration_us))
            .collect();
        writeln!(out, "{dim}layers: {}{dim:#}", timings.join(", "))?;
    }
    Ok(())
}
