//! Pre-scan latency on a realistic 300-line skill, and throughput over the corpora.
//!
//! Inputs: `corpora/prescan/bench/skill_300_lines.py` (falls back to this crate's benign
//! samples repeated to 300 lines when the corpora are not checked out) and every file of
//! `corpora/prescan/` plus `tests/corpus/`.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skillgate_core::{Language, Skill};
use skillgate_prescan::{PreScanner, VerdictCache};
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skill_300() -> Vec<u8> {
    let p = root().join("corpora/prescan/bench/skill_300_lines.py");
    if let Ok(code) = std::fs::read(&p) {
        return code;
    }
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/python/benign");
    let mut sample = String::new();
    for e in std::fs::read_dir(own).expect("own samples") {
        sample.push_str(&std::fs::read_to_string(e.expect("entry").path()).expect("sample"));
    }
    let mut out = String::new();
    while out.lines().count() < 300 {
        out.push_str(&sample);
    }
    out.into_bytes()
}

fn corpus_files() -> Vec<(Vec<u8>, Language)> {
    let mut out = Vec::new();
    let mut stack = vec![
        root().join("corpora/prescan"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"),
    ];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(lang) = p
                .extension()
                .and_then(|x| x.to_str())
                .and_then(Language::from_extension)
            {
                out.push((std::fs::read(&p).expect("corpus file"), lang));
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let scanner = PreScanner::new().expect("default packs");
    let skill = skill_300();
    let mut g = c.benchmark_group("prescan");
    g.throughput(Throughput::Bytes(skill.len() as u64));
    // The yardstick of the scan: tree-sitter's bare parse of the same file, with a parser
    // reused as the scanner reuses its own (issue 19: a scan costs at most 1.5 times this).
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("grammar");
    g.bench_function("tree_sitter_parse_300_lines", |b| {
        b.iter(|| parser.parse(black_box(&skill), None).expect("tree"))
    });
    g.bench_function("skill_300_lines", |b| {
        b.iter(|| scanner.scan(black_box(&skill), Language::Python))
    });
    // The verdict cache: the same skill again (same bytes, same packs) is a lookup.
    let dir = tempfile::tempdir().expect("temporary directory");
    let cached = PreScanner::new()
        .expect("default packs")
        .with_cache(VerdictCache::open(dir.path()).expect("cache directory"));
    let as_skill = Skill::builder("bench", Language::Python, skill.clone()).build();
    cached.scan_skill_cached(&as_skill);
    g.bench_function("skill_300_lines_cache_hit", |b| {
        b.iter(|| cached.scan_skill_cached(black_box(&as_skill)))
    });
    let files = corpus_files();
    let bytes: usize = files.iter().map(|(f, _)| f.len()).sum();
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(format!("corpus_dir_{}_files", files.len()), |b| {
        b.iter(|| {
            for (code, lang) in &files {
                black_box(scanner.scan(black_box(code), *lang));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
