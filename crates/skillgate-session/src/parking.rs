//! [`ParkingLot`]: session workspaces kept between processes.
//!
//! `skillgate session exec` is a process per step. Without this, every step restores the
//! newest snapshot into a new tmpfs and unmounts it again at exit, so a step's cost grows
//! with the workspace (a 1,000-step session: ~6 ms to restore 250 files, ~3 ms more to
//! free them). A parked workspace stays mounted at `<root>/<session>/ws` after its step is
//! recorded, with a ticket at `<root>/<session>/head` saying where in the log it stands.
//! The next process takes it over when the ticket holds: same boot, same size, still a
//! tmpfs mounted there, and a position the log continues (checked by [`crate::Sessions`]
//! against the chained keys, as for a workspace held in memory).
//!
//! Who holds the ticket owns the workspace. Taking it ([`ParkingLot::claim`]) is one
//! `rename` away from its name, so of two processes (a claim under the session's lock
//! and an eviction without it) only one gets it; the ticket is gone before the workspace
//! changes, so a process killed mid-step leaves a workspace without a ticket, which the
//! next process remounts empty and restores from the log. At most `capacity` workspaces
//! stay parked: parking one more evicts the longest parked (each holds its files in
//! memory until evicted, the session removed, or the machine restarted).
use crate::backend::Position;
use rustix::mount::UnmountFlags;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// The ticket's file name in a session's slot.
const TICKET: &str = "head";
/// The mount point's name in a session's slot.
const WORKSPACE: &str = "ws";
/// `statfs`'s file system type of a tmpfs.
const TMPFS_MAGIC: i64 = 0x0102_1994;

/// What a ticket records.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Ticket {
    /// The boot it was parked in (a mount does not survive a restart; the ticket does).
    boot_id: String,
    /// The workspace's size cap (a different one is a different workspace).
    bytes: u64,
    #[serde(flatten)]
    at: Position,
}

/// Session workspaces parked under one directory (in the CLI: the state directory's
/// `session-workspaces`).
///
/// ```no_run
/// use skillgate_session::ParkingLot;
/// let lot = ParkingLot::new("/var/lib/skillgate/session-workspaces", 32);
/// // `skillgate session gc`: workspaces of sessions that no longer exist.
/// let evicted = lot.sweep(|id| id == "0123456789abcdef0123456789abcdef")?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ParkingLot {
    root: PathBuf,
    capacity: usize,
}

impl ParkingLot {
    /// A lot under `root` (made when the first workspace is parked), keeping at most
    /// `capacity` workspaces.
    pub fn new(root: impl Into<PathBuf>, capacity: usize) -> ParkingLot {
        ParkingLot {
            root: root.into(),
            capacity,
        }
    }

    /// The directory session `id`'s workspace is mounted on (made, mode 0700).
    pub fn workspace_dir(&self, id: &str) -> io::Result<PathBuf> {
        let slot = self.slot(id)?;
        let ws = slot.join(WORKSPACE);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&ws)?;
        Ok(ws)
    }

    fn slot(&self, id: &str) -> io::Result<PathBuf> {
        crate::id::check(id).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(self.root.join(id))
    }

    /// Takes session `id`'s parked workspace: where it stands, when one of `bytes` is
    /// parked there in this boot and still mounted. Whatever the answer, no ticket is
    /// left: the caller owns what is mounted there (and remounts it unless it continues).
    pub fn claim(&self, id: &str, bytes: u64) -> io::Result<Option<Position>> {
        let slot = self.slot(id)?;
        let Some(text) = take(&slot.join(TICKET))? else {
            return Ok(None);
        };
        let Ok(ticket) = serde_json::from_slice::<Ticket>(&text) else {
            return Ok(None);
        };
        let valid = ticket.bytes == bytes
            && ticket.boot_id == boot_id()?
            && is_tmpfs_mount(&slot.join(WORKSPACE))?;
        Ok(valid.then_some(ticket.at))
    }

    /// Records that session `id`'s workspace (mounted on [`workspace_dir`](Self::workspace_dir),
    /// `bytes` big) stands at `at`, then evicts the longest parked ones beyond the
    /// capacity.
    pub fn park(&self, id: &str, bytes: u64, at: &Position) -> io::Result<()> {
        let slot = self.slot(id)?;
        let ticket = Ticket {
            boot_id: boot_id()?,
            bytes,
            at: at.clone(),
        };
        let tmp = slot.join(format!("{TICKET}.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec(&ticket)?)?;
        std::fs::rename(&tmp, slot.join(TICKET))?;
        self.evict_beyond_capacity()
    }

    fn evict_beyond_capacity(&self) -> io::Result<()> {
        let mut parked = Vec::new();
        for entry in std::fs::read_dir(&self.root)? {
            let entry = entry?;
            let Some(id) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            // A ticket taken meanwhile is a workspace in use: not parked.
            if let Ok(meta) = std::fs::metadata(entry.path().join(TICKET)) {
                parked.push((meta.modified()?, id));
            }
        }
        if parked.len() <= self.capacity {
            return Ok(());
        }
        parked.sort();
        for (_, id) in &parked[..parked.len() - self.capacity] {
            let slot = self.slot(id)?;
            // Only a ticket taken here may be evicted: a claim under way keeps its own.
            // The directory stays: a process may be about to mount on it again.
            if take(&slot.join(TICKET))?.is_some() {
                unmount_workspace(&slot)?;
            }
        }
        Ok(())
    }

    /// Unmounts and removes session `id`'s workspace, parked or left by a process that
    /// died: for a session removed (the caller holds its lock or it no longer exists).
    /// `true` when there was one.
    pub fn evict(&self, id: &str) -> io::Result<bool> {
        let slot = self.slot(id)?;
        if !slot.exists() {
            return Ok(false);
        }
        release(&slot)?;
        Ok(true)
    }

    /// Evicts the workspaces of the sessions `live` says no longer exist; returns how
    /// many.
    pub fn sweep(&self, live: impl Fn(&str) -> bool) -> io::Result<u32> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut n = 0;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(id) = name.to_str() else { continue };
            if crate::id::check(id).is_ok() && !live(id) && self.evict(id)? {
                n += 1;
            }
        }
        Ok(n)
    }
}

/// Moves the file at `path` out of the way (one atomic rename: one taker wins) and
/// returns what it held; `None` when there is none.
fn take(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let taken = path.with_extension(format!("taken.{}", std::process::id()));
    match std::fs::rename(path, &taken) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let text = std::fs::read(&taken);
    std::fs::remove_file(&taken)?;
    text.map(Some)
}

/// Unmounts a slot's workspace, if mounted.
fn unmount_workspace(slot: &Path) -> io::Result<()> {
    let ws = slot.join(WORKSPACE);
    if is_tmpfs_mount(&ws)? {
        match rustix::mount::unmount(&ws, UnmountFlags::DETACH) {
            // Unmounted meanwhile by the process that owns it now.
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Unmounts a slot's workspace (if mounted) and removes the slot.
fn release(slot: &Path) -> io::Result<()> {
    unmount_workspace(slot)?;
    match std::fs::remove_dir_all(slot) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Whether a tmpfs is mounted right on `dir` (not only beneath a tmpfs it is in).
pub(crate) fn is_tmpfs_mount(dir: &Path) -> io::Result<bool> {
    let Some(parent) = dir.parent() else {
        return Ok(false);
    };
    let (here, above) = match (rustix::fs::stat(dir), rustix::fs::stat(parent)) {
        (Ok(here), Ok(above)) => (here, above),
        (Err(rustix::io::Errno::NOENT), _) => return Ok(false),
        (Err(e), _) | (_, Err(e)) => return Err(e.into()),
    };
    if here.st_dev == above.st_dev {
        return Ok(false);
    }
    let fs = rustix::fs::statfs(dir)?;
    // `f_type` is an `i64` on x86-64 and narrower elsewhere.
    #[allow(clippy::useless_conversion)]
    let kind = i64::from(fs.f_type);
    Ok(kind == TMPFS_MAGIC)
}

/// This boot's id.
fn boot_id() -> io::Result<String> {
    Ok(std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
        .trim()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seq: u64) -> Position {
        Position {
            seq,
            key: format!("k{seq}"),
            steps_since_snapshot: 1,
            ms_since_snapshot: 20,
        }
    }

    const ID: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn a_ticket_without_a_mounted_tmpfs_is_not_taken_over_and_is_gone_after() {
        let dir = tempfile::tempdir().unwrap();
        let lot = ParkingLot::new(dir.path(), 4);
        lot.workspace_dir(ID).unwrap();
        // A plain directory, as after a restart: never a workspace to continue.
        lot.park(ID, 4096, &at(3)).unwrap();
        assert_eq!(lot.claim(ID, 4096).unwrap(), None);
        assert!(!dir.path().join(ID).join(TICKET).exists());
        assert_eq!(lot.claim(ID, 4096).unwrap(), None);
    }

    #[test]
    fn ids_that_are_not_session_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let lot = ParkingLot::new(dir.path(), 4);
        for bad in ["..", "../x", "a/b", ""] {
            assert!(lot.workspace_dir(bad).is_err(), "{bad}");
            assert!(lot.claim(bad, 1).is_err(), "{bad}");
        }
    }
}
