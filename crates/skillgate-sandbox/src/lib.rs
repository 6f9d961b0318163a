//! The embedded default executor of skillgate.
//!
//! Today this crate holds the process supervisor ([`supervisor`]) and the process-tier
//! executor built on it ([`ProcessExecutor`]): interpreters resolved once to their real
//! executables ([`Interpreter`]), stdin fed, stdout and stderr captured under caps, the
//! wall clock enforced by killing the whole process group, rlimits, rusage and artifacts.
//!
//! This is the only crate of skillgate with `unsafe` code; every block carries a
//! `// SAFETY:` comment.

pub mod artifacts;
mod interpreter;
mod process_executor;
mod reap;
mod rlimits;
pub mod supervisor;
pub mod workdir;

pub use interpreter::Interpreter;
pub use process_executor::{ProcessExecutor, outcome_from};
