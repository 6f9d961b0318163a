//! Running every rule's own examples, like `semgrep --test`.
use crate::{PreScanner, RuleSet, ScanOptions};
use std::sync::Arc;

/// An example that did not behave as its rule says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleFailure {
    /// The rule.
    pub rule_id: String,
    /// The pack file of the rule.
    pub file: String,
    /// `must_match` or `must_not_match`.
    pub kind: &'static str,
    /// The example's position in its list (0-based).
    pub index: usize,
    /// The example.
    pub code: String,
    /// What happened instead (the rules that did fire, or the engine's complaint).
    pub detail: String,
}

impl std::fmt::Display for ExampleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}[{}] failed: {}\n    {}",
            self.rule_id,
            self.file,
            self.kind,
            self.index,
            self.detail,
            self.code.replace('\n', "\n    ")
        )
    }
}

/// The summary of a test run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestSummary {
    /// Rules tested.
    pub rules: usize,
    /// Examples run.
    pub examples: usize,
    /// Failures.
    pub failures: Vec<ExampleFailure>,
}

/// Runs every example of every rule of `rules`: each `must_match` must produce a finding
/// of its rule, each `must_not_match` must not, and neither may fail to parse.
///
/// ```
/// let rules = std::sync::Arc::new(skillgate_prescan::RuleSet::embedded().unwrap());
/// let summary = skillgate_prescan::ruletest::run(&rules);
/// assert!(summary.failures.is_empty(), "{:?}", summary.failures);
/// ```
pub fn run(rules: &Arc<RuleSet>) -> TestSummary {
    let scanner = PreScanner::with_rules(rules.clone(), ScanOptions::default());
    let mut summary = TestSummary::default();
    for rule in rules.rules() {
        summary.rules += 1;
        let cases = rule
            .must_match
            .iter()
            .map(|c| ("must_match", c))
            .chain(rule.must_not_match.iter().map(|c| ("must_not_match", c)));
        let mut idx = [0usize; 2];
        for (kind, code) in cases {
            let slot = usize::from(kind == "must_not_match");
            let index = idx[slot];
            idx[slot] += 1;
            summary.examples += 1;
            let report = scanner.scan(code.as_bytes(), rule.language);
            let fired: Vec<&str> = report.findings.iter().map(|f| f.rule_id.as_str()).collect();
            let engine = report
                .findings
                .iter()
                .find(|f| f.rule_id.starts_with("prescan."));
            let hit = fired.contains(&rule.id.as_str());
            let detail = match (kind, hit, engine) {
                (_, _, Some(e)) => Some(format!("the engine refused it: {}", e.message)),
                ("must_match", false, None) => {
                    Some(format!("rule did not fire (fired: {fired:?})"))
                }
                ("must_not_match", true, None) => Some("rule fired".to_string()),
                _ => None,
            };
            if let Some(detail) = detail {
                summary.failures.push(ExampleFailure {
                    rule_id: rule.id.clone(),
                    file: rule.file.clone(),
                    kind,
                    index,
                    code: code.clone(),
                    detail,
                });
            }
        }
    }
    summary
}
