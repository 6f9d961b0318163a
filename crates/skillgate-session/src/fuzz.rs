//! Entry points for the `session_log` cargo-fuzz target in `fuzz/`: what a session reads
//! back from its store must be answered with a value or an error, never a panic, and a
//! snapshot archive, however it was made, must not write outside the workspace it is
//! unpacked into. `tests/fuzz_seeds.rs` runs every seed in
//! `corpora/fuzz-seeds/session_log/` (written by `examples/fuzz_seeds.rs`).
use crate::model::{Event, EventKind};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The largest file [`session_log`] reads out of an archive.
pub const READ_CAP: u64 = 1 << 20;

/// The most bytes of a tree [`session_log`] packs again (a sparse entry can declare
/// gigabytes in a few bytes of archive).
const REPACK_CAP: u64 = 16 << 20;

/// What [`session_log`] unpacks beside the workspace, to see that it is left alone.
const SENTINEL: &[u8] = b"outside the workspace";

/// Decodes `data` as a stored event's payload ([`event`]) and as a snapshot archive
/// ([`snapshot`]). Panics when an invariant does not hold.
///
/// ```
/// skillgate_session::fuzz::session_log(br#"{"kind":"upload","path":"a","sha256":"00","size":1,"mode":420}"#);
/// skillgate_session::fuzz::session_log(b"\x1f\x8b not quite gzip");
/// ```
pub fn session_log(data: &[u8]) {
    let _ = event(data);
    snapshot(data);
}

/// The payload a store keeps for `kind` (what an append writes).
pub fn payload(kind: &EventKind) -> String {
    crate::store::payload(kind).expect("an event kind encodes")
}

/// `data` through the path a stored event is read on (`store::event_from`): an event
/// whose payload, encoded again, reads back as the same event; or an error naming it.
pub fn event(data: &[u8]) -> Option<Event> {
    let text = std::str::from_utf8(data).ok()?;
    match crate::store::event_from(7, "key".into(), 1, text) {
        Ok(e) => {
            let again = payload(&e.kind);
            let back = crate::store::event_from(7, "key".into(), 1, &again)
                .unwrap_or_else(|err| panic!("a re-encoded event does not read back: {err}"));
            assert_eq!(back, e, "a re-encoded event reads back differently");
            let _ = crate::store::referenced(&e.kind);
            Some(e)
        }
        Err(err) => {
            assert!(err.to_string().contains("event 7"), "{err}");
            None
        }
    }
}

/// `data` as a snapshot archive (as it is when it is gzip, else gzip-compressed first,
/// so that the fuzzer's mutations reach the tar headers): [`crate::snapshot::read_file`]
/// of a few paths, capped
/// at [`READ_CAP`]; then [`crate::snapshot::unpack`] into a workspace of a temporary
/// directory, beside a folder with a file in it. Whether it unpacks or not, nothing but
/// the workspace changes: the folder beside it and its file are as they were (no write
/// through `..`, an absolute path, a symbolic link or a hard link), no file inside is a
/// hard link to one outside, and nothing inside has a mode beyond the permission bits
/// (`0o777`). A tree that unpacked packs again to an archive restoring the same digest.
/// Returns whether it unpacked.
pub fn snapshot(data: &[u8]) -> bool {
    let compressed;
    let data = if data.starts_with(&[0x1f, 0x8b]) {
        data
    } else {
        compressed = gzip(data);
        &compressed[..]
    };
    for path in ["data.csv", "a/b.txt", "out/chart.png"] {
        if let Ok(Some(bytes)) = crate::snapshot::read_file(data, path, READ_CAP) {
            assert!(
                bytes.len() as u64 <= READ_CAP,
                "read_file returned over its cap"
            );
        }
    }
    let Ok(tmp) = tempfile::tempdir() else {
        return false;
    };
    let (outside, root) = (tmp.path().join("outside"), tmp.path().join("ws"));
    if std::fs::create_dir(&outside).is_err()
        || std::fs::write(outside.join("secret.txt"), SENTINEL).is_err()
        || std::fs::create_dir(&root).is_err()
    {
        return false;
    }
    let unpacked = crate::snapshot::unpack(data, &root).is_ok();
    check_outside(tmp.path());
    let size = check_inside(&root);
    if unpacked && size <= REPACK_CAP {
        let packed = crate::snapshot::pack(&root).expect("an unpacked tree packs");
        let again = tmp.path().join("again");
        std::fs::create_dir(&again).expect("a second workspace");
        crate::snapshot::unpack(&packed.archive, &again).expect("a packed tree unpacks");
        assert_eq!(
            crate::snapshot::digest(&again).expect("a digest"),
            packed.workspace_digest,
            "a packed tree does not restore its digest"
        );
    }
    unpacked
}

/// `data`, gzip-compressed.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

/// The temporary directory holds the workspace and the untouched folder beside it only.
fn check_outside(tmp: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .expect("the temporary directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(names, ["outside", "ws"], "written beside the workspace");
    let outside = tmp.join("outside");
    let meta = std::fs::symlink_metadata(&outside).expect("the folder beside");
    assert!(
        meta.is_dir(),
        "the folder beside the workspace was replaced"
    );
    let files: Vec<_> = std::fs::read_dir(&outside)
        .expect("the folder beside")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(files, ["secret.txt"], "written into the folder beside");
    let secret = outside.join("secret.txt");
    let meta = std::fs::symlink_metadata(&secret).expect("the file beside");
    assert!(meta.is_file(), "the file beside the workspace was replaced");
    assert_eq!(
        meta.nlink(),
        1,
        "the file beside the workspace was hard-linked"
    );
    assert_eq!(
        std::fs::read(&secret).expect("the file beside"),
        SENTINEL,
        "the file beside the workspace was written"
    );
}

/// Every entry under `root` has permission bits only, and every hard link of a file in
/// it is in it; returns the bytes of its regular files.
fn check_inside(root: &Path) -> u64 {
    let mut links: std::collections::HashMap<(u64, u64), (u64, u64)> = Default::default();
    let mut size = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let kind = meta.file_type();
            if !kind.is_symlink() {
                assert_eq!(
                    meta.mode() & 0o7000,
                    0,
                    "{} has mode {:o}: set-id or sticky bits from an archive",
                    path.display(),
                    meta.mode()
                );
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                size += meta.len();
                let seen = links
                    .entry((meta.dev(), meta.ino()))
                    .or_insert((meta.nlink(), 0));
                seen.1 += 1;
            }
        }
    }
    for (nlink, found) in links.values() {
        assert_eq!(
            nlink, found,
            "a file of the workspace is a hard link to one outside it"
        );
    }
    size
}
