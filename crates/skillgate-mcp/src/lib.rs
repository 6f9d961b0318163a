//! skillgate's MCP server: every skill an agent may run is an MCP tool, and every tool
//! call is one run through the skillgate pipeline.
//!
//! Built on the official Rust SDK, [`rmcp`]. The pipeline is built once
//! ([`skillgate::Engine`]) and shared by every session through a [`Gateway`]; the skills
//! come from [`SkillSource`]s. [`serve_stdio`] serves one agent over stdio;
//! [`http::http_service`] is the streamable HTTP transport, for the caller an
//! authentication middleware names.
pub mod http;
pub mod result;
pub mod server;
pub mod source;
pub mod stdio;
pub mod tools;
pub mod toolset;
pub mod watch;

pub use server::{Gateway, SkillServer};
pub use source::{FolderSource, SkillSource};
pub use toolset::{ToolFuture, ToolSet};

/// Serves `caller` the skills of `gateway` over stdin and stdout until the client closes
/// the connection.
pub async fn serve_stdio(
    gateway: std::sync::Arc<Gateway>,
    caller: skillgate::Caller,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    stdio::serve(gateway, caller, tokio::io::stdin(), tokio::io::stdout()).await
}
