//! skillgate: a security pipeline of `tower` layers around a pluggable executor, for
//! running AI agents' skills (short Python or JavaScript programs that read JSON on stdin
//! and print JSON on stdout).
//!
//! This facade crate holds the [`PipelineBuilder`] (which stacks the configured layers in
//! the architecture's order), [skill folder](skill_dir) loading, the input-schema gate
//! ([`InputSchemaLayer`]), the [`Config`] file and the JSON [`Report`]. It re-exports the
//! core types.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use skillgate::{Caller, ExecRequest, PipelineBuilder, skill_dir};
//! use skillgate_sandbox::ProcessExecutor;
//! use tower::ServiceExt;
//!
//! let skill = skill_dir::load("examples/skills/analyze-rows".as_ref())?;
//! let pipeline = PipelineBuilder::new().build(ProcessExecutor::new());
//! let req = ExecRequest::new(
//!     Caller::new("agent-1", "acme"),
//!     skill,
//!     serde_json::json!({"query": "q", "data": [1, 2]}),
//! );
//! let outcome = pipeline.oneshot(req).await?;
//! println!("{}", outcome.status);
//! # Ok(()) }
//! ```

pub mod assemble;
pub mod background;
pub mod config;
pub mod engine;
pub mod folder;
pub mod input;
pub mod isolation;
mod pipeline;
pub mod report;
pub mod runtimes;
pub mod skill_dir;

pub use config::Config;
pub use engine::Engine;
pub use input::{InputSchemaLayer, InputSchemaService, MAX_VIOLATIONS, check_input};
pub use isolation::{IsolationLayer, IsolationService, RequestedLimits};
pub use pipeline::PipelineBuilder;
pub use report::Report;
pub use skillgate_core::*;
