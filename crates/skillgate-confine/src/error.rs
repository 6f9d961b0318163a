//! The one error type of this crate.
use std::path::PathBuf;

/// A profile, preset or policy that cannot be compiled, loaded or emitted. Every variant
/// names what is wrong; callers treat any of them as "no" (fail closed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfineError {
    /// A system call name that no supported architecture knows (a typo, usually).
    #[error(
        "profile `{profile}`: unknown system call `{name}` (not in the x86_64 or aarch64 tables)"
    )]
    UnknownSyscall {
        /// The profile.
        profile: String,
        /// The name.
        name: String,
    },
    /// An argument condition on an index other than 0 to 5.
    #[error("profile `{profile}`: argument index {index} of `{name}` is out of range (0 to 5)")]
    ArgIndex {
        /// The profile.
        profile: String,
        /// The system call.
        name: String,
        /// The index given.
        index: u8,
    },
    /// A rule without any system call name.
    #[error("profile `{profile}`: a rule names no system call")]
    EmptyRule {
        /// The profile.
        profile: String,
    },
    /// The profile cannot be installed as stacked filters in any order (see
    /// [`crate::bpf::compile`]).
    #[error("profile `{profile}`: {reason}")]
    Uninstallable {
        /// The profile.
        profile: String,
        /// Why.
        reason: String,
    },
    /// seccompiler refused the filter.
    #[error("profile `{profile}` on {arch}: BPF compile failed: {message}")]
    Bpf {
        /// The profile.
        profile: String,
        /// The architecture.
        arch: &'static str,
        /// seccompiler's message.
        message: String,
    },
    /// Installing a compiled filter failed.
    #[error("installing the seccomp filter failed: {0}")]
    Install(String),
    /// No preset of that name.
    #[error("unknown seccomp preset `{name}` (available: {available})")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The names there are.
        available: String,
    },
    /// A preset or policy file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A preset or policy file is not valid.
    #[error("invalid {origin}: {message}")]
    Parse {
        /// The file (or `inline`, or the preset name).
        origin: String,
        /// What is wrong, with line and key.
        message: String,
    },
    /// A network policy that is not valid or cannot be expressed in the target format.
    #[error("network policy: {0}")]
    Network(String),
    /// Serialising the emitted document failed.
    #[error("cannot serialise {what}: {message}")]
    Emit {
        /// What was being written.
        what: &'static str,
        /// Why it failed.
        message: String,
    },
}
