//! The digest of a skill folder: what the operator's catalogue records a skill by
//! (`skillgate policy digest DIR` prints it; see `skillgate_policy::catalogue`).
//!
//! It covers every file of the folder, `SKILL.md` included, so changing any byte the run
//! can see (the code, a module next to it, the schema, the metadata, the limits asked for)
//! makes a skill the catalogue does not know. Definition (version 1): sha256 over
//!
//! ```text
//! "skillgate-folder-v1\0"
//! then, for every entry below the folder, sorted by its relative path's bytes
//! ('/'-separated):
//!   a regular file:  "f\0" PATH "\0" sha256(contents)
//!   a symbolic link: "l\0" PATH "\0" TARGET "\0"
//! ```
//!
//! Folders contribute their entries (an empty folder nothing). Any other kind of entry (a
//! FIFO, a socket, a device) is refused, as is a folder of more than [`MAX_ENTRIES`]
//! entries or [`MAX_BYTES`] bytes of files.
use crate::skill_dir::SkillError;
use sha2::{Digest, Sha256};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Most entries (files, links, folders) a digested skill folder may hold.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes of files a digested skill folder may hold.
pub const MAX_BYTES: u64 = 256 * 1024 * 1024;

enum Kind {
    File(PathBuf),
    Link(Vec<u8>),
}

/// The digest of the skill folder `dir`, as lowercase hex.
///
/// ```
/// let a = skillgate::skill_digest::folder("../../examples/skills/analyze-rows".as_ref()).unwrap();
/// assert_eq!(a.len(), 64);
/// ```
pub fn folder(dir: &Path) -> Result<String, SkillError> {
    let mut entries: Vec<(Vec<u8>, Kind)> = Vec::new();
    let mut bytes = 0u64;
    walk(dir, Vec::new(), &mut entries, &mut bytes)?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut h = Sha256::new();
    h.update(b"skillgate-folder-v1\0");
    for (rel, kind) in entries {
        match kind {
            Kind::File(path) => {
                let mut file_hash = Sha256::new();
                let mut f = std::fs::File::open(&path).map_err(|source| read(&path, source))?;
                std::io::copy(&mut f, &mut file_hash).map_err(|source| read(&path, source))?;
                h.update(b"f\0");
                h.update(&rel);
                h.update(b"\0");
                h.update(file_hash.finalize());
            }
            Kind::Link(target) => {
                h.update(b"l\0");
                h.update(&rel);
                h.update(b"\0");
                h.update(&target);
                h.update(b"\0");
            }
        }
    }
    Ok(hex::encode(h.finalize()))
}

fn read(path: &Path, source: std::io::Error) -> SkillError {
    SkillError::Read {
        path: path.into(),
        source,
    }
}

fn walk(
    dir: &Path,
    prefix: Vec<u8>,
    out: &mut Vec<(Vec<u8>, Kind)>,
    bytes: &mut u64,
) -> Result<(), SkillError> {
    for entry in std::fs::read_dir(dir).map_err(|source| read(dir, source))? {
        let entry = entry.map_err(|source| read(dir, source))?;
        let path = entry.path();
        let mut rel = prefix.clone();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(entry.file_name().as_bytes());
        let meta = std::fs::symlink_metadata(&path).map_err(|source| read(&path, source))?;
        let ty = meta.file_type();
        if out.len() >= MAX_ENTRIES {
            return Err(read(
                dir,
                std::io::Error::other(format!(
                    "a skill folder may hold at most {MAX_ENTRIES} entries"
                )),
            ));
        }
        if ty.is_dir() {
            walk(&path, rel, out, bytes)?;
        } else if ty.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|source| read(&path, source))?;
            out.push((rel, Kind::Link(target.as_os_str().as_bytes().to_vec())));
        } else if ty.is_file() {
            *bytes = bytes.saturating_add(meta.len());
            if *bytes > MAX_BYTES {
                return Err(SkillError::TooLarge {
                    path: dir.into(),
                    size: *bytes,
                    max: MAX_BYTES,
                });
            }
            out.push((rel, Kind::File(path)));
        } else {
            return Err(read(
                &path,
                std::io::Error::other(
                    "not a regular file, folder or symbolic link; a skill folder holds no other kind",
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::folder;

    fn skill(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (name, body) in files {
            let p = t.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        t
    }

    #[test]
    fn every_file_counts_and_nothing_else_does() {
        let base = [("SKILL.md", "m"), ("scripts/main.py", "print(1)")];
        let a = folder(skill(&base).path()).unwrap();
        assert_eq!(
            a,
            folder(skill(&base).path()).unwrap(),
            "same bytes, same digest"
        );
        for changed in [
            [("SKILL.md", "m2"), ("scripts/main.py", "print(1)")],
            [("SKILL.md", "m"), ("scripts/main.py", "print(2)")],
            [("SKILL.md", "m"), ("scripts/other.py", "print(1)")],
        ] {
            assert_ne!(a, folder(skill(&changed).path()).unwrap(), "{changed:?}");
        }
        let extra = skill(&[
            ("SKILL.md", "m"),
            ("scripts/main.py", "print(1)"),
            ("lib.py", ""),
        ]);
        assert_ne!(a, folder(extra.path()).unwrap(), "an added file counts");
        // Moving a byte between the name and the contents of a file changes the digest.
        let x = folder(skill(&[("ab", "c")]).path()).unwrap();
        let y = folder(skill(&[("a", "bc")]).path()).unwrap();
        assert_ne!(x, y);
    }

    #[test]
    fn symlinks_count_by_target_and_fifos_are_refused() {
        let t = skill(&[("SKILL.md", "m")]);
        std::os::unix::fs::symlink("/etc/passwd", t.path().join("l")).unwrap();
        let with_link = folder(t.path()).unwrap();
        std::fs::remove_file(t.path().join("l")).unwrap();
        std::os::unix::fs::symlink("/etc/hosts", t.path().join("l")).unwrap();
        assert_ne!(with_link, folder(t.path()).unwrap());
        let fifo = t.path().join("pipe");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let err = folder(t.path()).unwrap_err().to_string();
        assert!(err.contains("pipe"), "{err}");
    }
}
