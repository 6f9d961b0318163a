//! The publish gate: may this builder publish this skill to the registry? Its own small
//! Cedar policy set, apart from the run policies, so that no user run policy ever meets a
//! `Builder` principal: the schema [`PUBLISH_SCHEMA`] (a `Builder` with its tenant, a
//! `Skill` with name, tenant, owner and visibility, the `publish` action, the pre-scan's
//! verdict as context), the always-loaded [`PUBLISH_BASE_POLICIES`], and an optional
//! operator folder (`[policy] publish_policies`) validated strictly at load.
//!
//! ```
//! use skillgate_core::Visibility;
//! use skillgate_policy::{Policy, PublishSkill, Publisher};
//!
//! let entities = r#"[
//!   {"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []},
//!   {"uid": {"type": "Builder", "id": "alice"},
//!    "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []}
//! ]"#;
//! let policy = Policy::builtin().unwrap().with_entities_json("inline", entities).unwrap();
//! let mut skill = PublishSkill {
//!     name: "analyze-rows".into(), tenant: "acme".into(), owner: "alice".into(),
//!     visibility: Visibility::Public, prescan: "pass".into(),
//! };
//! let ok = policy.authorize_publish(&Publisher::Builder("alice".into()), &skill);
//! assert_eq!(ok.reasons, vec!["publish-own-skill"]);
//! skill.tenant = "globex".into();
//! let denied = policy.authorize_publish(&Publisher::Builder("alice".into()), &skill);
//! assert!(!denied.is_allowed());
//! assert_eq!(denied.reasons, vec!["publish-cross-tenant"]);
//! ```
use crate::decision::Decision;
use crate::error::LoadError;
use crate::load;
use cedar_policy::{
    Authorizer, Context, Entities, Entity, EntityId, EntityUid, PolicyId, PolicySet,
    RestrictedExpression, Schema,
};
use serde::Serialize;
use skillgate_core::Visibility;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The publish schema (`rules/policies/publish/publish.cedarschema`).
pub const PUBLISH_SCHEMA: &str =
    include_str!("../../../rules/policies/publish/publish.cedarschema");

/// The base publish policies (`rules/policies/publish/base.cedar`): a builder publishes
/// the skills it owns in its own tenant (`publish-own-skill`); never into another tenant
/// (`publish-cross-tenant`); never a skill another builder owns (`publish-other-owner`).
/// Always loaded; an operator folder adds to them.
pub const PUBLISH_BASE_POLICIES: &[(&str, &str)] = &[(
    "publish/base.cedar",
    include_str!("../../../rules/policies/publish/base.cedar"),
)];

/// Who asks to publish: the principal of the publishing credential. Only a builder can
/// be the principal of `publish`; an agent's request does not fit the schema and is denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Publisher {
    /// A builder, by its id in the entities file.
    Builder(String),
    /// An agent, by its id.
    Agent(String),
}

/// The skill being published, as the publish gate sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PublishSkill {
    /// The skill's name.
    pub name: String,
    /// The tenant it would be stored in (a SKILL.md's claim, else the publisher's).
    pub tenant: String,
    /// Its owner (a SKILL.md's claim, else the owner of its published versions, else the
    /// publisher).
    pub owner: String,
    /// Its visibility.
    pub visibility: Visibility,
    /// The pre-scan's verdict on the upload: `pass`, `warn` or `block`.
    pub prescan: String,
}

/// The loaded publish policies. Use it through [`Policy::authorize_publish`](crate::Policy::authorize_publish),
/// which knows the builders of the entities file.
#[derive(Debug, Clone)]
pub struct PublishGate {
    schema: Schema,
    policies: PolicySet,
    origin: HashMap<PolicyId, String>,
}

impl PublishGate {
    /// The base publish policies alone (built once per process).
    pub fn builtin() -> Result<Arc<PublishGate>, LoadError> {
        static BUILTIN: OnceLock<Result<Arc<PublishGate>, LoadError>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| PublishGate::from_files(&[]).map(Arc::new))
            .clone()
    }

    /// The base publish policies and, with `dir`, the `*.cedar` files of an operator
    /// folder on top (a schema file there is refused: the publish schema is compiled in).
    pub fn load(dir: Option<&Path>) -> Result<Arc<PublishGate>, LoadError> {
        let Some(dir) = dir else {
            return PublishGate::builtin();
        };
        let read = load::read_policy_dir(dir)?;
        if let Some((file, _)) = read.schema {
            return Err(LoadError::file(
                file,
                "a schema file in [policy] publish_policies: the publish schema is compiled in (rules/policies/publish/publish.cedarschema)",
            ));
        }
        PublishGate::from_files(&read.policies).map(Arc::new)
    }

    /// The base publish policies and the operator policy files `(file name, text)`, each
    /// validated strictly against [`PUBLISH_SCHEMA`].
    pub fn from_files(files: &[(String, String)]) -> Result<PublishGate, LoadError> {
        const SCHEMA_FILE: &str = "built-in publish.cedarschema";
        let schema = load::parse_schema(SCHEMA_FILE, PUBLISH_SCHEMA)?;
        let base = PUBLISH_BASE_POLICIES
            .iter()
            .map(|(name, text)| (format!("built-in {name}"), text.to_string()));
        let mut sets = Vec::new();
        for (file, text) in base.chain(files.iter().cloned()) {
            let set = load::parse_policy_file(&schema, PUBLISH_SCHEMA, &file, &text)?;
            sets.push((file, set));
        }
        let (policies, origin) = load::merge(sets)?;
        Ok(PublishGate {
            schema,
            policies,
            origin,
        })
    }

    /// Every publish policy id with the file it comes from, sorted by id.
    pub fn policy_ids(&self) -> Vec<(String, String)> {
        let mut ids: Vec<(String, String)> = self
            .origin
            .iter()
            .map(|(id, file)| (id.to_string(), file.clone()))
            .collect();
        ids.sort();
        ids
    }

    /// May `publisher` publish `skill`? `tenant_of` gives a builder's tenant from the
    /// entities file. Anything that cannot be built or evaluated denies.
    pub(crate) fn authorize(
        &self,
        publisher: &Publisher,
        skill: &PublishSkill,
        tenant_of: impl Fn(&str) -> Option<String>,
    ) -> Decision {
        match self.request(publisher, skill, tenant_of) {
            Ok((request, entities)) => Decision::from_response(&Authorizer::new().is_authorized(
                &request,
                &self.policies,
                &entities,
            )),
            Err(e) => Decision::deny_with_error(e),
        }
    }

    fn request(
        &self,
        publisher: &Publisher,
        skill: &PublishSkill,
        tenant_of: impl Fn(&str) -> Option<String>,
    ) -> Result<(cedar_policy::Request, Entities), String> {
        let mut entities: Vec<Entity> = Vec::new();
        let mut tenants: HashSet<String> = HashSet::from([skill.tenant.clone()]);
        let principal = match publisher {
            Publisher::Agent(id) => uid("Agent", id)?,
            Publisher::Builder(id) => {
                let tenant = tenant_of(id)
                    .ok_or_else(|| format!("builder `{id}` is not in the entities file"))?;
                entities.push(builder(id, &tenant)?);
                tenants.insert(tenant);
                uid("Builder", id)?
            }
        };
        // The owner's entity when the entities file declares it (and it is not the
        // publisher): a policy reading an undeclared owner's tenant errs, which denies.
        if publisher != &Publisher::Builder(skill.owner.clone())
            && let Some(tenant) = tenant_of(&skill.owner)
        {
            entities.push(builder(&skill.owner, &tenant)?);
            tenants.insert(tenant);
        }
        for t in tenants {
            entities.push(Entity::new_no_attrs(uid("Tenant", &t)?, HashSet::new()));
        }
        let resource = uid("Skill", &format!("{}/{}", skill.tenant, skill.name))?;
        let attrs = HashMap::from([
            (
                "name".to_string(),
                RestrictedExpression::new_string(skill.name.clone()),
            ),
            (
                "tenant".to_string(),
                RestrictedExpression::new_entity_uid(uid("Tenant", &skill.tenant)?),
            ),
            (
                "owner".to_string(),
                RestrictedExpression::new_entity_uid(uid("Builder", &skill.owner)?),
            ),
            (
                "visibility".to_string(),
                RestrictedExpression::new_string(skill.visibility.as_str().to_string()),
            ),
        ]);
        entities
            .push(Entity::new(resource.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())?);
        let context = Context::from_pairs([(
            "prescan".to_string(),
            RestrictedExpression::new_string(skill.prescan.clone()),
        )])
        .map_err(|e| e.to_string())?;
        let request = cedar_policy::Request::new(
            principal,
            uid("Action", "publish")?,
            resource,
            context,
            Some(&self.schema),
        )
        .map_err(|e| {
            format!(
                "the publish request does not fit the publish schema: {}",
                load::diagnostic_text(&e)
            )
        })?;
        let entities = Entities::from_entities(entities, Some(&self.schema))
            .map_err(|e| format!("the publish entities do not fit the publish schema: {e}"))?;
        Ok((request, entities))
    }
}

fn uid(ty: &str, id: &str) -> Result<EntityUid, String> {
    let ty = ty.parse().map_err(|e| format!("entity type `{ty}`: {e}"))?;
    Ok(EntityUid::from_type_name_and_id(ty, EntityId::new(id)))
}

fn builder(id: &str, tenant: &str) -> Result<Entity, String> {
    Entity::new(
        uid("Builder", id)?,
        HashMap::from([(
            "tenant".to_string(),
            RestrictedExpression::new_entity_uid(uid("Tenant", tenant)?),
        )]),
        HashSet::new(),
    )
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenants(id: &str) -> Option<String> {
        match id {
            "alice" | "bob" => Some("acme".into()),
            "carol" => Some("globex".into()),
            _ => None,
        }
    }

    fn skill(name: &str, tenant: &str, owner: &str) -> PublishSkill {
        PublishSkill {
            name: name.into(),
            tenant: tenant.into(),
            owner: owner.into(),
            visibility: Visibility::Private,
            prescan: "pass".into(),
        }
    }

    fn alice() -> Publisher {
        Publisher::Builder("alice".into())
    }

    #[test]
    fn a_builder_publishes_its_own_skill_in_its_tenant() {
        let gate = PublishGate::builtin().unwrap();
        let d = gate.authorize(&alice(), &skill("s", "acme", "alice"), tenants);
        assert!(d.is_allowed(), "{d:?}");
        assert_eq!(d.reasons, vec!["publish-own-skill"]);
    }

    #[test]
    fn cross_tenant_and_another_owner_are_denied_by_their_forbids() {
        let gate = PublishGate::builtin().unwrap();
        let d = gate.authorize(&alice(), &skill("s", "globex", "alice"), tenants);
        assert!(!d.is_allowed());
        assert_eq!(d.reasons, vec!["publish-cross-tenant"]);
        let d = gate.authorize(&alice(), &skill("s", "acme", "bob"), tenants);
        assert_eq!(d.reasons, vec!["publish-other-owner"]);
        // An owner the entities file does not declare is still another owner.
        let d = gate.authorize(&alice(), &skill("s", "acme", "nobody"), tenants);
        assert_eq!(d.reasons, vec!["publish-other-owner"]);
        // A builder of another tenant publishing into acme: both forbids.
        let carol = Publisher::Builder("carol".into());
        let d = gate.authorize(&carol, &skill("s", "acme", "carol"), tenants);
        assert_eq!(d.reasons, vec!["publish-cross-tenant"]);
    }

    #[test]
    fn agents_and_undeclared_builders_cannot_publish() {
        let gate = PublishGate::builtin().unwrap();
        let agent = Publisher::Agent("alice".into());
        let d = gate.authorize(&agent, &skill("s", "acme", "alice"), tenants);
        assert!(!d.is_allowed());
        assert!(d.errors[0].message.contains("publish schema"), "{d:?}");
        let ghost = Publisher::Builder("ghost".into());
        let d = gate.authorize(&ghost, &skill("s", "acme", "ghost"), tenants);
        assert!(!d.is_allowed());
        assert!(
            d.errors[0].message.contains("not in the entities file"),
            "{d:?}"
        );
    }

    #[test]
    fn operator_policies_add_forbids_and_read_the_prescan_verdict() {
        let files = vec![(
            "ops.cedar".to_string(),
            r#"@id("no-internal-names")
forbid (principal, action, resource) when { resource.name like "internal-*" };
@id("no-blocked-public")
forbid (principal, action, resource)
when { context.prescan == "block" && resource.visibility == "public" };"#
                .to_string(),
        )];
        let gate = PublishGate::from_files(&files).unwrap();
        let d = gate.authorize(&alice(), &skill("internal-tool", "acme", "alice"), tenants);
        assert_eq!(d.reasons, vec!["no-internal-names"]);
        assert!(!d.is_allowed());
        let mut s = skill("tool", "acme", "alice");
        assert!(gate.authorize(&alice(), &s, tenants).is_allowed());
        s.visibility = Visibility::Public;
        s.prescan = "block".into();
        let d = gate.authorize(&alice(), &s, tenants);
        assert_eq!(d.reasons, vec!["no-blocked-public"]);
    }

    #[test]
    fn a_broken_or_invalid_operator_file_is_refused_naming_it() {
        let typo = vec![(
            "ops.cedar".to_string(),
            r#"@id("x") forbid (principal, action, resource) when { resource.nmae == "a" };"#
                .to_string(),
        )];
        let err = PublishGate::from_files(&typo).unwrap_err();
        assert_eq!(err.file, "ops.cedar", "{err}");
        // Run-schema attributes do not exist here.
        let run_attr = vec![(
            "run.cedar".to_string(),
            r#"@id("q") forbid (principal, action, resource) when { principal.quarantined };"#
                .to_string(),
        )];
        assert_eq!(
            PublishGate::from_files(&run_attr).unwrap_err().file,
            "run.cedar"
        );
        // A base id cannot be taken over.
        let dup = vec![(
            "dup.cedar".to_string(),
            r#"@id("publish-own-skill") permit (principal, action, resource);"#.to_string(),
        )];
        let err = PublishGate::from_files(&dup).unwrap_err();
        assert!(err.message.contains("already used"), "{err}");
    }

    #[test]
    fn a_folder_loads_its_cedar_files_and_refuses_a_schema() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.cedar"),
            r#"@id("ops") forbid (principal, action, resource) when { resource.name == "x" };"#,
        )
        .unwrap();
        let gate = PublishGate::load(Some(dir.path())).unwrap();
        assert!(gate.policy_ids().iter().any(|(id, _)| id == "ops"));
        std::fs::write(dir.path().join("s.cedarschema"), PUBLISH_SCHEMA).unwrap();
        let err = PublishGate::load(Some(dir.path())).unwrap_err();
        assert!(err.file.ends_with("s.cedarschema"), "{err}");
    }
}
