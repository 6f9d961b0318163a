//! `skillgate rules test|list|explain`: the pre-scan rule packs.
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
        /// A rules directory (python/ and javascript/ packs); the built-in packs if not given.
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
    /// Explain a rule: what it detects, why it matters, an example, its matcher.
    Explain {
        /// The rule id.
        id: String,
        /// A rules directory instead of the built-in packs.
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
    },
}

fn parse_lang(s: &str) -> Result<Language, String> {
    s.parse()
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
            let r = rules.get(&id).ok_or_else(|| {
                UsageError(format!("no rule `{id}` (see `skillgate rules list`)"))
            })?;
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
    }
}
