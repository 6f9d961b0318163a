//! The embedded default executor of skillgate.
//!
//! - [`NativeSandbox`]: the namespaced native Linux sandbox (user, pid, mount, network,
//!   ipc, uts and cgroup namespaces, a fresh read-only root, cgroup limits, rlimits,
//!   landlock, seccomp), the default executor of `skillgate run`;
//! - [`ProcessExecutor`]: the supervisor alone, with no isolation, for trusted code only;
//! - the pieces both share: the process [`supervisor`], interpreters resolved once to
//!   their real executables ([`Interpreter`]), the [work directory](workdir) and
//!   [artifact](artifacts) collection.
//!
//! This is the only crate of skillgate with `unsafe` code: the modules `native::child`
//! (between fork and exec), `native::layout` (one probe), `reap` and the supervisor's
//! `pre_exec`; every block carries a `// SAFETY:` comment.

pub mod artifacts;
mod blocking;
mod interpreter;
pub mod native;
mod process_executor;
mod reap;
mod rlimits;
pub mod supervisor;
pub mod workdir;
mod workspace;

pub use interpreter::Interpreter;
pub use native::{CgroupMode, HostSupport, NativeSandbox, SeccompFilter, cancel_runs};
pub use process_executor::{ProcessExecutor, outcome_from};
