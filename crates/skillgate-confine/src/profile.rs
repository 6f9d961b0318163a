//! The meaning of a [`SeccompProfile`], independent of how it is enforced.
//!
//! A system call gets **the most restrictive action among the rules that match it** (a
//! rule matches when it names the call and all its argument conditions hold); a call no
//! rule matches gets the profile's default action. Restrictiveness follows the kernel:
//! `kill_process` > `errno` > `log` > `allow`. When rules with different errno values
//! match the same call, the rule listed first wins.
//!
//! These are exactly the semantics of the kernel running stacked filters, which is how
//! [`crate::bpf::compile`] enforces a profile, so [`evaluate`] is the reference the BPF is
//! tested against.
use crate::{Arch, ConfineError};
use skillgate_core::{ArgCondition, ArgOp, SeccompAction, SeccompProfile, SyscallRule};

/// System calls no preset allows, whatever a trace shows (issue 6). The tests check every
/// preset against this list.
pub const NEVER_ALLOWED: &[&str] = &[
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "open_by_handle_at",
    "personality",
];

/// The clone flags that create namespaces (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC,
/// NEWUSER, NEWPID, NEWNET, NEWTIME). No preset lets `clone` pass with any of them.
pub const CLONE_NAMESPACE_FLAGS: u64 = 0x7E02_0080;

/// `AF_UNIX`, the one socket family presets allow unless the network policy allows more.
pub const AF_UNIX: u64 = 1;
/// `AF_INET`.
pub const AF_INET: u64 = 2;
/// `AF_INET6`.
pub const AF_INET6: u64 = 10;

/// The errno of a violation by default: `EPERM`.
pub const EPERM: u32 = 1;

/// How restrictive an action is (higher is more), as the kernel ranks them.
pub fn restrictiveness(action: SeccompAction) -> u8 {
    match action {
        SeccompAction::Allow => 0,
        SeccompAction::Log => 1,
        SeccompAction::Errno(_) => 2,
        SeccompAction::KillProcess => 3,
    }
}

/// `true` when `cond` holds for the argument values `args`.
pub fn condition_holds(cond: &ArgCondition, args: &[u64; 6]) -> bool {
    let Some(&arg) = args.get(usize::from(cond.index)) else {
        return false;
    };
    match cond.op {
        ArgOp::Eq => arg == cond.value,
        ArgOp::Ne => arg != cond.value,
        ArgOp::Lt => arg < cond.value,
        ArgOp::Le => arg <= cond.value,
        ArgOp::Gt => arg > cond.value,
        ArgOp::Ge => arg >= cond.value,
        ArgOp::MaskedEq(mask) => arg & mask == cond.value,
    }
}

/// The action `profile` gives the call `name` with arguments `args` (the reference
/// semantics described in the module docs).
///
/// ```
/// use skillgate_confine::{preset, profile::evaluate};
/// use skillgate_core::SeccompAction;
/// let p = preset("python").unwrap();
/// assert_eq!(evaluate(&p, "read", &[0; 6]), SeccompAction::Allow);
/// assert_eq!(evaluate(&p, "ptrace", &[0; 6]), SeccompAction::Errno(1));
/// assert_eq!(evaluate(&p, "socket", &[2, 1, 0, 0, 0, 0]), SeccompAction::Errno(1)); // AF_INET
/// ```
pub fn evaluate(profile: &SeccompProfile, name: &str, args: &[u64; 6]) -> SeccompAction {
    let mut decided: Option<SeccompAction> = None;
    for rule in &profile.syscalls {
        if rule.names.iter().any(|n| n == name)
            && rule.args.iter().all(|c| condition_holds(c, args))
        {
            decided = Some(match decided {
                Some(d) if restrictiveness(d) >= restrictiveness(rule.action) => d,
                _ => rule.action,
            });
        }
    }
    decided.unwrap_or(profile.default_action)
}

/// Checks that every name is a system call of some supported architecture, every rule
/// names one, and every argument index is 0 to 5.
pub fn validate(profile: &SeccompProfile) -> Result<(), ConfineError> {
    for rule in &profile.syscalls {
        if rule.names.is_empty() {
            return Err(ConfineError::EmptyRule {
                profile: profile.name.clone(),
            });
        }
        for name in &rule.names {
            if !Arch::is_known_anywhere(name) {
                return Err(ConfineError::UnknownSyscall {
                    profile: profile.name.clone(),
                    name: name.clone(),
                });
            }
            if let Some(c) = rule.args.iter().find(|c| c.index > 5) {
                return Err(ConfineError::ArgIndex {
                    profile: profile.name.clone(),
                    name: name.clone(),
                    index: c.index,
                });
            }
        }
    }
    Ok(())
}

/// Replaces every `errno` action and a non-allowing default with `violation`: how a
/// config turns "fail with EPERM" into "kill the process". Rules that allow or log keep
/// their action; an `errno` rule that exists for compatibility (clone3's `ENOSYS`, which
/// makes libc fall back to clone) keeps its errno.
pub fn with_violation(mut profile: SeccompProfile, violation: SeccompAction) -> SeccompProfile {
    let is_violation = |a: SeccompAction| matches!(a, SeccompAction::Errno(EPERM));
    if is_violation(profile.default_action) || profile.default_action == SeccompAction::KillProcess
    {
        profile.default_action = violation;
    }
    for rule in &mut profile.syscalls {
        if is_violation(rule.action) || rule.action == SeccompAction::KillProcess {
            rule.action = violation;
        }
    }
    profile
}

/// Lets `socket` and `socketpair` create `AF_INET` and `AF_INET6` sockets too: the network
/// layer calls it when the run's network policy allows destinations (which the executor
/// then enforces). A profile that allows nothing by name stays as it is.
pub fn permit_inet(profile: &mut SeccompProfile) {
    for family in [AF_INET, AF_INET6] {
        let rule = SyscallRule {
            names: vec!["socket".into(), "socketpair".into()],
            action: SeccompAction::Allow,
            args: vec![ArgCondition {
                index: 0,
                op: ArgOp::Eq,
                value: family,
            }],
        };
        if !profile.syscalls.contains(&rule) {
            profile.syscalls.push(rule);
        }
    }
}

/// Every distinct system call name the profile mentions, sorted.
pub fn names(profile: &SeccompProfile) -> Vec<&str> {
    let mut all: Vec<&str> = profile
        .syscalls
        .iter()
        .flat_map(|r| r.names.iter().map(String::as_str))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(rules: Vec<SyscallRule>) -> SeccompProfile {
        SeccompProfile {
            name: "t".into(),
            default_action: SeccompAction::Errno(EPERM),
            syscalls: rules,
        }
    }

    fn rule(name: &str, action: SeccompAction, args: Vec<ArgCondition>) -> SyscallRule {
        SyscallRule {
            names: vec![name.into()],
            action,
            args,
        }
    }

    #[test]
    fn the_most_restrictive_matching_rule_wins_and_unmatched_calls_get_the_default() {
        let eq = |v| ArgCondition {
            index: 0,
            op: ArgOp::Eq,
            value: v,
        };
        let p = profile(vec![
            rule("kill", SeccompAction::Allow, vec![]),
            rule("kill", SeccompAction::KillProcess, vec![eq(9)]),
            rule("kill", SeccompAction::Log, vec![eq(15)]),
        ]);
        assert_eq!(
            evaluate(&p, "kill", &[1, 0, 0, 0, 0, 0]),
            SeccompAction::Allow
        );
        assert_eq!(
            evaluate(&p, "kill", &[15, 0, 0, 0, 0, 0]),
            SeccompAction::Log
        );
        assert_eq!(
            evaluate(&p, "kill", &[9, 0, 0, 0, 0, 0]),
            SeccompAction::KillProcess
        );
        assert_eq!(evaluate(&p, "getpid", &[0; 6]), SeccompAction::Errno(EPERM));
    }

    #[test]
    fn the_first_listed_errno_wins_among_errno_rules() {
        let p = profile(vec![
            rule("open", SeccompAction::Errno(13), vec![]),
            rule("open", SeccompAction::Errno(2), vec![]),
        ]);
        assert_eq!(evaluate(&p, "open", &[0; 6]), SeccompAction::Errno(13));
    }

    #[test]
    fn validation_names_the_bad_call_and_index() {
        let err = validate(&profile(vec![rule("opne", SeccompAction::Allow, vec![])]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("opne"), "{err}");
        let bad = ArgCondition {
            index: 6,
            op: ArgOp::Eq,
            value: 0,
        };
        let err = validate(&profile(vec![rule(
            "read",
            SeccompAction::Allow,
            vec![bad],
        )]))
        .unwrap_err()
        .to_string();
        assert!(err.contains("index 6") && err.contains("read"), "{err}");
        assert!(validate(&profile(vec![rule("open", SeccompAction::Allow, vec![])])).is_ok());
    }

    #[test]
    fn kill_violation_replaces_eperm_but_keeps_compat_errnos() {
        let p = profile(vec![
            rule("clone3", SeccompAction::Errno(38), vec![]),
            rule("ptrace", SeccompAction::Errno(EPERM), vec![]),
            rule("read", SeccompAction::Allow, vec![]),
        ]);
        let k = with_violation(p, SeccompAction::KillProcess);
        assert_eq!(k.default_action, SeccompAction::KillProcess);
        assert_eq!(evaluate(&k, "clone3", &[0; 6]), SeccompAction::Errno(38));
        assert_eq!(evaluate(&k, "ptrace", &[0; 6]), SeccompAction::KillProcess);
        assert_eq!(evaluate(&k, "read", &[0; 6]), SeccompAction::Allow);
    }

    #[test]
    fn permit_inet_opens_inet_sockets_only() {
        let mut p = profile(vec![rule(
            "socket",
            SeccompAction::Allow,
            vec![ArgCondition {
                index: 0,
                op: ArgOp::Eq,
                value: AF_UNIX,
            }],
        )]);
        assert_eq!(
            evaluate(&p, "socket", &[AF_INET, 1, 0, 0, 0, 0]),
            SeccompAction::Errno(EPERM)
        );
        permit_inet(&mut p);
        permit_inet(&mut p);
        assert_eq!(p.syscalls.len(), 3, "idempotent");
        assert_eq!(
            evaluate(&p, "socket", &[AF_INET, 1, 0, 0, 0, 0]),
            SeccompAction::Allow
        );
        assert_eq!(
            evaluate(&p, "socket", &[AF_INET6, 1, 0, 0, 0, 0]),
            SeccompAction::Allow
        );
        assert_eq!(
            evaluate(&p, "socket", &[16, 3, 0, 0, 0, 0]),
            SeccompAction::Errno(EPERM)
        ); // netlink
    }
}
