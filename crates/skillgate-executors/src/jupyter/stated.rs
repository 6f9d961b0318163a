//! The operator's statement that the gateway's side enforces what a kernel gateway
//! cannot (the gateway runs in a container or VM that does): the capabilities it names
//! are added to the executor's claims, so the isolation layer lets such specs through,
//! and every run's report carries a finding naming what was relied on. skillgate checks
//! none of it; the conformance kit does, when run against that deployment.
use skillgate_core::{Capabilities, ExecError, Finding, LayerName, RuntimeTier, Severity};

/// The rule id of the finding every run relying on a statement carries.
pub const RULE: &str = "executor.stated_enforcement";

/// The names a statement may use: the capability flags, and the runtime tiers.
pub const NAMES: &[&str] = &[
    "cpu_time",
    "memory",
    "pids",
    "file_size",
    "open_files",
    "workdir_size",
    "user",
    "seccomp",
    "network_none",
    "network_allow_list",
    "clean_env",
    "namespace",
    "container",
    "micro_vm",
];

/// `caps` with every capability `stated` names added; an unknown name is an error
/// listing the known ones.
pub fn apply(mut caps: Capabilities, stated: &[String]) -> Result<Capabilities, ExecError> {
    for name in stated {
        let flag = match name.as_str() {
            "cpu_time" => &mut caps.cpu_time,
            "memory" => &mut caps.memory,
            "pids" => &mut caps.pids,
            "file_size" => &mut caps.file_size,
            "open_files" => &mut caps.open_files,
            "workdir_size" => &mut caps.workdir_size,
            "user" => &mut caps.user,
            "seccomp" => &mut caps.seccomp,
            "network_none" => &mut caps.network_none,
            "network_allow_list" => &mut caps.network_allow_list,
            "clean_env" => &mut caps.clean_env,
            tier => {
                let tier = match tier {
                    "namespace" => RuntimeTier::Namespace,
                    "container" => RuntimeTier::Container,
                    "micro_vm" => RuntimeTier::MicroVm,
                    other => {
                        return Err(ExecError::Other(format!(
                            "[executor] remote_enforces: unknown `{other}` (known: {})",
                            NAMES.join(", ")
                        )));
                    }
                };
                caps.tier = caps.tier.max(tier);
                continue;
            }
        };
        *flag = true;
    }
    Ok(caps)
}

/// The finding of a run that relied on `stated` (none when nothing was stated).
pub fn finding(stated: &[String]) -> Option<Finding> {
    if stated.is_empty() {
        return None;
    }
    Some(Finding::new(
        LayerName::Executor,
        RULE,
        Severity::Info,
        format!(
            "relied on the operator's statement that the kernel gateway's side enforces: {} \
             ([executor] remote_enforces; skillgate neither enforces nor checks it)",
            stated.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_adds_exactly_what_it_names() {
        let base = Capabilities {
            wall_timeout: true,
            ..Capabilities::none()
        };
        let stated = apply(
            base.clone(),
            &["memory".into(), "network_none".into(), "container".into()],
        )
        .unwrap();
        assert!(stated.memory && stated.network_none && stated.wall_timeout);
        assert_eq!(stated.tier, RuntimeTier::Container);
        assert!(!stated.pids && !stated.seccomp && !stated.user);
        assert_eq!(apply(base.clone(), &[]).unwrap(), base);
        let err = apply(base, &["memroy".into()]).unwrap_err().to_string();
        assert!(err.contains("unknown `memroy`"), "{err}");
    }

    #[test]
    fn every_run_relying_on_one_says_so() {
        assert!(finding(&[]).is_none());
        let f = finding(&["memory".into(), "seccomp".into()]).unwrap();
        assert_eq!(f.rule_id, RULE);
        assert!(f.message.contains("memory, seccomp"), "{}", f.message);
    }
}
