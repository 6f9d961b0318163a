//! `skillgate scan output`: the secret scanner on a file or stdin.
//!
//! Exit codes: 0 nothing found, 1 something found, 2 error.
use crate::UsageError;
use clap::Args;
use serde::Serialize;
use skillgate::Severity;
use skillgate_secrets::{RuleSetBuilder, SecretFinding, SecretScanner};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// `FILE:LINE:COLUMN: rule-id: description (preview)`, one line each.
    Text,
    /// `{"findings": [{"rule_id", "line", "column", "start", "end", "preview", "decoded_from"}]}`.
    Json,
    /// SARIF 2.1.0.
    Sarif,
}

#[derive(Debug, Args)]
pub(crate) struct ScanOutputArgs {
    /// The file to scan, or `-` for stdin.
    #[arg(value_name = "FILE|-")]
    file: PathBuf,
    /// A rule file in the skillgate format, added to the built-in pack (repeatable).
    #[arg(long = "rules", value_name = "PATH")]
    rules: Vec<PathBuf>,
    /// A gitleaks TOML configuration to import; untranslatable rules are listed on stderr.
    #[arg(long, value_name = "PATH")]
    gitleaks: Option<PathBuf>,
    /// Do not load the built-in pack (use only --rules and --gitleaks).
    #[arg(long)]
    no_default_rules: bool,
    /// How to print findings.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    /// Print the text with every secret replaced by `[REDACTED:<rule-id>]` instead.
    #[arg(long, conflicts_with = "format")]
    redact: bool,
}

/// One finding in the JSON contract.
#[derive(Debug, Serialize)]
struct JsonFinding<'a> {
    rule_id: &'a str,
    line: u32,
    column: u32,
    start: usize,
    end: usize,
    preview: &'a str,
    decoded_from: Vec<&'static str>,
}

pub(crate) fn run(args: ScanOutputArgs) -> Result<ExitCode, UsageError> {
    let scanner = build_scanner(&args)?;
    let name = args.file.display().to_string();
    let input = read_input(&args.file)?;
    let mut out = std::io::stdout().lock();
    let findings = if args.redact {
        let (redacted, findings) = scanner.redact(&input);
        write_or_quiet(out.write_all(&redacted))?;
        findings
    } else {
        let findings = scanner.scan(&input);
        let text = match args.format {
            OutputFormat::Text => text(&name, &findings),
            OutputFormat::Json => json(&findings)?,
            OutputFormat::Sarif => sarif(&name, &scanner, &findings)?,
        };
        write_or_quiet(out.write_all(text.as_bytes()))?;
        findings
    };
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A closed stdout (`| head`) is not an error worth reporting.
fn write_or_quiet(r: std::io::Result<()>) -> Result<(), UsageError> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(UsageError(format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

fn build_scanner(args: &ScanOutputArgs) -> Result<SecretScanner, UsageError> {
    let mut b = if args.no_default_rules {
        RuleSetBuilder::new()
    } else {
        RuleSetBuilder::with_default_pack()?
    };
    for p in &args.rules {
        b.add_file(p)?;
    }
    if let Some(p) = &args.gitleaks {
        let text = std::fs::read_to_string(p)
            .map_err(|e| UsageError(format!("cannot read gitleaks config {}: {e}", p.display())))?;
        let import = b.add_gitleaks(&text, &p.display().to_string())?;
        for u in &import.untranslated {
            anstream::eprintln!(
                "warning: gitleaks rule `{}` not imported: {}",
                u.id,
                u.reason
            );
        }
        for n in &import.notes {
            anstream::eprintln!("note: gitleaks rule {n}");
        }
    }
    let set = b.build()?;
    if set.is_empty() {
        return Err(UsageError(
            "no rules: --no-default-rules needs --rules or --gitleaks".into(),
        ));
    }
    Ok(SecretScanner::new(set))
}

fn read_input(file: &PathBuf) -> Result<Vec<u8>, UsageError> {
    let mut buf = Vec::new();
    if file.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| UsageError(format!("cannot read stdin: {e}")))?;
    } else {
        buf = std::fs::read(file)
            .map_err(|e| UsageError(format!("cannot read {}: {e}", file.display())))?;
    }
    Ok(buf)
}

fn decoded(f: &SecretFinding) -> Vec<&'static str> {
    f.decoded_from.iter().map(|e| e.as_str()).collect()
}

fn text(name: &str, findings: &[SecretFinding]) -> String {
    let mut s = String::new();
    for f in findings {
        let via = if f.decoded_from.is_empty() {
            String::new()
        } else {
            format!(" (decoded from {})", decoded(f).join(" > "))
        };
        s.push_str(&format!(
            "{name}:{}:{}: {}: {} [{}]{via}\n",
            f.line, f.column, f.rule_id, f.description, f.preview
        ));
    }
    s
}

fn json(findings: &[SecretFinding]) -> Result<String, UsageError> {
    let list: Vec<JsonFinding<'_>> = findings
        .iter()
        .map(|f| JsonFinding {
            rule_id: &f.rule_id,
            line: f.line,
            column: f.column,
            start: f.start,
            end: f.end,
            preview: &f.preview,
            decoded_from: decoded(f),
        })
        .collect();
    #[derive(Serialize)]
    struct Report<'a> {
        findings: Vec<JsonFinding<'a>>,
    }
    let mut s = serde_json::to_string_pretty(&Report { findings: list })?;
    s.push('\n');
    Ok(s)
}

fn sarif(
    name: &str,
    scanner: &SecretScanner,
    findings: &[SecretFinding],
) -> Result<String, UsageError> {
    let mut used: Vec<&str> = findings.iter().map(|f| f.rule_id.as_str()).collect();
    used.sort_unstable();
    used.dedup();
    let rules: Vec<serde_json::Value> = used
        .iter()
        .filter_map(|id| scanner.rules().get(id))
        .map(|r| {
            serde_json::json!({
                "id": r.id(),
                "shortDescription": { "text": r.description() },
                "helpUri": r.def().references.first(),
            })
        })
        .collect();
    let results: Vec<serde_json::Value> = findings
        .iter()
        .map(|f| {
            let level = match f.severity {
                Severity::Critical | Severity::High => "error",
                Severity::Medium => "warning",
                _ => "note",
            };
            let via = if f.decoded_from.is_empty() {
                String::new()
            } else {
                format!(" (decoded from {})", decoded(f).join(" > "))
            };
            serde_json::json!({
                "ruleId": f.rule_id,
                "level": level,
                "message": { "text": format!("{} [{}]{via}", f.description, f.preview) },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": name },
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.column,
                            "byteOffset": f.start,
                            "byteLength": f.end - f.start,
                        }
                    }
                }],
            })
        })
        .collect();
    let doc = serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "skillgate",
                "informationUri": "https://example.invalid/skillgate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}
