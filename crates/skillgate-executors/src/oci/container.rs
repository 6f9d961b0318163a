//! One run's container and everything the host holds for it (the runtime's state, the
//! cgroups, the `/out` tmpfs, the bundle and work folder), removed on every path:
//! - by [`Container::remove`] at the end of a run;
//! - by the run's **watcher** otherwise: a small process (`/bin/sh`) started with the guard,
//!   blocked reading a pipe whose only writer is this process. `remove` tells it `done`
//!   and it exits. When the pipe closes without that (the run's future was dropped, a
//!   step returned early, or this process died, even by SIGKILL), it deletes the
//!   container, unmounts `/out` and removes the folder itself. It ignores SIGINT, SIGTERM
//!   and SIGHUP and has a process group of its own, so what ends this process does not
//!   end it first.
use super::Runtime;
use crate::run_dir::OutTmpfs;
use skillgate_core::ExecError;
use skillgate_sandbox::workdir::WorkDir;
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;

/// What the watcher runs: wait for `done` on stdin; anything else (EOF) removes the run.
const WATCHER: &str = r#"trap '' INT TERM HUP PIPE
IFS= read -r word
[ "$word" = done ] && exit 0
rt="$1"; id="$2"; cgroup="$3"; out="$4"; dir="$5"; shift 5
"$rt" "$@" delete --force "$id" >/dev/null 2>&1
for c in /sys/fs/cgroup/*/"$cgroup"/"$id" /sys/fs/cgroup/"$cgroup"/"$id"; do
  [ -d "$c" ] && rmdir "$c" 2>/dev/null
done
umount -l "$out" 2>/dev/null
rm -rf -- "$dir"
exit 0"#;

/// The guard of one run's container (see the [module](self) documentation).
pub(crate) struct Container {
    runtime: Arc<Runtime>,
    id: String,
    /// The host's mount of `/out`, once made.
    out_mount: Option<OutTmpfs>,
    /// The run's folder (bundle, code, `/out`); removed after the mount is gone.
    dir: Option<WorkDir>,
    /// The watcher, and the writing end of its pipe.
    watcher: Option<(Child, ChildStdin)>,
}

impl Container {
    /// A guard for the container `id` of `runtime`, whose files are in `dir`; starts the
    /// run's watcher. Without a watcher nothing would remove the container after this
    /// process dies, so a watcher that cannot start is an error.
    pub(crate) fn new(runtime: Arc<Runtime>, id: String, dir: WorkDir) -> Result<Self, ExecError> {
        let out = dir.out();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(WATCHER)
            .arg("skillgate-oci-watch")
            .arg(&runtime.binary)
            .arg(&id)
            .arg(super::CGROUP_PARENT.trim_start_matches('/'))
            .arg(&out)
            .arg(dir.root())
            .args(runtime.global_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| ExecError::io("starting the run's cleanup watcher (/bin/sh)", e))?;
        let stdin = child.stdin.take().expect("stdin was piped");
        Ok(Container {
            runtime,
            id,
            out_mount: None,
            dir: Some(dir),
            watcher: Some((child, stdin)),
        })
    }
    /// The run's folder.
    pub(crate) fn dir(&self) -> &WorkDir {
        self.dir
            .as_ref()
            .expect("the folder lives as long as the guard")
    }

    /// Mounts the run's `/out` (see [`OutTmpfs`]), of `size` bytes, owned by `uid:gid`.
    pub(crate) fn mount_out(&mut self, size: u64, uid: u32, gid: u32) -> Result<(), ExecError> {
        self.out_mount = Some(OutTmpfs::mount(self.dir(), size, uid, gid)?);
        Ok(())
    }

    /// Removes the container and the host's files of the run now.
    pub(crate) async fn remove(mut self) {
        let parts = self.take();
        let watcher = self.watcher.take();
        let _ = tokio::task::spawn_blocking(move || {
            parts.remove();
            if let Some((mut child, mut stdin)) = watcher {
                // A watcher already gone (someone killed it) has nothing left to do.
                let _ = stdin.write_all(b"done\n");
                drop(stdin);
                let _ = child.wait();
            }
        })
        .await;
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
    out_mount: Option<OutTmpfs>,
    dir: Option<WorkDir>,
}

impl Parts {
    fn remove(self) {
        if !self.id.is_empty() {
            delete(&self.runtime, &self.id);
            remove_cgroups(&self.id);
        }
        drop(self.out_mount);
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

impl Drop for Container {
    /// Closes the watcher's pipe without `done`: the watcher removes the container and the
    /// folder (the folder is its now: this side must not race it); a thread only reaps it.
    fn drop(&mut self) {
        let Some((mut child, stdin)) = self.watcher.take() else {
            return;
        };
        if let Some(dir) = self.dir.take() {
            std::mem::forget(dir);
        }
        if let Some(out) = self.out_mount.take() {
            out.leave();
        }
        drop(stdin);
        let _ = std::thread::Builder::new()
            .name("skillgate-oci-reap".into())
            .spawn(move || child.wait());
    }
}
