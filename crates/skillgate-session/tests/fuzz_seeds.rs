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
