//! Every example of every embedded rule behaves as the rule says.
use skillgate_prescan::{RuleSet, ruletest};
use std::sync::Arc;

#[test]
fn every_rule_example_of_the_default_packs_passes() {
    let rules = Arc::new(RuleSet::embedded().expect("the default packs load"));
    let summary = ruletest::run(&rules);
    let report: Vec<String> = summary.failures.iter().map(ToString::to_string).collect();
    assert!(
        report.is_empty(),
        "{} failures:\n{}",
        report.len(),
        report.join("\n")
    );
    assert!(summary.rules >= 10 && summary.examples >= 50, "{summary:?}");
}
