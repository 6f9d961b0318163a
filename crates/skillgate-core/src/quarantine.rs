/// Answers "is this agent quarantined?" for the policy layer. The behavioural monitor
/// implements it from its store; the policy layer sets the agent's `quarantined` attribute
/// from it, so the quarantine `forbid` policy denies.
pub trait QuarantineSource: Send + Sync + std::fmt::Debug {
    /// `Ok(true)` when the agent is quarantined. An `Err` (the store cannot be read) makes
    /// the policy layer deny: fail closed.
    fn is_quarantined(&self, tenant: &str, agent_id: &str) -> Result<bool, String>;
}

/// A source under which nobody is quarantined (no monitor configured).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoQuarantine;

impl QuarantineSource for NoQuarantine {
    fn is_quarantined(&self, _tenant: &str, _agent_id: &str) -> Result<bool, String> {
        Ok(false)
    }
}
