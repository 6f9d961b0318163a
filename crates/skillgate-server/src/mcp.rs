//! MCP at `/mcp`: the registry's skills as MCP tools over streamable HTTP, behind the same
//! API keys as the rest of the API.
//!
//! The key decides the agent: the authentication in front puts the [`Principal`] in the
//! request's extensions, and [`agent_only`] hands its [`Caller`] to the MCP service
//! ([`skillgate_mcp::http`]), which lists and runs exactly what that agent may (Cedar's
//! `view`, then the whole pipeline per call). A builder or operator key gets 403: tools are
//! for agents. Every request runs on the engine the server holds at that moment, so a
//! reload or a publish is seen by the next MCP request, and sessions are told
//! (`notifications/tools/list_changed`). The agent's sessions are tools too
//! ([`crate::session_tools`]).
use crate::error::ApiError;
use crate::{Principal, ServerState, registry};
use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use skillgate_core::{Caller, Skill};
use skillgate_mcp::http::{StreamableHttpServerConfig, http_service};
use skillgate_mcp::{Gateway, SkillSource};
use skillgate_store::{Role, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The registry as a source of MCP tools: the latest runnable (not blocked) version of
/// every published skill; the policy gate then keeps what the calling agent may see.
#[derive(Debug)]
pub struct RegistrySource(pub Arc<ServerState>);

impl SkillSource for RegistrySource {
    fn skills(&self) -> Vec<Arc<Skill>> {
        match registry::latest_runnable(&self.0, None) {
            Ok(all) => {
                // Only what the gate records as published: a version another replica
                // published is offered once this one's engine is rebuilt (started here).
                let engine = self.0.engine();
                let (known, unknown): (Vec<_>, Vec<_>) = all
                    .into_iter()
                    .partition(|r| crate::state::knows(&engine, &r.skill.digest));
                if !unknown.is_empty() && tokio::runtime::Handle::try_current().is_ok() {
                    let state = self.0.clone();
                    tokio::spawn(async move {
                        let digests: Vec<String> =
                            unknown.iter().map(|r| r.skill.digest.clone()).collect();
                        state.engine_knowing(&digests).await;
                    });
                }
                known.into_iter().map(|r| r.skill).collect()
            }
            Err(e) => {
                // Fail closed: a registry that cannot be read offers no tool.
                tracing::error!("mcp: the registry cannot be read: {}", e.message);
                Vec::new()
            }
        }
    }
}

/// Whether the policy gate in use records a digest as a published skill.
pub type Recorded = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The registry of a store, for a front end without a server (`skillgate mcp` over
/// stdio): the same skills as [`RegistrySource`], loaded from the store's bytes and kept
/// by version (versions are immutable). Only versions the gate records are offered
/// (`recorded`): one published since the gate was built would otherwise be judged as the
/// caller's own code.
pub struct StoreSource {
    store: Arc<dyn Store>,
    recorded: Recorded,
    loaded: Mutex<HashMap<String, Arc<Skill>>>,
}

impl std::fmt::Debug for StoreSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSource")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl StoreSource {
    /// The registry in `store`, offering what `recorded` says the gate knows.
    pub fn new(store: Arc<dyn Store>, recorded: Recorded) -> StoreSource {
        StoreSource {
            store,
            recorded,
            loaded: Mutex::default(),
        }
    }
}

impl SkillSource for StoreSource {
    fn skills(&self) -> Vec<Arc<Skill>> {
        let versions = match registry::latest_versions(self.store.as_ref(), None) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("mcp: the registry cannot be read: {e}");
                return Vec::new();
            }
        };
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        versions
            .iter()
            .filter(|v| (self.recorded)(&v.digest))
            .filter_map(|v| {
                if let Some(skill) = loaded.get(&v.version) {
                    return Some(skill.clone());
                }
                match registry::load_stored(self.store.as_ref(), v) {
                    Ok(skill) => {
                        let skill = Arc::new(skill);
                        loaded.insert(v.version.clone(), skill.clone());
                        Some(skill)
                    }
                    Err(e) => {
                        tracing::error!("mcp: {}: {}", v.name, e.message);
                        None
                    }
                }
            })
            .collect()
    }
}

/// The `/mcp` route over `state`'s registry and engine, for the authenticated router.
/// Inside a tokio runtime it also starts the poll that tells MCP sessions when their
/// tools change ([`skillgate_mcp::watch`]: a publish, or policy files changed and
/// reloaded).
pub fn routes(state: Arc<ServerState>) -> Router<Arc<ServerState>> {
    let engine_of = state.clone();
    let engine = state.engine();
    let sessions = Arc::new(crate::session_tools::SessionTools(state.clone()));
    let gateway = Arc::new(
        Gateway::with_provider(
            Arc::new(move || engine_of.engine()),
            vec![Arc::new(RegistrySource(state))],
        )
        .with_tool_set(sessions),
    );
    if tokio::runtime::Handle::try_current().is_ok() {
        skillgate_mcp::watch::watch(
            gateway.clone(),
            engine.config().clone(),
            engine.disabled().to_vec(),
            skillgate_mcp::watch::POLL_INTERVAL,
        );
    }
    Router::new()
        .nest_service(
            "/mcp",
            http_service(gateway, StreamableHttpServerConfig::default()),
        )
        .route_layer(middleware::from_fn(agent_only))
}

/// Puts the agent's [`Caller`] in the request for the MCP service; refuses other roles.
async fn agent_only(mut req: Request, next: Next) -> Response {
    let caller: Option<Result<Caller, Role>> =
        req.extensions().get::<Principal>().map(|p| match p.role {
            Role::Agent => Ok(p.caller.clone()),
            other => Err(other),
        });
    match caller {
        Some(Ok(caller)) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Some(Err(role)) => ApiError::forbidden(format!(
            "a {} key cannot call MCP tools: tools are run by agent keys",
            role.as_str()
        ))
        .into_response(),
        // The authentication in front always sets one; without it, refuse.
        None => ApiError::forbidden("the request is not authenticated").into_response(),
    }
}
