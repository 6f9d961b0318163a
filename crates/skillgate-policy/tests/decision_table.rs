//! The decision table: every default policy, both ways, through the documented test file
//! format (`rules/policies/tests/*.json`), plus the fail-closed cases that need a policy
//! of their own.
use skillgate_core::{Caller, Language, Limits, Skill, Visibility};
use skillgate_policy::{Action, Policy, RunFacts, Verdict, testfile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/policies")
}

#[test]
fn every_policy_test_file_passes() {
    let policy = Policy::builtin().unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(rules_dir().join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with(".json")
            || path.file_name().unwrap() == "grants.json"
        {
            continue;
        }
        files += 1;
        let report = testfile::run_file(&policy, &path).unwrap();
        let failed: Vec<_> = report.cases.iter().filter(|c| !c.passed).collect();
        assert!(failed.is_empty(), "{}: {failed:#?}", path.display());
        assert!(!report.cases.is_empty());
    }
    assert!(files >= 1);
}

#[test]
fn every_default_policy_decides_both_ways() {
    let policy = Policy::builtin().unwrap();
    let report =
        testfile::run_file(&policy, &rules_dir().join("tests/default-policies.json")).unwrap();
    // Each policy (or, for the template, one of its links) is a reason of some decision,
    // and its case name shows it also decided the other way.
    let ids: BTreeSet<String> = policy.policy_ids().into_iter().map(|(id, _)| id).collect();
    for id in &ids {
        let cases: Vec<_> = report
            .cases
            .iter()
            .filter(|c| c.name.starts_with(&format!("{id}:")))
            .collect();
        assert!(
            cases.iter().any(|c| c.decision.decision == Verdict::Allow),
            "no allow case for {id}"
        );
        assert!(
            cases.iter().any(|c| c.decision.decision == Verdict::Deny),
            "no deny case for {id}"
        );
    }
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        [
            "no-code-right",
            "private-skills",
            "public-skills",
            "quarantine",
            "restricted-grant",
            "tenant-isolation"
        ]
    );
}

fn agent_entities() -> &'static str {
    r#"[{"uid": {"type": "Agent", "id": "a"},
         "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
                   "can_execute_code": true, "quarantined": false}, "parents": []}]"#
}

fn public_skill() -> Skill {
    Skill::builder("s", Language::Python, b"".to_vec())
        .tenant("acme")
        .visibility(Visibility::Public)
        .build()
}

#[test]
fn an_erroring_forbid_denies_instead_of_being_skipped() {
    // Overflows for a memory request above 8 EiB / 1024: Cedar skips the erroring forbid,
    // the gate denies and reports it.
    let extra = (
        "memory-cap.cedar".to_string(),
        "@id(\"memory-cap\")\nforbid (principal, action, resource)\nwhen { context.limits.memory_bytes * 1024 > 1073741824 };\n".to_string(),
    );
    let mut files: Vec<(String, String)> = skillgate_policy::BUILTIN_POLICIES
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    files.push(extra);
    let policy = Policy::from_texts(("schema", skillgate_policy::BUILTIN_SCHEMA), &files)
        .unwrap()
        .with_entities_json("e", agent_entities())
        .unwrap();
    let skill = public_skill();
    let caller = Caller::new("a", "acme");
    let mut facts = RunFacts::for_skill(&skill, &Limits::default());
    facts.memory_bytes = 1 << 20;
    let d = policy.authorize(&caller, &skill, Action::Execute, &facts);
    assert!(d.is_allowed(), "{d:?}");
    facts.memory_bytes = 2 << 30;
    let d = policy.authorize(&caller, &skill, Action::Execute, &facts);
    assert_eq!(d.reasons, vec!["memory-cap"]);
    assert!(!d.is_allowed());
    facts.memory_bytes = i64::MAX;
    let d = policy.authorize(&caller, &skill, Action::Execute, &facts);
    assert!(!d.is_allowed(), "{d:?}");
    assert_eq!(d.errors.len(), 1, "{d:?}");
    assert_eq!(d.errors[0].policy_id.as_deref(), Some("memory-cap"));
    assert!(d.errors[0].message.contains("overflow"), "{d:?}");
}

#[test]
fn trusted_caller_groups_count_only_when_configured() {
    let entities = r#"[
      {"uid": {"type": "AgentGroup", "id": "g"},
       "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []},
      {"uid": {"type": "Agent", "id": "a"},
       "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
                 "can_execute_code": true, "quarantined": false}, "parents": []}]"#;
    let grants = r#"[{"template": "restricted-grant", "principal": {"type": "AgentGroup", "id": "g"},
                      "resource": {"type": "Skill", "id": "acme/s"}}]"#;
    let policy = Policy::builtin()
        .unwrap()
        .with_entities_json("e", entities)
        .unwrap()
        .with_grants_json("g", grants)
        .unwrap();
    let skill = Skill::builder("s", Language::Python, b"".to_vec())
        .tenant("acme")
        .visibility(Visibility::Restricted)
        .build();
    let caller = Caller::new("a", "acme").with_groups(["g"]);
    let facts = RunFacts::for_skill(&skill, &Limits::default());
    assert!(
        !policy
            .authorize(&caller, &skill, Action::Execute, &facts)
            .is_allowed()
    );
    let trusting = policy.with_trusted_caller_groups(true);
    let d = trusting.authorize(&caller, &skill, Action::Execute, &facts);
    assert!(d.is_allowed(), "{d:?}");
    assert_eq!(d.reasons, vec!["grant-1"]);
}
