//! Every seed of the `session_log` fuzz target (`corpora/fuzz-seeds/session_log/`, written
//! by `examples/fuzz_seeds.rs`) goes through its fuzz entry (no panic: its invariants
//! hold), and the seeds mean what their names say: every `event-*` reads as an event,
//! every `snapshot-*` unpacks, and no `hostile-*` archive writes outside the workspace.
use skillgate_session::{fuzz, snapshot};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fuzz-seeds/session_log");
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    seeds.sort();
    seeds
}

#[test]
fn every_seed_runs_and_means_what_its_name_says() {
    let (mut events, mut snapshots, mut hostile) = (0, 0, 0);
    for (name, bytes) in seeds() {
        fuzz::session_log(&bytes);
        if name.starts_with("event-") {
            assert!(fuzz::event(&bytes).is_some(), "{name} does not read");
            events += 1;
        } else if name.starts_with("snapshot-") {
            assert!(fuzz::snapshot(&bytes), "{name} does not unpack");
            snapshots += 1;
        } else if name.starts_with("hostile-") {
            hostile += 1;
        }
    }
    assert!(
        events >= 5 && snapshots >= 2 && hostile >= 10,
        "seeds: {events} events, {snapshots} snapshots, {hostile} hostile archives"
    );
}

/// Found by the `session_log` target: `unpack` kept the set-user-id, set-group-id and
/// sticky bits an archive gave, though a snapshot keeps permission bits only.
#[test]
fn an_archive_never_restores_set_id_or_sticky_bits() {
    let (_, tar) = seeds()
        .into_iter()
        .find(|(name, _)| name == "hostile-setid.tar")
        .expect("the hostile-setid seed");
    let tmp = tempfile::tempdir().unwrap();
    snapshot::unpack(&fuzz::gzip(&tar), tmp.path()).unwrap();
    let mode = |p: &str| {
        std::fs::symlink_metadata(tmp.path().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(
        (mode("suid"), mode("sgid"), mode("sticky")),
        (0o755, 0o755, 0o777)
    );
}

/// An archive holding what no snapshot holds (a hard link, a path with `..` or from the
/// root) is an error naming what is wrong, and nothing is written beside the workspace.
#[test]
fn an_archive_with_a_hard_link_or_a_path_out_is_refused() {
    let mut refused = Vec::new();
    for (name, tar) in seeds() {
        let out_of_format = name.contains("hardlink")
            || name.contains("parent")
            || name == "hostile-absolute.tar"
            || name == "hostile-pax-path.tar";
        if !name.starts_with("hostile-") || !out_of_format {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let err = snapshot::unpack_digest(&fuzz::gzip(&tar), &ws)
            .expect_err(&format!("{name} was unpacked"));
        assert!(
            err.to_string().contains("snapshot"),
            "{name}: the error does not say what is wrong: {err}"
        );
        let beside: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(beside, ["ws"], "{name} wrote beside the workspace");
        refused.push(name);
    }
    assert_eq!(refused.len(), 7, "hostile seeds checked: {refused:?}");
}

/// A tar of `entries`: (path, link target or file bytes, is a link).
fn tar_of(entries: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data, link) in entries {
        let mut h = tar::Header::new_gnu();
        if *link {
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            h.set_mode(0o777);
            b.append_link(&mut h, path, std::str::from_utf8(data).unwrap())
                .unwrap();
        } else {
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            b.append_data(&mut h, path, *data).unwrap();
        }
    }
    b.into_inner().unwrap()
}

/// The restore writes each entry through its parent directory's descriptor and never
/// follows a link: an entry beneath a link the archive made is refused (and nothing lands
/// where the link points), and so is a second file at one path (a snapshot has one).
#[test]
fn an_entry_beneath_a_link_or_a_second_file_at_one_path_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
    std::fs::create_dir(&outside).unwrap();
    let target = outside.to_str().unwrap().as_bytes();
    let cases: [(&str, Vec<u8>); 3] = [
        (
            "beneath a link out",
            tar_of(&[("out", target, true), ("out/planted", b"x", false)]),
        ),
        (
            "beneath a link in",
            tar_of(&[
                ("d/f", b"y", false),
                ("l", b"d", true),
                ("l/planted", b"x", false),
            ]),
        ),
        (
            "a second file",
            tar_of(&[("a.txt", b"one", false), ("a.txt", b"two", false)]),
        ),
    ];
    for (what, tar) in cases {
        std::fs::create_dir(&ws).unwrap();
        let err = snapshot::unpack_digest(&fuzz::gzip(&tar), &ws)
            .expect_err(&format!("{what}: unpacked"));
        assert!(err.to_string().contains("restoring `"), "{what}: {err}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "{what}");
        assert!(!ws.join("d/planted").exists(), "{what}");
        if what == "a second file" {
            // The first is never overwritten.
            assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), b"one");
        }
        std::fs::remove_dir_all(&ws).unwrap();
    }
}
