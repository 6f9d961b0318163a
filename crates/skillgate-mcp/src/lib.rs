//! skillgate's MCP server: every skill an agent may run is an MCP tool, and every tool
//! call is one run through the skillgate pipeline.
//!
//! Built on the official Rust SDK, [`rmcp`]. The skills come from [`SkillSource`]s.
pub mod source;

pub use source::{FolderSource, SkillSource};
