//! Seccomp profiles for pods: `Localhost` profiles, named by their content, which must
//! exist on the node before a pod names them.
//!
//! A profile is emitted as OCI JSON (the format the kubelet's runtime reads) and named
//! `skillgate/<sha256 of the JSON, 16 hex>.json` relative to the node's profile root, so
//! a name always means one content. On a cluster whose node profile root this process
//! can write (`node_seccomp_dir`: a one-node cluster, or a directory every node mounts),
//! the executor writes it there (atomically) and checks it before each run; otherwise
//! the profiles come from the installer DaemonSet (`skillgate emit k8s-profile-installer`)
//! and a pod whose profile is missing never starts: the runtime refuses to create the
//! container, which the executor reports as an error. Kubernetes never falls back to
//! `Unconfined` for a missing `Localhost` profile.
use sha2::{Digest, Sha256};
use skillgate_core::{ExecError, SeccompProfile};
use std::path::{Path, PathBuf};

/// The folder of skillgate's profiles under the node's profile root.
pub const PROFILE_SUBDIR: &str = "skillgate";

/// A profile ready for a pod: its JSON and its name relative to the profile root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeProfile {
    /// The OCI seccomp JSON.
    pub json: String,
    /// `skillgate/<digest>.json`.
    pub localhost_name: String,
}

/// Emits `profile` for the node's architecture.
pub fn node_profile(profile: &SeccompProfile) -> Result<NodeProfile, ExecError> {
    let arch = skillgate_confine::Arch::native().ok_or_else(|| {
        ExecError::HostUnsupported("no seccomp support for this architecture".into())
    })?;
    let json = skillgate_confine::oci::to_json(profile, &[arch])
        .map_err(|e| ExecError::Other(format!("emitting the seccomp profile: {e}")))?;
    let digest = Sha256::digest(json.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Ok(NodeProfile {
        json,
        localhost_name: format!("{PROFILE_SUBDIR}/{hex}.json"),
    })
}

/// Makes sure `profile` is in the node's profile root `root`: written once (to a
/// temporary file, then renamed), and read back to check it holds this content.
pub fn install(root: &Path, profile: &NodeProfile) -> Result<PathBuf, ExecError> {
    let path = root.join(&profile.localhost_name);
    let io = |what: &str, e| ExecError::io(format!("{what} {}", path.display()), e);
    match std::fs::read(&path) {
        Ok(held) if held == profile.json.as_bytes() => return Ok(path),
        Ok(_) | Err(_) => {}
    }
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(|e| io("creating the folder of", e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io("writing", e))?;
    std::io::Write::write_all(&mut tmp, profile.json.as_bytes()).map_err(|e| io("writing", e))?;
    tmp.persist(&path).map_err(|e| io("writing", e.error))?;
    let held = std::fs::read(&path).map_err(|e| io("reading back", e))?;
    if held != profile.json.as_bytes() {
        return Err(ExecError::Other(format!(
            "the seccomp profile {} changed on the node while it was written",
            path.display()
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate_core::{SeccompAction, SyscallRule};

    fn profile(errno: u32) -> SeccompProfile {
        SeccompProfile {
            name: "t".into(),
            default_action: SeccompAction::Allow,
            syscalls: vec![SyscallRule {
                names: vec!["mkdir".into(), "mkdirat".into()],
                action: SeccompAction::Errno(errno),
                args: vec![],
            }],
        }
    }

    #[test]
    fn a_name_means_one_content_and_install_is_idempotent() {
        let a = node_profile(&profile(1)).unwrap();
        let b = node_profile(&profile(13)).unwrap();
        assert_ne!(a.localhost_name, b.localhost_name);
        assert!(a.localhost_name.starts_with("skillgate/"));
        let root = tempfile::tempdir().unwrap();
        let path = install(root.path(), &a).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), a.json);
        // A file changed on the node under that name is put back.
        std::fs::write(&path, "{}").unwrap();
        install(root.path(), &a).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), a.json);
    }
}
