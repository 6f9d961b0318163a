//! Workspaces parked between processes (`ParkingLot`, how the CLI keeps a session warm):
//! the next process continues a parked workspace, catches it up with events appended
//! since, and never continues one that was taken mid-step, is of another history, or is
//! no longer mounted; the lot keeps at most its capacity and sweeps removed sessions.
mod common;
use common::{Db, engine, owner, py};
use skillgate_session::{NativeBackend, ParkingLot, Sessions, Settings};
use std::path::Path;
use std::sync::Arc;

const BYTES: u64 = 64 << 20;

const APPEND: &str = "
with open('notes.txt', 'a') as f:
    f.write('x')
print(open('notes.txt').read())
";

/// A lot in a test's folder; what is still parked there is unmounted when the test ends
/// (passed or not).
struct Lot(ParkingLot);

impl Lot {
    fn new(dir: &Path, capacity: usize) -> Lot {
        Lot(ParkingLot::new(dir.join("lot"), capacity))
    }
}

impl std::ops::Deref for Lot {
    type Target = ParkingLot;
    fn deref(&self) -> &ParkingLot {
        &self.0
    }
}

impl Drop for Lot {
    fn drop(&mut self) {
        let _ = self.0.sweep(|_| false);
    }
}

/// A process's sessions, parking their workspaces in `lot`.
fn parked(
    db: &Db,
    engine: Arc<skillgate::Engine>,
    lot: &ParkingLot,
    every: u32,
) -> Sessions<NativeBackend> {
    Sessions::native_parked(
        db.open(),
        Settings {
            snapshot_every: every,
            snapshot_after: std::time::Duration::from_secs(3600),
            ..Settings::default()
        },
        Arc::new(move || engine.clone()),
        BYTES,
        lot.clone(),
    )
}

fn stdout(r: &skillgate_session::ExecReport) -> String {
    String::from_utf8_lossy(&r.outcome.stdout)
        .trim()
        .to_string()
}

fn mounted(dir: &Path) -> bool {
    let me = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(me.to_str().unwrap()))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_next_process_continues_a_parked_workspace_and_catches_it_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let engine = engine(dir.path());
    let lot = Lot::new(dir.path(), 8);

    let a = parked(&db, engine.clone(), &lot, 100);
    let s = a.create(&owner()).unwrap();
    for want in ["x", "xx"] {
        assert_eq!(
            stdout(&a.exec(&owner(), &s.id, py(APPEND)).await.unwrap()),
            want
        );
    }
    drop(a); // the process ends; its workspace stays mounted, parked
    let ws = dir.path().join("lot").join(&s.id).join("ws");
    assert!(mounted(&ws), "the workspace outlives its process");

    let b = parked(&db, engine.clone(), &lot, 100);
    let r = b.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xxx");
    assert!(r.restored.warm && r.restored.parked, "{:?}", r.restored);
    assert_eq!((r.restored.snapshot, r.restored.replayed), (None, 0));
    drop(b);

    // A process that does not park (a server) appends a step and an upload meanwhile.
    let c = common::sessions(db.open(), engine.clone(), Settings::default());
    assert_eq!(
        stdout(&c.exec(&owner(), &s.id, py(APPEND)).await.unwrap()),
        "xxxx"
    );
    c.upload(&owner(), &s.id, "more.txt", b"y", 0o644).unwrap();
    drop(c);

    // The parked workspace is two events behind: they are applied, nothing restored.
    let d = parked(&db, engine.clone(), &lot, 100);
    let r = d
        .exec(
            &owner(),
            &s.id,
            py("print(open('notes.txt').read() + open('more.txt').read())"),
        )
        .await
        .unwrap();
    assert_eq!(stdout(&r), "xxxxy");
    assert!(r.restored.parked, "{:?}", r.restored);
    assert_eq!(r.restored.replayed, 2, "{:?}", r.restored);
    let replay = d.replay(&owner(), &s.id, true).await.unwrap();
    assert!(replay.restored.divergence.is_none(), "{replay:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workspace_taken_mid_step_or_of_another_history_is_rebuilt_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let engine = engine(dir.path());
    let lot = Lot::new(dir.path(), 8);
    let a = parked(&db, engine.clone(), &lot, 1);
    let s = a.create(&owner()).unwrap();
    assert_eq!(
        stdout(&a.exec(&owner(), &s.id, py(APPEND)).await.unwrap()),
        "x"
    );
    drop(a);

    // A process killed mid-step: it took the ticket, changed the workspace, and died.
    let ws = lot.workspace_dir(&s.id).unwrap();
    assert!(lot.claim(&s.id, BYTES).unwrap().is_some());
    std::fs::write(ws.join("notes.txt"), "half-written").unwrap();
    let b = parked(&db, engine.clone(), &lot, 1);
    let r = b.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(
        stdout(&r),
        "xx",
        "rebuilt from the snapshot, not the half-written file"
    );
    assert!(!r.restored.warm, "{:?}", r.restored);
    assert_eq!(r.restored.snapshot, Some(1));
    drop(b);

    // A ticket whose key is not the log's at its position: not continued.
    let ticket = dir.path().join("lot").join(&s.id).join("head");
    let text = std::fs::read_to_string(&ticket).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["seq"], 2, "{text}");
    v["key"] = serde_json::json!("0".repeat(64));
    std::fs::write(&ticket, v.to_string()).unwrap();
    std::fs::write(ws.join("notes.txt"), "another history").unwrap();
    let c = parked(&db, engine.clone(), &lot, 1);
    let r = c.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xxx");
    assert!(!r.restored.warm, "{:?}", r.restored);
    drop(c);

    // A workspace no longer mounted (as after a restart): not continued either.
    rustix::mount::unmount(&ws, rustix::mount::UnmountFlags::DETACH).unwrap();
    std::fs::write(ws.join("notes.txt"), "on the disk beneath").unwrap();
    let d = parked(&db, engine.clone(), &lot, 1);
    let r = d.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xxxx");
    assert!(!r.restored.warm, "{:?}", r.restored);
    drop(d);
    assert!(lot.evict(&s.id).unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lot_keeps_its_capacity_and_sweeps_removed_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let engine = engine(dir.path());
    let lot = Lot::new(dir.path(), 1);
    let a = parked(&db, engine.clone(), &lot, 100);
    let (s1, s2) = (a.create(&owner()).unwrap(), a.create(&owner()).unwrap());
    let slot = |id: &str| dir.path().join("lot").join(id);
    a.exec(&owner(), &s1.id, py(APPEND)).await.unwrap();
    assert!(mounted(&slot(&s1.id).join("ws")));
    // Parking a second workspace evicts the first (capacity 1): its ticket taken, and
    // unmounted (its directory stays: a process may be about to mount on it).
    let evicted = |id: &str| !mounted(&slot(id).join("ws")) && !slot(id).join("head").exists();
    std::thread::sleep(std::time::Duration::from_millis(20));
    a.exec(&owner(), &s2.id, py(APPEND)).await.unwrap();
    assert!(evicted(&s1.id));
    assert!(mounted(&slot(&s2.id).join("ws")));
    drop(a);
    // Its session goes on from the log.
    let b = parked(&db, engine.clone(), &lot, 100);
    let r = b.exec(&owner(), &s1.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xx");
    assert!(!r.restored.parked, "{:?}", r.restored);
    drop(b);
    assert!(evicted(&s2.id), "parked again, s1 evicted s2");
    // A sweep removes the slots of sessions that no longer exist, and only those.
    assert_eq!(lot.sweep(|id| id == s1.id).unwrap(), 1);
    assert!(!slot(&s2.id).exists());
    assert!(mounted(&slot(&s1.id).join("ws")));
    assert_eq!(lot.sweep(|_| false).unwrap(), 1);
    assert!(!slot(&s1.id).exists());
}
