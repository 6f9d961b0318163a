//! Load-time checks that what the entities, grants and catalogue files say stays inside
//! one tenant: every agent's, group's and builder's tenant, groups and builder are
//! declared; a group or builder an agent (or group) belongs to is of its tenant; a grant
//! names agents or groups of the skill's tenant; a catalogued skill's owner is a builder
//! of its tenant. Cedar itself checks none of this.
use crate::catalogue::Catalogue;
use crate::request::tenant_of;
use cedar_policy::{Entities, Entity, EntityUid, PolicySet, SlotId};

fn kind(uid: &EntityUid) -> String {
    match uid.type_name().to_string().as_str() {
        "Agent" => "agent",
        "AgentGroup" => "agent group",
        "Builder" => "builder",
        "Tenant" => "tenant",
        _ => "entity",
    }
    .to_string()
}

fn name(uid: &EntityUid) -> String {
    format!("{} `{}`", kind(uid), uid.id().unescaped())
}

/// The tenant of `uid` in `store`, or an error naming it when it is undeclared or has none.
fn declared_tenant(store: &Entities, uid: &EntityUid, of: &str) -> Result<EntityUid, String> {
    let Some(entity) = store.get(uid) else {
        return Err(format!(
            "{of} names {}, which the entities file does not declare",
            name(uid)
        ));
    };
    tenant_of(entity).ok_or_else(|| format!("{} has no tenant", name(uid)))
}

/// Checks one agent, group or builder: its tenant is declared, and so is every group or
/// builder it belongs to, in the same tenant.
fn check_entity(store: &Entities, entity: &Entity) -> Result<(), String> {
    let uid = entity.uid();
    let Some(tenant) = tenant_of(entity) else {
        return Ok(()); // Tenants (and types without a tenant) hold nothing to check.
    };
    let who = name(&uid);
    if store.get(&tenant).is_none() {
        return Err(format!(
            "{who} names tenant `{}`, which the entities file does not declare",
            tenant.id().unescaped()
        ));
    }
    let (_, _, parents) = entity.clone().into_inner();
    let mut parents: Vec<EntityUid> = parents.into_iter().collect();
    parents.sort_by_key(|p| p.to_string());
    for parent in parents {
        let theirs = declared_tenant(store, &parent, &who)?;
        if theirs != tenant {
            return Err(format!(
                "{who} of tenant `{}` belongs to {} of tenant `{}`: groups and builders never cross tenants",
                tenant.id().unescaped(),
                name(&parent),
                theirs.id().unescaped()
            ));
        }
    }
    Ok(())
}

/// Checks every entity of `store`: groups and builders first (an agent's parents in the
/// store are transitive, so a group's own wrong parent is reported at the group), then
/// agents, each kind in uid order.
pub(crate) fn check_entities(store: &Entities) -> Result<(), String> {
    let mut entities: Vec<&Entity> = store.iter().collect();
    entities.sort_by_key(|e| (kind(&e.uid()) == "agent", e.uid().to_string()));
    entities
        .into_iter()
        .try_for_each(|e| check_entity(store, e))
}

/// Checks that every grant (template link) naming a declared agent or group names one of
/// the tenant of the skill it grants (`Skill::"TENANT/NAME"`).
pub(crate) fn check_grants(store: &Entities, policies: &PolicySet) -> Result<(), String> {
    let mut links: Vec<_> = policies
        .policies()
        .filter_map(|p| p.template_links().map(|l| (p.id().to_string(), l)))
        .collect();
    links.sort_by(|a, b| a.0.cmp(&b.0));
    for (id, slots) in links {
        let (Some(principal), Some(resource)) = (
            slots.get(&SlotId::principal()),
            slots.get(&SlotId::resource()),
        ) else {
            continue;
        };
        let Some(skill_tenant) = resource.id().unescaped().split_once('/').map(|(t, _)| t) else {
            continue;
        };
        let Some(entity) = store.get(principal) else {
            continue;
        };
        if let Some(theirs) = tenant_of(entity)
            && theirs.id().unescaped() != skill_tenant
        {
            return Err(format!(
                "grant `{id}` gives {} of tenant `{}` the skill `{}` of tenant `{skill_tenant}`: grants never cross tenants",
                name(principal),
                theirs.id().unescaped(),
                resource.id().unescaped()
            ));
        }
    }
    Ok(())
}

/// Checks that every catalogued skill's owner, when the entities file declares it, is a
/// builder of the skill's tenant.
pub(crate) fn check_catalogue(store: &Entities, catalogue: &Catalogue) -> Result<(), String> {
    let mut records: Vec<_> = catalogue.records().collect();
    records.sort_by(|a, b| (&a.tenant, &a.name, &a.digest).cmp(&(&b.tenant, &b.name, &b.digest)));
    for r in records {
        let Some(owner) = &r.owner else { continue };
        let uid = EntityUid::from_type_name_and_id(
            "Builder".parse().map_err(|e| format!("{e}"))?,
            cedar_policy::EntityId::new(owner),
        );
        if let Some(theirs) = store.get(&uid).and_then(tenant_of)
            && theirs.id().unescaped() != r.tenant
        {
            return Err(format!(
                "the record of skill `{}/{}` names owner `{owner}`, a builder of tenant `{}`: owners never cross tenants",
                r.tenant,
                r.name,
                theirs.id().unescaped()
            ));
        }
    }
    Ok(())
}
