//! A rule file's own examples are checked when it loads (issue 20, item 15).
use skillgate_secrets::{RuleSet, RuleSetBuilder, RuleSetError};
use std::time::Instant;

const GOOD: &str = r#"
[[rule]]
id = "acme-token"
description = "ACME API token"
keywords = ["acme_"]
regex = '''\b(acme_[a-z0-9]{24})\b'''
examples = ["token = acme_0123456789abcdefghijklmn"]
negative_examples = ["acme_short"]
"#;

fn load(text: &str) -> Result<RuleSet, RuleSetError> {
    let mut b = RuleSetBuilder::with_default_pack().unwrap();
    b.add_toml(text, "custom.toml")?;
    b.build()
}

#[test]
fn a_rule_whose_examples_hold_loads() {
    let set = load(GOOD).unwrap();
    assert!(set.get("acme-token").is_some());
}

#[test]
fn an_example_the_rule_does_not_find_is_an_error_naming_it() {
    let bad = GOOD.replace(
        "examples = [\"token = acme_0123456789abcdefghijklmn\"]",
        "examples = [\"token = acme_TOO-SHORT\"]",
    );
    let err = load(&bad).unwrap_err().to_string();
    assert!(
        err.contains("acme-token") && err.contains("custom.toml") && err.contains("acme_TOO-SHORT"),
        "{err}"
    );
}

#[test]
fn a_negative_example_the_rule_finds_is_an_error() {
    let bad = GOOD.replace(
        "negative_examples = [\"acme_short\"]",
        "negative_examples = [\"x acme_abcdefghijklmnopqrstuvwx y\"]",
    );
    let err = load(&bad).unwrap_err().to_string();
    assert!(err.contains("negative example"), "{err}");
}

#[test]
fn the_builtin_examples_hold_and_are_checked_apart_from_loading() {
    // Loading stays as fast as before: the built-in examples are the test suite's job.
    let t = Instant::now();
    let set = RuleSet::default_pack().unwrap();
    let load = t.elapsed();
    let t = Instant::now();
    set.check_examples(0..set.len()).unwrap();
    let check = t.elapsed();
    println!("default pack: load {load:?}, checking its examples {check:?}");
}
