//! MCP at `/mcp`: the registry's skills as MCP tools over streamable HTTP, behind the same
//! API keys as the rest of the API.
//!
//! The key decides the agent: the authentication in front puts the [`Principal`] in the
//! request's extensions, and [`agent_only`] hands its [`Caller`] to the MCP service
//! ([`skillgate_mcp::http`]), which lists and runs exactly what that agent may (Cedar's
//! `view`, then the whole pipeline per call). A builder or operator key gets 403: tools are
//! for agents. Every request runs on the engine the server holds at that moment, so a
//! reload or a publish is seen by the next MCP request, and sessions are told
//! (`notifications/tools/list_changed`).
use crate::error::ApiError;
use crate::{Principal, ServerState, registry};
use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use skillgate_core::{Caller, Skill};
use skillgate_mcp::http::{StreamableHttpServerConfig, http_service};
use skillgate_mcp::{Gateway, SkillSource};
use skillgate_store::Role;
use std::sync::Arc;

/// The registry as a source of MCP tools: the latest runnable (not blocked) version of
/// every published skill; the policy gate then keeps what the calling agent may see.
#[derive(Debug)]
pub struct RegistrySource(pub Arc<ServerState>);

impl SkillSource for RegistrySource {
    fn skills(&self) -> Vec<Arc<Skill>> {
        match registry::latest_runnable(&self.0, None) {
            Ok(all) => all.into_iter().map(|r| r.skill).collect(),
            Err(e) => {
                // Fail closed: a registry that cannot be read offers no tool.
                tracing::error!("mcp: the registry cannot be read: {}", e.message);
                Vec::new()
            }
        }
    }
}

/// The `/mcp` route over `state`'s registry and engine, for the authenticated router.
/// Inside a tokio runtime it also starts the poll that tells MCP sessions when their
/// tools change ([`skillgate_mcp::watch`]: a publish, or policy files changed and
/// reloaded).
pub fn routes(state: Arc<ServerState>) -> Router<Arc<ServerState>> {
    let engine_of = state.clone();
    let engine = state.engine();
    let gateway = Arc::new(Gateway::with_provider(
        Arc::new(move || engine_of.engine()),
        vec![Arc::new(RegistrySource(state))],
    ));
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
