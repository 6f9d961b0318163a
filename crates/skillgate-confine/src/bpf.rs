//! Compiling a [`SeccompProfile`] to BPF with `seccompiler`, and installing it.
//!
//! A seccompiler filter has exactly one action for calls that match and one for calls that
//! do not. A profile can use several actions, so it compiles to **a stack of filters**,
//! which the kernel runs all of, keeping the most restrictive result — precisely the
//! profile semantics of [`crate::profile`]:
//!
//! 1. one filter per distinct non-allow action `A` (`kill_process`, `log`, each errno
//!    value): it returns `A` for the calls of the rules with action `A` and allows the rest;
//! 2. last, the default filter: it allows every call some rule names (with that rule's
//!    conditions) and returns the default action for everything else. It is left out when
//!    the default action is `allow`.
//!
//! [`compile`] returns the filters in installation order; [`install`] installs them in
//! that order. Among equally restrictive results the kernel keeps the newest filter's, so
//! errno filters are ordered to let the errno of the first-listed rule win. Each
//! installation calls `prctl` and `seccomp`, so a profile that restricts those two calls
//! by a rule is refused ([`ConfineError::Uninstallable`]): the later filters could not be
//! installed. Restricting them by the default action is fine, since the default filter
//! is installed last.
//!
//! System call names resolve per architecture; a name the architecture does not have
//! (`open` on aarch64) cannot be called there and is left out, a name no architecture
//! has is an error.
use crate::profile::{restrictiveness, validate};
use crate::{Arch, ConfineError};
use seccompiler::{
    BpfProgram, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};
use skillgate_core::{ArgOp, SeccompAction, SeccompProfile, SyscallRule};
use std::collections::BTreeMap;

/// Calls every filter installation makes, after the first filter is in place.
const INSTALLER_CALLS: [&str; 2] = ["prctl", "seccomp"];

/// Compiles `profile` for `arch` into the filters to install, in order.
///
/// ```
/// use skillgate_confine::{Arch, bpf, preset};
/// let filters = bpf::compile(&preset("python").unwrap(), Arch::X86_64).unwrap();
/// // errno(ENOSYS) for clone3, then the default filter (allow-list, errno(EPERM) otherwise)
/// assert_eq!(filters.len(), 2);
/// assert!(filters.iter().all(|f| !f.is_empty()));
/// ```
pub fn compile(profile: &SeccompProfile, arch: Arch) -> Result<Vec<BpfProgram>, ConfineError> {
    validate(profile)?;
    let mut actions: Vec<SeccompAction> = Vec::new();
    for rule in &profile.syscalls {
        if rule.action != SeccompAction::Allow && !actions.contains(&rule.action) {
            actions.push(rule.action);
        }
    }
    // The kernel keeps the newest filter's result among equals: install errno filters so
    // that the first-listed errno is newest, i.e. in reverse order of first appearance.
    actions.reverse();
    actions.sort_by_key(|a| restrictiveness(*a));

    let mut filters = Vec::with_capacity(actions.len() + 1);
    for action in &actions {
        let rules: Vec<&SyscallRule> = profile
            .syscalls
            .iter()
            .filter(|r| r.action == *action)
            .collect();
        if let Some(name) = INSTALLER_CALLS
            .iter()
            .find(|c| rules.iter().any(|r| r.names.iter().any(|n| n == *c)))
        {
            return Err(ConfineError::Uninstallable {
                profile: profile.name.clone(),
                reason: format!(
                    "a rule restricts `{name}`, which installing the stacked filters needs; restrict it by the default action instead"
                ),
            });
        }
        filters.push(build(profile, arch, &rules, SeccompAction::Allow, *action)?);
    }
    if profile.default_action != SeccompAction::Allow {
        let all: Vec<&SyscallRule> = profile.syscalls.iter().collect();
        filters.push(build(
            profile,
            arch,
            &all,
            profile.default_action,
            SeccompAction::Allow,
        )?);
    }
    if filters.is_empty() {
        return Err(ConfineError::Uninstallable {
            profile: profile.name.clone(),
            reason: "the profile allows every call: there is no filter to install".into(),
        });
    }
    Ok(filters)
}

/// The number of BPF instructions of each filter, for reports and benches.
pub fn instruction_counts(filters: &[BpfProgram]) -> Vec<usize> {
    filters.iter().map(Vec::len).collect()
}

/// Installs compiled filters on the calling thread, in order (seccompiler sets
/// `PR_SET_NO_NEW_PRIVS` first). What the thread then executes inherits them: call it
/// right before `exec`, in a single-threaded child.
pub fn install(filters: &[BpfProgram]) -> Result<(), ConfineError> {
    for filter in filters {
        seccompiler::apply_filter(filter).map_err(|e| ConfineError::Install(e.to_string()))?;
    }
    Ok(())
}

fn build(
    profile: &SeccompProfile,
    arch: Arch,
    rules: &[&SyscallRule],
    mismatch: SeccompAction,
    matched: SeccompAction,
) -> Result<BpfProgram, ConfineError> {
    let bpf_err = |e: seccompiler::BackendError| ConfineError::Bpf {
        profile: profile.name.clone(),
        arch: arch.as_str(),
        message: e.to_string(),
    };
    // Per call number: `None` matches unconditionally, else any of the condition sets.
    let mut by_number: BTreeMap<i64, Option<Vec<SeccompRule>>> = BTreeMap::new();
    for rule in rules {
        for name in &rule.names {
            let Some(nr) = arch.syscall_number(name) else {
                continue;
            };
            let entry = by_number.entry(nr).or_insert_with(|| Some(Vec::new()));
            if rule.args.is_empty() {
                *entry = None;
            } else if let Some(list) = entry {
                let conditions = rule
                    .args
                    .iter()
                    .map(|c| {
                        SeccompCondition::new(c.index, SeccompCmpArgLen::Qword, op(c.op), c.value)
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(bpf_err)?;
                list.push(SeccompRule::new(conditions).map_err(bpf_err)?);
            }
        }
    }
    let map = by_number
        .into_iter()
        .map(|(nr, rules)| (nr, rules.unwrap_or_default()))
        .collect();
    let filter = SeccompFilter::new(map, action(mismatch), action(matched), arch.seccompiler())
        .map_err(bpf_err)?;
    BpfProgram::try_from(filter).map_err(bpf_err)
}

fn op(op: ArgOp) -> SeccompCmpOp {
    match op {
        ArgOp::Eq => SeccompCmpOp::Eq,
        ArgOp::Ne => SeccompCmpOp::Ne,
        ArgOp::Lt => SeccompCmpOp::Lt,
        ArgOp::Le => SeccompCmpOp::Le,
        ArgOp::Gt => SeccompCmpOp::Gt,
        ArgOp::Ge => SeccompCmpOp::Ge,
        ArgOp::MaskedEq(mask) => SeccompCmpOp::MaskedEq(mask),
    }
}

fn action(a: SeccompAction) -> seccompiler::SeccompAction {
    match a {
        SeccompAction::Allow => seccompiler::SeccompAction::Allow,
        SeccompAction::Errno(e) => seccompiler::SeccompAction::Errno(e),
        SeccompAction::KillProcess => seccompiler::SeccompAction::KillProcess,
        SeccompAction::Log => seccompiler::SeccompAction::Log,
    }
}
