//! Fuzzing entry points (the `policy_request` target in `fuzz/` calls these; a normal test
//! runs every seed in `corpora/policy/`).
use crate::{Action, Policy, RunFacts};
use cedar_policy::{Context, EntityUid};
use skillgate_core::{Caller, Language, Limits, Skill, Visibility};
use std::str::FromStr;
use std::sync::OnceLock;

fn builtin() -> Option<&'static Policy> {
    static POLICY: OnceLock<Option<Policy>> = OnceLock::new();
    POLICY.get_or_init(|| Policy::builtin().ok()).as_ref()
}

/// Feeds arbitrary bytes to the request builder: the bytes up to the first NUL are an
/// entities JSON document, the rest a context JSON document. Each part that loads is used
/// to authorize a fixed caller and skill (and the first agent of the entities), with the
/// context when it fits the schema. Must never panic; whatever it decides, an input that
/// does not load must not authorize anything.
///
/// Returns whether any request was allowed (for the tests' sanity checks).
pub fn policy_request(data: &[u8]) -> bool {
    let Some(base) = builtin() else {
        return false;
    };
    let (entities, context) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(entities) = std::str::from_utf8(entities) else {
        return false;
    };
    let Ok(policy) = base.clone().with_entities_json("fuzz", entities) else {
        return false;
    };
    let mut callers = vec![Caller::new("analyst-1", "acme")];
    if let Some(agent) = policy
        .entities()
        .iter()
        .map(|e| e.uid())
        .find(|u| u.type_name().to_string() == "Agent")
    {
        let tenant = policy
            .entities()
            .get(&agent)
            .and_then(|e| e.attr("tenant"))
            .and_then(|t| match t {
                Ok(cedar_policy::EvalResult::EntityUid(t)) => Some(t.id().unescaped().to_string()),
                _ => None,
            })
            .unwrap_or_default();
        callers.push(Caller::new(agent.id().unescaped(), tenant));
    }
    let skill = Skill::builder("analyze-rows", Language::Python, b"print(1)".to_vec())
        .tenant("acme")
        .owner("builder-alice")
        .visibility(Visibility::Public)
        .build();
    let context_value: Option<serde_json::Value> = std::str::from_utf8(context)
        .ok()
        .and_then(|c| serde_json::from_str(c).ok());
    let action = EntityUid::from_str(r#"Action::"execute""#).ok();
    let mut allowed = false;
    for caller in &callers {
        let facts = RunFacts::for_skill(&skill, &Limits::default());
        allowed |= policy
            .authorize(caller, &skill, Action::Execute, &facts)
            .is_allowed();
        if let (Some(v), Some(action)) = (&context_value, &action)
            && let Ok(ctx) = Context::from_json_value(v.clone(), Some((policy.schema(), action)))
        {
            allowed |= policy
                .authorize_with_context(caller, &skill, Action::Execute, ctx)
                .is_allowed();
        }
    }
    allowed
}
