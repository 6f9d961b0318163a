//! The streamable HTTP transport, for `serve` to mount at `/mcp` behind its
//! authentication.
//!
//! The caller of every request is the [`skillgate::Caller`] the authentication middleware
//! put in the HTTP request's extensions (rmcp hands the request's [`http::request::Parts`]
//! to the handler, extensions included). A request without one is refused (fail closed):
//! the service never decides who calls by itself. Each request is authorized on its own,
//! also within a session.
//!
//! Sessions (clients that `initialize`) are told when the tools change once the server
//! runs [`crate::watch::watch`] on the same gateway, as `skillgate mcp` does.
//!
//! ```no_run
//! # fn demo(gateway: std::sync::Arc<skillgate_mcp::Gateway>) {
//! use skillgate_mcp::http::{StreamableHttpServerConfig, http_service};
//! let config = StreamableHttpServerConfig::default().with_allowed_hosts(["mcp.example.com"]);
//! let service = http_service(gateway, config);
//! // axum: Router::new().nest_service("/mcp", service).layer(authentication)
//! # let _ = service;
//! # }
//! ```
use crate::server::{Gateway, SkillServer};
pub use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;

/// The MCP service over streamable HTTP: a `tower::Service<http::Request<B>>` for any
/// body `B`, answering every MCP request with the skills `gateway` serves to the
/// request's [`skillgate::Caller`]. `config` sets the allowed `Host`s (by default only
/// loopback ones), origins and sessions.
pub fn http_service(
    gateway: Arc<Gateway>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<SkillServer, LocalSessionManager> {
    StreamableHttpService::new(
        move || Ok(SkillServer::from_http(gateway.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
