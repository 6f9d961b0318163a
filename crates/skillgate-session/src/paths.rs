//! Paths inside a workspace, and reading and writing them from the host without ever
//! following a link a step left there (a step may plant `data -> /etc`; an upload to
//! `data/passwd` must fail, not write the host's file).
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

/// Longest path accepted, in bytes.
pub const MAX_PATH: usize = 1024;

/// The components of `path`, a `/`-separated path relative to the workspace: not empty,
/// no `.`, `..` or empty component, no NUL, at most [`MAX_PATH`] bytes.
pub fn components(path: &str) -> Result<Vec<&str>, String> {
    let bad = |why: &str| Err(format!("workspace path `{path}` {why}"));
    if path.is_empty() {
        return bad("is empty");
    }
    if path.len() > MAX_PATH {
        return bad(&format!("is longer than {MAX_PATH} bytes"));
    }
    if path.starts_with('/') {
        return bad("must be relative to the workspace");
    }
    if path.contains('\0') {
        return bad("contains a NUL byte");
    }
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return bad("must not contain `.`, `..` or an empty component");
    }
    Ok(parts)
}

/// A working directory: `""` (the workspace's root) or a path [`components`] accepts.
pub fn check_cwd(cwd: &str) -> Result<(), String> {
    if cwd.is_empty() {
        Ok(())
    } else {
        components(cwd).map(drop)
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn err(path: &str, e: Errno) -> std::io::Error {
    let e = std::io::Error::from(e);
    std::io::Error::new(e.kind(), format!("workspace path `{path}`: {e}"))
}

/// Opens the directory holding `parts`' last component, creating missing directories
/// (mode 0755) when `create`; `None` when one is missing and `create` is off.
fn parent(
    root: &Path,
    path: &str,
    parts: &[&str],
    create: bool,
) -> std::io::Result<Option<OwnedFd>> {
    let mut dir = rustix::fs::open(root, dir_flags(), Mode::empty()).map_err(|e| err(path, e))?;
    for name in &parts[..parts.len() - 1] {
        dir = match rustix::fs::openat(&dir, *name, dir_flags(), Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o755))
                    .map_err(|e| err(path, e))?;
                rustix::fs::openat(&dir, *name, dir_flags(), Mode::empty())
                    .map_err(|e| err(path, e))?
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(err(path, e)),
        };
    }
    Ok(Some(dir))
}

/// Writes `bytes` to `path` under `root` with permission bits `mode` (replacing a file
/// there), creating the directories above it. A link anywhere on the way is an error.
pub fn write(root: &Path, path: &str, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let parts = components(path).map_err(std::io::Error::other)?;
    let dir = parent(root, path, &parts, true)?.expect("created");
    let name = parts[parts.len() - 1];
    let fd = rustix::fs::openat(
        &dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode & 0o777),
    )
    .map_err(|e| err(path, e))?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o777)).map_err(|e| err(path, e))?;
    std::fs::File::from(fd).write_all(bytes)
}

/// Creates the directory `path` under `root` and those above it (a link on the way is an
/// error); returns the topmost one it created (relative to `root`), `None` when `path`
/// was there already.
pub fn make_dir(root: &Path, path: &str) -> std::io::Result<Option<String>> {
    if path.is_empty() {
        return Ok(None);
    }
    let parts = components(path).map_err(std::io::Error::other)?;
    let mut dir = rustix::fs::open(root, dir_flags(), Mode::empty()).map_err(|e| err(path, e))?;
    let mut created = None;
    for (i, name) in parts.iter().enumerate() {
        dir = match rustix::fs::openat(&dir, *name, dir_flags(), Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o755)) {
                    Ok(()) => {
                        created.get_or_insert_with(|| parts[..=i].join("/"));
                    }
                    Err(Errno::EXIST) => {}
                    Err(e) => return Err(err(path, e)),
                }
                rustix::fs::openat(&dir, *name, dir_flags(), Mode::empty())
                    .map_err(|e| err(path, e))?
            }
            Err(e) => return Err(err(path, e)),
        };
    }
    Ok(created)
}

/// The bytes of the regular file `path` under `root`, at most `cap` of them; `None` when
/// it does not exist. A link on the way, or a file larger than `cap`, is an error.
pub fn read(root: &Path, path: &str, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let parts = components(path).map_err(std::io::Error::other)?;
    let Some(dir) = parent(root, path, &parts, false)? else {
        return Ok(None);
    };
    let fd = match rustix::fs::openat(
        &dir,
        parts[parts.len() - 1],
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(err(path, e)),
    };
    let file = std::fs::File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "workspace path `{path}` is not a regular file"
        )));
    }
    if meta.len() > cap {
        return Err(std::io::Error::other(format!(
            "workspace file `{path}` is {} bytes, over the {cap} byte limit",
            meta.len()
        )));
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1).read_to_end(&mut out)?;
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_the_workspace() {
        assert_eq!(components("a/b.csv").unwrap(), vec!["a", "b.csv"]);
        assert_eq!(components("dir/").unwrap(), vec!["dir"]);
        for bad in ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\0b"] {
            assert!(components(bad).is_err(), "{bad:?}");
        }
        assert!(components(&"a".repeat(MAX_PATH + 1)).is_err());
    }

    #[test]
    fn writes_and_reads_never_follow_a_planted_link() {
        let outside = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("data")).unwrap();
        std::fs::write(outside.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), ws.path().join("link")).unwrap();

        assert!(write(ws.path(), "data/x", b"y", 0o644).is_err());
        assert!(!outside.path().join("x").exists());
        assert!(write(ws.path(), "link", b"y", 0o644).is_err());
        assert_eq!(std::fs::read(outside.path().join("secret")).unwrap(), b"s");
        assert!(read(ws.path(), "data/secret", 10).is_err());
        assert!(read(ws.path(), "link", 10).is_err());

        write(ws.path(), "a/b/c.txt", b"hello", 0o755).unwrap();
        assert_eq!(read(ws.path(), "a/b/c.txt", 10).unwrap().unwrap(), b"hello");
        assert!(read(ws.path(), "a/b/c.txt", 2).is_err());
        assert!(read(ws.path(), "a/none", 10).unwrap().is_none());
        assert!(read(ws.path(), "none/none", 10).unwrap().is_none());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(ws.path().join("a/b/c.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}
