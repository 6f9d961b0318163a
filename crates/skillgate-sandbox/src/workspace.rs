//! A session's workspace (`SandboxSpec::workspace`): a host directory the sandbox mounts
//! writable. Its tree is handed to the sandbox user before each run, so files written
//! on the host (an upload, a restored snapshot) can be changed by the run.
use skillgate_core::ExecError;
use std::path::Path;

/// Gives every entry of the tree at `root` (itself included) to `uid:gid`. Symbolic
/// links are changed themselves, never followed; the walk is a loop over an explicit
/// stack (a deep tree cannot overflow the host's stack).
pub(crate) fn hand_over(root: &Path, uid: u32, gid: u32) -> Result<(), ExecError> {
    let chown = |p: &Path| {
        std::os::unix::fs::lchown(p, Some(uid), Some(gid))
            .map_err(|e| ExecError::io(format!("handing {} to the sandbox user", p.display()), e))
    };
    chown(root)?;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ExecError::io(format!("reading the workspace {}", dir.display()), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| {
                ExecError::io(format!("reading the workspace {}", dir.display()), e)
            })?;
            let path = entry.path();
            chown(&path)?;
            let kind = entry
                .file_type()
                .map_err(|e| ExecError::io(format!("reading {}", path.display()), e))?;
            if kind.is_dir() {
                stack.push(path);
            }
        }
    }
    Ok(())
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
