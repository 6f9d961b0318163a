//! Sessions with the native backend through the full pipeline, against SQLite and a real
//! PostgreSQL: state carried from step to step, cold starts from snapshots, a lost
//! snapshot rebuilt from the log, divergence on a cold replay, pinned skill mounts, and
//! no way around the layers.
mod common;
use common::{Db, engine, owner, py, sessions};
use skillgate_core::Status;
use skillgate_session::{EventKind, Settings};

fn settings(every: u32) -> Settings {
    Settings {
        snapshot_every: every,
        snapshot_after: std::time::Duration::from_secs(3600),
        ..Settings::default()
    }
}

fn stdout(r: &skillgate_session::ExecReport) -> String {
    String::from_utf8_lossy(&r.outcome.stdout)
        .trim()
        .to_string()
}

const APPEND: &str = "
with open('notes.txt', 'a') as f:
    f.write('x')
print(open('notes.txt').read())
";

/// Steps see the uploads and each other's files; another process (a new `Sessions` on
/// the same database) continues from a snapshot and a replay; downloads come from a
/// snapshot at the head.
async fn state_carries_over(db: Db) {
    let state = tempfile::tempdir().unwrap();
    let engine = engine(state.path());
    let a = sessions(db.open(), engine.clone(), settings(2));
    let s = a.create(&owner()).unwrap();
    a.upload(&owner(), &s.id, "in/data.csv", b"a,b\n1,2\n3,4\n", 0o644)
        .unwrap();
    let r = a
        .exec(
            &owner(),
            &s.id,
            py("rows = open('in/data.csv').read().splitlines()\nopen('count.txt','w').write(str(len(rows)))\nprint(len(rows))"),
        )
        .await
        .unwrap();
    assert_eq!(r.outcome.status, Status::Ok, "{:?}", r.outcome);
    assert_eq!(stdout(&r), "3");
    for want in ["x", "xx", "xxx"] {
        let r = a.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
        assert_eq!(stdout(&r), want);
        assert!(r.restored.warm, "this process holds the workspace");
    }
    // Events: upload, 4 steps; snapshots after steps 2 and 4 (seq 3 and 5).
    let log = a.log(&owner(), &s.id).unwrap();
    assert_eq!(log.len(), 5);
    assert!(matches!(log[0].kind, EventKind::Upload(_)));

    // Another process: the latest snapshot is restored, nothing replayed.
    let b = sessions(db.open(), engine.clone(), settings(2));
    let r = b.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xxxx");
    assert_eq!((r.restored.snapshot, r.restored.replayed), (Some(5), 0));
    assert!(!r.restored.warm);

    // A third: snapshot 5, then step 6 replayed.
    let c = sessions(db.open(), engine.clone(), settings(100));
    assert_eq!(
        c.download(&owner(), &s.id, "notes.txt")
            .await
            .unwrap()
            .unwrap(),
        b"xxxx"
    );
    assert_eq!(
        c.download(&owner(), &s.id, "count.txt")
            .await
            .unwrap()
            .unwrap(),
        b"3"
    );
    assert!(
        c.download(&owner(), &s.id, "nope.txt")
            .await
            .unwrap()
            .is_none()
    );
    assert!(c.download(&owner(), &s.id, "../etc/passwd").await.is_err());
    let heads: Vec<u64> = db
        .open()
        .snapshots(&s.id)
        .unwrap()
        .iter()
        .map(|s| s.seq)
        .collect();
    assert_eq!(
        heads[0], 6,
        "the download stored a snapshot at the head: {heads:?}"
    );

    // Another agent does not see the session.
    let stranger = skillgate_session::Owner {
        tenant: "acme".into(),
        agent: "someone-else".into(),
    };
    assert!(matches!(
        c.log(&stranger, &s.id),
        Err(skillgate_session::SessionError::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_state_carries_over_steps_and_processes() {
    let dir = tempfile::tempdir().unwrap();
    state_carries_over(Db::sqlite(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_state_carries_over_steps_and_processes() {
    state_carries_over(Db::pg("session_state")).await;
}

/// The snapshot store loses a snapshot (its blob is gone) or holds a damaged one: the
/// next step restores an older one or replays the log from the start, correctly.
async fn lost_snapshot(db: Db) {
    let state = tempfile::tempdir().unwrap();
    let engine = engine(state.path());
    let a = sessions(db.open(), engine.clone(), settings(2));
    let s = a.create(&owner()).unwrap();
    for _ in 0..4 {
        a.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    }
    let snaps = db.open().snapshots(&s.id).unwrap();
    assert_eq!(snaps.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![4, 2]);
    db.sql(&format!(
        "DELETE FROM session_blobs WHERE sha256 = '{}'",
        snaps[0].sha256
    ));
    let b = sessions(db.open(), engine.clone(), settings(100));
    let r = b.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xxxxx");
    assert_eq!(r.restored.unusable_snapshots, vec![4]);
    assert_eq!((r.restored.snapshot, r.restored.replayed), (Some(2), 2));
    assert_eq!(r.restored.divergence, None);

    // Both lost: the log alone rebuilds it.
    db.sql(&format!(
        "DELETE FROM session_blobs WHERE sha256 = '{}'",
        snaps[1].sha256
    ));
    let c = sessions(db.open(), engine, settings(100));
    let r = c.exec(&owner(), &s.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "xxxxxx");
    assert_eq!((r.restored.snapshot, r.restored.replayed), (None, 5));
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_a_lost_snapshot_is_rebuilt_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    lost_snapshot(Db::sqlite(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_a_lost_snapshot_is_rebuilt_from_the_log() {
    lost_snapshot(Db::pg("session_lost_snapshot")).await;
}

/// A skill edited after it was mounted: replays use the pinned bytes.
async fn pinned_mount(db: Db) {
    let state = tempfile::tempdir().unwrap();
    let engine = engine(state.path());
    let parent = tempfile::tempdir().unwrap();
    let folder = parent.path().join("greeter");
    let write_skill = |text: &str| {
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: greeter\ndescription: Says hello.\n---\n",
        )
        .unwrap();
        std::fs::create_dir_all(folder.join("scripts")).unwrap();
        std::fs::write(folder.join("scripts/main.py"), text).unwrap();
    };
    write_skill("GREETING = 'hello'\n");
    let skill = skillgate::skill_dir::load(&folder).unwrap();
    let a = sessions(db.open(), engine.clone(), settings(100));
    let s = a.create(&owner()).unwrap();
    a.mount(&owner(), &s.id, &skill).unwrap();
    let read = py("print(open('skills/greeter/scripts/main.py').read().strip())");
    let r = a.exec(&owner(), &s.id, read.clone()).await.unwrap();
    assert_eq!(stdout(&r), "GREETING = 'hello'");

    write_skill("GREETING = 'changed behind the session'\n");
    let b = sessions(db.open(), engine, settings(100));
    let r = b.exec(&owner(), &s.id, read).await.unwrap();
    assert_eq!(
        r.restored.replayed, 2,
        "cold: the mount and the step replayed"
    );
    assert_eq!(stdout(&r), "GREETING = 'hello'");
    assert_eq!(r.restored.divergence, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_a_mounted_skill_keeps_its_pinned_bytes() {
    let dir = tempfile::tempdir().unwrap();
    pinned_mount(Db::sqlite(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_a_mounted_skill_keeps_its_pinned_bytes() {
    pinned_mount(Db::pg("session_mount")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cold_replay_reports_the_first_divergent_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let engine = engine(dir.path());
    let a = sessions(db.open(), engine, settings(100));
    let s = a.create(&owner()).unwrap();
    a.exec(
        &owner(),
        &s.id,
        py("open('a','w').write('1')\nprint('same')"),
    )
    .await
    .unwrap();
    // Different output every run (the pre-scan has no objection to the os module's
    // randomness).
    let r = a
        .exec(&owner(), &s.id, py("import os\nprint(os.urandom(8).hex())"))
        .await
        .unwrap();
    assert_eq!(r.outcome.status, Status::Ok, "{:?}", r.outcome);
    let report = a.replay(&owner(), &s.id, true).await.unwrap();
    assert_eq!(report.restored.replayed, 2);
    let d = report.restored.divergence.expect("step 2 differs");
    assert_eq!((d.seq, d.what.as_str()), (2, "output"));
    // The workspace itself is the same, and the recorded output stays canonical.
    assert_eq!(Some(report.workspace_digest), report.recorded_digest);
    let log = a.log(&owner(), &s.id).unwrap();
    let EventKind::Step(step) = &log[1].kind else {
        panic!("a step")
    };
    assert_eq!(
        step.result.stdout.trim(),
        String::from_utf8_lossy(&r.outcome.stdout).trim()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_that_does_not_run_is_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let a = sessions(db.open(), engine(dir.path()), settings(100));
    let s = a.create(&owner()).unwrap();
    // The pre-scan blocks it: nothing ran, nothing is appended.
    let r = a
        .exec(
            &owner(),
            &s.id,
            py("import subprocess\nsubprocess.run(['sh', '-c', 'echo hi > f'])"),
        )
        .await
        .unwrap();
    assert_eq!(r.outcome.status, Status::Blocked, "{:?}", r.outcome);
    assert!(r.event.is_none());
    assert!(a.log(&owner(), &s.id).unwrap().is_empty());
    // In a working directory of its own: not left behind either (a replay would not
    // make it, and the next step's workspace digest would differ from the replay's).
    let mut blocked = py("import subprocess\nsubprocess.run(['true'])");
    blocked.cwd = "fresh/sub".into();
    let r = a.exec(&owner(), &s.id, blocked).await.unwrap();
    assert_eq!(r.outcome.status, Status::Blocked, "{:?}", r.outcome);
    let r = a
        .exec(
            &owner(),
            &s.id,
            py("import os\nprint(os.path.exists('fresh'))"),
        )
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&r.outcome.stdout).trim(), "False");
    assert!(r.restored.warm, "{:?}", r.restored);
    let replay = a.replay(&owner(), &s.id, true).await.unwrap();
    assert!(replay.restored.divergence.is_none(), "{replay:?}");
    // A failing step ran: it is recorded, with its exit code.
    let r = a
        .exec(
            &owner(),
            &s.id,
            py("open('f','w').write('1')\nraise SystemExit(3)"),
        )
        .await
        .unwrap();
    assert_eq!(r.outcome.exit_code, Some(3));
    assert_eq!(r.event.unwrap().seq, 2);
}

/// No history limit: 1,000 steps and 500 uploads in one session still run, and a cold
/// start restores the nearest snapshot and replays only what follows it.
#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_steps_and_five_hundred_uploads() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    // The monitor would rightly throttle an agent that runs a thousand scripts in a few
    // minutes (its rate-spike detection); this test is about the length of the history.
    let engine = common::engine_without(dir.path(), &[skillgate::LayerName::Monitor]);
    let a = sessions(db.open(), engine.clone(), settings(64));
    let s = a.create(&owner()).unwrap();
    let step = py("import os\nn = len(os.listdir('up')) if os.path.isdir('up') else 0\nprint(n)");
    for i in 0..1000 {
        if i % 2 == 0 {
            a.upload(
                &owner(),
                &s.id,
                &format!("up/{i:04}.txt"),
                format!("{i}").as_bytes(),
                0o644,
            )
            .unwrap();
        }
        let r = a.exec(&owner(), &s.id, step.clone()).await.unwrap();
        assert_eq!(stdout(&r), (i / 2 + 1).to_string(), "step {i}");
    }
    assert_eq!(a.log(&owner(), &s.id).unwrap().len(), 1500);
    let b = sessions(db.open(), engine, settings(64));
    let r = b.exec(&owner(), &s.id, step).await.unwrap();
    assert_eq!(stdout(&r), "500");
    assert!(r.restored.snapshot.is_some());
    assert!(r.restored.replayed < 64 * 2, "{:?}", r.restored);
}

/// A process keeps at most `max_warm` workspaces: the least recently used one is dropped,
/// and its session's next step restores it from the log, state intact.
#[tokio::test(flavor = "multi_thread")]
async fn beyond_max_warm_the_least_recently_used_workspace_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(dir.path());
    let a = sessions(
        db.open(),
        engine(dir.path()),
        Settings {
            max_warm: 1,
            ..settings(100)
        },
    );
    let (s1, s2) = (a.create(&owner()).unwrap(), a.create(&owner()).unwrap());
    let r = a.exec(&owner(), &s1.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "x");
    let r = a.exec(&owner(), &s1.id, py(APPEND)).await.unwrap();
    assert!(r.restored.warm, "{:?}", r.restored);
    // Another session's step takes the one warm place.
    let r = a.exec(&owner(), &s2.id, py(APPEND)).await.unwrap();
    assert_eq!(stdout(&r), "x");
    let r = a.exec(&owner(), &s1.id, py(APPEND)).await.unwrap();
    assert!(!r.restored.warm, "{:?}", r.restored);
    assert_eq!(r.restored.replayed, 2, "{:?}", r.restored);
    assert_eq!(stdout(&r), "xxx");
}
