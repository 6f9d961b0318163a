//! The Cedar entities and grants loaders: an entities JSON document (the bytes before the
//! first NUL) and a grants JSON document (the rest) loaded onto the built-in policy, then
//! requests authorized. A file that does not load is refused with an error saying what is
//! wrong, never a panic. Seeds: `examples/entities.json`, `examples/grants.json`,
//! `rules/policies/tests/`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate_core::{Caller, Language, Limits, Skill, Visibility};
use skillgate_policy::{Action, Policy, RunFacts};
use std::sync::OnceLock;

fn builtin() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| Policy::builtin().expect("the built-in policy loads"))
}

fuzz_target!(|data: &[u8]| {
    let (entities, grants) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let (Ok(entities), Ok(grants)) = (std::str::from_utf8(entities), std::str::from_utf8(grants))
    else {
        return;
    };
    let mut policy = builtin().clone();
    if !entities.trim().is_empty() {
        match policy.clone().with_entities_json("entities.json", entities) {
            Ok(p) => policy = p,
            Err(e) => assert!(!e.message.is_empty(), "an empty error: {e:?}"),
        }
    }
    if !grants.trim().is_empty() {
        match policy.clone().with_grants_json("grants.json", grants) {
            Ok(p) => policy = p,
            Err(e) => assert!(!e.message.is_empty(), "an empty error: {e:?}"),
        }
    }
    let skill = Skill::builder("analyze-rows", Language::Python, b"print(1)".to_vec())
        .tenant("acme")
        .owner("builder-alice")
        .visibility(Visibility::Restricted)
        .build();
    let facts = RunFacts::for_skill(&skill, &Limits::default());
    for (agent, tenant) in [("analyst-1", "acme"), ("intruder", "other")] {
        let _ = policy.authorize(&Caller::new(agent, tenant), &skill, Action::Execute, &facts);
    }
});
