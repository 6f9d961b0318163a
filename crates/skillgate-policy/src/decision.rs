//! The gate's answer: allow or deny, the deciding policy ids, and any errors.
use serde::Serialize;
use std::fmt;

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Some policy permits, no policy forbids, nothing erred.
    Allow,
    /// Anything else.
    Deny,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
        })
    }
}

/// Something that went wrong while deciding: a policy whose evaluation erred, or a
/// request that could not be built (unknown tenant, unreadable quarantine store, ...).
/// Any error makes the decision a deny.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionError {
    /// The policy whose evaluation erred; `None` when the request itself could not be built.
    pub policy_id: Option<String>,
    /// What went wrong.
    pub message: String,
}

impl DecisionError {
    /// An error building the request.
    pub fn request(message: impl Into<String>) -> Self {
        DecisionError {
            policy_id: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for DecisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.policy_id {
            Some(id) => write!(f, "policy `{id}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// One authorization decision, as `skillgate policy check --format json` prints it and
/// as the policy layer puts it on the request for the audit record.
///
/// ```
/// use skillgate_policy::{Decision, Verdict};
/// let d = Decision::deny_with_error("agent `a` is not in the entities file");
/// assert_eq!(d.decision, Verdict::Deny);
/// assert_eq!(
///     serde_json::to_value(&d).unwrap()["errors"][0]["message"],
///     "agent `a` is not in the entities file"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Allow or deny.
    pub decision: Verdict,
    /// The ids of the deciding policies: the permits that allowed, or the forbids that
    /// denied (empty for a deny because nothing permits).
    pub reasons: Vec<String>,
    /// Errors while deciding; never empty in an allow (errors deny).
    pub errors: Vec<DecisionError>,
}

impl Decision {
    /// A deny caused by an error outside any policy.
    pub fn deny_with_error(message: impl Into<String>) -> Self {
        Decision {
            decision: Verdict::Deny,
            reasons: Vec::new(),
            errors: vec![DecisionError::request(message)],
        }
    }

    /// The decision of a Cedar response: allow only when Cedar allows and no policy's
    /// evaluation erred (Cedar alone would skip an erring policy).
    pub(crate) fn from_response(response: &cedar_policy::Response) -> Decision {
        let mut reasons: Vec<String> = response
            .diagnostics()
            .reason()
            .map(|id| id.to_string())
            .collect();
        reasons.sort();
        let mut errors: Vec<DecisionError> = response
            .diagnostics()
            .errors()
            .map(|e| match e {
                cedar_policy::AuthorizationError::PolicyEvaluationError(pe) => DecisionError {
                    policy_id: Some(pe.policy_id().to_string()),
                    message: pe.inner().to_string(),
                },
            })
            .collect();
        errors.sort_by(|a, b| a.policy_id.cmp(&b.policy_id));
        let allowed = response.decision() == cedar_policy::Decision::Allow && errors.is_empty();
        Decision {
            decision: if allowed {
                Verdict::Allow
            } else {
                Verdict::Deny
            },
            reasons,
            errors,
        }
    }

    /// `true` for an allow.
    pub fn is_allowed(&self) -> bool {
        self.decision == Verdict::Allow
    }
}

/// The decision of the policy layer for the request that carries it (in
/// `ExecRequest::extensions`), for the audit record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDecision(pub Decision);
