//! One run's container and everything the host holds for it (the runtime's state, the
//! cgroups, the `/out` tmpfs, the bundle and work folder), removed on every path by the
//! run's **watcher**: a small process (`/bin/sh`) started with the guard, blocked reading
//! a pipe whose only writer is this process. When the pipe closes, it deletes the
//! container (`RUNTIME delete --force`), removes its cgroups, unmounts `/out` and removes
//! the folder. The pipe closes when the run ends ([`Container::finish`], after its
//! outcome was read: the removal, about 5 ms of `runc delete`, is not on the run's path),
//! when the run's future is dropped or a step returns early, and when this process dies,
//! even by SIGKILL. The watcher ignores SIGINT, SIGTERM and SIGHUP and has a process group
//! of its own, so what ends this process does not end it first.
use super::Runtime;
use crate::run_dir::OutTmpfs;
use skillgate_core::ExecError;
use skillgate_sandbox::workdir::WorkDir;
use std::process::Stdio;
use tokio::process::{Child, ChildStdin, Command};

/// What the watcher runs: wait for the end of stdin, then remove the run.
const WATCHER: &str = r#"trap '' INT TERM HUP PIPE
while IFS= read -r _; do :; done
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
    pub(crate) fn new(runtime: &Runtime, id: &str, dir: WorkDir) -> Result<Self, ExecError> {
        let out = dir.out();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(WATCHER)
            .arg("skillgate-oci-watch")
            .arg(&runtime.binary)
            .arg(id)
            .arg(super::CGROUP_PARENT.trim_start_matches('/'))
            .arg(&out)
            .arg(dir.root())
            .args(runtime.global_args())
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| ExecError::io("starting the run's cleanup watcher (/bin/sh)", e))?;
        let stdin = child.stdin.take().expect("stdin was piped");
        Ok(Container {
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

    /// The run is over and its outcome read: hands the removal to the watcher.
    pub(crate) fn finish(self) {
        drop(self);
    }
}

impl Drop for Container {
    /// Closes the watcher's pipe: the watcher removes the container and the folder (the
    /// folder and the mount are its now: this side must not race it). Tokio reaps the
    /// watcher when it exits.
    fn drop(&mut self) {
        let Some((child, stdin)) = self.watcher.take() else {
            return;
        };
        if let Some(dir) = self.dir.take() {
            std::mem::forget(dir);
        }
        if let Some(out) = self.out_mount.take() {
            out.leave();
        }
        drop(stdin);
        drop(child);
    }
}
