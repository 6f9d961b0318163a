//! A warm session step's workspace work, on the workspace `benches/sessions.sh` grows: a
//! step's counter file and one small CSV upload per four steps (250 files at 1,000 steps).
//! `pack` (the snapshot after a step: walk, deterministic tar, gzip, both digests),
//! `unpack_digest` (the restore before a step) and `digest` (the walk a step without a
//! due snapshot makes), at 10, 100 and 1,000 steps. Runs on `/dev/shm` where there is one
//! (a tmpfs, as the native backend's workspaces are), else in the temporary directory.
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skillgate_session::snapshot;
use std::hint::black_box;
use std::path::Path;

/// A new directory on a tmpfs where there is one.
fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap())
}

/// The workspace of a session `steps` steps long, as the sessions bench builds it.
fn workspace(root: &Path, steps: usize) {
    let counts: String = (0..steps).map(|i| format!("{}\n", 2 + i / 4)).collect();
    std::fs::write(root.join("count.txt"), counts).unwrap();
    std::fs::create_dir(root.join("data")).unwrap();
    for i in (3..steps).step_by(4) {
        let csv: String = std::iter::once("n,value\n".to_string())
            .chain((0..20).map(|j| format!("{j},{}\n", i * j)))
            .collect();
        std::fs::write(root.join(format!("data/part-{i}.csv")), csv).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("snapshot");
    for steps in [10usize, 100, 1000] {
        let src = tmp();
        workspace(src.path(), steps);
        let packed = snapshot::pack(src.path()).unwrap();
        g.bench_with_input(BenchmarkId::new("pack", steps), &steps, |b, _| {
            b.iter(|| black_box(snapshot::pack(src.path()).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("digest", steps), &steps, |b, _| {
            b.iter(|| black_box(snapshot::digest(src.path()).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("unpack_digest", steps), &steps, |b, _| {
            b.iter_batched(
                tmp,
                |dst| {
                    let d = snapshot::unpack_digest(&packed.archive, dst.path()).unwrap();
                    assert_eq!(d, packed.workspace_digest);
                    dst
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
