//! Deterministic snapshots of a workspace: a tar archive of its tree with sorted
//! entries, every mtime 0, owner 0:0 and no user or group names, only the permission
//! bits kept; then gzip-compressed (no name, mtime 0). The same tree always gives the
//! same bytes, so the archive's sha256 is its address and the uncompressed archive's
//! sha256 is the tree's digest ([`digest`]).
//!
//! Directories, regular files and symbolic links (kept as links, never followed) are
//! archived; anything else a step left (a FIFO, a socket) is not part of the state.
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

mod unpack;

/// What a walk found at one relative path.
enum Entry {
    Dir(u32),
    File(u32, PathBuf),
    Link(PathBuf),
}

/// Every entry under `root`, keyed by its `/`-separated relative path (sorted by bytes).
fn walk(root: &Path) -> std::io::Result<BTreeMap<Vec<u8>, Entry>> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), Vec::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let mut rel: Vec<u8> = prefix.clone();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(entry.file_name().as_bytes());
            let meta = std::fs::symlink_metadata(entry.path())?;
            let mode = meta.permissions().mode() & 0o777;
            let kind = meta.file_type();
            if kind.is_dir() {
                stack.push((entry.path(), rel.clone()));
                out.insert(rel, Entry::Dir(mode));
            } else if kind.is_file() {
                out.insert(rel, Entry::File(mode, entry.path()));
            } else if kind.is_symlink() {
                out.insert(rel, Entry::Link(std::fs::read_link(entry.path())?));
            }
        }
    }
    Ok(out)
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(0);
    h.set_uid(0);
    h.set_gid(0);
    h
}

/// Writes the deterministic archive of `root` to `out`.
fn write_tar<W: Write>(root: &Path, out: W) -> std::io::Result<W> {
    use std::os::unix::ffi::OsStrExt;
    let mut b = tar::Builder::new(out);
    b.mode(tar::HeaderMode::Deterministic);
    for (rel, entry) in walk(root)? {
        let name = Path::new(std::ffi::OsStr::from_bytes(&rel));
        match entry {
            Entry::Dir(mode) => {
                let mut h = header(tar::EntryType::Directory, mode, 0);
                b.append_data(&mut h, name, std::io::empty())?;
            }
            Entry::File(mode, path) => {
                let file = open_nofollow(&path)?;
                let len = file.metadata()?.len();
                let mut h = header(tar::EntryType::Regular, mode, len);
                b.append_data(&mut h, name, file.take(len))?;
            }
            Entry::Link(target) => {
                let mut h = header(tar::EntryType::Symlink, 0o777, 0);
                b.append_link(&mut h, name, target)?;
            }
        }
    }
    b.into_inner()
}

/// Opens a regular file the walk found, refusing a link swapped in since.
fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    Ok(std::fs::File::from(fd))
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    hash: Sha256,
    inner: W,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The digest of the tree at `root` (the sha256 of its uncompressed archive).
pub fn digest(root: &Path) -> std::io::Result<String> {
    let w = write_tar(
        root,
        Hashing {
            hash: Sha256::new(),
            inner: std::io::sink(),
        },
    )?;
    Ok(hex::encode(w.hash.finalize()))
}

/// A packed workspace.
#[derive(Debug, Clone)]
pub struct Packed {
    /// The tree's digest (as [`digest`] computes it).
    pub workspace_digest: String,
    /// The compressed archive.
    pub archive: Vec<u8>,
    /// The archive's sha256 (its address).
    pub sha256: String,
}

/// Packs the tree at `root`.
pub fn pack(root: &Path) -> std::io::Result<Packed> {
    let gz = GzEncoder::new(Vec::new(), Compression::fast());
    let w = write_tar(
        root,
        Hashing {
            hash: Sha256::new(),
            inner: gz,
        },
    )?;
    let workspace_digest = hex::encode(w.hash.finalize());
    let archive = w.inner.finish()?;
    Ok(Packed {
        workspace_digest,
        sha256: crate::key::sha256_hex(&archive),
        archive,
    })
}

/// A reader that hashes what passes through it.
struct HashingRead<R> {
    hash: Sha256,
    inner: R,
}

impl<R: Read> Read for HashingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// Unpacks `archive` into the (empty) directory `root`. Permission bits are kept
/// (never set-id or sticky bits, whatever the archive says), owners and times are not;
/// nothing is written outside `root`. An archive holding what no snapshot holds is
/// refused (see [`unpack_digest`]).
pub fn unpack(archive: &[u8], root: &Path) -> std::io::Result<()> {
    unpack_digest(archive, root).map(drop)
}

/// Unpacks `archive` into the (empty) directory `root` as [`unpack`] does, and returns
/// the digest of the tree the archive holds (the sha256 of the uncompressed archive,
/// hashed while it is read): what [`digest`] gives for the restored tree, without
/// walking it again.
///
/// Every entry is checked before it is written: only directories, regular files and
/// symbolic links (what [`pack`] writes), each at a relative path of plain names (no
/// `..`, `.` or root), and never beneath a link: each entry is written relative to its
/// parent directory's descriptor, and no component is followed through a link. Anything
/// else (a hard link, a device, a sparse file, a path out, a second file at one path) is
/// an error, and the caller throws the part already written away with the workspace: a
/// digest is only ever returned for the whole tree. Directories get their modes last, so
/// a directory's mode never keeps its own entries out.
pub fn unpack_digest(archive: &[u8], root: &Path) -> std::io::Result<String> {
    let mut a = tar::Archive::new(HashingRead {
        hash: Sha256::new(),
        inner: GzDecoder::new(archive),
    });
    let mut out = unpack::Unpacker::new(root)?;
    for entry in a.entries()? {
        let mut entry = entry?;
        check_entry(entry.header().entry_type(), &entry.path()?)?;
        out.entry(&mut entry)?;
    }
    out.finish()?;
    // The archive's end (its zero blocks and padding) is part of what the digest hashes.
    let mut rest = a.into_inner();
    std::io::copy(&mut rest, &mut std::io::sink())?;
    Ok(hex::encode(rest.hash.finalize()))
}

/// Refuses an entry no snapshot holds.
fn check_entry(kind: tar::EntryType, path: &Path) -> std::io::Result<()> {
    if !matches!(
        kind,
        tar::EntryType::Directory | tar::EntryType::Regular | tar::EntryType::Symlink
    ) {
        return Err(std::io::Error::other(format!(
            "a snapshot holds directories, regular files and symbolic links only, not a \
             {kind:?} entry (`{}`)",
            path.display()
        )));
    }
    if path.as_os_str().is_empty()
        || path
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(std::io::Error::other(format!(
            "a snapshot entry's path must be relative, of plain names: `{}`",
            path.display()
        )));
    }
    Ok(())
}

/// The bytes of the regular file `path` in `archive` (at most `cap`), `None` when it
/// holds no such file.
pub fn read_file(archive: &[u8], path: &str, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let parts = crate::paths::components(path).map_err(std::io::Error::other)?;
    let want = parts.join("/");
    let mut a = tar::Archive::new(GzDecoder::new(archive));
    for entry in a.entries()? {
        let mut entry = entry?;
        if entry.path_bytes().as_ref() != want.as_bytes() {
            continue;
        }
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(std::io::Error::other(format!(
                "workspace path `{path}` is not a regular file"
            )));
        }
        let size = entry.size();
        if size > cap {
            return Err(std::io::Error::other(format!(
                "workspace file `{path}` is {size} bytes, over the {cap} byte limit"
            )));
        }
        let mut out = Vec::with_capacity(size as usize);
        entry.read_to_end(&mut out)?;
        return Ok(Some(out));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, mtime_offset: i64) {
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        std::fs::write(root.join("a.txt"), b"alpha").unwrap();
        std::fs::write(root.join("b/c/d.bin"), [0u8, 1, 2]).unwrap();
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        let t = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs((1_000_000 + mtime_offset) as u64);
        std::fs::File::options()
            .write(true)
            .open(root.join("a.txt"))
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn the_same_tree_packs_to_the_same_bytes_whatever_its_times() {
        let (x, y) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        tree(x.path(), 0);
        tree(y.path(), 777);
        let (px, py) = (pack(x.path()).unwrap(), pack(y.path()).unwrap());
        assert_eq!(px.archive, py.archive);
        assert_eq!(px.sha256, crate::key::sha256_hex(&px.archive));
        assert_eq!(px.workspace_digest, digest(x.path()).unwrap());
        std::fs::write(y.path().join("a.txt"), b"alphA").unwrap();
        assert_ne!(digest(y.path()).unwrap(), px.workspace_digest);
    }

    #[test]
    fn an_archive_restores_the_tree_and_its_files_can_be_read() {
        let x = tempfile::tempdir().unwrap();
        tree(x.path(), 0);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            x.path().join("a.txt"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        let p = pack(x.path()).unwrap();
        let y = tempfile::tempdir().unwrap();
        unpack(&p.archive, y.path()).unwrap();
        assert_eq!(digest(y.path()).unwrap(), p.workspace_digest);
        assert_eq!(
            std::fs::read_link(y.path().join("link")).unwrap(),
            Path::new("a.txt")
        );
        assert_eq!(
            read_file(&p.archive, "b/c/d.bin", 10).unwrap().unwrap(),
            vec![0u8, 1, 2]
        );
        assert!(read_file(&p.archive, "nope", 10).unwrap().is_none());
        assert!(read_file(&p.archive, "link", 10).is_err());
        assert!(read_file(&p.archive, "a.txt", 2).is_err());
    }

    #[test]
    fn unpacking_gives_the_digest_of_the_tree_it_restored() {
        let x = tempfile::tempdir().unwrap();
        tree(x.path(), 0);
        let p = pack(x.path()).unwrap();
        let y = tempfile::tempdir().unwrap();
        let got = unpack_digest(&p.archive, y.path()).unwrap();
        assert_eq!(got, p.workspace_digest);
        assert_eq!(got, digest(y.path()).unwrap());
        // Another tree's archive gives that tree's digest, not the first one's.
        std::fs::write(x.path().join("a.txt"), b"other").unwrap();
        let q = pack(x.path()).unwrap();
        let z = tempfile::tempdir().unwrap();
        assert_eq!(
            unpack_digest(&q.archive, z.path()).unwrap(),
            q.workspace_digest
        );
        assert_ne!(q.workspace_digest, p.workspace_digest);
    }
}
