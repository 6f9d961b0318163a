//! `skillgate serve`: the pipeline as an HTTP service.
//!
//! One [`skillgate::Engine`] is built at start and kept behind a swap handle
//! ([`ServerState`]): a reload (SIGHUP) or a publish builds a new one and swaps it in,
//! while the runs in flight finish on the engine they started with. A configuration that
//! does not load is refused and the old engine stays.
//!
//! - [`app::router`] builds every route in one function.
//! - [`auth`]: API keys (`Authorization: Bearer KEY`) decide the caller, put in the
//!   request's extensions as a [`Principal`].
//! - [`registry`]: publishing `.tar.gz` skill folders, listing what a caller may run.
//! - [`runs`]: skill and bare-script runs answered with `skillgate::Report`.
//! - [`mcp`]: the registry's skills as MCP tools at `/mcp`, for agent keys.
//! - [`sessions`]: the agents' sessions at `/v1/sessions` (and as MCP tools).
//! - The keys and the registry live in a [`skillgate_store::Store`] (SQLite in the state
//!   directory).

pub mod admin;
pub mod admission;
pub mod app;
pub mod auth;
pub mod error;
pub mod jwt;
pub mod keys;
pub mod mcp;
pub mod panel;
pub mod piston;
pub mod protect;
pub mod ratelimit;
pub mod registry;
pub mod runs;
pub mod serve;
pub mod session_tools;
pub mod sessions;
pub mod state;
pub mod tarball;
pub mod tls;

pub use app::router;
pub use serve::{Listen, serve};
pub use state::{ServerState, Settings};

use skillgate_core::{Caller, RequestId};
use skillgate_store::Role;

/// Who an authenticated request comes from: decided by its API key alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The caller (for a builder key, `agent_id` is the builder's id).
    pub caller: Caller,
    /// Agent (runs skills) or builder (publishes them).
    pub role: Role,
    /// The key's public id.
    pub key_id: String,
}

/// A request's id, in its extensions.
#[derive(Debug, Clone, Copy)]
pub struct ReqId(pub RequestId);

/// The id of a request, as its logs show it (`-` before one was given).
pub trait RequestIdExt {
    /// The id, in hex.
    fn request_id(&self) -> String;
}

impl<B> RequestIdExt for http::Request<B> {
    fn request_id(&self) -> String {
        self.extensions()
            .get::<ReqId>()
            .map_or_else(|| "-".to_string(), |r| r.0.to_string())
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
