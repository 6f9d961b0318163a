//! The log store's contract, against SQLite and against a real PostgreSQL: sequence
//! numbers and chained keys allocated with the payload, blobs kept apart, snapshots, gc,
//! and the per-session lock with its bounded wait.
mod common;
use common::Db;
use skillgate_core::{Language, Status};
use skillgate_session::key::{GENESIS, chain, sha256_hex};
use skillgate_session::store::{BlobIn, SnapshotIn};
use skillgate_session::{
    ArtifactRef, EventKind, Session, SnapshotRef, StepRecord, StepResult, StepSpec, UploadRecord,
};
use std::time::Duration;

fn session(id: &str) -> Session {
    Session {
        id: id.into(),
        tenant: "acme".into(),
        agent: "analyst-1".into(),
        created_ms: 1,
        default_cwd: String::new(),
    }
}

const ID: &str = "0123456789abcdef0123456789abcdef";
const OTHER: &str = "fedcba9876543210fedcba9876543210";

fn upload(bytes: &[u8]) -> EventKind {
    EventKind::Upload(UploadRecord {
        path: "data.csv".into(),
        sha256: sha256_hex(bytes),
        size: bytes.len() as u64,
        mode: 0o644,
    })
}

fn step(artifact: &[u8]) -> EventKind {
    EventKind::Step(Box::new(StepRecord {
        spec: StepSpec {
            language: Language::Python,
            code: "print(1)".into(),
            input: serde_json::json!({"x": 1}),
            cwd: String::new(),
            limits: Default::default(),
            replayable: true,
            runtime: None,
            env: Default::default(),
        },
        result: StepResult {
            status: Status::Ok,
            exit_code: Some(0),
            stdout: "1\n".into(),
            stderr: String::new(),
            duration_ms: 3,
            output_digest: "o".into(),
            workspace_digest: "w".into(),
            artifacts: vec![ArtifactRef {
                name: "chart.png".into(),
                size: artifact.len() as u64,
                sha256: sha256_hex(artifact),
            }],
        },
    }))
}

fn contract(db: &Db) {
    let store = db.open();
    store.create(&session(ID)).unwrap();
    store.create(&session(OTHER)).unwrap();
    assert!(store.create(&session(ID)).is_err(), "ids are unique");
    assert_eq!(store.head(ID).unwrap(), (0, GENESIS.to_string()));

    let csv = b"a,b\n1,2\n".to_vec();
    let png = b"\x89PNG fake".to_vec();
    let e1 = store
        .append(ID, &upload(&csv), &[BlobIn::new(&sha256_hex(&csv), &csv)])
        .unwrap();
    let e2 = store
        .append(ID, &step(&png), &[BlobIn::new(&sha256_hex(&png), &png)])
        .unwrap();
    assert_eq!((e1.seq, e2.seq), (1, 2));
    assert_eq!(e1.key, chain(GENESIS, &upload(&csv)));
    assert_eq!(e2.key, chain(&e1.key, &step(&png)));
    // Another session's numbering is its own.
    assert_eq!(
        store
            .append(
                OTHER,
                &upload(b"x"),
                &[BlobIn::new(&sha256_hex(b"x"), b"x")]
            )
            .unwrap()
            .seq,
        1
    );

    // A second process sees the same log, in order.
    let other = db.open();
    let events = other.events(ID, 0).unwrap();
    assert_eq!(events, vec![e1.clone(), e2.clone()]);
    assert_eq!(other.events(ID, 1).unwrap(), vec![e2.clone()]);
    assert_eq!(other.head(ID).unwrap(), (2, e2.key.clone()));
    assert_eq!(other.blob(&sha256_hex(&csv)).unwrap().unwrap(), csv);
    assert_eq!(other.blob(&sha256_hex(&png)).unwrap().unwrap(), png);

    // A blob whose address is not its digest is refused, and the event with it.
    let bad = store.append(ID, &upload(b"y"), &[BlobIn::new(&sha256_hex(b"z"), b"y")]);
    assert!(bad.is_err());
    assert_eq!(
        store.head(ID).unwrap().0,
        2,
        "nothing of a failed append is kept"
    );
    // An append to a session that does not exist is refused.
    assert!(
        store
            .append("00000000000000000000000000000000", &upload(b"x"), &[])
            .is_err()
    );

    // Snapshots: newest first; gc keeps the newest and every referenced blob.
    for seq in [1u64, 2] {
        let archive = format!("archive {seq}").into_bytes();
        let s = SnapshotRef {
            seq,
            key: events[seq as usize - 1].key.clone(),
            sha256: sha256_hex(&archive),
            workspace_digest: format!("w{seq}"),
        };
        store.add_snapshot(ID, &s, &archive).unwrap();
    }
    let snaps = other.snapshots(ID).unwrap();
    assert_eq!(snaps.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![2, 1]);
    let report = store.gc(1).unwrap();
    assert_eq!((report.snapshots, report.blobs), (1, 1));
    assert!(store.blob(&sha256_hex(b"archive 1")).unwrap().is_none());
    assert!(store.blob(&sha256_hex(b"archive 2")).unwrap().is_some());
    assert!(store.blob(&sha256_hex(&csv)).unwrap().is_some());
    assert!(store.blob(&sha256_hex(&png)).unwrap().is_some());

    // Removing a session drops its log; gc then drops what only it referenced.
    assert!(store.remove(ID).unwrap());
    assert!(!store.remove(ID).unwrap());
    assert!(store.session(ID).unwrap().is_none());
    assert!(store.events(ID, 0).unwrap().is_empty());
    let report = store.gc(1).unwrap();
    assert_eq!(report.blobs, 3, "{report:?}");
    assert!(store.blob(&sha256_hex(&csv)).unwrap().is_none());
    assert!(
        store.blob(&sha256_hex(b"x")).unwrap().is_some(),
        "the other session's upload stays"
    );
    assert_eq!(store.sessions().unwrap(), vec![session(OTHER)]);
}

#[test]
fn sqlite_log_contract() {
    let dir = tempfile::tempdir().unwrap();
    contract(&Db::sqlite(dir.path()));
}

#[test]
fn postgres_log_contract() {
    contract(&Db::pg("session_contract"));
}

/// A step and the snapshot taken after it are one transaction: both are there, the
/// snapshot at the step's sequence number and key; or, when either is refused, neither.
fn step_with_snapshot(db: &Db) {
    let store = db.open();
    store.create(&session(ID)).unwrap();
    let png = b"\x89PNG fake".to_vec();
    let archive = b"the workspace after step 1".to_vec();
    let sha = sha256_hex(&archive);
    let with = SnapshotIn {
        sha256: &sha,
        workspace_digest: "w1",
        archive: &archive,
    };
    let e1 = store
        .append_with_snapshot(
            ID,
            &step(&png),
            &[BlobIn::new(&sha256_hex(&png), &png)],
            Some(with),
        )
        .unwrap();
    let other = db.open();
    assert_eq!(other.snapshots(ID).unwrap(), vec![with.at(&e1)]);
    assert_eq!(other.blob(&sha).unwrap().unwrap(), archive);

    // A snapshot whose address is not its archive's digest: the step is not kept either.
    let wrong = SnapshotIn {
        sha256: &sha,
        workspace_digest: "w2",
        archive: b"other bytes",
    };
    assert!(
        store
            .append_with_snapshot(
                ID,
                &upload(b"x"),
                &[BlobIn::new(&sha256_hex(b"x"), b"x")],
                Some(wrong)
            )
            .is_err()
    );
    assert_eq!(other.head(ID).unwrap(), (1, e1.key.clone()));
    assert_eq!(other.snapshots(ID).unwrap().len(), 1);
    assert!(other.blob(&sha256_hex(b"x")).unwrap().is_none());
}

#[test]
fn sqlite_step_and_its_snapshot_are_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    step_with_snapshot(&Db::sqlite(dir.path()));
}

#[test]
fn postgres_step_and_its_snapshot_are_one_commit() {
    step_with_snapshot(&Db::pg("session_step_snapshot"));
}

/// Concurrent appenders (separate connections, as separate processes have) get
/// contiguous, distinct sequence numbers and one unbroken key chain.
fn concurrent_appends(db: &Db) {
    db.open().create(&session(ID)).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let store = db.open();
            s.spawn(move || {
                for i in 0..25 {
                    let bytes = format!("{t}-{i}").into_bytes();
                    store
                        .append(
                            ID,
                            &upload(&bytes),
                            &[BlobIn::new(&sha256_hex(&bytes), &bytes)],
                        )
                        .unwrap();
                }
            });
        }
    });
    let events = db.open().events(ID, 0).unwrap();
    assert_eq!(events.len(), 100);
    let mut key = GENESIS.to_string();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1);
        key = chain(&key, &e.kind);
        assert_eq!(e.key, key, "event {}", e.seq);
    }
}

#[test]
fn sqlite_appends_from_several_connections_stay_ordered() {
    let dir = tempfile::tempdir().unwrap();
    concurrent_appends(&Db::sqlite(dir.path()));
}

#[test]
fn postgres_appends_from_several_connections_stay_ordered() {
    concurrent_appends(&Db::pg("session_concurrent"));
}

/// The lock: exclusive per session, a second taker is busy after its bounded wait, the
/// lock is free again once dropped, and other sessions are not affected.
fn locking(db: &Db) {
    let a = db.open();
    let b = db.open();
    let mut held = a
        .lock(ID, Duration::from_millis(100))
        .unwrap()
        .expect("free");
    assert!(held.held());
    assert!(
        b.lock(ID, Duration::from_millis(200)).unwrap().is_none(),
        "a second taker is told busy"
    );
    let other = b.lock(OTHER, Duration::from_millis(100)).unwrap();
    assert!(other.is_some(), "another session's lock is independent");
    drop(held);
    assert!(b.lock(ID, Duration::from_millis(2000)).unwrap().is_some());
    assert!(
        a.lock("../../etc/passwd", Duration::ZERO).is_err(),
        "ids name files"
    );
}

#[test]
fn sqlite_lock_is_exclusive_with_a_bounded_wait() {
    let dir = tempfile::tempdir().unwrap();
    locking(&Db::sqlite(dir.path()));
}

#[test]
fn postgres_lock_is_exclusive_with_a_bounded_wait() {
    locking(&Db::pg("session_lock"));
}

#[test]
fn a_waiting_taker_gets_the_lock_when_the_holder_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let a = db.open();
    let held = a.lock(ID, Duration::ZERO).unwrap().unwrap();
    let waiter = std::thread::spawn({
        let b = db.open();
        move || b.lock(ID, Duration::from_secs(30)).unwrap().is_some()
    });
    std::thread::sleep(Duration::from_millis(200));
    drop(held);
    assert!(waiter.join().unwrap());
}

#[test]
fn postgres_lock_is_lost_with_its_connection() {
    let db = Db::pg("session_lock_lost");
    let Db::Pg(url) = &db else { unreachable!() };
    let store = db.open();
    let mut held = store.lock(ID, Duration::ZERO).unwrap().unwrap();
    assert!(held.held());
    // The server ends the lock's connection (as a restart would).
    common::pg_support::psql(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid() \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    assert!(!held.held(), "a lost connection lost the lock");
    assert!(store.lock(ID, Duration::ZERO).unwrap().is_some());
}

fn newer_schema_refused(db: &Db) {
    db.open();
    db.sql("INSERT INTO skillgate_migrations(component, version) VALUES('sessions', 99)");
    let err = match db {
        Db::Sqlite(dir) => skillgate_session::SqliteLog::open(dir).unwrap_err(),
        Db::Pg(url) => skillgate_session::PgLog::open(url).unwrap_err(),
    };
    assert!(err.to_string().contains("schema version 99"), "{err}");
}

#[test]
fn sqlite_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    newer_schema_refused(&Db::sqlite(dir.path()));
}

#[test]
fn postgres_newer_schema_is_refused() {
    newer_schema_refused(&Db::pg("session_newer"));
}

/// Each CLI command is a process with the store's only connection: closing it keeps the
/// WAL (no checkpoint, no deletion and re-creation at the next command: four flushes a
/// command), and a new connection reads every commit from it.
#[test]
fn sqlite_close_keeps_the_wal_and_the_next_open_reads_it() {
    use skillgate_session::LogStore;
    let dir = tempfile::tempdir().unwrap();
    let csv = b"a,b\n";
    {
        let log = skillgate_session::SqliteLog::open(dir.path()).unwrap();
        log.create(&session(ID)).unwrap();
        log.append(ID, &upload(csv), &[BlobIn::new(&sha256_hex(csv), csv)])
            .unwrap();
    }
    let wal = std::fs::metadata(dir.path().join("sessions.db-wal"));
    assert!(
        wal.is_ok_and(|m| m.len() > 0),
        "closing the store checkpointed and removed its WAL"
    );
    let log = skillgate_session::SqliteLog::open(dir.path()).unwrap();
    assert_eq!(log.head(ID).unwrap().0, 1);
}
