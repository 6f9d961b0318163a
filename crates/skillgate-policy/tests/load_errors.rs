//! Broken policy, schema, entities and grants files refuse to start, naming the file, the
//! line and the problem.
use skillgate_policy::{BUILTIN_SCHEMA, LoadError, Policy, PolicySources};
use std::path::Path;

fn with_policy(text: &str) -> Result<Policy, LoadError> {
    Policy::from_texts(
        ("skillgate.cedarschema", BUILTIN_SCHEMA),
        &[("broken.cedar".to_string(), text.to_string())],
    )
}

#[test]
fn a_syntax_error_names_file_line_and_column() {
    let err = with_policy("@id(\"ok\")\npermit (principal, action, resource);\n\n@id(\"bad\")\npermit (principal, action resource);\n")
        .unwrap_err();
    assert_eq!(err.file, "broken.cedar");
    assert_eq!(err.line, Some(5), "{err}");
    assert!(err.column.is_some(), "{err}");
    assert!(err.to_string().starts_with("broken.cedar:5:"), "{err}");
}

#[test]
fn a_schema_violation_names_the_policy_and_its_line() {
    let err = with_policy(
        "@id(\"ok\")\npermit (principal, action, resource);\n@id(\"typo\")\nforbid (principal, action, resource)\nwhen { principal.can_run_code };\n",
    )
    .unwrap_err();
    assert_eq!(err.line, Some(5), "{err}");
    assert!(err.message.contains("policy `typo`"), "{err}");
    assert!(err.message.contains("can_run_code"), "{err}");
}

#[test]
fn an_unknown_entity_type_in_a_policy_is_refused() {
    let err = with_policy("@id(\"u\")\npermit (principal == User::\"x\", action, resource);\n")
        .unwrap_err();
    assert_eq!(err.line, Some(2), "{err}");
    assert!(err.message.contains("User"), "{err}");
}

#[test]
fn a_policy_without_id_is_refused_at_its_line() {
    let err = with_policy("@id(\"a\")\npermit (principal, action, resource);\n\nforbid (principal, action, resource)\nwhen { principal.quarantined };\n")
        .unwrap_err();
    assert_eq!(err.line, Some(4), "{err}");
    assert!(err.message.contains("@id"), "{err}");
}

#[test]
fn a_duplicate_id_names_both_files() {
    let p = "@id(\"same\")\npermit (principal, action, resource);\n".to_string();
    let err = Policy::from_texts(
        ("s", BUILTIN_SCHEMA),
        &[("one.cedar".into(), p.clone()), ("two.cedar".into(), p)],
    )
    .unwrap_err();
    assert_eq!(err.file, "two.cedar");
    assert!(
        err.message.contains("one.cedar") && err.message.contains("same"),
        "{err}"
    );
}

#[test]
fn a_broken_schema_names_its_line() {
    let err = Policy::from_texts(
        (
            "bad.cedarschema",
            "entity Tenant;\n\nentity Agent in [Tenant] {\n  tenant: Tenant\n  x: Bool,\n};\n",
        ),
        &[],
    )
    .unwrap_err();
    assert_eq!(err.file, "bad.cedarschema");
    assert_eq!(err.line, Some(5), "{err}");
}

#[test]
fn a_schema_that_types_request_attributes_differently_is_refused() {
    // Requests carry `visibility` as a string: a schema that says otherwise would have
    // policies compare values of the wrong type, so it is refused at load.
    let schema = BUILTIN_SCHEMA.replace("visibility: String", "visibility: Long");
    assert_ne!(schema, BUILTIN_SCHEMA);
    let err = Policy::from_texts(("custom.cedarschema", &schema), &[]).unwrap_err();
    assert_eq!(err.file, "custom.cedarschema");
    let text = err.to_string();
    assert!(
        text.contains("does not accept the entities a request builds"),
        "{text}"
    );
    assert!(text.contains("visibility"), "{text}");
    // And a context attribute of another type too.
    let schema = BUILTIN_SCHEMA.replace("network_requested: Bool", "network_requested: String");
    assert_ne!(schema, BUILTIN_SCHEMA);
    let err = Policy::from_texts(("custom.cedarschema", &schema), &[]).unwrap_err();
    assert!(
        err.to_string().contains("does not accept the request"),
        "{err}"
    );
}

#[test]
fn malformed_entities_json_names_line_and_column() {
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json("e.json", "[\n  {\"uid\": {\"type\": \"Tenant\", \"id\": \"acme\"},\n   \"attrs\": {}, \"parents\": [],}\n]")
        .unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("e.json", Some(3)), "{err}");
    assert!(err.message.contains("not valid JSON"), "{err}");
}

#[test]
fn unknown_entity_types_and_wrong_attributes_name_the_element_line() {
    let text = "[\n  {\"uid\": {\"type\": \"Tenant\", \"id\": \"acme\"}, \"attrs\": {}, \"parents\": []},\n  {\"uid\": {\"type\": \"Robot\", \"id\": \"r\"}, \"attrs\": {}, \"parents\": []}\n]";
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json("e.json", text)
        .unwrap_err();
    assert_eq!(err.line, Some(3), "{err}");
    assert!(err.message.contains("Robot"), "{err}");

    let text = "[\n  {\"uid\": {\"type\": \"Agent\", \"id\": \"a\"},\n   \"attrs\": {\"tenant\": {\"__entity\": {\"type\": \"Tenant\", \"id\": \"acme\"}}, \"can_execute_code\": \"yes\", \"quarantined\": false},\n   \"parents\": []}\n]";
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json("e.json", text)
        .unwrap_err();
    assert_eq!(err.line, Some(2), "{err}");
    assert!(err.message.contains("can_execute_code"), "{err}");
}

#[test]
fn skill_entities_are_refused_in_the_entities_file() {
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json("e.json", "[{\"uid\": {\"type\": \"Skill\", \"id\": \"acme/x\"}, \"attrs\": {}, \"parents\": []}]")
        .unwrap_err();
    assert!(err.message.contains("catalogue"), "{err}");
}

#[test]
fn bad_grants_are_refused_at_their_line() {
    let p = Policy::builtin().unwrap();
    let unknown = "[\n  {\"template\": \"restricted-grant\", \"principal\": {\"type\": \"AgentGroup\", \"id\": \"g\"}, \"resource\": {\"type\": \"Skill\", \"id\": \"acme/s\"}},\n  {\"template\": \"no-such\", \"principal\": {\"type\": \"Agent\", \"id\": \"a\"}}\n]";
    let err = p.clone().with_grants_json("g.json", unknown).unwrap_err();
    assert_eq!(err.line, Some(3), "{err}");
    assert!(err.message.contains("no-such"), "{err}");

    let wrong_type = "[{\"template\": \"restricted-grant\", \"principal\": {\"type\": \"Skill\", \"id\": \"acme/s\"}, \"resource\": {\"type\": \"Skill\", \"id\": \"acme/s\"}}]";
    let err = p
        .clone()
        .with_grants_json("g.json", wrong_type)
        .unwrap_err();
    assert_eq!(err.line, Some(1), "{err}");

    let typo = "[{\"templat\": \"restricted-grant\"}]";
    let err = p.with_grants_json("g.json", typo).unwrap_err();
    assert!(err.message.contains("templat"), "{err}");
}

#[test]
fn sources_name_missing_files_and_empty_folders() {
    let dir = tempfile::tempdir().unwrap();
    let err = Policy::load(&PolicySources {
        entities: Some(dir.path().join("nope.json")),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.file.ends_with("nope.json"), "{err}");
    let err = Policy::load(&PolicySources {
        policies: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.message.contains("no *.cedar"), "{err}");
}

#[test]
fn the_rules_folder_loads_like_the_built_in_defaults() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/policies");
    let from_dir = Policy::load(&PolicySources {
        policies: Some(rules),
        ..Default::default()
    })
    .unwrap();
    let ids = |p: &Policy| {
        p.policy_ids()
            .into_iter()
            .map(|(id, _)| id)
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&from_dir), ids(&Policy::builtin().unwrap()));
}

/// A policies folder holding only `visibility.cedar` (issue 21, item 8).
fn custom_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("visibility.cedar"),
        skillgate_policy::BUILTIN_POLICIES[0].1,
    )
    .unwrap();
    dir
}

#[test]
fn a_custom_policies_folder_keeps_the_base_policies() {
    let dir = custom_folder();
    let policy = Policy::load(&PolicySources {
        policies: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .unwrap();
    let ids: Vec<String> = policy.policy_ids().into_iter().map(|(id, _)| id).collect();
    for base in skillgate_policy::BASE_POLICY_IDS {
        assert!(ids.iter().any(|i| i == base), "{base} missing from {ids:?}");
    }
    assert!(policy.lifted().is_empty());
    // The base ids are exactly the policies of the base files.
    let base_only = Policy::from_texts(("s", BUILTIN_SCHEMA), &[]).unwrap();
    let base_ids: Vec<String> = base_only
        .policy_ids()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut want: Vec<String> = skillgate_policy::BASE_POLICY_IDS
        .iter()
        .map(|s| s.to_string())
        .collect();
    want.sort();
    assert_eq!(base_ids, want);
}

#[test]
fn a_base_policy_is_turned_off_only_by_name_and_unknown_names_are_refused() {
    let dir = custom_folder();
    let policy = Policy::load(&PolicySources {
        policies: Some(dir.path().to_path_buf()),
        disabled_base_policies: vec!["quarantine".into()],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(policy.lifted(), ["quarantine"]);
    assert!(!policy.policy_ids().iter().any(|(id, _)| id == "quarantine"));
    let findings = skillgate_policy::lifted_findings(&policy);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].rule_id, skillgate_policy::BASE_LIFTED);
    assert!(findings[0].message.contains("quarantine"));

    let err = Policy::load(&PolicySources {
        disabled_base_policies: vec!["public-skills".into()],
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("disabled_base_policies"), "{err}");
    assert!(err.message.contains("public-skills"), "{err}");
}

// Issue 21, item 5: groups, grants and builders never cross tenants, and agents name only
// declared tenants, groups and builders.

const TENANTS: &str = r#"
  {"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []},
  {"uid": {"type": "Tenant", "id": "globex"}, "attrs": {}, "parents": []},
  {"uid": {"type": "AgentGroup", "id": "globex-team"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "globex"}}}, "parents": []},
  {"uid": {"type": "Builder", "id": "builder-globex"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "globex"}}}, "parents": []}"#;

fn agent(id: &str, tenant: &str, parents: &str) -> String {
    format!(
        r#"{{"uid": {{"type": "Agent", "id": "{id}"}},
   "attrs": {{"tenant": {{"__entity": {{"type": "Tenant", "id": "{tenant}"}}}},
             "can_execute_code": true, "quarantined": false}}, "parents": [{parents}]}}"#
    )
}

fn entities(extra: &[String]) -> String {
    let mut items = vec![TENANTS.to_string()];
    items.extend(extra.iter().cloned());
    format!("[{}]", items.join(",\n"))
}

#[test]
fn a_grant_of_a_foreign_group_on_a_skill_is_refused() {
    let grants = r#"[{"template": "restricted-grant", "principal": {"type": "AgentGroup", "id": "globex-team"},
                      "resource": {"type": "Skill", "id": "acme/payroll"}}]"#;
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json("e.json", &entities(&[]))
        .unwrap()
        .with_grants_json("g.json", grants)
        .unwrap_err();
    assert_eq!(err.file, "g.json");
    assert!(
        err.message.contains("globex-team") && err.message.contains("acme/payroll"),
        "{err}"
    );
    // Loading the entities after the grants refuses it too.
    let err = Policy::builtin()
        .unwrap()
        .with_grants_json("g.json", grants)
        .unwrap()
        .with_entities_json("e.json", &entities(&[]))
        .unwrap_err();
    assert!(err.message.contains("globex-team"), "{err}");
}

#[test]
fn an_agent_in_a_foreign_group_through_a_group_of_its_own_is_refused() {
    let acme_group = r#"{"uid": {"type": "AgentGroup", "id": "acme-team"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}},
   "parents": [{"type": "AgentGroup", "id": "globex-team"}]}"#
        .to_string();
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json(
            "e.json",
            &entities(&[
                acme_group,
                agent("a", "acme", r#"{"type": "AgentGroup", "id": "acme-team"}"#),
            ]),
        )
        .unwrap_err();
    assert!(
        err.message.contains("acme-team") && err.message.contains("globex-team"),
        "{err}"
    );
}

#[test]
fn agents_naming_undeclared_or_foreign_tenants_groups_or_builders_are_refused() {
    for (parents, tenant, needle) in [
        ("", "initech", "initech"),
        (
            r#"{"type": "AgentGroup", "id": "ghosts"}"#,
            "acme",
            "ghosts",
        ),
        (r#"{"type": "Builder", "id": "nobody"}"#, "acme", "nobody"),
        (
            r#"{"type": "Builder", "id": "builder-globex"}"#,
            "acme",
            "builder-globex",
        ),
    ] {
        let err = Policy::builtin()
            .unwrap()
            .with_entities_json("e.json", &entities(&[agent("a", tenant, parents)]))
            .unwrap_err();
        assert!(err.message.contains(needle), "{needle}: {err}");
        assert!(err.message.contains("agent `a`"), "{needle}: {err}");
    }
}

#[test]
fn a_catalogued_skill_owned_by_a_foreign_builder_is_refused() {
    let catalogue = format!(
        r#"[{{"name": "notes", "tenant": "acme", "owner": "builder-globex", "visibility": "private", "digest": "{}"}}]"#,
        "ab".repeat(32)
    );
    let err = Policy::builtin()
        .unwrap()
        .with_entities_json("e.json", &entities(&[]))
        .unwrap()
        .with_catalogue_json("c.json", &catalogue)
        .unwrap_err();
    assert_eq!(err.file, "c.json");
    assert!(err.message.contains("builder-globex"), "{err}");
}

#[test]
fn malformed_catalogue_records_are_refused_at_their_line() {
    let p = Policy::builtin().unwrap();
    let err = p
        .clone()
        .with_catalogue_json(
            "c.json",
            "[\n  {\"name\": \"a\", \"tenant\": \"acme\", \"visibility\": \"public\", \"digest\": \"abc\"}\n]",
        )
        .unwrap_err();
    assert_eq!(err.line, Some(2), "{err}");
    assert!(err.message.contains("digest"), "{err}");
    let d = "cd".repeat(32);
    let twice = format!(
        "[\n  {{\"name\": \"a\", \"tenant\": \"acme\", \"visibility\": \"public\", \"digest\": \"{d}\"}},\n  {{\"name\": \"b\", \"tenant\": \"acme\", \"visibility\": \"public\", \"digest\": \"{d}\"}}\n]"
    );
    let err = p.clone().with_catalogue_json("c.json", &twice).unwrap_err();
    assert_eq!(err.line, Some(3), "{err}");
    let err = p
        .with_catalogue_json(
            "c.json",
            &format!("[{{\"name\": \"a\", \"tenant\": \"acme\", \"visibility\": \"secret\", \"digest\": \"{d}\"}}]"),
        )
        .unwrap_err();
    assert!(err.message.contains("secret"), "{err}");
}

// Issue 15: publishing is its own policy set. Run policies with an unconstrained action
// reading an Agent-only attribute keep loading beside a publish policies folder; a broken
// publish policy file refuses to start, naming it.
#[test]
fn run_policies_keep_loading_beside_publish_policies_and_a_broken_one_is_named() {
    let run = tempfile::tempdir().unwrap();
    std::fs::write(
        run.path().join("quarantine.cedar"),
        "@id(\"allow-all\")\npermit (principal, action, resource);\n@id(\"mine\")\nforbid (principal, action, resource) when { principal.quarantined };\n",
    )
    .unwrap();
    let publish = tempfile::tempdir().unwrap();
    std::fs::write(
        publish.path().join("names.cedar"),
        "@id(\"no-internal\")\nforbid (principal, action, resource) when { resource.name like \"internal-*\" };\n",
    )
    .unwrap();
    let sources = PolicySources {
        policies: Some(run.path().to_path_buf()),
        publish_policies: Some(publish.path().to_path_buf()),
        ..Default::default()
    };
    let policy = Policy::load(&sources).unwrap();
    assert!(policy.policy_ids().iter().any(|(id, _)| id == "mine"));
    let publish_ids: Vec<String> = policy
        .publish_gate()
        .unwrap()
        .policy_ids()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        publish_ids,
        [
            "no-internal",
            "publish-cross-tenant",
            "publish-other-owner",
            "publish-own-skill"
        ]
    );

    std::fs::write(
        publish.path().join("zz-broken.cedar"),
        "@id(\"bad\")\nforbid (principal, action, resource) when { principal.quarantined };\n",
    )
    .unwrap();
    let err = Policy::load(&sources).unwrap_err();
    assert!(err.file.ends_with("zz-broken.cedar"), "{err}");
    assert_eq!(err.line, Some(2), "{err}");
}
