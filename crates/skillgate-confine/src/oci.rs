//! Emitting a [`SeccompProfile`] as an OCI runtime-spec `linux.seccomp` object: what runc,
//! crun, containerd, Docker's `--security-opt seccomp=FILE` and Kubernetes'
//! `seccompProfile: {type: Localhost}` consume.
//!
//! The output is fully resolved: every name is checked against the x86_64 and aarch64
//! tables, the architectures are listed (calls of any other ABI, such as 32-bit x86 on
//! an x86_64 host, are refused by the runtime's architecture check), and there are no
//! Docker-only conditional fields (`includes`, `excludes`, `minKernel`).
//!
//! An OCI runtime loads the filter itself and then still runs its own code until it
//! executes the container's process: runc's init (Go) closes descriptors, checks
//! `/proc/self/fd` with `fstatfs`, talks to its parent and parks threads. Those calls,
//! [`RUNTIME_INIT_CALLS`] (measured with `strace -f` on runc 1.1.5 and Go's runtime
//! needs), are allowed in the emitted profile when the profile does not allow them
//! already; without them no container would start. They are all calls on the process's
//! own descriptors, memory, threads and clock.
//!
//! Runtimes build one libseccomp filter from it. Each profile rule becomes one OCI rule
//! in the same order; the default action and errno become `defaultAction` and
//! `defaultErrnoRet`. Where rules of different actions overlap for the same call,
//! libseccomp and the native stacked filters may resolve them differently; the presets
//! have no such overlaps.
use crate::profile::{evaluate, validate};
use crate::{Arch, ConfineError};
use oci_spec::runtime::{
    Arch as OciArch, LinuxSeccomp, LinuxSeccompAction, LinuxSeccompArgBuilder,
    LinuxSeccompOperator, LinuxSyscall,
};
use skillgate_core::{ArgOp, SeccompAction, SeccompProfile};

/// Calls an OCI runtime makes between loading the filter and executing the container's
/// process; see the module docs.
pub const RUNTIME_INIT_CALLS: &[&str] = &[
    "close",
    "epoll_ctl",
    "epoll_pwait",
    "execve",
    "exit_group",
    "fcntl",
    "fstat",
    "fstatfs",
    "futex",
    "getdents64",
    "getpid",
    "gettid",
    "madvise",
    "mmap",
    "munmap",
    "nanosleep",
    "newfstatat",
    "openat",
    "read",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sched_yield",
    "sigaltstack",
    "tgkill",
    "write",
];

/// Converts `profile` to the OCI type, for `archs` (both supported ones when empty).
///
/// ```
/// use skillgate_confine::{oci, preset};
/// let seccomp = oci::to_oci(&preset("strict").unwrap(), &[]).unwrap();
/// let json = serde_json::to_value(&seccomp).unwrap();
/// assert_eq!(json["defaultAction"], "SCMP_ACT_ERRNO");
/// assert_eq!(json["defaultErrnoRet"], 1);
/// assert_eq!(json["architectures"][0], "SCMP_ARCH_X86_64");
/// ```
pub fn to_oci(profile: &SeccompProfile, archs: &[Arch]) -> Result<LinuxSeccomp, ConfineError> {
    validate(profile)?;
    let archs = if archs.is_empty() {
        &Arch::ALL[..]
    } else {
        archs
    };
    let (default_action, default_errno) = action(profile.default_action);
    let mut syscalls = Vec::with_capacity(profile.syscalls.len() + 1);
    if profile.default_action != SeccompAction::Allow {
        let runtime: Vec<String> = RUNTIME_INIT_CALLS
            .iter()
            .filter(|c| evaluate(profile, c, &[0; 6]) != SeccompAction::Allow)
            .map(|c| c.to_string())
            .collect();
        if !runtime.is_empty() {
            let mut sc = LinuxSyscall::default();
            sc.set_names(runtime);
            sc.set_action(LinuxSeccompAction::ScmpActAllow);
            syscalls.push(sc);
        }
    }
    for rule in &profile.syscalls {
        let names: Vec<String> = rule
            .names
            .iter()
            .filter(|n| archs.iter().any(|a| a.syscall_number(n).is_some()))
            .cloned()
            .collect();
        if names.is_empty() {
            continue;
        }
        let (act, errno) = action(rule.action);
        let mut sc = LinuxSyscall::default();
        sc.set_names(names);
        sc.set_action(act);
        sc.set_errno_ret(errno);
        if !rule.args.is_empty() {
            let args = rule
                .args
                .iter()
                .map(|c| {
                    let (oci_op, value, value_two) = match c.op {
                        ArgOp::Eq => (LinuxSeccompOperator::ScmpCmpEq, c.value, None),
                        ArgOp::Ne => (LinuxSeccompOperator::ScmpCmpNe, c.value, None),
                        ArgOp::Lt => (LinuxSeccompOperator::ScmpCmpLt, c.value, None),
                        ArgOp::Le => (LinuxSeccompOperator::ScmpCmpLe, c.value, None),
                        ArgOp::Gt => (LinuxSeccompOperator::ScmpCmpGt, c.value, None),
                        ArgOp::Ge => (LinuxSeccompOperator::ScmpCmpGe, c.value, None),
                        // libseccomp: `value` is the mask, `valueTwo` the expected result.
                        ArgOp::MaskedEq(mask) => {
                            (LinuxSeccompOperator::ScmpCmpMaskedEq, mask, Some(c.value))
                        }
                    };
                    let arg = LinuxSeccompArgBuilder::default()
                        .index(usize::from(c.index))
                        .op(oci_op)
                        .value(value);
                    match value_two {
                        Some(v2) => arg.value_two(v2),
                        None => arg,
                    }
                    .build()
                    .map_err(|e| ConfineError::Emit {
                        what: "OCI seccomp argument",
                        message: e.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            sc.set_args(Some(args));
        }
        syscalls.push(sc);
    }
    let mut out = LinuxSeccomp::default();
    out.set_default_action(default_action);
    out.set_default_errno_ret(default_errno);
    out.set_architectures(Some(archs.iter().map(|a| oci_arch(*a)).collect()));
    out.set_syscalls(Some(syscalls));
    Ok(out)
}

/// The profile as pretty OCI `linux.seccomp` JSON.
pub fn to_json(profile: &SeccompProfile, archs: &[Arch]) -> Result<String, ConfineError> {
    let seccomp = to_oci(profile, archs)?;
    serde_json::to_string_pretty(&seccomp).map_err(|e| ConfineError::Emit {
        what: "OCI seccomp JSON",
        message: e.to_string(),
    })
}

fn oci_arch(a: Arch) -> OciArch {
    match a {
        Arch::X86_64 => OciArch::ScmpArchX86_64,
        Arch::Aarch64 => OciArch::ScmpArchAarch64,
    }
}

fn action(a: SeccompAction) -> (LinuxSeccompAction, Option<u32>) {
    match a {
        SeccompAction::Allow => (LinuxSeccompAction::ScmpActAllow, None),
        SeccompAction::Errno(e) => (LinuxSeccompAction::ScmpActErrno, Some(e)),
        SeccompAction::KillProcess => (LinuxSeccompAction::ScmpActKillProcess, None),
        SeccompAction::Log => (LinuxSeccompAction::ScmpActLog, None),
    }
}
