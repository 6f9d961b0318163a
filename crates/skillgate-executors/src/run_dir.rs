//! What a container sees of the run's folder and of the skill's runtime: the same for
//! every container executor (Docker Engine, the OCI runtimes, Kubernetes pods).
use skillgate_core::{RuntimeInterpreter, SandboxSpec};
use skillgate_sandbox::workdir::OUTPUT_DIR_ENV;
use std::path::Path;
#[cfg(any(feature = "docker", feature = "oci"))]
use {skillgate_core::ExecError, skillgate_sandbox::workdir::WorkDir, std::path::PathBuf};

/// Where a runtime's tree is mounted (read-only) inside a container.
pub const RUNTIME_DIR: &str = "/runtime";
/// The skill's working directory and `HOME` inside a container (a size-capped tmpfs).
pub const WORK_DIR: &str = "/work";
/// The output directory inside a container (`$SKILLGATE_OUTPUT_DIR`).
pub const OUT_DIR: &str = "/out";

/// The interpreter of `runtime` inside a container: the runtime's tree is at
/// [`RUNTIME_DIR`] there, the base interpreter at its host path.
pub fn program_in_container(runtime: &RuntimeInterpreter) -> String {
    let program = match &runtime.tree {
        Some(tree) => Path::new(RUNTIME_DIR).join(
            runtime
                .program
                .strip_prefix(tree)
                .unwrap_or(Path::new("bin/python3")),
        ),
        None => runtime.program.clone(),
    };
    program.display().to_string()
}

/// The environment of a container: the spec's, with `HOME` the work directory and
/// `$SKILLGATE_OUTPUT_DIR` the output directory, as `NAME=value`.
pub fn container_env(spec: &SandboxSpec) -> Vec<String> {
    let mut env: Vec<String> = spec
        .env
        .iter()
        .filter(|(k, _)| k.as_str() != "HOME" && k.as_str() != OUTPUT_DIR_ENV)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.push(format!("HOME={WORK_DIR}"));
    env.push(format!("{OUTPUT_DIR_ENV}={OUT_DIR}"));
    env
}

/// Makes the run's folder readable by the container's user (the skill's code is bound
/// read-only from it); the folder's name is random and only the code is in it.
#[cfg(any(feature = "docker", feature = "oci"))]
pub(crate) fn open_to_container(dir: &WorkDir) -> Result<(), ExecError> {
    use std::os::unix::fs::PermissionsExt;
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
            .map_err(|e| ExecError::io(format!("opening {} to the container", p.display()), e))
    };
    set(dir.root(), 0o711)?;
    let mut stack = vec![dir.work()];
    while let Some(d) = stack.pop() {
        set(&d, 0o755)?;
        for e in
            std::fs::read_dir(&d).map_err(|e| ExecError::io("listing the work directory", e))?
        {
            let e = e.map_err(|e| ExecError::io("listing the work directory", e))?;
            let ty = e
                .file_type()
                .map_err(|e| ExecError::io("listing the work directory", e))?;
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() {
                set(&e.path(), 0o644)?;
            }
        }
    }
    Ok(())
}

/// The run's `/out` on the host: a tmpfs mounted at the run folder's `out`, of a fixed
/// size (so the skill's output cannot fill the host's disk: a write past it fails with
/// "no space left on device"), owned by the run's user, `nosuid,nodev,noexec`. The
/// container gets it bound at [`OUT_DIR`]; it is unmounted when dropped.
#[cfg(any(feature = "docker", feature = "oci"))]
pub(crate) struct OutTmpfs(Option<PathBuf>);

#[cfg(any(feature = "docker", feature = "oci"))]
impl OutTmpfs {
    /// Mounts `size` bytes (at least a page) at `dir`'s `out`, owned by `uid:gid`.
    pub(crate) fn mount(dir: &WorkDir, size: u64, uid: u32, gid: u32) -> Result<Self, ExecError> {
        use rustix::mount::{MountFlags, mount};
        let out = dir.out();
        let data = std::ffi::CString::new(format!(
            "size={},mode=0700,uid={uid},gid={gid}",
            size.max(4096)
        ))
        .expect("no NUL in the tmpfs options");
        mount(
            "tmpfs",
            &out,
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            data.as_c_str(),
        )
        .map_err(|e| {
            ExecError::io(
                format!("mounting the output tmpfs at {}", out.display()),
                std::io::Error::from(e),
            )
        })?;
        Ok(OutTmpfs(Some(out)))
    }

    /// Where it is mounted.
    pub(crate) fn path(&self) -> &Path {
        self.0.as_deref().expect("mounted until dropped")
    }

    /// Leaves it mounted: something else unmounts it (the OCI executor's watcher).
    pub(crate) fn leave(mut self) {
        self.0 = None;
    }
}

#[cfg(any(feature = "docker", feature = "oci"))]
impl Drop for OutTmpfs {
    fn drop(&mut self) {
        use rustix::mount::{UnmountFlags, unmount};
        let Some(path) = self.0.take() else { return };
        if let Err(e) = unmount(&path, UnmountFlags::DETACH) {
            tracing::warn!(path = %path.display(), error = %e, "unmounting a run's output tmpfs");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtimes_program_is_found_in_its_container() {
        let r = RuntimeInterpreter {
            runtime: "python".into(),
            program: "/var/lib/rt/python-abc/bin/python3".into(),
            prefix: "/usr".into(),
            tree: Some("/var/lib/rt/python-abc".into()),
        };
        assert_eq!(program_in_container(&r), "/runtime/bin/python3");
        let node = RuntimeInterpreter {
            runtime: "node".into(),
            program: "/usr/bin/node".into(),
            prefix: "/usr".into(),
            tree: None,
        };
        assert_eq!(program_in_container(&node), "/usr/bin/node");
    }

    #[test]
    fn home_and_the_output_directory_are_the_containers() {
        let mut spec = SandboxSpec::default();
        spec.env.insert("HOME".into(), "/elsewhere".into());
        let env = container_env(&spec);
        assert!(env.contains(&"HOME=/work".to_string()), "{env:?}");
        assert!(!env.iter().any(|e| e == "HOME=/elsewhere"));
        assert!(env.contains(&"SKILLGATE_OUTPUT_DIR=/out".to_string()));
    }
}
