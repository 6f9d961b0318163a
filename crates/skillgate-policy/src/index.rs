//! Grant links indexed by the one resource (skill) they name, so a request is evaluated
//! against the policies that can apply to its skill instead of every grant loaded.
//!
//! A link whose scope says `resource == X` is false, without evaluating its conditions
//! (and so without any evaluation error), for every request whose resource is not `X`.
//! Leaving it out of those requests changes no decision, reason or error. Every other
//! policy (static policies, links with `resource in`, `is` or no resource constraint) is
//! kept for every request.
use cedar_policy::{EntityUid, Policy, PolicyId, PolicySet, ResourceConstraint};
use std::collections::HashMap;
use std::sync::Arc;

/// The policy sets one request is authorized against, by its resource.
#[derive(Debug, Clone)]
pub(crate) struct ResourceIndex {
    /// Everything but the links naming one resource with `resource ==`.
    base: Arc<PolicySet>,
    /// For each resource some `resource ==` link names: `base` plus those links.
    by_resource: Arc<HashMap<EntityUid, PolicySet>>,
}

impl ResourceIndex {
    /// The index of `all`: the full set split by the resource its links name.
    pub(crate) fn build(all: &PolicySet) -> Result<ResourceIndex, String> {
        let mut base = PolicySet::new();
        for template in all.templates() {
            base.add_template(template.clone())
                .map_err(|e| e.to_string())?;
        }
        let mut named: HashMap<EntityUid, Vec<(&PolicyId, &Policy)>> = HashMap::new();
        for policy in all.policies() {
            match (policy.template_id(), policy.resource_constraint()) {
                (None, _) => base.add(policy.clone()).map_err(|e| e.to_string())?,
                (Some(template), ResourceConstraint::Eq(uid)) => {
                    named.entry(uid).or_default().push((template, policy));
                }
                (Some(template), _) => link_again(&mut base, template, policy)?,
            }
        }
        let mut by_resource = HashMap::with_capacity(named.len());
        for (uid, links) in named {
            let mut set = base.clone();
            for (template, policy) in links {
                link_again(&mut set, template, policy)?;
            }
            by_resource.insert(uid, set);
        }
        Ok(ResourceIndex {
            base: Arc::new(base),
            by_resource: Arc::new(by_resource),
        })
    }

    /// The policies that can apply to a request on `resource`.
    pub(crate) fn for_resource(&self, resource: &EntityUid) -> &PolicySet {
        self.by_resource.get(resource).unwrap_or(&self.base)
    }
}

/// Links `policy` (a link of `template` in another set) into `set`: same template, same
/// id, same slot values.
fn link_again(set: &mut PolicySet, template: &PolicyId, policy: &Policy) -> Result<(), String> {
    set.link(
        template.clone(),
        policy.id().clone(),
        policy.template_links().unwrap_or_default(),
    )
    .map_err(|e| e.to_string())
}

impl ResourceIndex {
    /// No index: every request runs against all of `all` (what Cedar alone would do).
    #[cfg(test)]
    pub(crate) fn unindexed(all: &PolicySet) -> ResourceIndex {
        ResourceIndex {
            base: Arc::new(all.clone()),
            by_resource: Arc::new(HashMap::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Action, Policy, RunFacts, Verdict};
    use skillgate_core::{Caller, Language, Limits, Skill, Visibility};

    /// Two templates besides the built-in grant: one whose links name a skill and can
    /// err, one whose links name no resource (kept for every request).
    const EXTRA: &str = r#"
@id("erroring-grant")
forbid (principal == ?principal, action, resource == ?resource)
when { context.limits.memory_bytes * 1024 > 1073741824 };

@id("view-anything")
permit (principal in ?principal, action == Action::"view", resource)
when { resource.visibility == "restricted" };
"#;

    fn tenant(t: &str) -> String {
        format!(r#"{{"__entity": {{"type": "Tenant", "id": "{t}"}}}}"#)
    }

    fn entities() -> String {
        let mut items = vec![
            r#"{"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []}"#.to_string(),
            r#"{"uid": {"type": "Tenant", "id": "other"}, "attrs": {}, "parents": []}"#.to_string(),
            format!(
                r#"{{"uid": {{"type": "Builder", "id": "b"}}, "attrs": {{"tenant": {}}}, "parents": []}}"#,
                tenant("acme")
            ),
        ];
        for g in 0..50 {
            items.push(format!(
                r#"{{"uid": {{"type": "AgentGroup", "id": "g{g}"}}, "attrs": {{"tenant": {}}}, "parents": []}}"#,
                tenant("acme")
            ));
        }
        for a in 0..12 {
            let t = if a == 11 { "other" } else { "acme" };
            let code = a != 9;
            let quarantined = a == 10;
            let parents = if a == 2 {
                r#"{"type": "Builder", "id": "b"}"#.to_string()
            } else if t == "other" {
                String::new()
            } else {
                format!(r#"{{"type": "AgentGroup", "id": "g{}"}}"#, a * 4)
            };
            items.push(format!(
                r#"{{"uid": {{"type": "Agent", "id": "a{a}"}}, "attrs": {{"tenant": {}, "can_execute_code": {code}, "quarantined": {quarantined}}}, "parents": [{parents}]}}"#,
                tenant(t)
            ));
        }
        format!("[{}]", items.join(",\n"))
    }

    /// Many grants on many skills: groups to skills, agents directly, an erroring forbid
    /// on one skill, and links that name no skill.
    fn grants() -> String {
        let mut items = Vec::new();
        for i in 0..600 {
            items.push(format!(
                r#"{{"template": "restricted-grant", "principal": {{"type": "AgentGroup", "id": "g{}"}}, "resource": {{"type": "Skill", "id": "acme/s{}"}}}}"#,
                i % 50,
                i % 150
            ));
        }
        for a in [1, 3, 9, 10] {
            items.push(format!(
                r#"{{"template": "restricted-grant", "principal": {{"type": "Agent", "id": "a{a}"}}, "resource": {{"type": "Skill", "id": "acme/s{}"}}}}"#,
                a + 100
            ));
        }
        for s in [0, 4, 104] {
            items.push(format!(
                r#"{{"id": "err-{s}", "template": "erroring-grant", "principal": {{"type": "Agent", "id": "a1"}}, "resource": {{"type": "Skill", "id": "acme/s{s}"}}}}"#
            ));
        }
        for g in [8, 12] {
            items.push(format!(
                r#"{{"id": "view-{g}", "template": "view-anything", "principal": {{"type": "AgentGroup", "id": "g{g}"}}}}"#
            ));
        }
        format!("[{}]", items.join(",\n"))
    }

    fn skills() -> Vec<Skill> {
        let mut out = Vec::new();
        for i in (0..160).step_by(1) {
            let visibility = match i % 10 {
                7 => Visibility::Public,
                8 => Visibility::Private,
                _ => Visibility::Restricted,
            };
            out.push(
                Skill::builder(format!("s{i}"), Language::Python, format!("# s{i}"))
                    .tenant("acme")
                    .owner("b")
                    .visibility(visibility)
                    .build(),
            );
        }
        out.push(
            Skill::builder("s0", Language::Python, b"# other s0".to_vec())
                .tenant("other")
                .visibility(Visibility::Restricted)
                .build(),
        );
        out
    }

    /// A record of every skill of [`skills`], as its metadata says.
    fn catalogue() -> crate::Catalogue {
        crate::Catalogue::new(skills().into_iter().map(|s| crate::Record {
            name: s.name.clone(),
            digest: s.digest.clone(),
            tenant: s.tenant.clone().unwrap(),
            owner: s.owner.clone(),
            visibility: s.visibility,
        }))
        .unwrap()
    }

    #[test]
    fn the_index_decides_exactly_as_the_full_policy_set() {
        let mut files: Vec<(String, String)> = crate::BUILTIN_POLICIES
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        files.push(("extra.cedar".to_string(), EXTRA.to_string()));
        let indexed = Policy::from_texts(("schema", crate::BUILTIN_SCHEMA), &files)
            .unwrap()
            .with_entities_json("entities", &entities())
            .unwrap()
            .with_grants_json("grants", &grants())
            .unwrap()
            .with_catalogue("catalogue", catalogue())
            .unwrap();
        let full = indexed.clone().without_index();
        let (mut allowed, mut denied, mut errors) = (0, 0, 0);
        for skill in skills() {
            for a in 0..13 {
                let tenant = if a == 11 { "other" } else { "acme" };
                let caller = Caller::new(format!("a{a}"), tenant);
                for action in [Action::Execute, Action::View] {
                    for memory in [1 << 20, i64::MAX] {
                        let mut facts = RunFacts::for_skill(&skill, &Limits::default());
                        facts.memory_bytes = memory;
                        let got = indexed.authorize(&caller, &skill, action, &facts);
                        let want = full.authorize(&caller, &skill, action, &facts);
                        assert_eq!(got, want, "a{a} {action:?} {} {memory}", skill.name);
                        match got.decision {
                            Verdict::Allow => allowed += 1,
                            Verdict::Deny => denied += 1,
                        }
                        errors += usize::from(!got.errors.is_empty());
                    }
                }
            }
        }
        // The table is not vacuous: grants allow, others deny, erroring links report.
        assert!(allowed > 100, "{allowed} allowed");
        assert!(denied > 100, "{denied} denied");
        assert!(errors > 0, "no decision carried an evaluation error");
        let d = indexed.authorize(
            &Caller::new("a1", "acme"),
            &skills()[4],
            Action::Execute,
            &RunFacts {
                memory_bytes: i64::MAX,
                ..RunFacts::for_skill(&skills()[4], &Limits::default())
            },
        );
        assert_eq!(d.errors.len(), 1, "{d:?}");
        assert_eq!(d.errors[0].policy_id.as_deref(), Some("err-4"));
    }
}
