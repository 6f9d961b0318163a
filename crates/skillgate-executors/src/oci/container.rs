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

fn unmount(path: &Path) {
    use rustix::mount::{UnmountFlags, unmount};
    if let Err(e) = unmount(path, UnmountFlags::DETACH) {
        tracing::warn!(path = %path.display(), error = %e, "unmounting a run's output tmpfs");
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if self.id.is_empty() && self.dir.is_none() {
            return;
        }
        let parts = self.take();
        // Blocking calls (the runtime's delete), never on an async worker.
        let spawned = std::thread::Builder::new()
            .name("skillgate-oci-cleanup".into())
            .spawn(move || parts.remove());
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "no thread to remove an abandoned OCI container");
        }
    }
}
