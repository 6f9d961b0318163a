//! The decision table: every default policy, both ways, through the documented test file
//! format (`rules/policies/tests/*.json`), plus the fail-closed cases that need a policy
//! of their own.
use skillgate_core::{Caller, Language, Limits, Skill, Visibility};
use skillgate_policy::{Action, Catalogue, Policy, Record, RunFacts, Verdict, testfile};
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
            "own-code",
            "private-skills",
            "public-skills",
            "quarantine",
            "restricted-grant",
            "tenant-isolation"
        ]
    );
}

const ENTITIES: &str = r#"[
  {"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []},
  {"uid": {"type": "Tenant", "id": "globex"}, "attrs": {}, "parents": []},
  {"uid": {"type": "Builder", "id": "builder-alice"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []},
  {"uid": {"type": "Builder", "id": "builder-globex"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "globex"}}}, "parents": []},
  {"uid": {"type": "AgentGroup", "id": "g"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []},
  {"uid": {"type": "AgentGroup", "id": "globex-team"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "globex"}}}, "parents": []},
  {"uid": {"type": "Agent", "id": "a"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
             "can_execute_code": true, "quarantined": false}, "parents": []},
  {"uid": {"type": "Agent", "id": "alice-bot"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
             "can_execute_code": true, "quarantined": false},
   "parents": [{"type": "Builder", "id": "builder-alice"}]},
  {"uid": {"type": "Agent", "id": "g-member"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
             "can_execute_code": true, "quarantined": false},
   "parents": [{"type": "AgentGroup", "id": "g"}]}
]"#;

fn agent_entities() -> &'static str {
    ENTITIES
}

fn skill(name: &str, code: &str, visibility: Visibility) -> Skill {
    Skill::builder(name, Language::Python, code.as_bytes().to_vec())
        .tenant("acme")
        .visibility(visibility)
        .build()
}

fn record(skill: &Skill, tenant: &str, owner: Option<&str>, visibility: Visibility) -> Record {
    Record {
        name: skill.name.clone(),
        digest: skill.digest.clone(),
        tenant: tenant.into(),
        owner: owner.map(String::from),
        visibility,
    }
}

fn public_skill() -> Skill {
    skill("s", "", Visibility::Public)
}

/// The built-in gate with [`ENTITIES`] and a catalogue holding `records`.
fn gate(records: Vec<Record>) -> Policy {
    Policy::builtin()
        .unwrap()
        .with_entities_json("e", ENTITIES)
        .unwrap()
        .with_catalogue("c", Catalogue::new(records).unwrap())
        .unwrap()
}

fn decide(
    policy: &Policy,
    agent: &str,
    skill: &Skill,
    action: Action,
) -> skillgate_policy::Decision {
    policy.authorize(
        &Caller::new(agent, "acme"),
        skill,
        action,
        &RunFacts::for_skill(skill, &Limits::default()),
    )
}

// Issue 21, item 1: a skill's SKILL.md does not decide its own tenant, owner, visibility
// or grants; the catalogue's record for its digest does.

#[test]
fn a_folder_named_after_a_granted_skill_takes_no_grant() {
    let grants = r#"[{"template": "restricted-grant", "principal": {"type": "AgentGroup", "id": "g"},
                      "resource": {"type": "Skill", "id": "acme/payroll"}}]"#;
    let real = skill("payroll", "print('payroll')", Visibility::Restricted);
    let policy = gate(vec![record(&real, "acme", None, Visibility::Restricted)])
        .with_grants_json("g", grants)
        .unwrap();
    let d = decide(&policy, "g-member", &real, Action::Execute);
    assert!(d.is_allowed(), "{d:?}");
    assert_eq!(d.reasons, vec!["grant-1"]);
    // Same name and metadata, other code: no record, so the caller's own code at best.
    let fake = skill("payroll", "steal()", Visibility::Restricted);
    let d = decide(&policy, "g-member", &fake, Action::Execute);
    assert!(!d.reasons.iter().any(|r| r == "grant-1"), "{d:?}");
    assert_eq!(d.reasons, vec!["own-code"], "{d:?}");
}

#[test]
fn skill_metadata_claiming_a_tenant_or_an_owner_gets_nothing_without_a_record() {
    let policy = gate(Vec::new());
    // A private skill claiming alice as owner: not alice's skill, only the caller's code.
    let claims_owner = Skill::builder("notes", Language::Python, b"x".to_vec())
        .tenant("acme")
        .owner("builder-alice")
        .visibility(Visibility::Private)
        .build();
    let d = decide(&policy, "alice-bot", &claims_owner, Action::Execute);
    assert_eq!(d.reasons, vec!["own-code"], "{d:?}");
    // A public skill claiming tenant globex: runs in the caller's tenant, as its own code.
    let claims_tenant = Skill::builder("pub", Language::Python, b"y".to_vec())
        .tenant("globex")
        .visibility(Visibility::Public)
        .build();
    let d = decide(&policy, "a", &claims_tenant, Action::Execute);
    assert_eq!(d.reasons, vec!["own-code"], "{d:?}");
}

#[test]
fn a_skill_md_disagreeing_with_its_record_is_refused_naming_the_field() {
    let base = skill("report", "r", Visibility::Public);
    for (rec, field) in [
        (
            record(&base, "globex", None, Visibility::Public),
            "skillgate.tenant",
        ),
        (
            record(&base, "acme", None, Visibility::Restricted),
            "skillgate.visibility",
        ),
        (
            Record {
                name: "other".into(),
                ..record(&base, "acme", None, Visibility::Public)
            },
            "`name`",
        ),
    ] {
        let policy = gate(vec![rec]);
        let d = decide(&policy, "a", &base, Action::Execute);
        assert!(!d.is_allowed(), "{field}: {d:?}");
        assert!(d.errors[0].message.contains(field), "{field}: {d:?}");
    }
    let owned = Skill::builder("mine", Language::Python, b"m".to_vec())
        .owner("builder-globex")
        .build();
    let policy = gate(vec![record(
        &owned,
        "acme",
        Some("builder-alice"),
        Visibility::Private,
    )]);
    let d = decide(&policy, "alice-bot", &owned, Action::Execute);
    assert!(d.errors[0].message.contains("skillgate.owner"), "{d:?}");
    // Agreeing metadata (or none) runs as the record says.
    let plain = Skill::builder("mine", Language::Python, b"m".to_vec()).build();
    let d = decide(&policy, "alice-bot", &plain, Action::Execute);
    assert_eq!(d.reasons, vec!["private-skills"], "{d:?}");
    let d = decide(&policy, "a", &plain, Action::Execute);
    assert!(!d.is_allowed(), "{d:?}");
}

// Issue 21, item 2: an agent absent from the entities file gets no right at all.

#[test]
fn an_unknown_agent_may_not_even_view() {
    let s = public_skill();
    let policy = gate(vec![record(&s, "acme", None, Visibility::Public)]);
    assert!(decide(&policy, "a", &s, Action::View).is_allowed());
    for action in [Action::View, Action::Execute] {
        let d = decide(&policy, "intruder", &s, action);
        assert!(!d.is_allowed(), "{action:?}: {d:?}");
        assert!(
            d.errors[0].message.contains("not in the entities file"),
            "{d:?}"
        );
    }
    // Trusting caller groups gives an unknown agent nothing either, in any tenant.
    let trusting = policy.with_trusted_caller_groups(true);
    let caller = Caller::new("intruder", "globex").with_groups(["globex-team"]);
    let d = trusting.authorize(
        &caller,
        &s,
        Action::View,
        &RunFacts::for_skill(&s, &Limits::default()),
    );
    assert!(!d.is_allowed(), "{d:?}");
}

#[test]
fn listing_decides_on_view_as_checking_does() {
    let s = public_skill();
    let entities = ENTITIES.replace(
        r#"{"uid": {"type": "Agent", "id": "a"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
             "can_execute_code": true"#,
        r#"{"uid": {"type": "Agent", "id": "a"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
             "can_execute_code": false"#,
    );
    assert_ne!(entities, ENTITIES);
    let policy = Policy::builtin()
        .unwrap()
        .with_entities_json("e", &entities)
        .unwrap()
        .with_catalogue(
            "c",
            Catalogue::new([record(&s, "acme", None, Visibility::Public)]).unwrap(),
        )
        .unwrap();
    let listed = policy.list_skills(
        &Caller::new("a", "acme"),
        std::slice::from_ref(&s),
        &Limits::default(),
    );
    assert!(listed[0].decision.is_allowed(), "{listed:?}");
    assert_eq!(listed[0].decision, decide(&policy, "a", &s, Action::View));
    assert!(!decide(&policy, "a", &s, Action::Execute).is_allowed());
}

// Issue 21, item 5: tenants are checked on groups, grants and builders.

#[test]
fn asserted_groups_that_are_unknown_or_foreign_are_dropped() {
    // `contractors` is a group the entities file does not declare; a grant may still name it.
    let grants = r#"[{"template": "restricted-grant", "principal": {"type": "AgentGroup", "id": "g"},
                      "resource": {"type": "Skill", "id": "acme/r"}},
                     {"template": "restricted-grant", "principal": {"type": "AgentGroup", "id": "contractors"},
                      "resource": {"type": "Skill", "id": "acme/r"}}]"#;
    let r = skill("r", "r", Visibility::Restricted);
    let policy = gate(vec![record(&r, "acme", None, Visibility::Restricted)])
        .with_grants_json("g", grants)
        .unwrap()
        .with_trusted_caller_groups(true);
    let facts = RunFacts::for_skill(&r, &Limits::default());
    let ask = |groups: &[&str]| {
        policy.authorize(
            &Caller::new("a", "acme").with_groups(groups.iter().copied()),
            &r,
            Action::Execute,
            &facts,
        )
    };
    assert!(
        ask(&["g"]).is_allowed(),
        "a declared group of the agent's tenant counts"
    );
    let d = ask(&["contractors"]);
    assert!(!d.is_allowed(), "an undeclared group is dropped: {d:?}");
    assert!(!ask(&["globex-team"]).is_allowed());
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
    let grants = r#"[{"template": "restricted-grant", "principal": {"type": "AgentGroup", "id": "g"},
                      "resource": {"type": "Skill", "id": "acme/s"}}]"#;
    let skill = skill("s", "", Visibility::Restricted);
    let policy = gate(vec![record(&skill, "acme", None, Visibility::Restricted)])
        .with_grants_json("g", grants)
        .unwrap();
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

// Issue 17: a session's shell step is authorised with `run_command`, which no default
// policy permits.

/// A request to run a shell command line as agent `a`'s own code.
fn shell_request() -> skillgate_core::ExecRequest {
    let cmd = Skill::builder("session-step", Language::Shell, b"ls".to_vec()).build();
    skillgate_core::ExecRequest::new(Caller::new("a", "acme"), cmd, serde_json::json!({}))
}

/// The built-in schema and policies plus `extra` policy files, with [`ENTITIES`].
fn builtin_with(schema: &str, extra: &[(&str, &str)]) -> Policy {
    let files: Vec<(String, String)> = skillgate_policy::BUILTIN_POLICIES
        .iter()
        .chain(extra)
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    Policy::from_texts(("skillgate.cedarschema", schema), &files)
        .unwrap()
        .with_entities_json("e", ENTITIES)
        .unwrap()
}

#[test]
fn a_shell_step_needs_run_command_which_no_default_policy_permits() {
    let policy = gate(Vec::new());
    let d = policy.authorize_request(&shell_request());
    assert_eq!(d.decision, Verdict::Deny, "{d:?}");
    assert!(
        d.reasons.is_empty() && d.errors.is_empty(),
        "a default deny: {d:?}"
    );
    // The same bytes as a script are the caller's own code, which `execute` permits: the
    // deny is the action's.
    let script = Skill::builder("session-step", Language::Python, b"ls".to_vec()).build();
    let d = decide(&policy, "a", &script, Action::Execute);
    assert_eq!(d.reasons, vec!["own-code"], "{d:?}");
}

#[test]
fn a_policy_that_names_run_command_grants_shell_steps() {
    const GRANT: &str = r#"@id("shell-steps")
permit (principal, action == Action::"run_command", resource)
when { resource has agent && resource.agent == principal };"#;
    let policy = builtin_with(skillgate_policy::BUILTIN_SCHEMA, &[("shell.cedar", GRANT)]);
    let d = policy.authorize_request(&shell_request());
    assert!(d.is_allowed(), "{d:?}");
    assert_eq!(d.reasons, vec!["shell-steps"]);
    // It grants shell steps, not skills: a script is still decided by `execute`.
    let script = Skill::builder("session-step", Language::Python, b"ls".to_vec()).build();
    let d = decide(&policy, "a", &script, Action::Execute);
    assert_eq!(d.reasons, vec!["own-code"], "{d:?}");
}

#[test]
fn a_schema_without_run_command_still_loads_and_denies_shell_steps() {
    let (old, _) = skillgate_policy::BUILTIN_SCHEMA
        .split_once("// Run a shell command line")
        .expect("the built-in schema declares run_command after this comment");
    assert!(!old.contains("run_command"));
    let policy = builtin_with(old, &[]);
    let d = policy.authorize_request(&shell_request());
    assert_eq!(d.decision, Verdict::Deny, "{d:?}");
}
