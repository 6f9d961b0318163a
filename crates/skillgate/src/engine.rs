//! A pipeline built once and run many times.
//!
//! `skillgate run` builds an [`Engine`] per process; a long-running service (`serve`, the
//! MCP server) keeps one and sends every request through it. The engine owns what a run
//! needs besides the skill and its input: the configuration's default limits, who a caller
//! is (the entities decide a declared agent's tenant), and the limits a caller asked for,
//! which the isolation layer clamps.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use skillgate::{Caller, Config, LimitOverrides, engine::Engine, skill_dir};
//! let engine = Engine::new(Config::default(), &[])?;
//! let skill = skill_dir::load("examples/skills/analyze-rows".as_ref())?;
//! let tenant = engine.tenant_of("analyst-1", None)?;
//! let req = engine.request(
//!     Caller::new("analyst-1", tenant),
//!     skill,
//!     serde_json::json!({"query": "q", "data": [1]}),
//!     LimitOverrides::default(),
//! );
//! let outcome = engine.run(req).await?;
//! println!("{}", outcome.status);
//! # Ok(()) }
//! ```
use crate::assemble::{AssembleError, Assembled};
use crate::{Config, RequestedLimits};
use skillgate_core::{
    BoxError, BoxExecService, Caller, ExecOutcome, ExecRequest, LayerName, LimitOverrides,
    QuarantineSource, Skill,
};
use std::sync::{Arc, Mutex};
use tower::ServiceExt;

/// The tenant of an agent that neither the entities file nor the caller names. Such an
/// agent has no rights: the policy layer denies it.
pub const UNKNOWN_AGENT_TENANT: &str = "default";

/// A caller whose claimed tenant contradicts the entities file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "agent `{agent}` belongs to tenant `{known}` in the entities file, not to `{claimed}` as claimed"
)]
pub struct TenantMismatch {
    /// The agent.
    pub agent: String,
    /// Its tenant in the entities file.
    pub known: String,
    /// The tenant the caller claimed.
    pub claimed: String,
}

/// The tenant of `agent`: the entities file decides a declared agent's tenant (a `claimed`
/// tenant that disagrees is an error naming both); an undeclared agent gets the tenant it
/// claims, else [`UNKNOWN_AGENT_TENANT`].
pub fn tenant_of(
    policy: Option<&skillgate_policy::Policy>,
    agent: &str,
    claimed: Option<&str>,
) -> Result<String, TenantMismatch> {
    match (policy.and_then(|p| p.agent_tenant(agent)), claimed) {
        (Some(known), Some(claimed)) if known != claimed => Err(TenantMismatch {
            agent: agent.to_string(),
            known,
            claimed: claimed.to_string(),
        }),
        (Some(known), _) => Ok(known),
        (None, Some(claimed)) => Ok(claimed.to_string()),
        (None, None) => Ok(UNKNOWN_AGENT_TENANT.to_string()),
    }
}

/// The assembled pipeline and the configuration it was built from.
pub struct Engine {
    config: Config,
    disabled: Vec<LayerName>,
    // `BoxCloneService` is `Send` but not `Sync`; a clone per request is cheap.
    service: Mutex<BoxExecService>,
    notices: Vec<String>,
    quarantine: Arc<dyn QuarantineSource>,
    policy: Option<Arc<skillgate_policy::Policy>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("disabled", &self.disabled)
            .field("notices", &self.notices)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Builds the pipeline `config` describes, without the `disabled` layers.
    pub fn new(config: Config, disabled: &[LayerName]) -> Result<Engine, AssembleError> {
        let Assembled {
            service,
            notices,
            quarantine,
            policy,
        } = crate::assemble::from_config(&config, disabled)?;
        Ok(Engine {
            config,
            disabled: disabled.to_vec(),
            service: Mutex::new(service),
            notices,
            quarantine,
            policy,
        })
    }

    /// The configuration the engine was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Warnings for the user (a disabled layer, weaker enforcement).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The layers switched off.
    pub fn disabled(&self) -> &[LayerName] {
        &self.disabled
    }

    /// The policy gate (`None` when the policy layer is disabled).
    pub fn policy(&self) -> Option<&Arc<skillgate_policy::Policy>> {
        self.policy.as_ref()
    }

    /// Who is quarantined (the monitor's store).
    pub fn quarantine(&self) -> &Arc<dyn QuarantineSource> {
        &self.quarantine
    }

    /// The tenant of `agent`, as [`tenant_of`] decides it with this engine's policy.
    pub fn tenant_of(&self, agent: &str, claimed: Option<&str>) -> Result<String, TenantMismatch> {
        tenant_of(self.policy.as_deref(), agent, claimed)
    }

    /// A request for `caller` to run `skill` on `input`, with the configuration's limits.
    /// `requested` are the caller's wishes (a timeout, memory): the isolation layer clamps
    /// them to `[isolation.max]`; with that layer disabled they apply as given.
    pub fn request(
        &self,
        caller: Caller,
        skill: impl Into<Arc<Skill>>,
        input: serde_json::Value,
        requested: LimitOverrides,
    ) -> ExecRequest {
        let mut req = ExecRequest::new(caller, skill, input);
        req.spec.limits = self.config.limits;
        if self.disabled.contains(&LayerName::Isolation) {
            if let Some(t) = requested.wall_timeout {
                req.spec.limits.wall_timeout = t;
            }
            if let Some(m) = requested.memory_bytes {
                req.spec.limits.memory_bytes = m;
            }
        }
        req.extensions.insert(RequestedLimits(requested));
        req
    }

    /// A clone of the pipeline service, for callers that compose it further.
    pub fn service(&self) -> BoxExecService {
        self.service
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Sends `req` through the pipeline.
    pub async fn run(&self, req: ExecRequest) -> Result<ExecOutcome, BoxError> {
        self.service().oneshot(req).await
    }

    /// Which of `skills` `caller` may see and run, with each decision (Cedar's `view`).
    /// Without a policy layer every skill is listed as allowed.
    pub fn list_skills(
        &self,
        caller: &Caller,
        skills: &[Skill],
    ) -> Option<Vec<skillgate_policy::listing::Listed>> {
        self.policy
            .as_ref()
            .map(|p| p.list_skills(caller, skills, &self.config.limits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine_with_entities() -> Engine {
        let dir = std::env::temp_dir().join(format!("sg-engine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let entities = dir.join("entities.json");
        std::fs::write(
            &entities,
            r#"[{"uid":{"type":"Tenant","id":"acme"},"attrs":{},"parents":[]},
                {"uid":{"type":"Agent","id":"a1"},"attrs":{"tenant":{"__entity":{"type":"Tenant","id":"acme"}},
                 "can_execute_code":true,"quarantined":false},"parents":[]}]"#,
        )
        .unwrap();
        let mut config = Config::default();
        config.policy.entities = Some(entities);
        config.monitor.state_dir = Some(dir.join("state"));
        Engine::new(config, &[]).unwrap()
    }

    #[test]
    fn the_entities_file_decides_a_declared_agents_tenant() {
        let engine = engine_with_entities();
        assert_eq!(engine.tenant_of("a1", None).unwrap(), "acme");
        assert_eq!(engine.tenant_of("a1", Some("acme")).unwrap(), "acme");
        let err = engine.tenant_of("a1", Some("globex")).unwrap_err();
        assert_eq!(err.known, "acme");
        assert_eq!(engine.tenant_of("stranger", Some("x")).unwrap(), "x");
        assert_eq!(
            engine.tenant_of("stranger", None).unwrap(),
            UNKNOWN_AGENT_TENANT
        );
    }

    #[test]
    fn requested_limits_are_carried_for_the_isolation_layer_to_clamp() {
        let engine = engine_with_entities();
        let skill = Skill::builder("s", skillgate_core::Language::Python, "print(1)").build();
        let wish = LimitOverrides {
            wall_timeout: Some(std::time::Duration::from_secs(999)),
            ..Default::default()
        };
        let req = engine.request(
            Caller::new("a1", "acme"),
            skill,
            serde_json::json!({}),
            wish,
        );
        // Not applied here: the isolation layer clamps it.
        assert_eq!(req.spec.limits, engine.config().limits);
        assert_eq!(
            req.extensions
                .get::<RequestedLimits>()
                .unwrap()
                .0
                .wall_timeout,
            Some(std::time::Duration::from_secs(999))
        );
    }
}
