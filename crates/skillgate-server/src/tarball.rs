//! Safe reading of an uploaded `.tar.gz` skill folder into memory, and writing it to a
//! private directory for the skill-folder loader.
//!
//! Refused, naming the entry: a path with `..`, an absolute path, a symlink, a hardlink, a
//! device, a FIFO, any entry type but a regular file or a directory; more than
//! [`Caps::entries`] entries, more than [`Caps::bytes`] bytes unpacked, a path longer than
//! [`Caps::path_len`]. Nothing is written until everything was read and checked.
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Limits on an upload.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Most entries (files and directories).
    pub entries: usize,
    /// Most bytes of file content, unpacked.
    pub bytes: u64,
    /// Longest path, in bytes.
    pub path_len: usize,
}

impl Default for Caps {
    /// The skill folder's own caps (`skillgate::folder`).
    fn default() -> Caps {
        Caps {
            entries: skillgate::folder::MAX_ENTRIES,
            bytes: skillgate::folder::MAX_TOTAL_BYTES,
            path_len: 512,
        }
    }
}

/// An upload refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TarError(pub String);

/// One regular file of the upload.
#[derive(Debug, Clone)]
pub struct TarFile {
    /// Its path, relative, `/`-separated, without `.` parts.
    pub path: String,
    /// Its content.
    pub bytes: Vec<u8>,
}

fn clean_path(raw: &Path) -> Result<Option<String>, String> {
    let mut parts = Vec::new();
    for c in raw.components() {
        match c {
            Component::Normal(p) => parts.push(
                p.to_str()
                    .ok_or_else(|| "a path that is not UTF-8".to_string())?
                    .to_string(),
            ),
            Component::CurDir => {}
            Component::ParentDir => return Err("a `..` path".into()),
            Component::RootDir | Component::Prefix(_) => return Err("an absolute path".into()),
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

/// Reads a gzip-compressed tar into its regular files, refusing anything else (see the
/// module docs).
pub fn read(gz: &[u8], caps: Caps) -> Result<Vec<TarFile>, TarError> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(gz));
    let mut files: Vec<TarFile> = Vec::new();
    let mut total = 0u64;
    let entries = archive
        .entries()
        .map_err(|e| TarError(format!("not a .tar.gz: {e}")))?;
    for (i, entry) in entries.enumerate() {
        if i >= caps.entries {
            return Err(TarError(format!(
                "more than {} entries in the archive",
                caps.entries
            )));
        }
        let entry = entry.map_err(|e| TarError(format!("not a .tar.gz: {e}")))?;
        let raw = entry.path_bytes().into_owned();
        let shown = crate::error::elide(&String::from_utf8_lossy(&raw));
        if raw.len() > caps.path_len {
            return Err(TarError(format!(
                "entry `{shown}`: path longer than {} bytes",
                caps.path_len
            )));
        }
        let path = entry
            .path()
            .map_err(|e| TarError(format!("entry `{shown}`: {e}")))?;
        let path = clean_path(&path).map_err(|what| {
            TarError(format!(
                "entry `{shown}`: {what} is not allowed in a skill upload"
            ))
        })?;
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            let what = if kind.is_symlink() {
                "a symlink"
            } else if kind.is_hard_link() {
                "a hardlink"
            } else if kind.is_character_special() || kind.is_block_special() {
                "a device"
            } else if kind.is_fifo() {
                "a FIFO"
            } else {
                "an entry that is not a regular file or directory"
            };
            return Err(TarError(format!(
                "entry `{shown}`: {what} is not allowed in a skill upload"
            )));
        }
        let Some(path) = path else {
            return Err(TarError(format!("entry `{shown}`: a file without a name")));
        };
        let mut bytes = Vec::new();
        let room = caps.bytes - total;
        entry
            .take(room + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| TarError(format!("entry `{shown}`: {e}")))?;
        total += bytes.len() as u64;
        if total > caps.bytes {
            return Err(TarError(format!(
                "the archive unpacks to more than {} bytes",
                caps.bytes
            )));
        }
        if files.iter().any(|f| f.path == path) {
            return Err(TarError(format!("entry `{shown}` appears twice")));
        }
        files.push(TarFile { path, bytes });
    }
    Ok(files)
}

/// The files with a single leading folder removed when every file is inside it (a tar of
/// the folder itself, `tar czf s.tgz -C parent name`), else as they are (a tar of the
/// folder's content).
pub fn strip_common_folder(files: Vec<TarFile>) -> Vec<TarFile> {
    let top = |f: &TarFile| f.path.split_once('/').map(|(t, _)| t.to_string());
    let Some(first) = files.first().and_then(top) else {
        return files;
    };
    if files.iter().any(|f| top(f).as_deref() != Some(&first)) {
        return files;
    }
    files
        .into_iter()
        .map(|f| TarFile {
            path: f.path[first.len() + 1..].to_string(),
            bytes: f.bytes,
        })
        .collect()
}

/// Writes `files` beneath `dir` (created, private), which must not exist yet.
pub fn write_to(dir: &Path, files: &[TarFile]) -> std::io::Result<PathBuf> {
    std::fs::create_dir(dir)?;
    for f in files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &f.bytes)?;
    }
    Ok(dir.to_path_buf())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A `.tar.gz` of `(path, content)` regular files.
    pub(crate) fn targz(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for (path, content) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(content.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            // Written raw, so a test can make paths `append_data` would refuse.
            h.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            b.append(&h, *content).unwrap();
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    fn link(kind: tar::EntryType) -> Vec<u8> {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(0);
        b.append_link(&mut h, "s/escape", "/etc/passwd").unwrap();
        b.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn regular_files_are_read_and_a_common_folder_stripped() {
        let files = read(
            &targz(&[("s/SKILL.md", b"m"), ("s/a/b.py", b"x")]),
            Caps::default(),
        )
        .unwrap();
        let files = strip_common_folder(files);
        let paths: Vec<_> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "a/b.py"]);
    }

    #[test]
    fn dot_dot_absolute_links_and_caps_are_refused_naming_the_entry() {
        let err = read(&targz(&[("s/../../x", b"m")]), Caps::default()).unwrap_err();
        assert!(
            err.0.contains("`..`") && err.0.contains("s/../../x"),
            "{err}"
        );
        let err = read(&targz(&[("/etc/x", b"m")]), Caps::default()).unwrap_err();
        assert!(err.0.contains("absolute"), "{err}");
        let err = read(&link(tar::EntryType::Symlink), Caps::default()).unwrap_err();
        assert!(
            err.0.contains("symlink") && err.0.contains("s/escape"),
            "{err}"
        );
        let err = read(&link(tar::EntryType::Link), Caps::default()).unwrap_err();
        assert!(err.0.contains("hardlink"), "{err}");
        let caps = Caps {
            entries: 1,
            ..Caps::default()
        };
        let err = read(&targz(&[("a", b"1"), ("b", b"2")]), caps).unwrap_err();
        assert!(err.0.contains("more than 1 entries"), "{err}");
        let caps = Caps {
            bytes: 3,
            ..Caps::default()
        };
        let err = read(&targz(&[("a", b"12"), ("b", b"34")]), caps).unwrap_err();
        assert!(err.0.contains("more than 3 bytes"), "{err}");
        let err = read(b"not gzip at all", Caps::default()).unwrap_err();
        assert!(err.0.contains("not a .tar.gz"), "{err}");
    }
}
