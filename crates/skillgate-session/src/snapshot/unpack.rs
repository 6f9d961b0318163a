//! Writing a snapshot's entries into a workspace, each one relative to an open descriptor
//! of its parent directory: no path is resolved from the root again for every entry, and
//! no component is ever followed through a symbolic link (`O_NOFOLLOW` on every open, a
//! link where a directory should be is an error). A restore writes a few hundred files
//! at every warm session step, so this is on a step's path.
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Component, Path};

/// How a directory on the way to an entry is opened: never through a link.
const DIR: OFlags = OFlags::DIRECTORY
    .union(OFlags::RDONLY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A directory the archive did not list but one of its entries lies beneath.
const IMPLICIT_DIR_MODE: u32 = 0o755;

/// Writes entries beneath one root. Keeps the directories of the last entry's path open
/// (a sorted archive, as [`super::pack`] writes, opens each directory once) and the
/// listed directories' modes, which [`Unpacker::finish`] sets last, so that a directory
/// without write permission still receives its entries.
pub(super) struct Unpacker {
    root: OwnedFd,
    /// The open directories from the root down: each name with its descriptor.
    open: Vec<(OsString, OwnedFd)>,
    /// Every directory entry seen, with its permission bits.
    modes: Vec<(Vec<OsString>, u32)>,
}

/// The names of a checked entry path (plain names only: `check_entry` refused the rest).
fn names(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            _ => None,
        })
        .collect()
}

fn context(path: &Path, what: &str, e: impl Into<std::io::Error>) -> std::io::Error {
    let e = e.into();
    std::io::Error::new(
        e.kind(),
        format!("restoring `{}`: {what}: {e}", path.display()),
    )
}

impl Unpacker {
    /// Writes beneath the existing directory `root`.
    pub(super) fn new(root: &Path) -> std::io::Result<Unpacker> {
        let root = rustix::fs::open(root, DIR, Mode::empty())
            .map_err(|e| context(root, "opening the workspace", e))?;
        Ok(Unpacker {
            root,
            open: Vec::new(),
            modes: Vec::new(),
        })
    }

    /// The directory `dirs` (names from the root), made where missing, never reached
    /// through a link.
    fn dir(&mut self, dirs: &[OsString]) -> Result<&OwnedFd, Errno> {
        let common = self
            .open
            .iter()
            .zip(dirs)
            .take_while(|((open, _), want)| open == *want)
            .count();
        self.open.truncate(common);
        for name in &dirs[common..] {
            let parent = self.open.last().map_or(&self.root, |(_, fd)| fd);
            match rustix::fs::mkdirat(parent.as_fd(), name.as_os_str(), IMPLICIT_DIR_MODE.into()) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e),
            }
            let fd = rustix::fs::openat(parent.as_fd(), name.as_os_str(), DIR, Mode::empty())?;
            self.open.push((name.clone(), fd));
        }
        Ok(self.open.last().map_or(&self.root, |(_, fd)| fd))
    }

    /// Writes one checked entry (a directory, a regular file or a symbolic link).
    pub(super) fn entry<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> std::io::Result<()> {
        let path = entry.path()?.into_owned();
        let mut all = names(&path);
        let Some(name) = all.pop() else {
            return Err(context(&path, "an entry", Errno::INVAL));
        };
        let name: &OsStr = &name;
        let mode = entry.header().mode()? & 0o777;
        let kind = entry.header().entry_type();
        let parent = self
            .dir(&all)
            .map_err(|e| context(&path, "its directory (a link or a file is in the way?)", e))?
            .as_fd();
        match kind {
            tar::EntryType::Directory => {
                match rustix::fs::mkdirat(parent, name, Mode::from(0o700)) {
                    Ok(()) => {}
                    // Listed twice, or made for an earlier entry beneath it: a directory
                    // is fine, anything else in its place is not.
                    Err(Errno::EXIST) => {
                        rustix::fs::openat(parent, name, DIR, Mode::empty())
                            .map_err(|e| context(&path, "a directory", e))?;
                    }
                    Err(e) => return Err(context(&path, "a directory", e)),
                }
                all.push(name.to_os_string());
                self.modes.push((all, mode));
            }
            tar::EntryType::Regular => {
                let flags = OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::WRONLY
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC;
                let fd = rustix::fs::openat(parent, name, flags, Mode::from(0o600))
                    .map_err(|e| context(&path, "a file", e))?;
                let mut file = std::fs::File::from(fd);
                std::io::copy(entry, &mut file).map_err(|e| context(&path, "its bytes", e))?;
                rustix::fs::fchmod(&file, Mode::from(mode))
                    .map_err(|e| context(&path, "its mode", e))?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()?
                    .ok_or_else(|| context(&path, "a link", Errno::INVAL))?;
                rustix::fs::symlinkat(target.as_os_str(), parent, name)
                    .map_err(|e| context(&path, "a link", e))?;
            }
            other => {
                return Err(std::io::Error::other(format!(
                    "restoring `{}`: a {other:?} entry is not restored",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// Sets the listed directories' modes, in archive order (the last listing of one
    /// wins); each is changed through its own descriptor, so no order among them matters.
    pub(super) fn finish(mut self) -> std::io::Result<()> {
        let modes = std::mem::take(&mut self.modes);
        for (dir, mode) in modes {
            self.dir(&dir)
                .and_then(|fd| rustix::fs::fchmod(fd, Mode::from(mode)))
                .map_err(|e| context(&dir.iter().collect::<std::path::PathBuf>(), "its mode", e))?;
        }
        Ok(())
    }
}
