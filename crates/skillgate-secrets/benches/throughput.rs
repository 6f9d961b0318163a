//! Throughput of the secret scanner, in bytes per second: on realistic benign skill output
//! (the benign corpus: JSON logs, tables, tracebacks, base64 charts, hashes, UUIDs,
//! minified JS) and on secret-dense text (every rule example between short log lines).
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skillgate_secrets::SecretScanner;
use std::hint::black_box;

mod common;
use common::benign;

fn dense(scanner: &SecretScanner, target: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(target);
    let examples: Vec<&String> = scanner
        .rules()
        .rules()
        .iter()
        .flat_map(|r| &r.def().examples)
        .collect();
    let mut i = 0;
    while out.len() < target {
        out.extend_from_slice(b"2026-11-30T04:00:00Z INFO step done rows=42\n");
        out.extend_from_slice(examples[i % examples.len()].as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out
}

fn throughput(c: &mut Criterion) {
    let scanner = SecretScanner::default_pack().expect("the default pack");
    let mut g = c.benchmark_group("secrets");
    let text = benign(8 << 20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("benign_scan", |b| {
        b.iter(|| black_box(scanner.scan(black_box(&text))))
    });
    g.bench_function("benign_stream_64k", |b| {
        b.iter(|| {
            let mut s = scanner.stream();
            let mut n = 0;
            for chunk in text.chunks(64 * 1024) {
                n += s.feed(chunk).len();
            }
            n + s.finish().len()
        })
    });
    let text = dense(&scanner, 2 << 20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("dense_scan", |b| {
        b.iter(|| black_box(scanner.scan(black_box(&text))))
    });
    g.bench_function("dense_redact", |b| {
        b.iter(|| black_box(scanner.redact(black_box(&text))))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = throughput
}
criterion_main!(benches);
