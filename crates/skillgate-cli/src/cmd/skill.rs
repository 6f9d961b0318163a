//! `skillgate skill new|check`: scaffold a skill folder, and check one without running it.
use crate::UsageError;
use anstyle::{AnsiColor, Style};
use clap::{Args, Subcommand};
use skillgate::{Config, Language, Skill, skill_dir};
use skillgate_prescan::Verdict;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub(crate) enum SkillCommand {
    /// Create a skill folder that passes `skill check` and runs: SKILL.md, entry script,
    /// input schema, sample input.
    New(NewArgs),
    /// Check a skill folder without running it: SKILL.md, input schema (and the sample
    /// input against it), every code file pre-scanned, the interpreter. One line per
    /// check; exit 1 when one fails.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The skill's name, also the folder's: 1-64 lowercase letters, digits and hyphens.
    name: String,
    /// The language of the entry script.
    #[arg(long, value_parser = parse_lang)]
    lang: Language,
    /// The folder to create the skill in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The tenant the skill belongs to (a skill without a tenant runs for nobody).
    #[arg(long, value_name = "ID", default_value = "default")]
    tenant: String,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The skill folder.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The config file whose [prescan] and [interpreters] settings apply.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

fn parse_lang(s: &str) -> Result<Language, String> {
    s.parse()
}

/// Runs a `skill` subcommand.
pub(crate) fn run(cmd: SkillCommand) -> Result<ExitCode, UsageError> {
    match cmd {
        SkillCommand::New(args) => new(args),
        SkillCommand::Check(args) => check(args),
    }
}

/// The sample input every scaffold ships, valid against its schema.
const SAMPLE_INPUT: &str = "{\"text\": \"hello from skillgate\"}\n";

const SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["text"],
  "properties": {
    "text": {"type": "string", "maxLength": 10000}
  },
  "additionalProperties": false
}
"#;

const PYTHON_ENTRY: &str = r#"import json
import sys

request = json.load(sys.stdin)
text = request["text"]
print(json.dumps({"answer": "Received %d characters" % len(text)}))
"#;

const JAVASCRIPT_ENTRY: &str = r#"'use strict';
const fs = require('fs');

const request = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8'));
process.stdout.write(JSON.stringify({
  answer: `Received ${request.text.length} characters`,
}) + '\n');
"#;

fn new(args: NewArgs) -> Result<ExitCode, UsageError> {
    skill_dir::validate_name(&args.name).map_err(UsageError)?;
    let root = args.dir.join(&args.name);
    if root.exists() {
        return Err(UsageError(format!(
            "{} already exists; choose another name or --dir",
            root.display()
        )));
    }
    let (entry, code) = match args.lang {
        Language::Python => ("scripts/main.py", PYTHON_ENTRY),
        Language::JavaScript => ("scripts/main.js", JAVASCRIPT_ENTRY),
        Language::Shell => {
            return Err(UsageError(
                "a skill is Python or JavaScript; shell runs only as a session step".into(),
            ));
        }
    };
    let manifest = format!(
        "---\n\
         name: {name}\n\
         description: Counts the characters of a text. Replace this with what the skill does and when an agent should use it.\n\
         metadata:\n  \
           skillgate.language: {lang}\n  \
           skillgate.entry: {entry}\n  \
           skillgate.input-schema: input.schema.json\n  \
           skillgate.data: sample-input.json\n  \
           skillgate.visibility: public\n  \
           skillgate.tenant: {tenant}\n\
         ---\n\n\
         # {name}\n\n\
         Reads `{{\"text\": string}}` on stdin and prints `{{\"answer\": string}}` on stdout.\n\n\
         ```sh\n\
         skillgate skill check {name}\n\
         skillgate run {name} --input-file {name}/sample-input.json\n\
         ```\n",
        name = args.name,
        lang = args.lang,
        tenant = args.tenant,
    );
    let write = |rel: &str, text: &str| -> Result<(), UsageError> {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&p, text)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", p.display())))
    };
    write("SKILL.md", &manifest)?;
    write(entry, code)?;
    write("input.schema.json", SCHEMA)?;
    write("sample-input.json", SAMPLE_INPUT)?;
    let mut out = anstream::stdout().lock();
    let _ = writeln!(
        out,
        "created {dir}: SKILL.md, {entry}, input.schema.json, sample-input.json\n\
         next: skillgate skill check {dir}\n      \
         skillgate run {dir} --input-file {dir}/sample-input.json --tenant {tenant} --agent AGENT --config CONFIG",
        dir = root.display(),
        tenant = args.tenant,
    );
    Ok(ExitCode::SUCCESS)
}

/// One check's result line.
struct Line {
    ok: bool,
    warn: bool,
    what: String,
}

impl Line {
    fn pass(what: String) -> Line {
        Line {
            ok: true,
            warn: false,
            what,
        }
    }
    fn fail(what: String) -> Line {
        Line {
            ok: false,
            warn: false,
            what,
        }
    }
}

fn check(args: CheckArgs) -> Result<ExitCode, UsageError> {
    let config = Config::load_or_default(args.config.as_deref())?;
    if !args.dir.join("SKILL.md").is_file() {
        return Err(UsageError(format!(
            "no SKILL.md in {}: not a skill folder",
            args.dir.display()
        )));
    }
    let mut lines = Vec::new();
    match skill_dir::load(&args.dir) {
        Ok(skill) => {
            lines.push(Line::pass(format!(
                "SKILL.md: `{}`, {}, entry {}",
                skill.name, skill.language, skill.entry
            )));
            lines.push(schema_line(&args.dir, &skill));
            lines.extend(prescan_lines(&skill, &config)?);
            lines.push(runtime_line(skill.language, &config));
        }
        Err(e) => lines.push(Line::fail(format!("SKILL.md: {e}"))),
    }
    let mut out = anstream::stdout().lock();
    let failed = lines.iter().filter(|l| !l.ok).count();
    for l in &lines {
        let (word, colour) = match (l.ok, l.warn) {
            (false, _) => ("FAIL", AnsiColor::Red),
            (true, true) => ("warn", AnsiColor::Yellow),
            (true, false) => ("ok", AnsiColor::Green),
        };
        let st = Style::new().fg_color(Some(colour.into())).bold();
        let _ = writeln!(out, "{st}{word:<4}{st:#} {}", l.what);
    }
    let _ = writeln!(
        out,
        "{}: {} checks, {failed} failed",
        args.dir.display(),
        lines.len()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The schema line: present and valid (the loader checked it), and the folder's
/// `sample-input.json`, when there is one, satisfies it.
fn schema_line(dir: &Path, skill: &Skill) -> Line {
    let Some(schema) = &skill.input_schema else {
        return Line {
            ok: true,
            warn: true,
            what: "input schema: none; any JSON input is accepted".into(),
        };
    };
    let sample = dir.join("sample-input.json");
    if !sample.is_file() {
        return Line::pass("input schema: valid (no sample-input.json to check against it)".into());
    }
    let input = match std::fs::read(&sample)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => return Line::fail(format!("sample-input.json: not valid JSON: {e}")),
    };
    match skillgate::check_input(schema, &input) {
        Ok(()) => Line::pass("input schema: valid; sample-input.json satisfies it".into()),
        Err((_, findings)) => Line::fail(format!(
            "input schema: sample-input.json fails it: {}",
            findings
                .iter()
                .map(|f| f.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

/// One line per code file of the folder (the entry included), pre-scanned with the
/// config's rules and threshold.
/// One line per code file, from the bytes the loader read beneath the folder (exactly
/// what `run` scans and runs), with local imports resolved as the pipeline resolves them.
fn prescan_lines(skill: &Skill, config: &Config) -> Result<Vec<Line>, UsageError> {
    let scanner = skillgate::assemble::prescanner(&config.prescan)?;
    let mut lines = Vec::new();
    for (rel, report) in scanner.scan_skill_files(skill) {
        let summary: Vec<String> = report
            .findings
            .iter()
            .map(|f| {
                let at = f
                    .location
                    .map(|l| format!(" at {}:{}", l.line, l.column))
                    .unwrap_or_default();
                format!("[{}] {}{at}", f.severity, f.rule_id)
            })
            .collect();
        let what = if summary.is_empty() {
            format!("pre-scan {rel}: {}", report.verdict.as_str())
        } else {
            format!(
                "pre-scan {rel}: {} ({})",
                report.verdict.as_str(),
                summary.join(", ")
            )
        };
        lines.push(Line {
            ok: report.verdict != Verdict::Block,
            warn: report.verdict == Verdict::Warn,
            what,
        });
    }
    Ok(lines)
}

/// The interpreter the native sandbox would use, found the same way.
fn runtime_line(lang: Language, config: &Config) -> Line {
    let explicit = match lang {
        Language::Python => config.interpreters.python.as_deref(),
        Language::JavaScript => config.interpreters.javascript.as_deref(),
        Language::Shell => None,
    };
    match skillgate_sandbox::Interpreter::resolve(lang, explicit) {
        Ok(i) => Line::pass(format!("runtime: {lang} at {}", i.program.display())),
        Err(e) => Line::fail(format!("runtime: {e}")),
    }
}
