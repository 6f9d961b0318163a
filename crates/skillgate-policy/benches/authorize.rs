//! Authorization latency per request, request building included (the per-request entity
//! set, the context, schema validation of both, Cedar evaluation), with 10, 1,000 and
//! 10,000 policies and grants loaded. Criterion's median is the p50.
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skillgate_core::{Caller, ExecRequest, Language, Skill, Visibility};
use skillgate_policy::{Catalogue, Policy, Record};
use std::hint::black_box;

/// Entities: one tenant, `groups` agent groups, one agent in the last group.
fn entities(groups: usize) -> String {
    let mut items = vec![
        r#"{"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []}"#.to_string(),
    ];
    for g in 0..groups {
        items.push(format!(
            r#"{{"uid": {{"type": "AgentGroup", "id": "g{g}"}}, "attrs": {{"tenant": {{"__entity": {{"type": "Tenant", "id": "acme"}}}}}}, "parents": []}}"#
        ));
    }
    items.push(format!(
        r#"{{"uid": {{"type": "Agent", "id": "agent"}}, "attrs": {{"tenant": {{"__entity": {{"type": "Tenant", "id": "acme"}}}}, "can_execute_code": true, "quarantined": false}}, "parents": [{{"type": "AgentGroup", "id": "g{}"}}]}}"#,
        groups.saturating_sub(1)
    ));
    format!("[{}]", items.join(",\n"))
}

/// `n` grants, each of group gI to skill acme/sI.
fn grants(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"template": "restricted-grant", "principal": {{"type": "AgentGroup", "id": "g{i}"}}, "resource": {{"type": "Skill", "id": "acme/s{i}"}}}}"#
            )
        })
        .collect();
    format!("[{}]", items.join(",\n"))
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("authorize");
    for total in [10usize, 1_000, 10_000] {
        // The seven static policies (three base, four default) plus `n` grant links make
        // `total` policies.
        let n = total - 7;
        let skill = Skill::builder(
            format!("s{}", n - 1),
            Language::Python,
            b"print(1)".to_vec(),
        )
        .tenant("acme")
        .owner("builder-alice")
        .visibility(Visibility::Restricted)
        .build();
        // The operator's record of the skill: it is what the grants name.
        let record = Record {
            name: skill.name.clone(),
            digest: skill.digest.clone(),
            tenant: "acme".into(),
            owner: skill.owner.clone(),
            visibility: Visibility::Restricted,
        };
        let policy = Policy::builtin()
            .unwrap()
            .with_entities_json("bench", &entities(n))
            .unwrap()
            .with_grants_json("bench", &grants(n))
            .unwrap()
            .with_catalogue("bench", Catalogue::new([record]).unwrap())
            .unwrap();
        let req = ExecRequest::new(Caller::new("agent", "acme"), skill, serde_json::json!({}));
        let d = policy.authorize_request(&req);
        assert_eq!(d.reasons, [format!("grant-{n}")], "{d:?}");
        group.bench_with_input(
            BenchmarkId::new("restricted_granted", total),
            &req,
            |b, req| b.iter(|| black_box(policy.authorize_request(black_box(req)))),
        );
        let public = Skill::builder("pub", Language::Python, b"print(1)".to_vec())
            .tenant("acme")
            .visibility(Visibility::Public)
            .build();
        let req = ExecRequest::new(
            Caller::new("intruder", "acme"),
            public,
            serde_json::json!({}),
        );
        assert!(!policy.authorize_request(&req).is_allowed());
        group.bench_with_input(
            BenchmarkId::new("unknown_agent_denied", total),
            &req,
            |b, req| b.iter(|| black_box(policy.authorize_request(black_box(req)))),
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
