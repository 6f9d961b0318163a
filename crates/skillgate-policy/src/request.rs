//! Building one Cedar request: the per-request entity set and the context.
use cedar_policy::{
    Context, Entities, Entity, EntityId, EntityTypeName, EntityUid, EvalResult,
    RestrictedExpression,
};
use skillgate_core::{Caller, LimitOverrides, Limits, Skill};
use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::time::Duration;

/// The Cedar actions of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `Action::"execute"`: run the skill.
    Execute,
    /// `Action::"view"`: see that it exists (discovery).
    View,
    /// `Action::"run_command"`: run a shell command line (a session's shell step). No
    /// default policy permits it: an operator grants it explicitly.
    RunCommand,
}

impl Action {
    /// The action's Cedar id.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Execute => "execute",
            Action::View => "view",
            Action::RunCommand => "run_command",
        }
    }

    /// The action that runs `language`'s code: `run_command` for a shell command line,
    /// `execute` for a script.
    pub fn to_run(language: skillgate_core::Language) -> Action {
        match language {
            skillgate_core::Language::Shell => Action::RunCommand,
            skillgate_core::Language::Python | skillgate_core::Language::JavaScript => {
                Action::Execute
            }
        }
    }
}

impl FromStr for Action {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "execute" => Ok(Action::Execute),
            "view" => Ok(Action::View),
            "run_command" => Ok(Action::RunCommand),
            _ => Err(format!(
                "unknown action `{s}` (expected execute, view or run_command)"
            )),
        }
    }
}

/// The request context: what the pipeline knows about the run asked for.
///
/// ```
/// use skillgate_core::{Language, Limits, Skill};
/// let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
/// let facts = skillgate_policy::RunFacts::for_skill(&skill, &Limits::default());
/// assert!(!facts.network_requested);
/// assert_eq!(facts.wall_timeout_ms, Limits::default().wall_timeout.as_millis() as i64);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts {
    /// `python` or `javascript`.
    pub language: String,
    /// The skill asks for network access.
    pub network_requested: bool,
    /// Wall-clock limit asked for, in milliseconds.
    pub wall_timeout_ms: i64,
    /// CPU-time limit asked for, in milliseconds (`i64::MAX` when none is set, so a policy
    /// bounding it denies).
    pub cpu_time_ms: i64,
    /// Memory asked for, in bytes.
    pub memory_bytes: i64,
    /// Processes asked for.
    pub pids: i64,
    /// Largest file asked for, in bytes.
    pub file_size_bytes: i64,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn long(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl RunFacts {
    /// The facts of running `skill`: its own limit requests where it makes them, the
    /// `defaults` otherwise.
    pub fn for_skill(skill: &Skill, defaults: &Limits) -> RunFacts {
        RunFacts::with_requests(skill, &skill.limits, defaults)
    }

    /// The facts of running `skill` with exactly `limits` (the limits the run gets, after
    /// the caller's requests and the maxima).
    pub fn for_limits(skill: &Skill, limits: &Limits) -> RunFacts {
        RunFacts::with_requests(skill, &LimitOverrides::default(), limits)
    }

    /// `asked` over `defaults`.
    fn with_requests(skill: &Skill, asked: &LimitOverrides, defaults: &Limits) -> RunFacts {
        RunFacts {
            language: skill.language.as_str().to_string(),
            network_requested: !skill.network.is_none(),
            wall_timeout_ms: millis(asked.wall_timeout.unwrap_or(defaults.wall_timeout)),
            cpu_time_ms: asked
                .cpu_time
                .or(defaults.cpu_time)
                .map(millis)
                .unwrap_or(i64::MAX),
            memory_bytes: long(asked.memory_bytes.unwrap_or(defaults.memory_bytes)),
            pids: i64::from(asked.pids.unwrap_or(defaults.pids)),
            file_size_bytes: long(asked.file_size_bytes.unwrap_or(defaults.file_size_bytes)),
        }
    }

    /// The Cedar context record (`RunContext` in the schema).
    pub fn to_context(&self) -> Result<Context, String> {
        let limits = RestrictedExpression::new_record([
            (
                "wall_timeout_ms".to_string(),
                RestrictedExpression::new_long(self.wall_timeout_ms),
            ),
            (
                "cpu_time_ms".to_string(),
                RestrictedExpression::new_long(self.cpu_time_ms),
            ),
            (
                "memory_bytes".to_string(),
                RestrictedExpression::new_long(self.memory_bytes),
            ),
            (
                "pids".to_string(),
                RestrictedExpression::new_long(self.pids),
            ),
            (
                "file_size_bytes".to_string(),
                RestrictedExpression::new_long(self.file_size_bytes),
            ),
        ])
        .map_err(|e| e.to_string())?;
        Context::from_pairs([
            (
                "language".to_string(),
                RestrictedExpression::new_string(self.language.clone()),
            ),
            (
                "network_requested".to_string(),
                RestrictedExpression::new_bool(self.network_requested),
            ),
            ("limits".to_string(), limits),
        ])
        .map_err(|e| e.to_string())
    }
}

/// The entity type names the pipeline builds requests from.
#[derive(Debug, Clone)]
pub(crate) struct Uids {
    tenant: EntityTypeName,
    agent: EntityTypeName,
    group: EntityTypeName,
    skill: EntityTypeName,
    builder: EntityTypeName,
    execute: EntityUid,
    view: EntityUid,
    run_command: EntityUid,
}

fn type_name(s: &str) -> EntityTypeName {
    // The names are constants of this crate, valid Cedar identifiers.
    EntityTypeName::from_str(s).unwrap_or_else(|e| unreachable!("bad built-in type `{s}`: {e}"))
}

impl Uids {
    pub(crate) fn new() -> Self {
        let action = type_name("Action");
        Uids {
            tenant: type_name("Tenant"),
            agent: type_name("Agent"),
            group: type_name("AgentGroup"),
            skill: type_name("Skill"),
            builder: type_name("Builder"),
            execute: EntityUid::from_type_name_and_id(action.clone(), EntityId::new("execute")),
            view: EntityUid::from_type_name_and_id(action.clone(), EntityId::new("view")),
            run_command: EntityUid::from_type_name_and_id(action, EntityId::new("run_command")),
        }
    }

    pub(crate) fn action(&self, a: Action) -> EntityUid {
        match a {
            Action::Execute => self.execute.clone(),
            Action::View => self.view.clone(),
            Action::RunCommand => self.run_command.clone(),
        }
    }

    fn uid(ty: &EntityTypeName, id: &str) -> EntityUid {
        EntityUid::from_type_name_and_id(ty.clone(), EntityId::new(id))
    }

    /// `Skill::"TENANT/NAME"`.
    pub(crate) fn skill(&self, tenant: &str, name: &str) -> EntityUid {
        Self::uid(&self.skill, &format!("{tenant}/{name}"))
    }
}

/// The ancestors (groups, builders) of each agent in an entity store, worked out once when
/// the store is loaded.
pub(crate) type Ancestors = HashMap<EntityUid, Vec<EntityUid>>;

/// The ancestors of every `Agent` of `store`.
pub(crate) fn agent_ancestors(store: &Entities) -> Ancestors {
    let agent = type_name("Agent");
    store
        .iter()
        .filter(|e| e.uid().type_name() == &agent)
        .map(|e| {
            let (uid, _, parents) = e.clone().into_inner();
            (uid, parents.into_iter().collect())
        })
        .collect()
}

/// Checks, once at load, that `schema` accepts every shape of entity and context a request
/// builds (a catalogued skill with and without an owner, a skill that is its caller's own
/// code, an agent rebuilt quarantined or not, the context of each language and action), so
/// requests need no schema pass of their own. A schema that gives these attributes other
/// types is refused.
pub(crate) fn check_request_shapes(schema: &cedar_policy::Schema) -> Result<(), String> {
    const PROBE: &str = "shape-check";
    let uids = Uids::new();
    let tenant = Uids::uid(&uids.tenant, PROBE);
    let agent = Entity::new(
        Uids::uid(&uids.agent, PROBE),
        HashMap::from([
            (
                "tenant".to_string(),
                RestrictedExpression::new_entity_uid(tenant.clone()),
            ),
            (
                "can_execute_code".to_string(),
                RestrictedExpression::new_bool(false),
            ),
            (
                "quarantined".to_string(),
                RestrictedExpression::new_bool(false),
            ),
        ]),
        HashSet::new(),
    )
    .map_err(|e| e.to_string())?;
    let store =
        Entities::from_entities([agent, Entity::new_no_attrs(tenant, HashSet::new())], None)
            .map_err(|e| e.to_string())?;
    let ancestors = agent_ancestors(&store);
    let caller = Caller::new(PROBE, PROBE);
    // `run_command` is checked only when the schema declares it: a schema written before
    // it existed still loads, and a shell step is then denied (no policy can name it).
    let mut actions = vec![Action::Execute, Action::View];
    let run_command = uids.action(Action::RunCommand);
    if schema.actions().any(|a| a == &run_command) {
        actions.push(Action::RunCommand);
    }
    for language in [
        skillgate_core::Language::Python,
        skillgate_core::Language::JavaScript,
        skillgate_core::Language::Shell,
    ] {
        let skill = |owner: Option<&str>, code: &[u8]| {
            let mut b = Skill::builder(PROBE, language, code.to_vec())
                .tenant(PROBE)
                .visibility(skillgate_core::Visibility::Restricted);
            if let Some(o) = owner {
                b = b.owner(o);
            }
            b.build()
        };
        let catalogued = [skill(Some(PROBE), b"owned"), skill(None, b"unowned")];
        let records = catalogued.iter().map(|s| crate::catalogue::Record {
            name: s.name.clone(),
            digest: s.digest.clone(),
            tenant: PROBE.to_string(),
            owner: s.owner.clone(),
            visibility: s.visibility,
        });
        let catalogue = crate::catalogue::Catalogue::new(records)?;
        let parts = Parts {
            store: &store,
            ancestors: &ancestors,
            catalogue: &catalogue,
            actions: &[],
            uids: &uids,
            trust_caller_groups: false,
        };
        // The two catalogued skills, and one the catalogue does not know (own code).
        let own = Skill::builder(PROBE, language, b"own".to_vec()).build();
        for skill in catalogued.iter().chain([&own]) {
            for quarantined in [false, true] {
                parts
                    .checked_entities(schema, &caller, skill, quarantined)
                    .map_err(|e| {
                        format!("the schema does not accept the entities a request builds: {e}")
                    })?;
            }
            let context = RunFacts::for_skill(skill, &Limits::default()).to_context()?;
            for &action in &actions {
                cedar_policy::Request::new(
                    Uids::uid(&uids.agent, PROBE),
                    uids.action(action),
                    uids.skill(PROBE, PROBE),
                    context.clone(),
                    Some(schema),
                )
                .map_err(|e| {
                    format!(
                        "the schema does not accept the request skillgate builds for `{}`: {}",
                        action.as_str(),
                        crate::load::diagnostic_text(&e)
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// The agent entity with `quarantined` set and the caller's `extra` groups added.
fn agent_entity(
    uid: &EntityUid,
    mut attrs: HashMap<String, RestrictedExpression>,
    mut parents: HashSet<EntityUid>,
    quarantined: bool,
    extra: &[EntityUid],
) -> Result<Entity, String> {
    attrs.insert(
        "quarantined".to_string(),
        RestrictedExpression::new_bool(quarantined),
    );
    parents.extend(extra.iter().cloned());
    Entity::new(uid.clone(), attrs, parents).map_err(|e| e.to_string())
}

/// The tenant an entity's `tenant` attribute names, if it names one.
pub(crate) fn tenant_of(entity: &Entity) -> Option<EntityUid> {
    match entity.attr("tenant") {
        Some(Ok(EvalResult::EntityUid(t))) => Some(t),
        _ => None,
    }
}

/// What a request is built from.
pub(crate) struct Parts<'a> {
    pub(crate) store: &'a Entities,
    /// The ancestors of each agent of the store.
    pub(crate) ancestors: &'a Ancestors,
    /// The operator's records of skills, by digest.
    pub(crate) catalogue: &'a crate::catalogue::Catalogue,
    /// The schema's action entities.
    pub(crate) actions: &'a [Entity],
    pub(crate) uids: &'a Uids,
    pub(crate) trust_caller_groups: bool,
}

/// Who a skill belongs to, as the gate decides it: the catalogue's record, or the caller.
struct Standing {
    tenant: String,
    owner: Option<String>,
    visibility: skillgate_core::Visibility,
    /// The skill entity's id: `TENANT/NAME` for a catalogued skill (what grants name),
    /// `TENANT/NAME@DIGEST` for a caller's own code (which no grant names).
    id: String,
    /// Whose own code it is, when no record vouches for it.
    own_of: Option<EntityUid>,
}

impl Parts<'_> {
    /// The principal, the resource and the small entity set of one request, with the
    /// schema's action entities.
    ///
    /// The set is not checked against the schema again per request: the entities taken
    /// from the store were checked when it was loaded, and the agent's and the skill's
    /// attributes are built here with fixed types, which [`check_request_shapes`] checked
    /// against the schema when the policies loaded.
    pub(crate) fn entities(
        &self,
        caller: &Caller,
        skill: &Skill,
        quarantined: bool,
    ) -> Result<(EntityUid, EntityUid, Entities), String> {
        let (principal, resource, set) = self.entity_set(caller, skill, quarantined)?;
        let all = set.into_iter().chain(self.actions.iter().cloned());
        let entities = Entities::from_entities(all, None).map_err(|e| {
            format!(
                "the request's entities are inconsistent: {}",
                crate::load::diagnostic_text(&e)
            )
        })?;
        Ok((principal, resource, entities))
    }

    /// The request's own entities (no actions), checked against `schema`.
    pub(crate) fn checked_entities(
        &self,
        schema: &cedar_policy::Schema,
        caller: &Caller,
        skill: &Skill,
        quarantined: bool,
    ) -> Result<Entities, String> {
        let (_, _, set) = self.entity_set(caller, skill, quarantined)?;
        Entities::from_entities(set, Some(schema)).map_err(|e| crate::load::diagnostic_text(&e))
    }

    /// Who `skill` belongs to for a request of the agent `agent` of tenant `tenant`.
    fn standing(&self, skill: &Skill, agent: &EntityUid, tenant: &str) -> Result<Standing, String> {
        match self.catalogue.get(&skill.digest) {
            Some(record) => {
                record.check_claims(skill)?;
                Ok(Standing {
                    tenant: record.tenant.clone(),
                    owner: record.owner.clone(),
                    visibility: record.visibility,
                    id: format!("{}/{}", record.tenant, record.name),
                    own_of: None,
                })
            }
            None => Ok(Standing {
                tenant: tenant.to_string(),
                owner: None,
                visibility: skillgate_core::Visibility::Private,
                id: format!("{tenant}/{}@{}", skill.name, skill.digest),
                own_of: Some(agent.clone()),
            }),
        }
    }

    fn entity_set(
        &self,
        caller: &Caller,
        skill: &Skill,
        quarantined: bool,
    ) -> Result<(EntityUid, EntityUid, Vec<Entity>), String> {
        let u = self.uids;
        let agent_uid = Uids::uid(&u.agent, &caller.agent_id);
        // An agent nobody declared has no right at all: no request is built for it.
        let Some(known) = self.store.get(&agent_uid) else {
            return Err(format!(
                "agent `{}` is not in the entities file: an agent nobody declared has no rights",
                caller.agent_id
            ));
        };
        let agent_tenant = match tenant_of(known) {
            Some(t) if t.id().unescaped() == caller.tenant => t,
            Some(t) => {
                return Err(format!(
                    "agent `{}` belongs to tenant `{}` in the entities file, not to `{}` as the caller says",
                    caller.agent_id,
                    t.id().unescaped(),
                    caller.tenant
                ));
            }
            None => {
                return Err(format!(
                    "agent `{}` has no tenant entity in the entities file",
                    caller.agent_id
                ));
            }
        };
        let mut set: HashMap<EntityUid, Entity> = HashMap::new();
        let on_file = matches!(known.attr("quarantined"), Some(Ok(EvalResult::Bool(true))));
        let extra = self.extra_groups(caller, &agent_tenant);
        let agent = if (on_file || !quarantined) && extra.is_empty() {
            // The agent as the entities file has it: no attribute to change.
            known.clone()
        } else {
            let (_, attrs, parents) = known.clone().into_inner();
            agent_entity(&agent_uid, attrs, parents, on_file || quarantined, &extra)?
        };
        set.insert(agent_uid.clone(), agent);
        let parents = self
            .ancestors
            .get(&agent_uid)
            .into_iter()
            .flatten()
            .chain(&extra);
        for parent in parents {
            if let Some(p) = self.store.get(parent) {
                set.insert(parent.clone(), p.clone());
            }
        }

        let standing = self.standing(skill, &agent_uid, &caller.tenant)?;
        let skill_tenant_uid = Uids::uid(&u.tenant, &standing.tenant);
        for tenant in [agent_tenant, skill_tenant_uid.clone()] {
            let entity = self
                .store
                .get(&tenant)
                .cloned()
                .unwrap_or_else(|| Entity::new_no_attrs(tenant.clone(), HashSet::new()));
            set.insert(tenant, entity);
        }

        let skill_uid = Uids::uid(&u.skill, &standing.id);
        let mut attrs = HashMap::from([
            (
                "tenant".to_string(),
                RestrictedExpression::new_entity_uid(skill_tenant_uid),
            ),
            (
                "visibility".to_string(),
                RestrictedExpression::new_string(standing.visibility.as_str().to_string()),
            ),
            (
                "language".to_string(),
                RestrictedExpression::new_string(skill.language.as_str().to_string()),
            ),
            (
                "name".to_string(),
                RestrictedExpression::new_string(skill.name.clone()),
            ),
            (
                "digest".to_string(),
                RestrictedExpression::new_string(skill.digest.clone()),
            ),
        ]);
        if let Some(owner) = &standing.owner {
            let owner_uid = Uids::uid(&u.builder, owner);
            if let Some(b) = self.store.get(&owner_uid) {
                set.insert(owner_uid.clone(), b.clone());
            }
            attrs.insert(
                "owner".to_string(),
                RestrictedExpression::new_entity_uid(owner_uid),
            );
        }
        if let Some(agent) = standing.own_of {
            attrs.insert(
                "agent".to_string(),
                RestrictedExpression::new_entity_uid(agent),
            );
        }
        let skill_entity =
            Entity::new(skill_uid.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())?;
        set.insert(skill_uid.clone(), skill_entity);

        Ok((agent_uid, skill_uid, set.into_values().collect()))
    }

    /// The groups the caller asserts, when they are trusted: only groups the entities file
    /// declares in the agent's own tenant; unknown and foreign ones are dropped.
    fn extra_groups(&self, caller: &Caller, tenant: &EntityUid) -> Vec<EntityUid> {
        if !self.trust_caller_groups {
            return Vec::new();
        }
        caller
            .groups
            .iter()
            .map(|g| Uids::uid(&self.uids.group, g))
            .filter(|g| {
                self.store
                    .get(g)
                    .and_then(tenant_of)
                    .is_some_and(|t| &t == tenant)
            })
            .collect()
    }
}
