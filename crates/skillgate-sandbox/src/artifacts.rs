//! Collecting the files a skill wrote to its output directory.
//!
//! Only regular files with a single link are taken; symbolic links are never followed
//! (a planted link to `/etc/shadow` stays a link and is skipped), and hard links (a second
//! name for a file elsewhere) are skipped too. Per-file and total caps bound what is read.
//!
//! The walk is a loop over an explicit stack, never a recursion (a skill nesting thousands
//! of directories must not overflow the host's stack), and every open is relative to the
//! directory above it, with `O_NOFOLLOW` (a directory swapped for a link during the walk
//! is refused, not followed). [`MAX_DEPTH`] and [`MAX_ENTRIES`] bound its time, its open
//! descriptors and its memory: at most `MAX_DEPTH` directories are open at once and at
//! most `MAX_ENTRIES` names are held; what lies beyond a bound is reported as a finding.
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use sha2::{Digest, Sha256};
use skillgate_core::{Artifact, Finding, LayerName, Severity};
use std::ffi::{CString, OsStr};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Most directory entries looked at, so a skill cannot make collection slow.
pub const MAX_ENTRIES: usize = 10_000;

/// Deepest directory level walked (the output directory itself is level 0); deeper
/// directories are reported and skipped.
pub const MAX_DEPTH: usize = 32;

/// Collects artifacts from `dir`; what was skipped is reported as findings.
pub fn collect(dir: &Path, file_cap: u64, total_cap: u64) -> (Vec<Artifact>, Vec<Finding>) {
    let mut c = Collector {
        artifacts: Vec::new(),
        findings: Vec::new(),
        file_cap,
        total_left: total_cap,
        seen: 0,
    };
    // The output directory itself may be reached through a magic link
    // (`/proc/<pid>/root/out`); only its last component must not be a link.
    if let Ok(fd) = rustix::fs::open(dir, dir_flags(), Mode::empty()) {
        c.walk(fd);
    }
    c.artifacts
        .sort_by(|a, b| a.name_bytes().cmp(b.name_bytes()));
    (c.artifacts, c.findings)
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// A directory being walked: its descriptor, its name's prefix (`a/b/`, the exact bytes),
/// and the names still to visit (sorted, the next one last).
struct Frame {
    fd: OwnedFd,
    prefix: Vec<u8>,
    pending: Vec<CString>,
}

struct Collector {
    artifacts: Vec<Artifact>,
    findings: Vec<Finding>,
    file_cap: u64,
    total_left: u64,
    seen: usize,
}

impl Collector {
    fn skip(&mut self, rule: &str, name: &str, why: String) {
        self.findings.push(
            Finding::new(LayerName::Executor, rule, Severity::Medium, why).with_snippet(name),
        );
    }

    /// The names in the directory `fd`, sorted with the first last; `None` once the walk
    /// has looked at [`MAX_ENTRIES`] names (reported once).
    fn list(&mut self, fd: &OwnedFd, prefix: &str) -> Option<Vec<CString>> {
        let mut names = Vec::new();
        let Ok(dir) = rustix::fs::Dir::read_from(fd) else {
            return Some(names);
        };
        for entry in dir {
            let Ok(entry) = entry else { break };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            self.seen += 1;
            if self.seen > MAX_ENTRIES {
                self.skip(
                    "artifact.too_many",
                    prefix,
                    format!(
                        "more than {MAX_ENTRIES} entries in the output directory; the rest \
                         were ignored"
                    ),
                );
                return None;
            }
            names.push(name.to_owned());
        }
        names.sort_unstable_by(|a, b| b.cmp(a));
        Some(names)
    }

    fn walk(&mut self, root: OwnedFd) {
        let Some(pending) = self.list(&root, "") else {
            return;
        };
        let mut stack = vec![Frame {
            fd: root,
            prefix: Vec::new(),
            pending,
        }];
        loop {
            let depth = stack.len();
            let Some(frame) = stack.last_mut() else { break };
            let Some(file) = frame.pending.pop() else {
                stack.pop();
                continue;
            };
            // The exact bytes of the relative path (two non-UTF-8 names stay apart), and
            // a lossy rendering for findings.
            let mut raw = frame.prefix.clone();
            raw.extend_from_slice(file.as_bytes());
            let name = OsStr::from_bytes(&raw).to_string_lossy().into_owned();
            // Never follow a link.
            let Ok(st) = rustix::fs::statat(&frame.fd, &file, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory if depth > MAX_DEPTH => {
                    self.skip(
                        "artifact.too_deep",
                        &name,
                        format!(
                            "`{name}` is nested more than {MAX_DEPTH} directories deep; it \
                             was not collected"
                        ),
                    );
                }
                FileType::Directory => {
                    let Ok(fd) = rustix::fs::openat(&frame.fd, &file, dir_flags(), Mode::empty())
                    else {
                        continue;
                    };
                    let mut prefix = raw;
                    prefix.push(b'/');
                    let Some(pending) = self.list(&fd, &format!("{name}/")) else {
                        return;
                    };
                    stack.push(Frame {
                        fd,
                        prefix,
                        pending,
                    });
                }
                FileType::Symlink => self.skip(
                    "artifact.symlink",
                    &name,
                    format!("`{name}` is a symbolic link; links are not collected"),
                ),
                FileType::RegularFile => self.take(&frame.fd, &file, &raw, name, &st),
                _ => self.skip(
                    "artifact.special",
                    &name,
                    format!("`{name}` is not a regular file"),
                ),
            }
        }
    }

    /// Takes the regular file `file` of the directory `dir` (checked as `st`) if it has a
    /// single link and fits the caps.
    fn take(
        &mut self,
        dir: &OwnedFd,
        file: &CString,
        raw: &[u8],
        name: String,
        st: &rustix::fs::Stat,
    ) {
        let len = u64::try_from(st.st_size).unwrap_or(u64::MAX);
        if st.st_nlink > 1 {
            self.skip(
                "artifact.hardlink",
                &name,
                format!(
                    "`{name}` has {} links; hard links are not collected",
                    st.st_nlink
                ),
            );
        } else if len > self.file_cap {
            self.skip(
                "artifact.too_large",
                &name,
                format!(
                    "`{name}` is {len} bytes, over the {} byte per-file cap",
                    self.file_cap
                ),
            );
        } else if len > self.total_left {
            self.skip(
                "artifact.total_cap",
                &name,
                format!("`{name}` would pass the total artifact cap"),
            );
        } else if let Some(content) = read_no_follow(dir, file, len) {
            self.total_left -= content.len() as u64;
            let (name, raw_name) = Artifact::name_fields(raw);
            self.artifacts.push(Artifact {
                sha256: hex::encode(Sha256::digest(&content)),
                size: content.len() as u64,
                name,
                raw_name,
                content,
            });
        }
    }
}

/// Opens with O_NOFOLLOW (a file swapped for a link since the check is refused) and reads
/// at most `len` bytes (a file that grew since the check is cut at its checked size).
fn read_no_follow(dir: &OwnedFd, file: &CString, len: u64) -> Option<Vec<u8>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, file, flags, Mode::empty()).ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_nlink > 1 {
        return None;
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).ok()?);
    std::fs::File::from(fd)
        .take(len)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_regular_files_and_skips_links() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), b"hello").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/b.bin"), vec![0u8; 10]).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("link")).unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::hard_link(outside.path(), d.path().join("hard")).unwrap();
        std::fs::write(d.path().join("big"), vec![1u8; 100]).unwrap();

        let (arts, findings) = collect(d.path(), 50, 1000);
        let names: Vec<_> = arts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["a.txt", "sub/b.bin"]);
        assert_eq!(arts[0].size, 5);
        assert_eq!(
            arts[0].sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        let rules: Vec<_> = findings.iter().map(|f| f.rule_id.as_str()).collect();
        assert!(rules.contains(&"artifact.symlink"), "{rules:?}");
        assert!(rules.contains(&"artifact.hardlink"), "{rules:?}");
        assert!(rules.contains(&"artifact.too_large"), "{rules:?}");
    }

    #[test]
    fn total_cap_bounds_collection() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(d.path().join(format!("f{i}")), vec![0u8; 40]).unwrap();
        }
        let (arts, findings) = collect(d.path(), 100, 100);
        assert_eq!(arts.len(), 2);
        assert_eq!(
            findings
                .iter()
                .filter(|f| f.rule_id == "artifact.total_cap")
                .count(),
            3
        );
    }

    #[test]
    fn non_utf8_names_stay_apart() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        for raw in [&b"n\xff"[..], b"n\xfe"] {
            std::fs::write(d.path().join(std::ffi::OsStr::from_bytes(raw)), b"x").unwrap();
        }
        let (arts, _) = collect(d.path(), 50, 1000);
        let raw: Vec<_> = arts.iter().map(|a| a.name_bytes()).collect();
        assert_eq!(raw, [&b"n\xfe"[..], b"n\xff"]);
        assert!(arts.iter().all(|a| a.raw_name.is_some()));
    }

    #[test]
    fn deep_nesting_is_walked_without_recursion_and_bounded() {
        // Thousands of levels: a recursive walk overflowed the stack of the thread
        // collecting (here a small one, as a blocking-pool thread's could be).
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("top.txt"), b"top").unwrap();
        // Built with directory-relative calls: the full path would pass PATH_MAX.
        let mut dir = rustix::fs::open(d.path(), dir_flags(), Mode::empty()).unwrap();
        for i in 0..3000 {
            let next = format!("d{}", i % 10);
            rustix::fs::mkdirat(&dir, next.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            dir = rustix::fs::openat(&dir, next.as_str(), dir_flags(), Mode::empty()).unwrap();
            if i == 5 {
                let f = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
                let fd = rustix::fs::openat(&dir, "shallow.txt", f, Mode::from_raw_mode(0o644));
                rustix::io::write(fd.unwrap(), b"s").unwrap();
            }
        }
        let root = d.path().to_path_buf();
        let (arts, findings) = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || collect(&root, 100, 1000))
            .unwrap()
            .join()
            .expect("the walk overflowed its stack");
        let names: Vec<_> = arts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["d0/d1/d2/d3/d4/d5/shallow.txt", "top.txt"],
            "{findings:?}"
        );
        let deep: Vec<_> = findings
            .iter()
            .filter(|f| f.rule_id == "artifact.too_deep")
            .collect();
        assert_eq!(deep.len(), 1, "{findings:?}");
        assert_eq!(
            deep[0].snippet.as_deref().map(|s| s.matches('/').count()),
            Some(MAX_DEPTH)
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let secret = tempfile::tempdir().unwrap();
        std::fs::write(secret.path().join("key"), b"secret").unwrap();
        std::os::unix::fs::symlink(secret.path(), d.path().join("sub")).unwrap();
        // The output directory itself may not be a link either.
        let (arts, findings) = collect(&d.path().join("sub"), 100, 1000);
        assert!(arts.is_empty() && findings.is_empty(), "{arts:?}");
        let (arts, findings) = collect(d.path(), 100, 1000);
        assert!(arts.is_empty(), "{arts:?}");
        assert_eq!(findings[0].rule_id, "artifact.symlink");
    }
}
