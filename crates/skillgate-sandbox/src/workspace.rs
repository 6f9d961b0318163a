//! A session's workspace (`SandboxSpec::workspace`): a host directory the sandbox mounts
//! writable. Its tree is handed to the sandbox user before each run, so files written
//! on the host (an upload, a restored snapshot) can be changed by the run.
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, Uid};
use skillgate_core::ExecError;
use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;

/// How a directory of the tree is opened: never through a link.
const DIR: OFlags = OFlags::DIRECTORY
    .union(OFlags::RDONLY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Gives every entry of the tree at `root` (itself included) to `uid:gid`. Symbolic
/// links are changed themselves, never followed. Every entry is changed relative to its
/// directory's descriptor (a session's workspace has hundreds of files, handed over at
/// every step), and the walk is a loop over an explicit stack (a deep tree cannot
/// overflow the host's stack); a directory stays open only while entries beneath it
/// wait on the stack.
pub(crate) fn hand_over(root: &Path, uid: u32, gid: u32) -> Result<(), ExecError> {
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    let fail = |what: &str, e: rustix::io::Errno| {
        ExecError::io(
            format!(
                "handing the workspace {} to the sandbox user: {what}",
                root.display()
            ),
            e.into(),
        )
    };
    let top = rustix::fs::open(root, DIR, Mode::empty()).map_err(|e| fail("opening it", e))?;
    rustix::fs::fchown(&top, Some(uid), Some(gid)).map_err(|e| fail("its root", e))?;
    let mut stack: Vec<(Arc<OwnedFd>, CString)> = Vec::new();
    let mut next = Some(Arc::new(top));
    loop {
        let dir = match next.take() {
            Some(dir) => dir,
            None => match stack.pop() {
                Some((parent, name)) => Arc::new(
                    rustix::fs::openat(parent.as_fd(), &name, DIR, Mode::empty())
                        .map_err(|e| fail(&format!("opening {name:?}"), e))?,
                ),
                None => return Ok(()),
            },
        };
        let mut entries =
            rustix::fs::Dir::read_from(dir.as_fd()).map_err(|e| fail("reading", e))?;
        while let Some(entry) = entries.read() {
            let entry = entry.map_err(|e| fail("reading", e))?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            rustix::fs::chownat(
                dir.as_fd(),
                name,
                Some(uid),
                Some(gid),
                AtFlags::SYMLINK_NOFOLLOW,
            )
            .map_err(|e| fail(&format!("{name:?}"), e))?;
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| FileType::from_raw_mode(st.st_mode))
                        .map_err(|e| fail(&format!("{name:?}"), e))?
                }
                kind => kind,
            };
            if kind == FileType::Directory {
                stack.push((dir.clone(), name.to_owned()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_whole_tree_is_handed_over_and_links_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("host-file");
        std::fs::write(&target, b"x").unwrap();
        let before = std::fs::metadata(&target).unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("a/b")).unwrap();
        std::fs::write(ws.path().join("a/b/f"), b"y").unwrap();
        std::os::unix::fs::symlink(&target, ws.path().join("a/link")).unwrap();
        // Root can give files away; anyone else can only "give" them to themselves.
        let (uid, gid) = if rustix::process::geteuid().is_root() {
            (4242, 4343)
        } else {
            (before.uid(), before.gid())
        };
        hand_over(ws.path(), uid, gid).unwrap();
        for p in ["", "a", "a/b", "a/b/f"] {
            let m = std::fs::symlink_metadata(ws.path().join(p)).unwrap();
            assert_eq!((m.uid(), m.gid()), (uid, gid), "{p}");
        }
        let link = std::fs::symlink_metadata(ws.path().join("a/link")).unwrap();
        assert_eq!((link.uid(), link.gid()), (uid, gid));
        let after = std::fs::metadata(&target).unwrap();
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }
}
