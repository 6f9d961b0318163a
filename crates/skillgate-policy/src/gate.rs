//! [`Policy`]: the loaded schema, policies, grants and entities, and `authorize`.
use crate::catalogue::Catalogue;
use crate::decision::Decision;
use crate::error::LoadError;
use crate::index::ResourceIndex;
use crate::load::{self, BUILTIN_POLICIES, BUILTIN_SCHEMA, PolicySources};
use crate::publish::{PublishGate, PublishSkill, Publisher};

/// The built-in default policy files, named as reports show them.
fn builtin_files() -> Vec<(String, String)> {
    BUILTIN_POLICIES
        .iter()
        .map(|(name, text)| (format!("built-in {name}"), text.to_string()))
        .collect()
}
use crate::request::{Action, RunFacts, Uids};
use cedar_policy::{Authorizer, Context, Entities, Entity, PolicyId, PolicySet, Request, Schema};
use skillgate_core::{Caller, ExecRequest, NoQuarantine, QuarantineSource, Skill};
use std::collections::HashMap;
use std::sync::Arc;

/// How a pipeline computes the limits a request runs with (see
/// [`Policy::with_run_limits`]).
pub type RunLimits = Arc<dyn Fn(&ExecRequest) -> skillgate_core::Limits + Send + Sync>;

/// The Cedar policy gate, usable alone or as [`PolicyLayer`](crate::PolicyLayer).
///
/// Everything is parsed and validated once, at load; a request builds a small entity set
/// (the agent, its groups and builder, the tenant, the skill and its owner) instead of
/// touching a large store.
///
/// ```
/// use skillgate_core::{Caller, Language, Skill, Visibility};
/// use skillgate_policy::{Action, Catalogue, Policy, Record, RunFacts};
///
/// let entities = r#"[
///   {"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []},
///   {"uid": {"type": "Agent", "id": "analyst-1"},
///    "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
///              "can_execute_code": true, "quarantined": false},
///    "parents": []}
/// ]"#;
/// let skill = Skill::builder("analyze-rows", Language::Python, b"print(1)".to_vec())
///     .visibility(Visibility::Public).build();
/// // The operator's record of the skill, by its digest.
/// let record = Record { name: "analyze-rows".into(), digest: skill.digest.clone(),
///     tenant: "acme".into(), owner: None, visibility: Visibility::Public };
/// let policy = Policy::builtin().unwrap()
///     .with_entities_json("inline", entities).unwrap()
///     .with_catalogue("inline", Catalogue::new([record]).unwrap()).unwrap();
/// let facts = RunFacts::for_skill(&skill, &Default::default());
///
/// let ok = policy.authorize(&Caller::new("analyst-1", "acme"), &skill, Action::Execute, &facts);
/// assert!(ok.is_allowed());
/// assert_eq!(ok.reasons, vec!["public-skills"]);
///
/// // An agent the entities file does not declare gets no right at all.
/// let stranger = policy.authorize(&Caller::new("intruder", "acme"), &skill, Action::View, &facts);
/// assert!(!stranger.is_allowed());
/// assert!(stranger.errors[0].message.contains("not in the entities file"));
/// ```
#[derive(Clone)]
pub struct Policy {
    schema: Schema,
    policies: PolicySet,
    /// `policies` split by the skill their grant links name, what requests run against.
    index: ResourceIndex,
    origin: HashMap<PolicyId, String>,
    /// Base policies turned off by the operator.
    lifted: Arc<[String]>,
    entities: Entities,
    /// The operator's records of skills, by digest.
    catalogue: Arc<Catalogue>,
    /// The ancestors of each agent of `entities`.
    ancestors: Arc<crate::request::Ancestors>,
    quarantine: Arc<dyn QuarantineSource>,
    /// The limits a request runs with, when the pipeline says how it computes them.
    run_limits: Option<RunLimits>,
    trust_caller_groups: bool,
    uids: Uids,
    /// The schema's action entities, added to every request's entity set.
    actions: Arc<[Entity]>,
    authorizer: Arc<Authorizer>,
    /// The publish policies of an operator folder (`[policy] publish_policies`) on top of
    /// the base ones, loaded (and checked) with the run policies; `None` for the base
    /// publish policies alone, built on first use: a `skillgate run` never needs them.
    publish: Option<Arc<PublishGate>>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("policies", &self.policies.policies().count())
            .field("templates", &self.policies.templates().count())
            .field("entities", &self.entities.len())
            .field("quarantine", &self.quarantine)
            .field("trust_caller_groups", &self.trust_caller_groups)
            .field("lifted", &self.lifted)
            .finish()
    }
}

impl Policy {
    /// The built-in schema and policies, no entities (every agent unknown), no grants.
    pub fn builtin() -> Result<Policy, LoadError> {
        Policy::from_texts(
            ("built-in skillgate.cedarschema", BUILTIN_SCHEMA),
            &builtin_files(),
        )
    }

    /// A gate from a schema text and policy file texts, `(file name, text)`, on top of the
    /// [`BASE_POLICIES`] (always loaded).
    pub fn from_texts(
        schema: (&str, &str),
        policy_files: &[(String, String)],
    ) -> Result<Policy, LoadError> {
        Policy::from_texts_lifting(schema, policy_files, &[])
    }

    /// Like [`from_texts`](Self::from_texts), with the base policies named in `lifted`
    /// turned off (each must be a base policy id). Every decision of the gate then carries
    /// a finding saying so ([`lifted`](Self::lifted)).
    pub fn from_texts_lifting(
        schema: (&str, &str),
        policy_files: &[(String, String)],
        lifted: &[String],
    ) -> Result<Policy, LoadError> {
        let (schema_file, schema_text) = schema;
        let (schema, sets) =
            load::parse_with_schema(schema_file, schema_text, lifted, policy_files)?;
        let (policies, origin) = load::merge(sets)?;
        let index = load::index(schema_file, &policies)?;
        let actions = load::action_entities(schema_file, &schema)?;
        let mut lifted = lifted.to_vec();
        lifted.sort();
        lifted.dedup();
        Ok(Policy {
            actions,
            schema,
            index,
            policies,
            origin,
            lifted: lifted.into(),
            entities: Entities::empty(),
            catalogue: Arc::default(),
            ancestors: Arc::default(),
            quarantine: Arc::new(NoQuarantine),
            run_limits: None,
            trust_caller_groups: false,
            uids: Uids::new(),
            authorizer: Arc::new(Authorizer::new()),
            publish: None,
        })
    }

    /// Loads what `sources` names (built-in policies when it names no folder; the base
    /// policies always).
    pub fn load(sources: &PolicySources) -> Result<Policy, LoadError> {
        let started = std::time::Instant::now();
        let lifted = &sources.disabled_base_policies;
        let mut policy = match &sources.policies {
            None => Policy::from_texts_lifting(
                ("built-in skillgate.cedarschema", BUILTIN_SCHEMA),
                &builtin_files(),
                lifted,
            )?,
            Some(dir) => {
                let dir = load::read_policy_dir(dir)?;
                let (schema_file, schema_text) = dir.schema.unwrap_or_else(|| {
                    (
                        "built-in skillgate.cedarschema".to_string(),
                        BUILTIN_SCHEMA.to_string(),
                    )
                });
                Policy::from_texts_lifting((&schema_file, &schema_text), &dir.policies, lifted)?
            }
        };
        let policies = started.elapsed();
        if let Some(path) = &sources.entities {
            let text = load::read_file(path)?;
            policy = policy.with_entities_json(&path.display().to_string(), &text)?;
        }
        let entities = started.elapsed();
        if let Some(path) = &sources.grants {
            let text = load::read_file(path)?;
            policy = policy.with_grants_json(&path.display().to_string(), &text)?;
        }
        let grants = started.elapsed();
        if let Some(path) = &sources.catalogue {
            let text = load::read_file(path)?;
            policy = policy.with_catalogue_json(&path.display().to_string(), &text)?;
        }
        tracing::debug!(target: "skillgate::timing", ?policies, ?entities, ?grants, catalogue = ?started.elapsed(), "policy files loaded (times since the start of the load)");
        policy.trust_caller_groups = sources.trust_caller_groups;
        if let Some(dir) = &sources.publish_policies {
            policy.publish = Some(PublishGate::load(Some(dir))?);
        }
        Ok(policy)
    }

    /// The base policies turned off (`[policy] disabled_base_policies`), sorted.
    pub fn lifted(&self) -> &[String] {
        &self.lifted
    }

    /// Replaces the entities with a Cedar entities JSON document, validated against the
    /// schema. Every agent's, group's and builder's tenant, groups and builder must be
    /// declared and of one tenant, and the grants and catalogue already loaded must stay
    /// inside their tenants ([`crate::entities`]). `file` names it in errors.
    pub fn with_entities_json(mut self, file: &str, text: &str) -> Result<Policy, LoadError> {
        self.entities = load::parse_entities(&self.schema, file, text)?;
        crate::tenancy::check_entities(&self.entities).map_err(|e| LoadError::file(file, e))?;
        self.ancestors = Arc::new(crate::request::agent_ancestors(&self.entities));
        self.check_tenancy(file)?;
        Ok(self)
    }

    /// Links the grants of a grants JSON document (see [`crate::grants`]). A grant giving
    /// a skill of one tenant to an agent or group of another is refused.
    pub fn with_grants_json(mut self, file: &str, text: &str) -> Result<Policy, LoadError> {
        load::link_grants(
            &self.schema,
            &mut self.policies,
            &mut self.origin,
            file,
            text,
        )?;
        self.index = load::index(file, &self.policies)?;
        self.check_tenancy(file)?;
        Ok(self)
    }

    /// Sets the catalogue: the operator's records of skills (see [`crate::catalogue`]). A
    /// record whose owner is a builder of another tenant is refused; `file` names the
    /// catalogue in errors.
    pub fn with_catalogue(mut self, file: &str, catalogue: Catalogue) -> Result<Policy, LoadError> {
        self.catalogue = Arc::new(catalogue);
        self.check_tenancy(file)?;
        Ok(self)
    }

    /// Sets the catalogue from a catalogue file's JSON text.
    pub fn with_catalogue_json(self, file: &str, text: &str) -> Result<Policy, LoadError> {
        let catalogue = Catalogue::from_json(file, text)?;
        self.with_catalogue(file, catalogue)
    }

    /// The catalogue (empty unless one was loaded).
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// Checks that the grants and the catalogue stay inside the tenants of the entities;
    /// `file` is the file just loaded, named in the error.
    fn check_tenancy(&self, file: &str) -> Result<(), LoadError> {
        crate::tenancy::check_grants(&self.entities, &self.policies)
            .and_then(|()| crate::tenancy::check_catalogue(&self.entities, &self.catalogue))
            .map_err(|e| LoadError::file(file, e))
    }

    /// Sets where quarantine verdicts come from (default: nobody is quarantined).
    pub fn with_quarantine(mut self, source: Arc<dyn QuarantineSource>) -> Policy {
        self.quarantine = source;
        self
    }

    /// Sets how the limits a request runs with are computed (the caller's requests and the
    /// maxima included), so the context `execute` is decided on is what will run. Without
    /// it, [`authorize_request`](Self::authorize_request) takes the skill's requests over
    /// the request's spec.
    pub fn with_run_limits(mut self, limits: RunLimits) -> Policy {
        self.run_limits = Some(limits);
        self
    }

    /// Whether groups a caller asserts are added to the agent's groups.
    pub fn with_trusted_caller_groups(mut self, trust: bool) -> Policy {
        self.trust_caller_groups = trust;
        self
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The entities loaded from the entities file.
    pub fn entities(&self) -> &Entities {
        &self.entities
    }

    /// The tenant the entities file gives agent `agent_id`, if it declares the agent.
    pub fn agent_tenant(&self, agent_id: &str) -> Option<String> {
        let uid = cedar_policy::EntityUid::from_type_name_and_id(
            "Agent".parse().ok()?,
            cedar_policy::EntityId::new(agent_id),
        );
        crate::request::tenant_of(self.entities.get(&uid)?).map(|t| t.id().unescaped().to_string())
    }

    /// The tenant the entities file gives builder `builder_id`, if it declares the builder.
    pub fn builder_tenant(&self, builder_id: &str) -> Option<String> {
        let uid = cedar_policy::EntityUid::from_type_name_and_id(
            "Builder".parse().ok()?,
            cedar_policy::EntityId::new(builder_id),
        );
        crate::request::tenant_of(self.entities.get(&uid)?).map(|t| t.id().unescaped().to_string())
    }

    /// The publish policies ([`crate::publish`]). An operator folder's were loaded with the
    /// gate; the base ones alone are built on first use, once per process (an error there
    /// is a defect of the compiled-in files, which the tests load).
    pub fn publish_gate(&self) -> Result<Arc<PublishGate>, LoadError> {
        match &self.publish {
            Some(gate) => Ok(gate.clone()),
            None => PublishGate::builtin(),
        }
    }

    /// May `publisher` publish `skill` to the registry? Decided by the publish policies
    /// ([`crate::publish`]), with each builder's tenant from the entities file; a builder
    /// the file does not declare, an agent, or any error denies.
    pub fn authorize_publish(&self, publisher: &Publisher, skill: &PublishSkill) -> Decision {
        match self.publish_gate() {
            Ok(gate) => gate.authorize(publisher, skill, |b| self.builder_tenant(b)),
            Err(e) => Decision::deny_with_error(e.to_string()),
        }
    }

    /// Every policy id (static policies, templates and grant links) with the file it comes
    /// from, sorted by id.
    pub fn policy_ids(&self) -> Vec<(String, String)> {
        let mut ids: Vec<(String, String)> = self
            .origin
            .iter()
            .map(|(id, file)| (id.to_string(), file.clone()))
            .collect();
        ids.sort();
        ids
    }

    /// May `caller` do `action` on `skill`? Any error (an unknown tenant, an unreadable
    /// quarantine store, a policy whose evaluation errs) denies.
    pub fn authorize(
        &self,
        caller: &Caller,
        skill: &Skill,
        action: Action,
        facts: &RunFacts,
    ) -> Decision {
        let context = match facts.to_context() {
            Ok(c) => c,
            Err(e) => return Decision::deny_with_error(e),
        };
        // The context is built from typed facts in a shape checked against the schema at
        // load: no need to check it again per request.
        self.authorize_inner(caller, skill, action, context, None)
    }

    /// Like [`authorize`](Self::authorize), with a context built by the caller (it is
    /// validated against the schema).
    pub fn authorize_with_context(
        &self,
        caller: &Caller,
        skill: &Skill,
        action: Action,
        context: Context,
    ) -> Decision {
        self.authorize_inner(caller, skill, action, context, Some(&self.schema))
    }

    fn authorize_inner(
        &self,
        caller: &Caller,
        skill: &Skill,
        action: Action,
        context: Context,
        check_against: Option<&Schema>,
    ) -> Decision {
        let quarantined = match self
            .quarantine
            .is_quarantined(&caller.tenant, &caller.agent_id)
        {
            Ok(q) => q,
            Err(e) => {
                return Decision::deny_with_error(format!(
                    "cannot tell whether agent `{}` is quarantined: {e}",
                    caller.agent_id
                ));
            }
        };
        let (principal, resource, entities) =
            match self.parts().entities(caller, skill, quarantined) {
                Ok(built) => built,
                Err(e) => return Decision::deny_with_error(e),
            };
        let policies = self.index.for_resource(&resource);
        let request = match Request::new(
            principal,
            self.uids.action(action),
            resource,
            context,
            check_against,
        ) {
            Ok(r) => r,
            Err(e) => {
                return Decision::deny_with_error(format!(
                    "the request does not fit the schema: {}",
                    load::diagnostic_text(&e)
                ));
            }
        };
        Decision::from_response(&self.authorizer.is_authorized(&request, policies, &entities))
    }

    fn parts(&self) -> crate::request::Parts<'_> {
        crate::request::Parts {
            store: &self.entities,
            ancestors: &self.ancestors,
            catalogue: &self.catalogue,
            actions: &self.actions,
            uids: &self.uids,
            trust_caller_groups: self.trust_caller_groups,
        }
    }

    /// The same gate evaluating every request against every policy (no index).
    #[cfg(test)]
    pub(crate) fn without_index(mut self) -> Policy {
        self.index = ResourceIndex::unindexed(&self.policies);
        self
    }

    /// The decision for an execution request: `execute` (`run_command` for a shell
    /// command line, see [`Action::to_run`]), with the context from the limits the run
    /// gets ([`with_run_limits`](Self::with_run_limits)), else from the skill's requests
    /// over the request's spec.
    pub fn authorize_request(&self, req: &ExecRequest) -> Decision {
        let facts = match &self.run_limits {
            Some(limits) => RunFacts::for_limits(&req.skill, &limits(req)),
            None => RunFacts::for_skill(&req.skill, &req.spec.limits),
        };
        let action = Action::to_run(req.skill.language);
        self.authorize(&req.caller, &req.skill, action, &facts)
    }
}

#[cfg(test)]
mod tests {
    use super::Policy;
    use skillgate_core::{Caller, Language, Skill, Visibility};

    const ENTITIES: &str = r#"[
      {"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []},
      {"uid": {"type": "Tenant", "id": "other"}, "attrs": {}, "parents": []},
      {"uid": {"type": "AgentGroup", "id": "g"},
       "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []},
      {"uid": {"type": "Builder", "id": "b"},
       "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []},
      {"uid": {"type": "Agent", "id": "known"},
       "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}},
                 "can_execute_code": true, "quarantined": false},
       "parents": [{"type": "AgentGroup", "id": "g"}, {"type": "Builder", "id": "b"}]}
    ]"#;

    /// Requests skip the per-request schema check because every entity set they build
    /// fits the schema by construction: every shape the builder makes is checked here.
    #[test]
    fn every_request_entity_set_fits_the_schema() {
        let mut checked = 0;
        for trust in [false, true] {
            for visibility in [
                Visibility::Public,
                Visibility::Restricted,
                Visibility::Private,
            ] {
                for (lang, owner) in [(Language::Python, Some("b")), (Language::JavaScript, None)] {
                    let mut skill = Skill::builder("s", lang, b"1".to_vec())
                        .tenant("acme")
                        .visibility(visibility);
                    if let Some(o) = owner {
                        skill = skill.owner(o);
                    }
                    let skill = skill.build();
                    let record = crate::Record {
                        name: "s".into(),
                        digest: skill.digest.clone(),
                        tenant: "acme".into(),
                        owner: owner.map(String::from),
                        visibility,
                    };
                    let bare = Policy::builtin()
                        .unwrap()
                        .with_entities_json("entities", ENTITIES)
                        .unwrap()
                        .with_trusted_caller_groups(trust);
                    let catalogued = bare
                        .clone()
                        .with_catalogue("c", crate::Catalogue::new([record]).unwrap())
                        .unwrap();
                    for policy in [&bare, &catalogued] {
                        let caller = Caller::new("known", "acme").with_groups(["g", "undeclared"]);
                        for quarantined in [false, true] {
                            let got = policy.parts().checked_entities(
                                &policy.schema,
                                &caller,
                                &skill,
                                quarantined,
                            );
                            assert!(got.is_ok(), "{visibility:?} {owner:?}: {got:?}");
                            checked += 1;
                        }
                        // Nobody declared `stranger`: no request is built for it.
                        let stranger = Caller::new("stranger", "acme");
                        let got = policy.parts().checked_entities(
                            &policy.schema,
                            &stranger,
                            &skill,
                            false,
                        );
                        assert!(got.is_err());
                    }
                }
            }
        }
        assert_eq!(checked, 48);
    }

    /// The context built from run facts fits the schema (requests skip that check).
    #[test]
    fn the_context_from_run_facts_fits_the_schema() {
        let policy = Policy::builtin().unwrap();
        for (lang, network) in [(Language::Python, false), (Language::JavaScript, true)] {
            let mut facts = crate::RunFacts::for_skill(
                &Skill::builder("s", lang, b"1".to_vec()).build(),
                &Default::default(),
            );
            facts.network_requested = network;
            facts.cpu_time_ms = i64::MAX;
            let agent = cedar_policy::EntityUid::from_type_name_and_id(
                "Agent".parse().unwrap(),
                cedar_policy::EntityId::new("a"),
            );
            for action in [crate::Action::Execute, crate::Action::View] {
                let checked = cedar_policy::Request::new(
                    agent.clone(),
                    policy.uids.action(action),
                    policy.uids.skill("acme", "s"),
                    facts.to_context().unwrap(),
                    Some(&policy.schema),
                );
                assert!(checked.is_ok(), "{lang:?} {action:?}: {checked:?}");
            }
        }
    }
}
