//! `skillgate scan code`: the pre-scan on files, directories or stdin.
use crate::UsageError;
use anstyle::{AnsiColor, Style};
use clap::{Args, ValueEnum};
use serde::Serialize;
use skillgate::{Language, Severity};
use skillgate_prescan::{
    PreScanner, RuleSet, ScanOptions, ScanReport, UnknownModuleAction, Verdict,
};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Output format of `scan code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CodeFormat {
    /// For people: each finding with its code line and a caret.
    Text,
    /// `{"verdict", "findings"}` for one file, an array with `path` for several.
    Json,
    /// SARIF 2.1.0.
    Sarif,
}

#[derive(Debug, Args)]
pub(crate) struct ScanCodeArgs {
    /// Files or directories to scan (directories: every .py, .js, .mjs, .cjs inside), or `-` for stdin.
    #[arg(value_name = "FILE|DIR|-", required = true)]
    paths: Vec<PathBuf>,
    /// The language, instead of the file extension (required for stdin).
    #[arg(long, value_parser = parse_lang)]
    lang: Option<Language>,
    /// A rules directory (with python/ and javascript/ packs) instead of the built-in packs.
    #[arg(long, value_name = "DIR")]
    rules: Option<PathBuf>,
    /// Findings at or above this severity block.
    #[arg(long, value_name = "SEVERITY", default_value = "high", value_parser = parse_severity)]
    threshold: Severity,
    /// What an import outside the allow-list yields.
    #[arg(long, value_name = "warn|block", default_value = "warn", value_parser = parse_unknown)]
    unknown_module: UnknownModuleAction,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CodeFormat::Text)]
    format: CodeFormat,
}

fn parse_lang(s: &str) -> Result<Language, String> {
    s.parse()
}

fn parse_severity(s: &str) -> Result<Severity, String> {
    s.parse()
}

fn parse_unknown(s: &str) -> Result<UnknownModuleAction, String> {
    s.parse()
}

/// Loads the rules of `--rules DIR`, or the built-in packs.
pub(crate) fn load_rules(dir: Option<&Path>) -> Result<RuleSet, UsageError> {
    Ok(match dir {
        Some(d) => RuleSet::load_dir(d)?,
        None => RuleSet::embedded()?,
    })
}

struct Input {
    name: String,
    code: Vec<u8>,
    lang: Language,
}

fn collect(args: &ScanCodeArgs) -> Result<Vec<Input>, UsageError> {
    let mut inputs = Vec::new();
    for p in &args.paths {
        if p.as_os_str() == "-" {
            let lang = args.lang.ok_or_else(|| {
                UsageError("reading code from stdin needs --lang python|javascript".into())
            })?;
            let mut code = Vec::new();
            std::io::stdin().read_to_end(&mut code)?;
            inputs.push(Input {
                name: "-".into(),
                code,
                lang,
            });
        } else if let Err(e) = std::fs::metadata(p) {
            return Err(UsageError(if e.kind() == std::io::ErrorKind::NotFound {
                format!("{} does not exist", p.display())
            } else {
                format!("cannot read {}: {e}", p.display())
            }));
        } else if p.is_dir() {
            let mut files = Vec::new();
            walk_dir(p, &mut files)?;
            files.sort();
            for f in files {
                if let Some(lang) = args.lang.or_else(|| lang_of(&f)) {
                    inputs.push(read(&f, lang)?);
                }
            }
        } else {
            let lang = args.lang.or_else(|| lang_of(p)).ok_or_else(|| {
                UsageError(format!(
                    "cannot tell the language of {} from its extension; pass --lang python|javascript",
                    p.display()
                ))
            })?;
            inputs.push(read(p, lang)?);
        }
    }
    Ok(inputs)
}

fn lang_of(p: &Path) -> Option<Language> {
    p.extension()
        .and_then(|e| e.to_str())
        .and_then(Language::from_extension)
}

fn read(p: &Path, lang: Language) -> Result<Input, UsageError> {
    let code =
        std::fs::read(p).map_err(|e| UsageError(format!("cannot read {}: {e}", p.display())))?;
    Ok(Input {
        name: p.display().to_string(),
        code,
        lang,
    })
}

fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), UsageError> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d)
            .map_err(|e| UsageError(format!("cannot read {}: {e}", d.display())))?;
        for e in entries {
            let e = e?;
            let ty = e.file_type()?;
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() && lang_of(&e.path()).is_some() {
                out.push(e.path());
            }
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    rule_id: &'a str,
    severity: Severity,
    message: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    snippet: &'a str,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    verdict: Verdict,
    findings: Vec<JsonFinding<'a>>,
}

fn json_report<'a>(path: Option<&'a str>, r: &'a ScanReport) -> JsonReport<'a> {
    JsonReport {
        path,
        verdict: r.verdict,
        findings: r
            .findings
            .iter()
            .map(|f| {
                let l = f.location.unwrap_or_default();
                JsonFinding {
                    rule_id: &f.rule_id,
                    severity: f.severity,
                    message: &f.message,
                    line: l.line,
                    column: l.column,
                    end_line: l.end_line.unwrap_or(l.line),
                    end_column: l.end_column.unwrap_or(l.column),
                    snippet: f.snippet.as_deref().unwrap_or_default(),
                }
            })
            .collect(),
    }
}

/// Runs `skillgate scan code`.
pub(crate) fn run(args: ScanCodeArgs) -> Result<ExitCode, UsageError> {
    let rules = Arc::new(load_rules(args.rules.as_deref())?);
    let options = ScanOptions {
        threshold: args.threshold,
        unknown_module: args.unknown_module,
        ..ScanOptions::default()
    };
    let scanner = PreScanner::with_rules(rules, options);
    let inputs = collect(&args)?;
    if inputs.is_empty() {
        return Err(UsageError("no .py, .js, .mjs or .cjs files to scan".into()));
    }
    // Files are scanned on all cores; reports keep the input order.
    let code: Vec<(&[u8], Language)> = inputs.iter().map(|i| (&i.code[..], i.lang)).collect();
    let reports: Vec<(String, ScanReport)> = inputs
        .iter()
        .map(|i| i.name.clone())
        .zip(scanner.scan_all(&code))
        .collect();
    let blocked = reports.iter().any(|(_, r)| r.verdict == Verdict::Block);
    let mut out = anstream::stdout().lock();
    let written = match args.format {
        CodeFormat::Json if reports.len() == 1 => {
            serde_json::to_writer_pretty(&mut out, &json_report(None, &reports[0].1))
                .map_err(std::io::Error::other)
                .and_then(|_| writeln!(out))
        }
        CodeFormat::Json => {
            let all: Vec<JsonReport<'_>> = reports
                .iter()
                .map(|(p, r)| json_report(Some(p), r))
                .collect();
            serde_json::to_writer_pretty(&mut out, &all)
                .map_err(std::io::Error::other)
                .and_then(|_| writeln!(out))
        }
        CodeFormat::Sarif => serde_json::to_writer_pretty(
            &mut out,
            &skillgate_prescan::sarif::to_sarif(&reports, scanner.rules()),
        )
        .map_err(std::io::Error::other)
        .and_then(|_| writeln!(out)),
        CodeFormat::Text => reports
            .iter()
            .zip(&inputs)
            .try_for_each(|((name, r), input)| write_text(&mut out, name, &input.code, r)),
    };
    // A closed stdout (`| head`) is not worth an error.
    let _ = written;
    Ok(if blocked {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn severity_style(s: Severity) -> Style {
    let c = match s {
        Severity::Critical | Severity::High => AnsiColor::Red,
        Severity::Medium => AnsiColor::Yellow,
        Severity::Low | Severity::Info => AnsiColor::Cyan,
    };
    Style::new().fg_color(Some(c.into())).bold()
}

fn write_text(
    out: &mut impl Write,
    name: &str,
    code: &[u8],
    r: &ScanReport,
) -> std::io::Result<()> {
    let text = String::from_utf8_lossy(code);
    let lines: Vec<&str> = text.lines().collect();
    let dim = Style::new().dimmed();
    for f in &r.findings {
        let l = f.location.unwrap_or_default();
        let st = severity_style(f.severity);
        writeln!(
            out,
            "{name}:{}:{}: {st}{}{st:#} {}: {}",
            l.line, l.column, f.severity, f.rule_id, f.message
        )?;
        if let Some(src) = l.line.checked_sub(1).and_then(|i| lines.get(i as usize)) {
            let width = l.line.to_string().len();
            writeln!(out, "{dim}{:>width$} |{dim:#} {src}", l.line)?;
            let same_line = l.end_line.is_none_or(|e| e == l.line);
            let span = match (same_line, l.end_column) {
                (true, Some(e)) if e > l.column => (e - l.column) as usize,
                _ => 1,
            };
            let pad: String = src
                .chars()
                .take(l.column.saturating_sub(1) as usize)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            writeln!(
                out,
                "{:>width$} {dim}|{dim:#} {pad}{st}{}{st:#}",
                "",
                "^".repeat(span)
            )?;
        }
    }
    let v = match r.verdict {
        Verdict::Allow => Style::new().fg_color(Some(AnsiColor::Green.into())).bold(),
        Verdict::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())).bold(),
        Verdict::Block => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
    };
    writeln!(
        out,
        "{name}: {v}{}{v:#} ({} finding(s))",
        r.verdict.as_str(),
        r.findings.len()
    )
}
