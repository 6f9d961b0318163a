//! Which skills may an agent see? An honest enumeration: every known skill is authorized
//! in turn for `view` (discovery), with the same request `skillgate policy check --action
//! view` builds, so listing and checking agree.
use crate::{Action, Decision, Policy, RunFacts};
use skillgate_core::{Caller, Limits, Skill};

/// One skill and the gate's decision on viewing it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    /// The skill's name.
    pub name: String,
    /// Its tenant as the catalogue records it (`None`: no record, the caller's own code).
    pub tenant: Option<String>,
    /// Its visibility as the catalogue records it, or `own` for the caller's own code.
    pub visibility: &'static str,
    /// The decision on `view`.
    pub decision: Decision,
}

impl Policy {
    /// Authorizes `view` of each skill for `caller` (with `defaults` as the limits asked
    /// for where a skill asks for none), returning every skill with its decision, in the
    /// order given. Keep the allowed ones for "the skills this agent may see". A discovery
    /// agent without the code right sees the skills it may not run.
    ///
    /// ```
    /// use skillgate_core::{Caller, Language, Limits, Skill, Visibility};
    /// let policy = skillgate_policy::Policy::builtin().unwrap();
    /// let s = Skill::builder("s", Language::Python, b"".to_vec())
    ///     .tenant("acme").visibility(Visibility::Public).build();
    /// let listed = policy.list_skills(&Caller::new("nobody", "acme"), &[s], &Limits::default());
    /// assert!(!listed[0].decision.is_allowed(), "unknown agents may see nothing");
    /// ```
    pub fn list_skills(&self, caller: &Caller, skills: &[Skill], defaults: &Limits) -> Vec<Listed> {
        skills
            .iter()
            .map(|skill| Listed {
                name: skill.name.clone(),
                tenant: self
                    .catalogue()
                    .get(&skill.digest)
                    .map(|r| r.tenant.clone()),
                visibility: self
                    .catalogue()
                    .get(&skill.digest)
                    .map_or("own", |r| r.visibility.as_str()),
                decision: self.authorize(
                    caller,
                    skill,
                    Action::View,
                    &RunFacts::for_skill(skill, defaults),
                ),
            })
            .collect()
    }
}
