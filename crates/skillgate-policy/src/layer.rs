//! [`PolicyLayer`]: the gate as a tower layer.
use crate::decision::PolicyDecision;
use crate::{Decision, Policy};
use skillgate_core::{
    Decide, DecideService, ExecRequest, Finding, LayerName, Rejection, Severity, Status,
};
use std::sync::Arc;
use tower::Layer;

/// Rule id of the finding for a deny that no policy forbade: nothing permitted it.
pub const DEFAULT_DENY: &str = "default-deny";
/// Rule id of the finding for an error outside any policy (the request could not be built).
pub const REQUEST_ERROR: &str = "policy.request";

/// Rule id of the finding every decision carries for each base policy turned off.
pub const BASE_LIFTED: &str = "policy.base-lifted";

/// One finding per base policy the operator turned off (`[policy]
/// disabled_base_policies`): every report of a gate without them says so.
pub fn lifted_findings(policy: &Policy) -> Vec<Finding> {
    policy
        .lifted()
        .iter()
        .map(|id| {
            Finding::new(
                LayerName::Policy,
                BASE_LIFTED,
                Severity::High,
                format!(
                    "base policy `{id}` is turned off by [policy] disabled_base_policies: its guarantee does not hold"
                ),
            )
        })
        .collect()
}

/// Authorizes every request with a [`Policy`] (`execute` on the request's skill). A deny
/// makes the outcome `denied`, with one finding per deciding policy (its id as the rule
/// id) and per error; an allow puts the [`PolicyDecision`] on the request's extensions.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill, Status};
/// use skillgate_policy::{Policy, PolicyLayer};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// let inner = service_fn(|_req: ExecRequest| async {
///     Ok::<_, std::convert::Infallible>(ExecOutcome { status: Status::Ok, ..Default::default() })
/// });
/// let svc = PolicyLayer::new(Policy::builtin().unwrap()).layer(inner);
/// let skill = Skill::builder("s", Language::Python, b"".to_vec()).tenant("acme").build();
/// let out = svc.oneshot(ExecRequest::new(Caller::new("nobody", "acme"), skill, Default::default()))
///     .await.unwrap();
/// assert_eq!(out.status, Status::Denied);
/// assert_eq!(out.findings[0].rule_id, "policy.request", "an unknown agent has no rights");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct PolicyLayer {
    policy: Arc<Policy>,
}

impl PolicyLayer {
    /// The layer around a loaded policy.
    pub fn new(policy: impl Into<Arc<Policy>>) -> Self {
        PolicyLayer {
            policy: policy.into(),
        }
    }
}

impl<S> Layer<S> for PolicyLayer {
    type Service = PolicyService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        DecideService::new(inner, self.policy.clone())
    }
}

/// The service of [`PolicyLayer`].
pub type PolicyService<S> = DecideService<S, Policy>;

/// The findings of a deny: one per forbidding policy, one per error, or one
/// `default-deny` when nothing permitted. `skill` names what was asked for: `skill
/// `NAME``, or, for a shell step, `a shell command (run_command)`.
pub fn deny_findings(decision: &Decision, agent: &str, skill: &str) -> Vec<Finding> {
    let mut findings: Vec<Finding> = decision
        .reasons
        .iter()
        .map(|id| {
            Finding::new(
                LayerName::Policy,
                id.clone(),
                Severity::High,
                format!("policy `{id}` forbids agent `{agent}` to execute {skill}"),
            )
        })
        .collect();
    findings.extend(decision.errors.iter().map(|e| {
        Finding::new(
            LayerName::Policy,
            e.policy_id
                .clone()
                .unwrap_or_else(|| REQUEST_ERROR.to_string()),
            Severity::High,
            format!("denied because the decision erred: {e}"),
        )
    }));
    if findings.is_empty() {
        findings.push(Finding::new(
            LayerName::Policy,
            DEFAULT_DENY,
            Severity::Medium,
            format!("no policy permits agent `{agent}` to execute {skill}"),
        ));
    }
    findings
}

impl Decide for Policy {
    const LAYER: LayerName = LayerName::Policy;
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
        let decision = self.authorize_request(req);
        let lifted = lifted_findings(self);
        if !decision.is_allowed() {
            let what = match crate::Action::to_run(req.skill.language) {
                crate::Action::RunCommand => "a shell command (action `run_command`)".to_string(),
                _ => format!("skill `{}`", req.skill.name),
            };
            let mut findings = deny_findings(&decision, &req.caller.agent_id, &what);
            findings.extend(lifted);
            return Err(Rejection::new(Status::Denied, findings));
        }
        req.extensions.insert(PolicyDecision(decision));
        let mut findings = lifted;
        findings.extend(own_code_finding(self, req));
        Ok(findings)
    }
}

/// For a skill folder the catalogue has no record of, an `info` finding saying it ran as
/// the caller's own code, so a report never lets its `SKILL.md`'s claims (tenant, owner,
/// visibility) pass for the operator's word. A bare script needs no such note.
fn own_code_finding(policy: &Policy, req: &ExecRequest) -> Option<Finding> {
    if req.skill.source_dir.is_none() || policy.catalogue().get(&req.skill.digest).is_some() {
        return None;
    }
    Some(Finding::new(
        LayerName::Policy,
        "policy.own-code",
        Severity::Info,
        format!(
            "no catalogue record for this skill's digest ({}): it ran as {}'s own code, private \
             to it, in tenant {}; the tenant, owner and visibility its SKILL.md claims were not \
             used (`skillgate policy digest` prints the record an operator would add)",
            req.skill.digest, req.caller.agent_id, req.caller.tenant
        ),
    ))
}
