//! Concurrency and crash safety with real threads and real processes.
//!
//! This test has its own `main` (harness = false): run with `writer DIR N AGENT` it is
//! a writer process that records N executions in the store in DIR and prints
//! `committed ID` after each commit; without arguments it runs the checks below, which
//! spawn such writers.
mod common;
use common::*;
use skillgate_core::Status;
use skillgate_monitor::audit::{self, AuditRecord};
use skillgate_monitor::detections::Detections;
use skillgate_monitor::{Durability, Monitor, MonitorConfig, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

fn open_monitor(dir: &Path) -> Monitor {
    let store = Store::open(dir, Durability::Flush).unwrap();
    Monitor::new(
        Arc::new(store),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap()
}

/// The outcome of the i-th execution of a writer: a mix of statuses.
fn outcome(i: usize) -> skillgate_core::ExecOutcome {
    match i % 10 {
        3 => with_status(Status::Timeout),
        7 => rejected(Status::Denied, skillgate_core::LayerName::Policy, "p"),
        _ => ran(10 + (i % 5) as u64, 20 * MIB, 100),
    }
}

fn writer(dir: &Path, n: usize, agent: &str) {
    let m = open_monitor(dir);
    let stdout = std::io::stdout();
    for i in 0..n {
        let meta = meta(agent, "s");
        m.observe(&meta, &outcome(i)).unwrap();
        let mut out = stdout.lock();
        writeln!(out, "committed {}", meta.request_id).unwrap();
        out.flush().unwrap();
    }
}

fn spawn_writer(dir: &Path, n: usize, agent: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["writer", dir.to_str().unwrap(), &n.to_string(), agent])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn committed(child: &mut std::process::Child) -> Vec<String> {
    BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| l.strip_prefix("committed ").map(String::from))
        .collect()
}

/// Every id in the store and in the audit trail exactly once, and the counters agree.
fn check_exactly_once(dir: &Path, expected: &BTreeSet<String>) {
    let store = Store::open(dir, Durability::Flush).unwrap();
    store.integrity_check().unwrap();
    let ids = store.request_ids().unwrap();
    let unique: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(ids.len(), unique.len(), "duplicate ids in the store");
    assert!(
        expected.is_subset(&unique),
        "a committed execution is missing from the store"
    );
    let trail = audit::read(&dir.join("audit.jsonl")).unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for r in &trail.records {
        if let AuditRecord::Execution(e) = r {
            *seen.entry(e.request_id.clone()).or_default() += 1;
        }
    }
    assert!(
        seen.values().all(|&n| n == 1),
        "a request is in the trail twice"
    );
    for id in &unique {
        assert!(
            seen.contains_key(id),
            "stored execution {id} has no audit record"
        );
    }
    let executions: f64 = store
        .counters()
        .unwrap()
        .iter()
        .filter(|(n, ..)| n == "skillgate_executions_total")
        .map(|(.., v)| v)
        .sum();
    assert_eq!(
        executions as usize,
        unique.len(),
        "counters disagree with the events"
    );
}

fn threads_and_processes() {
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(open_monitor(dir.path()));
    let mut expected = BTreeSet::new();
    // 8 threads × 40 executions through one monitor...
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let m = m.clone();
            std::thread::spawn(move || {
                (0..40)
                    .map(|i| {
                        let meta = meta(&format!("thread-{}", t % 3), "s");
                        m.observe(&meta, &outcome(i)).unwrap();
                        meta.request_id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    // ...while 4 processes × 60 executions write to the same state.
    let mut children: Vec<_> = (0..4)
        .map(|p| spawn_writer(dir.path(), 60, &format!("proc-{}", p % 2)))
        .collect();
    for h in handles {
        expected.extend(h.join().unwrap());
    }
    for c in &mut children {
        let ids = committed(c);
        assert_eq!(ids.len(), 60);
        expected.extend(ids);
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(expected.len(), 8 * 40 + 4 * 60);
    check_exactly_once(dir.path(), &expected);
    let store = Store::open(dir.path(), Durability::Flush).unwrap();
    assert_eq!(
        store.request_ids().unwrap().len(),
        expected.len(),
        "nothing extra either"
    );
    println!(
        "threads_and_processes: {} executions from 8 threads and 4 processes, each recorded once",
        expected.len()
    );
}

fn kill_9_mid_stream() {
    let dir = tempfile::tempdir().unwrap();
    // Create the store first so the writer does not race the schema creation with the kill.
    drop(open_monitor(dir.path()));
    let mut child = spawn_writer(dir.path(), 1_000_000, "victim");
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut ids = Vec::new();
    let mut line = String::new();
    while ids.len() < 150 {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the writer stopped early"
        );
        ids.push(line.trim().strip_prefix("committed ").unwrap().to_string());
    }
    // SIGKILL while it is writing.
    child.kill().unwrap();
    child.wait().unwrap();
    for l in reader.lines().map_while(Result::ok) {
        if let Some(id) = l.strip_prefix("committed ") {
            ids.push(id.to_string());
        }
    }
    let expected: BTreeSet<String> = ids.into_iter().collect();
    check_exactly_once(dir.path(), &expected);
    // And the store keeps working after the crash.
    let m = open_monitor(dir.path());
    m.observe(&meta("victim", "s"), &ran(10, MIB, 1)).unwrap();
    println!(
        "kill_9_mid_stream: {} committed executions survived the kill",
        expected.len()
    );
}

/// A process's store closes without checkpointing: the WAL stays for the next process
/// (which would otherwise create it again, with a sync of the file and of its folder),
/// and what the first committed is all there.
fn closing_keeps_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_writer(dir.path(), 3, "closer");
    let ids: BTreeSet<String> = committed(&mut child).into_iter().collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(ids.len(), 3);
    let wal = dir.path().join("state.db-wal");
    assert!(
        std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0),
        "the WAL was checkpointed and deleted on close"
    );
    check_exactly_once(dir.path(), &ids);
    println!("closing_keeps_the_wal: the WAL outlives the process, nothing lost");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("writer") {
        writer(Path::new(&args[2]), args[3].parse().unwrap(), &args[4]);
        return;
    }
    // `cargo test -- --list` and filters: this file has exactly three checks.
    if args.iter().any(|a| a == "--list") {
        println!(
            "threads_and_processes: test\nkill_9_mid_stream: test\nclosing_keeps_the_wal: test"
        );
        return;
    }
    threads_and_processes();
    kill_9_mid_stream();
    closing_keeps_the_wal();
}
