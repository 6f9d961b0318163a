//! One run's container and everything the host holds for it (the runtime's state, the
//! cgroups, the `/out` tmpfs, the bundle and work folder), removed on every path: by
//! [`Container::remove`] at the end of a run, or, when the run's future is dropped or a
//! step returned early, by a thread the guard's `Drop` starts (no async runtime needed).
use super::Runtime;
use skillgate_core::ExecError;
use skillgate_sandbox::workdir::WorkDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

/// The guard of one run's container (see the [module](self) documentation).
pub(crate) struct Container {
    runtime: Arc<Runtime>,
    id: String,
    /// The host's mount of `/out`, once made.
    out_mount: Option<PathBuf>,
    /// The run's folder (bundle, code, `/out`); removed after the mount is gone.
    dir: Option<WorkDir>,
}

impl Container {
    /// A guard for the container `id` of `runtime`, whose files are in `dir`.
    pub(crate) fn new(runtime: Arc<Runtime>, id: String, dir: WorkDir) -> Self {
        Container {
            runtime,
            id,
            out_mount: None,
            dir: Some(dir),
        }
    }

    /// The run's folder.
    pub(crate) fn dir(&self) -> &WorkDir {
        self.dir
            .as_ref()
            .expect("the folder lives as long as the guard")
    }

    /// Mounts a tmpfs of `size` bytes at the run's `out` folder, owned by `uid:gid`: the
    /// skill's `/out`, bounded, read by the host after the run.
    pub(crate) fn mount_out(&mut self, size: u64, uid: u32, gid: u32) -> Result<(), ExecError> {
        use rustix::mount::{MountFlags, mount};
        let out = self.dir().out();
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
        self.out_mount = Some(out);
        Ok(())
    }

    /// Removes the container and the host's files of the run now.
    pub(crate) async fn remove(mut self) {
        let parts = self.take();
        let _ = tokio::task::spawn_blocking(move || parts.remove()).await;
    }

    fn take(&mut self) -> Parts {
        Parts {
            runtime: self.runtime.clone(),
            id: std::mem::take(&mut self.id),
            out_mount: self.out_mount.take(),
            dir: self.dir.take(),
        }
    }
}

/// What is left to remove.
struct Parts {
    runtime: Arc<Runtime>,
    id: String,
    out_mount: Option<PathBuf>,
    dir: Option<WorkDir>,
}

impl Parts {
    fn remove(self) {
        if !self.id.is_empty() {
            delete(&self.runtime, &self.id);
            remove_cgroups(&self.id);
        }
        if let Some(out) = &self.out_mount {
            unmount(out);
        }
        // The folder goes last: removing it under a live mount would fail.
        drop(self.dir);
    }
}

/// `RUNTIME delete --force ID`: kills what is left of the container and removes its
/// state and cgroups; a container that is already gone is not an error.
pub(crate) fn delete(runtime: &Runtime, id: &str) {
    let out = Command::new(&runtime.binary)
        .args(runtime.global_args())
        .args(["delete", "--force", id])
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stderr);
            if !(text.contains("does not exist") || text.contains("not exist")) {
                tracing::warn!(container = %id, error = %text.trim(), "deleting an OCI container");
            }
        }
        Err(e) => tracing::warn!(container = %id, error = %e, "running the OCI runtime's delete"),
    }
}

/// Removes the container's cgroup folders the runtime left (gVisor's runsc leaves them
/// when its sandbox failed to start); `rmdir` removes only empty ones.
fn remove_cgroups(id: &str) {
    let Ok(controllers) = std::fs::read_dir("/sys/fs/cgroup") else {
        return;
    };
    for c in controllers.flatten() {
        let dir = c
            .path()
            .join(super::CGROUP_PARENT.trim_start_matches('/'))
            .join(id);
        if dir.is_dir() {
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

fn unmount(path: &Path) {
    use rustix::mount::{UnmountFlags, unmount};
    if let Err(e) = unmount(path, UnmountFlags::DETACH) {
        tracing::warn!(path = %path.display(), error = %e, "unmounting a run's output tmpfs");
    }
}

impl Parts {
    /// Hands the removal to a process of its own (`sh -c 'delete; umount; rm'`), so it
    /// completes even when this process exits right after dropping the run (a second
    /// SIGTERM to `skillgate run`); a thread only reaps it. Nothing here blocks.
    fn remove_detached(mut self) {
        let root = self.dir.as_ref().map(|d| d.root().to_path_buf());
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(
                r#"rt="$1"; id="$2"; out="$3"; dir="$4"; shift 4
[ -n "$id" ] && "$rt" "$@" delete --force "$id" >/dev/null 2>&1
[ -n "$id" ] && rmdir /sys/fs/cgroup/*/skillgate/"$id" 2>/dev/null
[ -n "$out" ] && umount -l "$out" 2>/dev/null
[ -n "$dir" ] && rm -rf -- "$dir"
exit 0"#,
            )
            .arg("skillgate-oci-cleanup")
            .arg(&self.runtime.binary)
            .arg(&self.id)
            .arg(self.out_mount.as_deref().unwrap_or(Path::new("")))
            .arg(root.as_deref().unwrap_or(Path::new("")))
            .args(self.runtime.global_args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match cmd.spawn() {
            Ok(mut child) => {
                // The folder is the cleanup process's now (its TempDir must not race it).
                if let Some(dir) = self.dir.take() {
                    std::mem::forget(dir);
                }
                let _ = std::thread::Builder::new()
                    .name("skillgate-oci-reap".into())
                    .spawn(move || child.wait());
            }
            Err(e) => {
                tracing::warn!(container = %self.id, error = %e, "starting the removal of an abandoned OCI container; removing it on a thread");
                let _ = std::thread::Builder::new()
                    .name("skillgate-oci-cleanup".into())
                    .spawn(move || self.remove());
            }
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if self.id.is_empty() && self.dir.is_none() {
            return;
        }
        self.take().remove_detached();
    }
}
