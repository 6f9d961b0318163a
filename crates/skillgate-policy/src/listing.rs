//! Which skills may an agent execute? An honest enumeration: every known skill is
//! authorized in turn, with the same request the pipeline would build.
use crate::{Action, Decision, Policy, RunFacts};
use skillgate_core::{Caller, Limits, Skill};

/// One skill and the gate's decision on executing it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    /// The skill's name.
    pub name: String,
    /// Its tenant, if it declares one.
    pub tenant: Option<String>,
    /// Its visibility.
    pub visibility: &'static str,
    /// The decision on `execute`.
    pub decision: Decision,
}

impl Policy {
    /// Authorizes `execute` of each skill for `caller` (with `defaults` as the limits
    /// asked for where a skill asks for none), returning every skill with its decision, in
    /// the order given. Keep the allowed ones for "the skills this agent may execute".
    ///
    /// ```
    /// use skillgate_core::{Caller, Language, Limits, Skill, Visibility};
    /// let policy = skillgate_policy::Policy::builtin().unwrap();
    /// let s = Skill::builder("s", Language::Python, b"".to_vec())
    ///     .tenant("acme").visibility(Visibility::Public).build();
    /// let listed = policy.list_skills(&Caller::new("nobody", "acme"), &[s], &Limits::default());
    /// assert!(!listed[0].decision.is_allowed(), "unknown agents may run nothing");
    /// ```
    pub fn list_skills(&self, caller: &Caller, skills: &[Skill], defaults: &Limits) -> Vec<Listed> {
        skills
            .iter()
            .map(|skill| Listed {
                name: skill.name.clone(),
                tenant: skill.tenant.clone(),
                visibility: skill.visibility.as_str(),
                decision: self.authorize(
                    caller,
                    skill,
                    Action::Execute,
                    &RunFacts::for_skill(skill, defaults),
                ),
            })
            .collect()
    }
}
