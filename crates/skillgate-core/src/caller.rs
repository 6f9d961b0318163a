use serde::{Deserialize, Serialize};

/// Who asks for an execution: an agent, in a tenant, member of some agent groups.
///
/// ```
/// use skillgate_core::Caller;
/// let c = Caller::new("agent-7", "acme").with_groups(["analysts"]);
/// assert_eq!(c.groups, vec!["analysts".to_string()]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caller {
    /// The agent's id.
    pub agent_id: String,
    /// The tenant the agent belongs to.
    pub tenant: String,
    /// Agent groups the caller asserts (the policy layer also reads groups from its entities).
    #[serde(default)]
    pub groups: Vec<String>,
}

impl Caller {
    /// A caller with no groups.
    pub fn new(agent_id: impl Into<String>, tenant: impl Into<String>) -> Self {
        Caller {
            agent_id: agent_id.into(),
            tenant: tenant.into(),
            groups: Vec::new(),
        }
    }

    /// Adds groups.
    pub fn with_groups<I, S>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups.extend(groups.into_iter().map(Into::into));
        self
    }
}
