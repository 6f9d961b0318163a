//! The operator's statement that the remote side of an executor enforces what the
//! executor itself cannot (`[executor.statement]` in `skillgate.toml`).
//!
//! An executor that is no sandbox (a Jupyter Kernel Gateway) declares no isolation,
//! seccomp or network none in its [`Capabilities`], so the isolation layer refuses every
//! run on it. An operator who put the remote side in a container or VM that does give
//! them can say so: the statement is named, lists exactly what it vouches for, and each
//! run that relies on it carries it in its spec ([`crate::SandboxSpec::relied_on`], so
//! in the audit trail) and in a finding of its report.
use crate::{Capabilities, RuntimeTier};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One thing a statement vouches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Guarantee {
    /// The remote side isolates each run: the runtime tier the config asks for, the
    /// memory, pids, CPU-time, file-size, open-files and work-directory limits, the
    /// spec's uid, and an environment rebuilt from the spec alone.
    Isolation,
    /// The remote side installs the spec's seccomp profile.
    Seccomp,
    /// The remote side gives a run no network at all (a destination allow-list is not
    /// covered: such a spec stays refused).
    NetworkNone,
}

impl Guarantee {
    /// The name as written in `skillgate.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Guarantee::Isolation => "isolation",
            Guarantee::Seccomp => "seccomp",
            Guarantee::NetworkNone => "network_none",
        }
    }
}

/// `[executor.statement]`: the operator states that the remote side enforces
/// `enforces`, under the name `name`.
///
/// ```
/// use skillgate_core::{Capabilities, OperatorStatement, SandboxSpec};
/// let s: OperatorStatement =
///     toml::from_str("name = \"gw-in-vm\"\nenforces = [\"isolation\", \"seccomp\", \"network_none\"]")
///         .unwrap();
/// s.validate().unwrap();
/// let caps = Capabilities { wall_timeout: true, output_caps: true, ..Capabilities::none() };
/// assert!(caps.check(&SandboxSpec::default()).is_err());
/// assert!(s.applied_to(&caps).check(&SandboxSpec::default()).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorStatement {
    /// The statement's name, for the report and the audit trail.
    pub name: String,
    /// What the remote side enforces.
    pub enforces: BTreeSet<Guarantee>,
}

impl OperatorStatement {
    /// `Err` says what is wrong: an empty name or nothing vouched for.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("[executor.statement] `name` is empty: name the statement".into());
        }
        if self.enforces.is_empty() {
            return Err(format!(
                "[executor.statement] `enforces` of `{}` is empty: list what the remote side enforces (\"isolation\", \"seccomp\", \"network_none\")",
                self.name
            ));
        }
        Ok(())
    }

    /// The guarantees as written, comma-separated.
    pub fn enforces_list(&self) -> String {
        let names: Vec<&str> = self.enforces.iter().map(|g| g.as_str()).collect();
        names.join(", ")
    }

    /// `caps` with what this statement vouches for added.
    pub fn applied_to(&self, caps: &Capabilities) -> Capabilities {
        let mut c = caps.clone();
        for g in &self.enforces {
            match g {
                Guarantee::Isolation => {
                    c.tier = RuntimeTier::MicroVm;
                    c.cpu_time = true;
                    c.memory = true;
                    c.pids = true;
                    c.file_size = true;
                    c.open_files = true;
                    c.workdir_size = true;
                    c.user = true;
                    c.clean_env = true;
                }
                Guarantee::Seccomp => {
                    c.seccomp = true;
                    c.seccomp_kill = true;
                }
                Guarantee::NetworkNone => c.network_none = true,
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SandboxSpec;

    fn parse(text: &str) -> Result<OperatorStatement, String> {
        toml::from_str::<OperatorStatement>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn parses_a_statement_and_refuses_unknown_names_and_empty_ones() {
        let s = parse("name = \"vm\"\nenforces = [\"isolation\", \"network_none\"]").unwrap();
        assert!(s.validate().is_ok());
        assert_eq!(s.enforces_list(), "isolation, network_none");
        let err = parse("name = \"vm\"\nenforces = [\"isolation\", \"network\"]").unwrap_err();
        assert!(err.contains("unknown variant `network`"), "{err}");
        assert!(err.contains("enforces"), "the error names the key: {err}");
        let err = parse("name = \"vm\"\nenforces = []").unwrap().validate();
        assert!(err.unwrap_err().contains("`enforces` of `vm` is empty"));
        let err = parse("name = \" \"\nenforces = [\"seccomp\"]")
            .unwrap()
            .validate();
        assert!(err.unwrap_err().contains("`name` is empty"));
        assert!(parse("name = \"vm\"\nenforces = [\"seccomp\"]\nnetwork = true").is_err());
        assert!(parse("enforces = [\"seccomp\"]").is_err());
    }

    #[test]
    fn a_statement_covers_only_what_it_names() {
        let caps = Capabilities {
            wall_timeout: true,
            output_caps: true,
            ..Capabilities::none()
        };
        let s = parse("name = \"vm\"\nenforces = [\"isolation\", \"seccomp\"]").unwrap();
        let missing = s
            .applied_to(&caps)
            .check(&SandboxSpec::default())
            .unwrap_err();
        let what: Vec<&str> = missing.iter().map(|m| m.requirement.as_str()).collect();
        assert_eq!(what, ["network none"]);
        let spec = SandboxSpec {
            network: crate::NetworkPolicy::AllowList(Vec::new()),
            ..SandboxSpec::default()
        };
        let s = parse("name = \"vm\"\nenforces = [\"isolation\", \"network_none\"]").unwrap();
        let missing = s.applied_to(&caps).check(&spec).unwrap_err();
        let what: Vec<&str> = missing.iter().map(|m| m.requirement.as_str()).collect();
        assert_eq!(what, ["network allow-list"], "an allow-list stays refused");
    }
}
