//! Containers whose owner died: a `skillgate` process killed mid-run (even by SIGKILL)
//! leaves its container, and on the host the run's folder with its `/out` tmpfs. Every
//! container carries its owner ([`OWNER_LABEL`]: this host's boot id, the process id and
//! the process's start time, so a reused pid is not taken for the owner) and its run's
//! folder ([`DIR_LABEL`]). An executor's first run removes those of owners on this host
//! that are gone ([`sweep`]); containers of other hosts (another boot id) are left alone.
use bollard::Docker;
use bollard::query_parameters::ListContainersOptions;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// The label naming the process that created a container: `BOOT_ID/PID/START_TIME`.
pub const OWNER_LABEL: &str = "io.skillgate.owner";
/// The label naming the run's folder on the host.
pub const DIR_LABEL: &str = "io.skillgate.dir";
/// The prefix of every run folder's name (`WorkDir::prepare`): the sweep removes nothing
/// else.
const RUN_DIR_PREFIX: &str = "skillgate-run-";

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// A process's start time, in clock ticks since boot (field 22 of `/proc/PID/stat`).
fn start_time(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_owned)
}

/// This process, as [`OWNER_LABEL`] names it (empty when `/proc` cannot say: such a
/// container is never swept).
pub fn owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id().to_string();
        match (boot_id(), start_time(&pid)) {
            (Some(boot), Some(start)) => format!("{boot}/{pid}/{start}"),
            _ => String::new(),
        }
    })
}

/// Whether the owner `label` names a process of this boot that has ended; `false` for
/// a live owner, another host's, or a label that does not parse.
fn ended(label: &str) -> bool {
    let mut parts = label.split('/');
    let (Some(boot), Some(pid), Some(start), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    if boot_id().as_deref() != Some(boot)
        || pid.is_empty()
        || !pid.bytes().all(|b| b.is_ascii_digit())
    {
        return false;
    }
    start_time(pid).as_deref() != Some(start)
}

/// Unmounts a dead run's `/out` and removes its folder, if `dir` is a run folder.
fn remove_run_dir(dir: &Path) {
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(RUN_DIR_PREFIX));
    if !named || !dir.is_absolute() {
        return;
    }
    let _ = rustix::mount::unmount(dir.join("out"), rustix::mount::UnmountFlags::DETACH);
    if let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), error = %e, "removing the folder of a dead owner's run");
    }
}

/// Removes the containers (and their run folders) of owners on this host that ended.
/// Returns how many containers it removed; an engine that does not answer is only
/// logged (the next executor tries again).
pub(crate) async fn sweep(docker: &Docker) -> usize {
    let opts = ListContainersOptions {
        all: true,
        filters: Some(HashMap::from([(
            "label".to_string(),
            vec![OWNER_LABEL.to_string()],
        )])),
        ..Default::default()
    };
    let listed = match tokio::time::timeout(
        super::ENGINE_CALL_TIMEOUT,
        docker.list_containers(Some(opts)),
    )
    .await
    {
        Ok(Ok(listed)) => listed,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "listing containers of ended owners");
            return 0;
        }
        Err(_) => {
            tracing::warn!("listing containers of ended owners timed out");
            return 0;
        }
    };
    let mut removed = 0;
    for c in listed {
        let labels = c.labels.unwrap_or_default();
        let (Some(id), Some(owner)) = (c.id, labels.get(OWNER_LABEL)) else {
            continue;
        };
        if !ended(owner) {
            continue;
        }
        if let Err(e) = super::guard::remove(docker, &id).await {
            tracing::warn!(container = %id, error = %e, "removing the container of an ended owner");
            continue;
        }
        removed += 1;
        if let Some(dir) = labels.get(DIR_LABEL) {
            let dir = std::path::PathBuf::from(dir);
            let _ = tokio::task::spawn_blocking(move || remove_run_dir(&dir)).await;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_made_up_one_has_ended() {
        let me = owner();
        assert_eq!(me.split('/').count(), 3, "{me}");
        assert!(!ended(me));
        let boot = boot_id().unwrap();
        let pid = std::process::id();
        // This pid with another start time: a reused pid, not the owner.
        assert!(ended(&format!("{boot}/{pid}/1")));
        // pid 0 has no /proc entry.
        assert!(ended(&format!("{boot}/0/5")));
    }

    #[test]
    fn other_hosts_and_labels_that_do_not_parse_are_left_alone() {
        assert!(!ended("another-boot/1/1"));
        assert!(!ended(""));
        assert!(!ended("a/b"));
        let boot = boot_id().unwrap();
        assert!(!ended(&format!("{boot}/../1")));
        assert!(!ended(&format!("{boot}/1/2/3")));
    }

    #[test]
    fn only_run_folders_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let other = tmp.path().join("precious");
        std::fs::create_dir(&other).unwrap();
        remove_run_dir(&other);
        assert!(other.exists());
        let run = tmp.path().join("skillgate-run-abc");
        std::fs::create_dir_all(run.join("out")).unwrap();
        remove_run_dir(&run);
        assert!(!run.exists());
        remove_run_dir(Path::new("skillgate-run-relative"));
    }
}
