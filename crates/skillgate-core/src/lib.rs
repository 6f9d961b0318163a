//! Core types of the skillgate pipeline.
//!
//! Every layer and every executor speaks these types: an [`ExecRequest`] goes in (a
//! [`Caller`], a [`Skill`], the input JSON and the [`SandboxSpec`] the layers decide), an
//! [`ExecOutcome`] comes out (a [`Status`], the process's exit, its output, the
//! [`Finding`]s of every layer and each layer's [`LayerTiming`]).
//!
//! This crate has no heavy dependencies, so a user who only wants the types (to write an
//! executor, say) compiles nothing else.
//!
//! ```
//! use skillgate_core::{Caller, ExecRequest, Language, Skill, Status, ExecOutcome};
//!
//! let skill = Skill::builder("echo", Language::Python, b"print('{}')".to_vec()).build();
//! let req = ExecRequest::new(Caller::new("agent-1", "acme"), skill, serde_json::json!({}));
//! assert_eq!(req.skill.language, Language::Python);
//! let out = ExecOutcome::rejected(Status::Denied, vec![]);
//! assert!(!out.status.is_ok());
//! ```

mod caller;
mod capabilities;
mod error;
mod finding;
mod gate;
mod layer;
mod outcome;
mod pack;
mod quarantine;
mod request;
mod skill;
mod spec;
mod statement;
mod status;
pub mod units;

pub use caller::Caller;
pub use capabilities::{Capabilities, NodeRlimits, Unenforceable};
pub use error::{BoxError, ExecError};
pub use finding::{Finding, Location, Severity};
pub use gate::{Decide, DecideService, Rejection};
pub use layer::{LayerName, LayerTiming};
pub use outcome::{Artifact, ExecOutcome, ResourceUsage};
pub use pack::{Extends, PACK_FILE, PackMeta};
pub use quarantine::{NoQuarantine, QuarantineSource};
pub use request::{ExecRequest, ExecutorSpec, RequestId};
pub use skill::{FileKind, Language, LimitOverrides, Skill, SkillBuilder, SkillFile, Visibility};
pub use spec::{
    ArgCondition, ArgOp, Limits, NetworkDestination, NetworkPolicy, PortRange, RuntimeInterpreter,
    RuntimeTier, SandboxSpec, SeccompAction, SeccompProfile, SyscallRule, WORKSPACE_DIR, Workspace,
};
pub use statement::{Guarantee, OperatorStatement};
pub use status::Status;

/// The stack size of a thread that takes work off the main thread (parsing policies, a
/// schema, a skill's input): as deep as the main thread's 8 MiB, so deeply nested input
/// that parses on the main thread does not overflow a smaller stack elsewhere.
///
/// ```
/// let worker = std::thread::Builder::new().stack_size(skillgate_core::WORKER_STACK);
/// assert_eq!(worker.spawn(|| 6 * 7).unwrap().join().unwrap(), 42);
/// ```
pub const WORKER_STACK: usize = 8 << 20;

/// The service every executor implements and every layer wraps.
///
/// Any `tower::Service<ExecRequest, Response = ExecOutcome>` is an executor; this alias
/// names the boxed, cloneable form the pipeline builder returns.
pub type BoxExecService = tower::util::BoxCloneService<ExecRequest, ExecOutcome, BoxError>;
