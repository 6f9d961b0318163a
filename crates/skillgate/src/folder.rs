//! Reading a skill folder from beneath itself.
//!
//! The folder is walked without recursion, each directory and file opened relative to the
//! folder with `openat2` and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV` (plus `O_NOFOLLOW`), so neither a symbolic
//! link, a `..` nor a mount inside the folder leads outside it. Anything that is not a
//! directory or a regular file with a single link (a symbolic link, a hard link, a FIFO, a
//! device, a socket) is refused, naming it; so is a folder deeper, with more entries or
//! more bytes than the caps below, and a name that is not UTF-8. Every file is read once:
//! the bytes returned are what the pre-scan checks and what the sandbox gets.
//!
//! Only the folder's own path, given by the operator, is resolved the ordinary way.
use crate::skill_dir::SkillError;
use rustix::fs::{Dir, FileType, Mode, OFlags, ResolveFlags};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Deepest nesting of folders accepted (the folder's own entries are at depth 1).
pub const MAX_DEPTH: usize = 16;
/// Most entries (files and folders) accepted.
pub const MAX_ENTRIES: usize = 1000;
/// Most bytes of all files together.
pub const MAX_TOTAL_BYTES: u64 = 8 * 1024 * 1024;

/// A skill folder as read: its canonical path and every file's bytes, keyed by its
/// `/`-separated path relative to the folder.
#[derive(Debug)]
pub(crate) struct Folder {
    /// The folder's canonical path (for its name and messages).
    pub(crate) root: PathBuf,
    /// Every regular file.
    pub(crate) files: BTreeMap<String, Vec<u8>>,
}

/// How every path beneath the folder is resolved.
fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH
        | ResolveFlags::NO_SYMLINKS
        | ResolveFlags::NO_MAGICLINKS
        | ResolveFlags::NO_XDEV
}

/// Reads every file of the folder at `dir`; see the [module docs](self).
pub(crate) fn read(dir: &Path) -> Result<Folder, SkillError> {
    let open_err = |source: std::io::Error| SkillError::Folder {
        path: dir.into(),
        message: format!("cannot open it ({source}); a skill folder holds a SKILL.md"),
    };
    let root_fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| open_err(e.into()))?;
    let root = std::fs::canonicalize(dir).map_err(open_err)?;
    let refuse = |rel: &str, reason: String| SkillError::Refused {
        path: dir.join(rel),
        reason,
    };
    let io_err = |rel: &str, e: rustix::io::Errno| SkillError::Read {
        path: dir.join(rel),
        source: e.into(),
    };

    let mut files = BTreeMap::new();
    let mut entries = 0usize;
    let mut total = 0u64;
    // Folders still to list: their path relative to the folder, and their depth.
    let mut pending: Vec<(String, usize)> = vec![(String::new(), 0)];
    while let Some((rel_dir, depth)) = pending.pop() {
        let dir_fd = if rel_dir.is_empty() {
            open_beneath(&root_fd, ".", OFlags::DIRECTORY).map_err(|e| io_err("", e))?
        } else {
            open_beneath(&root_fd, &rel_dir, OFlags::DIRECTORY)
                .map_err(|e| refusal_or_io(&refuse, &io_err, &rel_dir, e))?
        };
        let mut names = Vec::new();
        for entry in Dir::read_from(&dir_fd).map_err(|e| io_err(&rel_dir, e))? {
            let entry = entry.map_err(|e| io_err(&rel_dir, e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            entries += 1;
            if entries > MAX_ENTRIES {
                return Err(SkillError::Folder {
                    path: dir.into(),
                    message: format!("it has more than {MAX_ENTRIES} files and folders"),
                });
            }
            let rel = match std::str::from_utf8(name) {
                Ok(n) if rel_dir.is_empty() => n.to_string(),
                Ok(n) => format!("{rel_dir}/{n}"),
                Err(_) => {
                    let lossy = String::from_utf8_lossy(name).into_owned();
                    return Err(refuse(&lossy, "its name is not UTF-8".into()));
                }
            };
            names.push(rel);
        }
        names.sort();
        for rel in names {
            // Look before opening: a FIFO or a device is refused without being opened.
            let st = rustix::fs::statat(
                &dir_fd,
                file_name(&rel),
                rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
            )
            .map_err(|e| io_err(&rel, e))?;
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    if depth + 1 > MAX_DEPTH {
                        return Err(refuse(
                            &rel,
                            format!("folders nest deeper than {MAX_DEPTH} levels"),
                        ));
                    }
                    pending.push((rel, depth + 1));
                }
                FileType::RegularFile => {
                    let bytes = read_file(&root_fd, &rel, MAX_TOTAL_BYTES - total).map_err(
                        |e| match e {
                            ReadError::Errno(e) => refusal_or_io(&refuse, &io_err, &rel, e),
                            ReadError::Io(source) => SkillError::Read {
                                path: dir.join(&rel),
                                source,
                            },
                            ReadError::Refused(reason) => refuse(&rel, reason),
                            ReadError::TooLarge => SkillError::Folder {
                                path: dir.into(),
                                message: format!(
                                    "its files hold more than {MAX_TOTAL_BYTES} bytes together"
                                ),
                            },
                        },
                    )?;
                    total += bytes.len() as u64;
                    files.insert(rel, bytes);
                }
                other => return Err(refuse(&rel, format!("it is {}", describe(other)))),
            }
        }
    }
    Ok(Folder { root, files })
}

/// The last component of a `/`-separated path.
fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Opens `rel` beneath `root` without following any link or leaving the folder.
fn open_beneath(root: &OwnedFd, rel: &str, extra: OFlags) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat2(
        root,
        rel,
        OFlags::RDONLY
            | OFlags::CLOEXEC
            | OFlags::NOFOLLOW
            | OFlags::NOCTTY
            | OFlags::NONBLOCK
            | extra,
        Mode::empty(),
        beneath(),
    )
}

/// A symbolic link or a mount met while resolving is a refusal; anything else an I/O
/// error.
fn refusal_or_io(
    refuse: &impl Fn(&str, String) -> SkillError,
    io_err: &impl Fn(&str, rustix::io::Errno) -> SkillError,
    rel: &str,
    e: rustix::io::Errno,
) -> SkillError {
    match e {
        rustix::io::Errno::LOOP => refuse(rel, "it is a symbolic link".into()),
        rustix::io::Errno::XDEV => refuse(rel, "it is on another mount".into()),
        e => io_err(rel, e),
    }
}

enum ReadError {
    Errno(rustix::io::Errno),
    Io(std::io::Error),
    Refused(String),
    TooLarge,
}

/// Reads the regular file `rel` with a single link, at most `left` bytes.
fn read_file(root: &OwnedFd, rel: &str, left: u64) -> Result<Vec<u8>, ReadError> {
    let fd = open_beneath(root, rel, OFlags::empty()).map_err(ReadError::Errno)?;
    // What was opened is what counts: check it, not the name.
    let st = rustix::fs::fstat(&fd).map_err(ReadError::Errno)?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind != FileType::RegularFile {
        return Err(ReadError::Refused(format!("it is {}", describe(kind))));
    }
    if st.st_nlink != 1 {
        return Err(ReadError::Refused(format!(
            "it has {} hard links; a skill's files must have one",
            st.st_nlink
        )));
    }
    if u64::try_from(st.st_size).unwrap_or(u64::MAX) > left {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(left.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > left {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// "a symbolic link", "a FIFO", ...
fn describe(kind: FileType) -> &'static str {
    match kind {
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Directory => "a folder",
        FileType::RegularFile => "a regular file",
        _ => "not a regular file",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(dir: &Path) -> String {
        read(dir).expect_err("refused").to_string()
    }

    #[test]
    fn reads_every_file_beneath_the_folder() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        std::fs::write(t.path().join("top.txt"), "1").unwrap();
        std::fs::write(t.path().join("a/b/deep.py"), "2").unwrap();
        let f = read(t.path()).unwrap();
        let got: Vec<(&str, &[u8])> = f.files.iter().map(|(k, v)| (k.as_str(), &v[..])).collect();
        assert_eq!(got, [("a/b/deep.py", &b"2"[..]), ("top.txt", &b"1"[..])]);
    }

    #[test]
    fn a_symbolic_link_is_refused_by_name_even_to_a_file_inside() {
        for target in ["/etc/shadow", "inside.txt"] {
            let t = tempfile::tempdir().unwrap();
            std::fs::create_dir(t.path().join("scripts")).unwrap();
            std::fs::write(t.path().join("inside.txt"), "x").unwrap();
            std::os::unix::fs::symlink(target, t.path().join("scripts/main.py")).unwrap();
            let e = err(t.path());
            assert!(
                e.contains("scripts/main.py") && e.contains("symbolic link"),
                "{e}"
            );
        }
        // A linked folder too.
        let t = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", t.path().join("etc")).unwrap();
        let e = err(t.path());
        assert!(e.contains("etc") && e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn a_hard_link_a_fifo_and_a_socket_are_refused_by_name() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::hard_link(outside.path().join("secret"), t.path().join("data.txt")).unwrap();
        let e = err(t.path());
        assert!(e.contains("data.txt") && e.contains("hard links"), "{e}");

        let t = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            t.path().join("pipe"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = err(t.path());
        assert!(e.contains("pipe") && e.contains("FIFO"), "{e}");

        let t = tempfile::tempdir().unwrap();
        let _l = std::os::unix::net::UnixListener::bind(t.path().join("sock")).unwrap();
        let e = err(t.path());
        assert!(e.contains("sock") && e.contains("socket"), "{e}");
    }

    #[test]
    fn depth_entries_and_bytes_are_capped() {
        let t = tempfile::tempdir().unwrap();
        let deep: PathBuf = (0..MAX_DEPTH + 1).map(|i| format!("d{i}")).collect();
        std::fs::create_dir_all(t.path().join(&deep)).unwrap();
        assert!(err(t.path()).contains("deeper"));

        let t = tempfile::tempdir().unwrap();
        for i in 0..=MAX_ENTRIES {
            std::fs::write(t.path().join(format!("f{i}")), "").unwrap();
        }
        assert!(err(t.path()).contains("more than"));

        let t = tempfile::tempdir().unwrap();
        let half = vec![b'x'; (MAX_TOTAL_BYTES / 2 + 1) as usize];
        std::fs::write(t.path().join("a"), &half).unwrap();
        std::fs::write(t.path().join("b"), &half).unwrap();
        assert!(err(t.path()).contains("bytes together"));
    }

    #[test]
    fn a_missing_folder_says_what_a_skill_folder_is() {
        let t = tempfile::tempdir().unwrap();
        let e = err(&t.path().join("missing"));
        assert!(e.contains("missing") && e.contains("SKILL.md"), "{e}");
    }
}
