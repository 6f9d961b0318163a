//! The seccomp layer (4) and the network layer (5), and their config sections.
use crate::ConfineError;
use crate::network::{load_policy, uncovered, validate as validate_network};
use crate::preset::{Violation, load_preset, preset};
use crate::profile::{permit_inet, with_violation};
use serde::Deserialize;
use skillgate_core::{
    Decide, DecideService, ExecRequest, Finding, Language, LayerName, NetworkPolicy, Rejection,
    SeccompProfile, Severity, Status,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tower::Layer;

/// Which seccomp profile a language gets: a built-in preset name or a preset file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LanguagePresets {
    /// For Python skills (default: the `python` preset).
    pub python: Option<String>,
    /// For JavaScript skills (default: the `node` preset).
    pub javascript: Option<String>,
    /// For a session's shell steps (default: the `shell` preset).
    pub shell: Option<String>,
    /// What a call the profile does not allow gets (default: errno, i.e. EPERM).
    pub violation: Option<Violation>,
}

/// The `[seccomp]` config section.
///
/// ```
/// let cfg: skillgate_confine::SeccompConfig = toml::from_str(r#"
///     python = "strict"
///     violation = "kill"
///     [tenants.acme]
///     python = "python"
/// "#).unwrap();
/// assert!(cfg.build_layer().is_ok());
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SeccompConfig {
    /// Preset for Python skills: a built-in name or a preset file path ending in `.toml`
    /// (default `python`).
    pub python: Option<String>,
    /// Preset for JavaScript skills (default `node`).
    pub javascript: Option<String>,
    /// Preset for a session's shell steps (default `shell`).
    pub shell: Option<String>,
    /// What a call the profile does not allow gets (default: errno, i.e. EPERM).
    pub violation: Option<Violation>,
    /// Overrides per tenant; unset keys fall back to the defaults above.
    pub tenants: BTreeMap<String, LanguagePresets>,
}

fn resolve_preset(name: &str) -> Result<SeccompProfile, ConfineError> {
    if name.ends_with(".toml") || name.contains('/') {
        load_preset(&PathBuf::from(name))
    } else {
        preset(name)
    }
}

impl SeccompConfig {
    fn profile_for(
        &self,
        over: Option<&LanguagePresets>,
        language: Language,
    ) -> Result<SeccompProfile, ConfineError> {
        let (default_name, base) = match language {
            Language::Python => ("python", &self.python),
            Language::JavaScript => ("node", &self.javascript),
            Language::Shell => ("shell", &self.shell),
        };
        let name = over
            .and_then(|o| match language {
                Language::Python => o.python.clone(),
                Language::JavaScript => o.javascript.clone(),
                Language::Shell => o.shell.clone(),
            })
            .or_else(|| base.clone())
            .unwrap_or_else(|| default_name.into());
        let violation = over
            .and_then(|o| o.violation)
            .or(self.violation)
            .unwrap_or_default();
        Ok(with_violation(resolve_preset(&name)?, violation.action()))
    }

    /// Every profile a run can get under this config: each language's, each tenant's,
    /// and each of them as the network layer widens it for a run that may reach
    /// destinations (`permit_inet`), without repeats. What a node must hold for
    /// `Localhost` profiles (`skillgate emit k8s-profile-installer`).
    pub fn profiles(&self) -> Result<Vec<SeccompProfile>, ConfineError> {
        let mut all: Vec<SeccompProfile> = Vec::new();
        for language in Language::ALL {
            let overs = std::iter::once(None).chain(self.tenants.values().map(Some));
            for over in overs {
                let profile = self.profile_for(over, language)?;
                let mut widened = profile.clone();
                permit_inet(&mut widened);
                for p in [profile, widened] {
                    if !all.contains(&p) {
                        all.push(p);
                    }
                }
            }
        }
        Ok(all)
    }

    /// Loads every profile the config names (a missing preset is an error now, not at
    /// the first request) and builds the layer.
    pub fn build_layer(&self) -> Result<SeccompLayer, ConfineError> {
        let mut layer = SeccompLayer::default();
        for language in Language::ALL {
            layer = layer.with_profile(language, self.profile_for(None, language)?);
            for (tenant, over) in &self.tenants {
                let profile = self.profile_for(Some(over), language)?;
                layer = layer.with_tenant_profile(tenant.clone(), language, profile);
            }
        }
        Ok(layer)
    }
}

/// Layer 4: puts the seccomp profile for the skill's language and the caller's tenant
/// into `req.spec.seccomp`; the executor enforces it (the native sandbox compiles it with
/// [`crate::bpf::compile`]). A language without a profile is refused (`error`).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill, Status, BoxError};
/// use tower::{Layer, ServiceExt, service_fn};
/// let inner = service_fn(|req: ExecRequest| async move {
///     assert_eq!(req.spec.seccomp.unwrap().name, "node");
///     Ok::<_, BoxError>(ExecOutcome { status: Status::Ok, ..Default::default() })
/// });
/// let layer = skillgate_confine::SeccompConfig::default().build_layer().unwrap();
/// let skill = Skill::builder("s", Language::JavaScript, b"".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// assert_eq!(layer.layer(inner).oneshot(req).await.unwrap().status, Status::Ok);
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct SeccompLayer {
    table: Arc<SeccompProfiles>,
}

/// The profiles of a [`SeccompLayer`], by language and tenant.
#[derive(Debug, Clone, Default)]
pub struct SeccompProfiles {
    defaults: BTreeMap<&'static str, SeccompProfile>,
    tenants: BTreeMap<(String, &'static str), SeccompProfile>,
}

impl SeccompProfiles {
    fn get(&self, tenant: &str, language: Language) -> Option<&SeccompProfile> {
        self.tenants
            .get(&(tenant.to_string(), language.as_str()))
            .or_else(|| self.defaults.get(language.as_str()))
    }
}

impl SeccompLayer {
    /// Gives every skill of `language` this profile (unless its tenant has its own).
    pub fn with_profile(mut self, language: Language, profile: SeccompProfile) -> Self {
        Arc::make_mut(&mut self.table)
            .defaults
            .insert(language.as_str(), profile);
        self
    }

    /// Gives `tenant`'s skills of `language` this profile.
    pub fn with_tenant_profile(
        mut self,
        tenant: impl Into<String>,
        language: Language,
        profile: SeccompProfile,
    ) -> Self {
        Arc::make_mut(&mut self.table)
            .tenants
            .insert((tenant.into(), language.as_str()), profile);
        self
    }

    /// The profile a request of `tenant` in `language` gets.
    pub fn profile_for(&self, tenant: &str, language: Language) -> Option<&SeccompProfile> {
        self.table.get(tenant, language)
    }
}

impl Decide for SeccompProfiles {
    const LAYER: LayerName = LayerName::Seccomp;
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
        let language = req.skill.language;
        match self.get(&req.caller.tenant, language) {
            Some(p) => {
                req.spec.seccomp = Some(p.clone());
                Ok(Vec::new())
            }
            None => Err(Rejection::new(
                Status::Error,
                vec![Finding::new(
                    LayerName::Seccomp,
                    "seccomp.no_profile",
                    Severity::High,
                    format!("no seccomp profile is configured for {language} skills"),
                )],
            )),
        }
    }
}

impl<S> Layer<S> for SeccompLayer {
    type Service = DecideService<S, SeccompProfiles>;
    fn layer(&self, inner: S) -> Self::Service {
        DecideService::new(inner, Arc::clone(&self.table))
    }
}

/// The `[network]` config section: the most network a skill may get, by default and per
/// tenant. A skill asks for its network in its definition; what the config does not
/// allow is refused.
///
/// ```
/// let cfg: skillgate_confine::NetworkConfig = toml::from_str(r#"
///     [tenants.acme]
///     mode = "allow_list"
///     allow = [{ cidr = "203.0.113.0/24", ports = [{ start = 443, end = 443 }] }]
/// "#).unwrap();
/// assert!(cfg.default.is_none());
/// assert!(cfg.build_layer().is_ok());
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkConfig {
    /// What any skill may reach (default: nothing).
    pub default: NetworkPolicy,
    /// A policy file to use as the default instead (TOML, see [`crate::network`]).
    pub policy_file: Option<PathBuf>,
    /// Per-tenant ceilings, replacing the default for that tenant.
    pub tenants: BTreeMap<String, NetworkPolicy>,
}

impl NetworkConfig {
    /// Loads and checks the policies and builds the layer.
    pub fn build_layer(&self) -> Result<NetworkLayer, ConfineError> {
        let default = match &self.policy_file {
            Some(path) => load_policy(path)?,
            None => self.default.clone(),
        };
        validate_network(&default)?;
        for p in self.tenants.values() {
            validate_network(p)?;
        }
        Ok(NetworkLayer {
            decider: Arc::new(NetworkCeiling {
                default,
                tenants: self.tenants.clone(),
            }),
        })
    }
}

/// Layer 5: grants the network a skill asks for, if the config allows it for the caller's
/// tenant, into `req.spec.network` (and widens the seccomp profile to inet sockets when
/// that is an allow-list). A skill asking for more is refused (`denied`) with one
/// `network.not_allowed` finding per destination. The executor enforces the grant, or
/// refuses the run when it cannot.
#[derive(Debug, Clone, Default)]
pub struct NetworkLayer {
    decider: Arc<NetworkCeiling>,
}

impl NetworkLayer {
    /// A layer allowing at most `ceiling` to every tenant.
    pub fn new(ceiling: NetworkPolicy) -> Self {
        NetworkLayer {
            decider: Arc::new(NetworkCeiling {
                default: ceiling,
                tenants: BTreeMap::new(),
            }),
        }
    }
}

/// The network ceilings of a [`NetworkLayer`], by tenant.
#[derive(Debug, Default)]
pub struct NetworkCeiling {
    default: NetworkPolicy,
    tenants: BTreeMap<String, NetworkPolicy>,
}

impl Decide for NetworkCeiling {
    const LAYER: LayerName = LayerName::Network;
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
        let ceiling = self
            .tenants
            .get(&req.caller.tenant)
            .unwrap_or(&self.default);
        let wanted = &req.skill.network;
        let refused: Vec<Finding> = uncovered(ceiling, wanted)
            .into_iter()
            .map(|d| {
                let ports = if d.ports.is_empty() {
                    "every port".to_string()
                } else {
                    d.ports
                        .iter()
                        .map(|p| format!("{}-{}", p.start, p.end))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                Finding::new(
                    LayerName::Network,
                    "network.not_allowed",
                    Severity::High,
                    format!(
                        "the skill asks to reach {} ({ports}), which the network policy for tenant `{}` does not allow",
                        d.cidr, req.caller.tenant
                    ),
                )
                .with_snippet(d.cidr.to_string())
            })
            .collect();
        if !refused.is_empty() {
            return Err(Rejection::new(Status::Denied, refused));
        }
        req.spec.network = wanted.clone();
        if !wanted.is_none() {
            if let Some(profile) = req.spec.seccomp.as_mut() {
                permit_inet(profile);
            }
        }
        Ok(Vec::new())
    }
}

impl<S> Layer<S> for NetworkLayer {
    type Service = DecideService<S, NetworkCeiling>;
    fn layer(&self, inner: S) -> Self::Service {
        DecideService::new(inner, Arc::clone(&self.decider))
    }
}
