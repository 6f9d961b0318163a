//! What an installed runtime holds: every entry's kind, mode and (for files) sha256, and
//! a cheap [`Stamp`] of the tree's metadata.
//!
//! Two checks, two costs:
//! - the **stamp** (every run): the tree's directories, listed once at install, and per
//!   directory its mode, inode and *change* time, read with one `lstat` each: the data
//!   runtime's ~900 directories, not its ~11,000 entries, and no directory listing. A
//!   file added, removed or renamed (a planted `.pth` or `sitecustomize.py`, a module
//!   swapped in by rename) changes its directory's change time, which, unlike the
//!   modification time, no one can set back; a directory added changes its parent's,
//!   and one swapped for another has another inode;
//! - the **manifest** (`skillgate runtime verify`): the sha256 and mode of every file
//!   and every link's target. It also catches a file rewritten in place, which the
//!   stamp does not see. Both need write access to the state directory, i.e. the
//!   host's root or the installing user: the stamp guards against accidents and crude
//!   tampering at a cost per run of a few milliseconds, `verify` against the rest.
use crate::RuntimeError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One entry of a runtime's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A directory.
    Dir {
        /// Permission bits.
        mode: u32,
    },
    /// A regular file.
    File {
        /// Permission bits.
        mode: u32,
        /// Size in bytes.
        size: u64,
        /// Lowercase hex sha256 of the bytes.
        sha256: String,
    },
    /// A symbolic link.
    Link {
        /// Where it points.
        target: String,
    },
}

/// Every entry of a tree by relative path (`""` is the tree's root).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The entries.
    pub entries: BTreeMap<String, Entry>,
}

/// The cheap check of a tree, made at install and compared at every run; see the
/// [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// The tree's directories, relative to it (`""` is its root), sorted.
    pub dirs: Vec<String>,
    /// Lowercase hex sha256 over each directory's path, mode, inode and change time.
    pub digest: String,
}

/// Calls `f(relative path, metadata)` for every entry under `root`, sorted, the root
/// first. Anything but directories, files and links is an error.
fn walk(
    root: &Path,
    f: &mut dyn FnMut(&str, &Path, &std::fs::Metadata) -> Result<(), RuntimeError>,
) -> Result<(), RuntimeError> {
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| RuntimeError::io(format!("reading {}", root.display()), e))?;
    f("", root, &meta)?;
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|e| RuntimeError::io(format!("reading {}", dir.display()), e))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| RuntimeError::io(format!("reading {}", dir.display()), e))?;
        names.sort();
        let mut subdirs = Vec::new();
        for name in names {
            let name = name.to_str().ok_or_else(|| {
                RuntimeError::io(
                    format!("a file name under {} is not UTF-8", dir.display()),
                    std::io::ErrorKind::InvalidData.into(),
                )
            })?;
            let r = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            let path = root.join(&r);
            let m = std::fs::symlink_metadata(&path)
                .map_err(|e| RuntimeError::io(format!("reading {}", path.display()), e))?;
            f(&r, &path, &m)?;
            if m.is_dir() {
                subdirs.push(r);
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(())
}

fn link_target(path: &Path) -> Result<String, RuntimeError> {
    std::fs::read_link(path)
        .map(|t| t.to_string_lossy().into_owned())
        .map_err(|e| RuntimeError::io(format!("reading the link {}", path.display()), e))
}

fn unsupported(path: &Path) -> RuntimeError {
    RuntimeError::io(
        format!(
            "{} is neither a file, a directory nor a link",
            path.display()
        ),
        std::io::ErrorKind::InvalidData.into(),
    )
}

/// The lowercase hex sha256 of the file at `path`, read in a stream.
pub(crate) fn sha256_file(path: &Path) -> Result<String, RuntimeError> {
    let mut h = Sha256::new();
    let mut f = std::fs::File::open(path)
        .map_err(|e| RuntimeError::io(format!("reading {}", path.display()), e))?;
    std::io::copy(&mut f, &mut h)
        .map_err(|e| RuntimeError::io(format!("reading {}", path.display()), e))?;
    Ok(hex::encode(h.finalize()))
}

impl Manifest {
    /// Reads every entry under `root`, hashing every file.
    pub fn of_tree(root: &Path) -> Result<Manifest, RuntimeError> {
        let mut entries = BTreeMap::new();
        walk(root, &mut |rel, path, m| {
            let mode = m.mode() & 0o7777;
            let entry = if m.file_type().is_symlink() {
                Entry::Link {
                    target: link_target(path)?,
                }
            } else if m.is_dir() {
                Entry::Dir { mode }
            } else if m.is_file() {
                Entry::File {
                    mode,
                    size: m.len(),
                    sha256: sha256_file(path)?,
                }
            } else {
                return Err(unsupported(path));
            };
            entries.insert(rel.to_string(), entry);
            Ok(())
        })?;
        Ok(Manifest { entries })
    }

    /// What differs between `self` (as installed) and `now`: one line per path, sorted.
    pub fn differences(&self, now: &Manifest) -> Vec<String> {
        let mut out = Vec::new();
        for (p, e) in &self.entries {
            match now.entries.get(p) {
                None => out.push(format!("removed: {p}")),
                Some(n) if n != e => out.push(format!("changed: {p}")),
                Some(_) => {}
            }
        }
        for p in now.entries.keys() {
            if !self.entries.contains_key(p) {
                out.push(format!("added: {p}"));
            }
        }
        out.sort();
        out
    }
}

impl Stamp {
    /// The stamp of the tree under `root`, listing its directories (install time).
    pub fn of_tree(root: &Path) -> Result<Stamp, RuntimeError> {
        let mut dirs = Vec::new();
        walk(root, &mut |rel, _, meta| {
            if meta.is_dir() {
                dirs.push(rel.to_string());
            }
            Ok(())
        })?;
        dirs.sort();
        let digest = Self::digest(root, &dirs)?;
        Ok(Stamp { dirs, digest })
    }

    /// Whether the tree under `root` still matches: one `lstat` per recorded directory
    /// (run time). A recorded directory that is gone, or is no longer a directory, is a
    /// mismatch; an error is one only when the tree cannot be read at all.
    pub fn holds(&self, root: &Path) -> Result<bool, RuntimeError> {
        match Self::digest(root, &self.dirs) {
            Ok(digest) => Ok(digest == self.digest),
            Err(RuntimeError::Io { source, .. })
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::NotADirectory
                        | std::io::ErrorKind::InvalidData
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn digest(root: &Path, dirs: &[String]) -> Result<String, RuntimeError> {
        let mut h = Sha256::new();
        for rel in dirs {
            let dir = root.join(rel);
            let m = std::fs::symlink_metadata(&dir)
                .map_err(|e| RuntimeError::io(format!("reading {}", dir.display()), e))?;
            if !m.is_dir() {
                return Err(unsupported(&dir));
            }
            h.update(format!(
                "{rel}\0{:o}\0{}\0{}.{}\n",
                m.mode() & 0o7777,
                m.ino(),
                m.ctime(),
                m.ctime_nsec()
            ));
        }
        Ok(hex::encode(h.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("lib/pkg")).unwrap();
        std::fs::write(t.path().join("lib/pkg/a.py"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink("/usr/bin/python3", t.path().join("python3")).unwrap();
        t
    }

    #[test]
    fn the_stamp_sees_entries_come_and_go_and_the_manifest_sees_every_change() {
        let t = tree();
        let manifest = Manifest::of_tree(t.path()).unwrap();
        let stamp = Stamp::of_tree(t.path()).unwrap();
        assert_eq!(stamp, Stamp::of_tree(t.path()).unwrap(), "stable");
        assert_eq!(stamp.dirs, ["", "lib", "lib/pkg"]);
        assert!(stamp.holds(t.path()).unwrap());
        assert_eq!(manifest.entries.len(), 5, "{manifest:?}");
        // (what verify says, whether the per-run stamp sees it too, the change)
        type Change<'a> = (&'a str, bool, &'a dyn Fn(&Path));
        let changes: [Change<'_>; 6] = [
            ("added: lib/pkg/evil.pth", true, &|p| {
                std::fs::write(p.join("lib/pkg/evil.pth"), "import os\n").unwrap()
            }),
            ("removed: lib/pkg/a.py", true, &|p| {
                std::fs::remove_file(p.join("lib/pkg/a.py")).unwrap()
            }),
            ("added: lib/pkg/b.py", true, &|p| {
                std::fs::rename(p.join("lib/pkg/a.py"), p.join("lib/pkg/b.py")).unwrap()
            }),
            // Added, then the folder's modification time set back: its change time moved.
            ("added: lib/pkg/c.py", true, &|p| {
                let dir = p.join("lib/pkg");
                let mtime = std::fs::metadata(&dir).unwrap().modified().unwrap();
                std::fs::write(dir.join("c.py"), "import os\n").unwrap();
                std::fs::File::open(&dir)
                    .unwrap()
                    .set_modified(mtime)
                    .unwrap();
            }),
            // A directory replaced by another of the same name.
            ("added: lib/pkg/d.py", true, &|p| {
                let dir = p.join("lib/pkg");
                let other = p.join("other");
                std::fs::create_dir(&other).unwrap();
                std::fs::copy(dir.join("a.py"), other.join("a.py")).unwrap();
                std::fs::write(other.join("d.py"), "x = 3\n").unwrap();
                std::fs::remove_dir_all(&dir).unwrap();
                std::fs::rename(&other, &dir).unwrap();
            }),
            // Rewritten in place: only the full verification sees it.
            ("changed: lib/pkg/a.py", false, &|p| {
                std::fs::write(p.join("lib/pkg/a.py"), "x = 2\n").unwrap()
            }),
        ];
        for (want, stamp_sees, change) in changes {
            let t = tree();
            let before = (
                Stamp::of_tree(t.path()).unwrap(),
                Manifest::of_tree(t.path()).unwrap(),
            );
            change(t.path());
            assert_eq!(!before.0.holds(t.path()).unwrap(), stamp_sees, "{want}");
            let diff = before.1.differences(&Manifest::of_tree(t.path()).unwrap());
            assert!(diff.iter().any(|d| d == want), "{want}: {diff:?}");
        }
        // A link pointed elsewhere.
        let t = tree();
        let before = Manifest::of_tree(t.path()).unwrap();
        std::fs::remove_file(t.path().join("python3")).unwrap();
        std::os::unix::fs::symlink("/tmp/evil", t.path().join("python3")).unwrap();
        let diff = before.differences(&Manifest::of_tree(t.path()).unwrap());
        assert_eq!(diff, ["changed: python3"]);
    }
}
