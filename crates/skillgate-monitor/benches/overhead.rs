//! The monitor's cost per request.
//!
//! - `assess`: what the monitor adds to a request besides the durable write: capture the
//!   request, the throttle check, read signals, evaluate every built-in detection against
//!   warm baselines and an in-memory history, update the baselines, encode the audit
//!   record (target: p50 under 20 µs).
//! - `observe/memory`: the whole recording transaction on an in-memory SQLite store.
//! - `observe/flush`, `observe/sync`: the durable write on disk, without and with fsync.
//!
//! Besides criterion's estimates, it prints p50 and p99 of single calls.
use criterion::Criterion;
use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, ResourceUsage, Skill, Status};
use skillgate_monitor::audit::{self, MonitorRecord};
use skillgate_monitor::baseline::Baselines;
use skillgate_monitor::detections::Detections;
use skillgate_monitor::{Durability, Monitor, MonitorConfig, RecentEvents, RequestMeta, Store};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn request() -> ExecRequest {
    let skill = Skill::builder("analyze-rows", Language::Python, b"print(1)".to_vec()).build();
    ExecRequest::new(
        Caller::new("agent-1", "acme"),
        skill,
        serde_json::json!({"q": 1}),
    )
}

fn outcome(i: u64) -> ExecOutcome {
    ExecOutcome {
        status: Status::Ok,
        exit_code: Some(0),
        stdout: vec![b'x'; 600],
        usage: ResourceUsage {
            wall: Duration::from_millis(20 + i % 7),
            user_cpu: Duration::from_millis(15),
            system_cpu: Duration::from_millis(3),
            max_rss_bytes: 20 << 20,
        },
        ..Default::default()
    }
}

fn monitor(store: Store) -> Monitor {
    Monitor::new(
        Arc::new(store),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap()
}

fn warm() -> (Baselines, RecentEvents) {
    let mut b = Baselines::default();
    let mut h = RecentEvents::default();
    let m = monitor(Store::open_in_memory().unwrap());
    let meta = RequestMeta::of(&request());
    for i in 0..200u64 {
        let a = m
            .assess(&meta, &outcome(i), &b, &b, &h, i as i64 * 10_000)
            .unwrap();
        b = a.skill;
        h.events.push((i as i64 * 10_000, true, Status::Ok));
    }
    (b, h)
}

fn percentiles(name: &str, mut f: impl FnMut(u64)) {
    let n = 3000;
    let mut samples: Vec<Duration> = (0..n)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect();
    samples.sort();
    println!(
        "{name}: p50 {:?}, p99 {:?} over {n} calls",
        samples[n as usize / 2],
        samples[n as usize * 99 / 100]
    );
}

fn main() {
    let (b, h) = warm();
    let m = monitor(Store::open_in_memory().unwrap());
    let req = request();
    let now = 2_000_000_000_000i64;
    let assess = |i: u64| {
        let meta = RequestMeta::of(black_box(&req));
        let admitted = m.admit(&meta.tenant, &meta.agent, now).unwrap();
        let out = outcome(i);
        let a = m.assess(&meta, &out, &b, &b, &h, now).unwrap();
        let rec = audit::execution_record(&meta, &out, vec![], MonitorRecord::default(), now);
        black_box((admitted, a, audit::encode(&rec)));
    };
    percentiles("assess (excluding the durable write)", assess);

    let mem = monitor(Store::open_in_memory().unwrap());
    let dir_flush = tempfile::tempdir().unwrap();
    let flush = monitor(Store::open(dir_flush.path(), Durability::Flush).unwrap());
    let dir_sync = tempfile::tempdir().unwrap();
    let sync = monitor(Store::open(dir_sync.path(), Durability::Sync).unwrap());
    let observe = |m: &Monitor, i: u64| {
        let meta = RequestMeta::of(&request());
        black_box(m.observe(&meta, &outcome(i)).unwrap());
    };
    percentiles("observe/memory (transaction, no disk)", |i| {
        observe(&mem, i)
    });
    percentiles("observe/flush (durable write, no fsync)", |i| {
        observe(&flush, i)
    });
    percentiles("observe/sync (durable write, fsync)", |i| observe(&sync, i));
    // What a run through `MonitorLayer` pays after the run: its intent was synced while it
    // ran, so the record is written without a sync of its own.
    percentiles("observe/sync after the run's synced intent", |i| {
        let mut meta = RequestMeta::of(&request());
        meta.intent_synced = true;
        black_box(sync.observe(&meta, &outcome(i)).unwrap());
    });

    let mut c = Criterion::default().configure_from_args();
    c.bench_function("assess", |bn| {
        let mut i = 0;
        bn.iter(|| {
            i += 1;
            assess(i)
        })
    });
    c.bench_function("observe/memory", |bn| {
        let mut i = 0;
        bn.iter(|| {
            i += 1;
            observe(&mem, i)
        })
    });
    c.bench_function("observe/flush", |bn| {
        let mut i = 0;
        bn.iter(|| {
            i += 1;
            observe(&flush, i)
        })
    });
    let mut slow = c.benchmark_group("durable");
    slow.sample_size(10);
    slow.bench_function("observe/sync", |bn| {
        let mut i = 0;
        bn.iter(|| {
            i += 1;
            observe(&sync, i)
        })
    });
    slow.finish();
    c.final_summary();
}
