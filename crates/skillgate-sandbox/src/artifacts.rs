//! Collecting the files a skill wrote to its output directory.
//!
//! Only regular files with a single link are taken; symbolic links are never followed
//! (a planted link to `/etc/shadow` stays a link and is skipped), and hard links (a second
//! name for a file elsewhere) are skipped too. Per-file and total caps bound what is read.
use sha2::{Digest, Sha256};
use skillgate_core::{Artifact, Finding, LayerName, Severity};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Most directory entries looked at, so a skill cannot make collection slow.
pub const MAX_ENTRIES: usize = 10_000;

/// Collects artifacts from `dir`; what was skipped is reported as findings.
pub fn collect(dir: &Path, file_cap: u64, total_cap: u64) -> (Vec<Artifact>, Vec<Finding>) {
    let mut c = Collector {
        artifacts: Vec::new(),
        findings: Vec::new(),
        file_cap,
        total_left: total_cap,
        seen: 0,
        root: dir.to_path_buf(),
    };
    c.walk(dir, "");
    c.artifacts
        .sort_by(|a, b| a.name_bytes().cmp(b.name_bytes()));
    (c.artifacts, c.findings)
}

struct Collector {
    artifacts: Vec<Artifact>,
    findings: Vec<Finding>,
    file_cap: u64,
    total_left: u64,
    seen: usize,
    /// The output directory: names are paths relative to it.
    root: std::path::PathBuf,
}

impl Collector {
    fn skip(&mut self, rule: &str, name: &str, why: String) {
        self.findings.push(
            Finding::new(LayerName::Executor, rule, Severity::Medium, why).with_snippet(name),
        );
    }

    fn walk(&mut self, dir: &Path, prefix: &str) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            self.seen += 1;
            if self.seen > MAX_ENTRIES {
                self.skip(
                    "artifact.too_many",
                    prefix,
                    format!("more than {MAX_ENTRIES} entries in the output directory; the rest were ignored"),
                );
                return;
            }
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let path = entry.path();
            // symlink_metadata: never follow a link.
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let ft = meta.file_type();
            if ft.is_dir() {
                self.walk(&path, &format!("{name}/"));
            } else if ft.is_symlink() {
                self.skip(
                    "artifact.symlink",
                    &name,
                    format!("`{name}` is a symbolic link; links are not collected"),
                );
            } else if !ft.is_file() {
                self.skip(
                    "artifact.special",
                    &name,
                    format!("`{name}` is not a regular file"),
                );
            } else if meta.nlink() > 1 {
                self.skip(
                    "artifact.hardlink",
                    &name,
                    format!(
                        "`{name}` has {} links; hard links are not collected",
                        meta.nlink()
                    ),
                );
            } else if meta.len() > self.file_cap {
                self.skip(
                    "artifact.too_large",
                    &name,
                    format!(
                        "`{name}` is {} bytes, over the {} byte per-file cap",
                        meta.len(),
                        self.file_cap
                    ),
                );
            } else if meta.len() > self.total_left {
                self.skip(
                    "artifact.total_cap",
                    &name,
                    format!("`{name}` would pass the total artifact cap"),
                );
            } else if let Some(content) = read_no_follow(&path, meta.len()) {
                self.total_left -= content.len() as u64;
                // The exact bytes of the relative path: two non-UTF-8 names stay apart.
                let rel = path.strip_prefix(&self.root).unwrap_or(&path);
                let (name, raw_name) =
                    Artifact::name_fields(std::os::unix::ffi::OsStrExt::as_bytes(rel.as_os_str()));
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
}

/// Opens with O_NOFOLLOW (a file swapped for a link since the check is refused) and reads
/// at most `len` bytes (a file that grew since the check is cut at its checked size).
fn read_no_follow(path: &Path, len: u64) -> Option<Vec<u8>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.nlink() > 1 {
        return None;
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).ok()?);
    f.take(len).read_to_end(&mut buf).ok()?;
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
}
