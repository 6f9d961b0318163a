//! `skillgate rules test|list|explain|modules`: the pre-scan rule packs; `explain` also
//! knows the secret rules and the monitor's detections.
use crate::UsageError;
use crate::cmd::scan_code::load_rules;
use clap::Subcommand;
use skillgate::Language;
use skillgate_prescan::ruletest;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Subcommand)]
pub(crate) enum RulesCommand {
    /// Run every rule's must_match and must_not_match examples (exit 1 on a failure).
    Test {
        /// A rules directory (python/, javascript/ and optionally shell/ packs); the
        /// built-in packs if not given.
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// List the rules: id, severity, language, message.
    List {
        /// A rules directory instead of the built-in packs.
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
        /// Only this language.
        #[arg(long, value_parser = parse_lang)]
        lang: Option<Language>,
    },
    /// Explain a rule: a pre-scan rule, a secret rule or a monitor detection.
    Explain {
        /// The rule id.
        id: String,
        /// A pre-scan rules directory instead of the built-in packs.
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
    },
    /// List the modules a skill may import without a finding, and the commands a shell
    /// step may run (the allow-lists).
    Modules {
        /// A rules directory instead of the built-in packs.
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
        /// Only this language.
        #[arg(long, value_parser = parse_lang)]
        lang: Option<Language>,
    },
}

/// A language, or `shell` (the shell packs, for a session's shell steps).
fn parse_lang(s: &str) -> Result<Language, String> {
    match s {
        "shell" => Ok(Language::Shell),
        _ => s.parse(),
    }
}

/// Runs a `rules` subcommand.
pub(crate) fn run(cmd: RulesCommand) -> Result<ExitCode, UsageError> {
    let mut out = anstream::stdout().lock();
    match cmd {
        RulesCommand::Test { dir } => {
            let rules = Arc::new(load_rules(dir.as_deref())?);
            let summary = ruletest::run(&rules);
            for f in &summary.failures {
                let _ = writeln!(out, "FAIL {f}");
            }
            let _ = writeln!(
                out,
                "{} rules, {} examples, {} failures",
                summary.rules,
                summary.examples,
                summary.failures.len()
            );
            Ok(if summary.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        RulesCommand::List { rules, lang } => {
            let rules = load_rules(rules.as_deref())?;
            for r in rules
                .rules()
                .iter()
                .filter(|r| lang.is_none_or(|l| l == r.language))
            {
                let _ = writeln!(
                    out,
                    "{:<34} {:<8} {:<10} {}",
                    r.id, r.severity, r.language, r.message
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Explain { id, rules } => {
            let rules = load_rules(rules.as_deref())?;
            if rules.get(&id).is_none()
                && let Some(text) = skillgate_prescan::engine_rules::describe(&id)
            {
                let _ = writeln!(out, "{id} (built into the scanner)\n\n{text}");
                return Ok(ExitCode::SUCCESS);
            }
            let Some(r) = rules.get(&id) else {
                return explain_other(&mut out, &id);
            };
            let _ = writeln!(
                out,
                "{} ({}, {}, {})\n",
                r.id, r.severity, r.language, r.file
            );
            let _ = writeln!(out, "{}\n", r.message);
            let _ = writeln!(out, "What it detects:\n  {}\n", r.what);
            let _ = writeln!(out, "Why it is dangerous:\n  {}\n", r.why);
            let _ = writeln!(out, "Example:\n  {}\n", r.example.replace('\n', "\n  "));
            if !r.facts.is_empty() {
                let _ = writeln!(out, "Facts: {}", r.facts.join(", "));
            }
            for q in &r.queries {
                let _ = writeln!(out, "Query: {q}");
            }
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Modules { rules, lang } => {
            let rules = load_rules(rules.as_deref())?;
            for l in Language::ALL {
                if lang.is_some_and(|want| want != l) {
                    continue;
                }
                let mut modules = rules.allowed_modules(l);
                modules.sort_unstable();
                let _ = writeln!(out, "{l}: {}", modules.join(" "));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Explains a secret rule or a monitor detection, or says that no pack has `id`.
fn explain_other(out: &mut impl Write, id: &str) -> Result<ExitCode, UsageError> {
    let secrets = skillgate_secrets::RuleSet::default_pack()?;
    if let Some(i) = secrets.rules().iter().position(|r| r.id() == id) {
        let r = &secrets.rules()[i];
        let d = r.def();
        let _ = writeln!(
            out,
            "{id} (secret rule, {}, {})\n\n{}\n",
            r.severity(),
            secrets.origin(i).unwrap_or("?"),
            d.description
        );
        let _ = writeln!(out, "Keywords: {}", d.keywords.join(", "));
        let _ = writeln!(out, "Regex: {}", d.regex);
        for (title, list) in [
            ("Examples (found)", &d.examples),
            ("Negative examples (not found)", &d.negative_examples),
            ("References", &d.references),
        ] {
            if !list.is_empty() {
                let _ = writeln!(out, "{title}:");
                for e in list {
                    let _ = writeln!(out, "  {e}");
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let detections = skillgate_monitor::detections::Detections::builtin();
    if let Some(r) = detections.rules().iter().find(|r| r.id == id) {
        let _ = writeln!(
            out,
            "{id} (monitor detection, {}, action {}, rules/monitor/default.toml)\n\n{}\n",
            r.severity,
            r.action.as_str(),
            r.message
        );
        if !r.description.is_empty() {
            let _ = writeln!(out, "What it detects:\n  {}\n", r.description);
        }
        let _ = writeln!(out, "When: {:?}", r.when);
        return Ok(ExitCode::SUCCESS);
    }
    Err(UsageError(format!(
        "no rule `{id}` among the pre-scan rules, secret rules or monitor detections (see `skillgate rules list`, `skillgate scan output --help`, rules/monitor/)"
    )))
}
