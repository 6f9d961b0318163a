//! Ceiling of the keyword prefilter alone over the benign corpus: how fast the
//! Aho-Corasick pass can be with the rule keywords, on a lowercased copy and on raw bytes
//! with an ASCII-case-insensitive automaton.
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skillgate_secrets::RuleSet;
use std::hint::black_box;
use std::path::Path;

fn benign(target: usize) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/secrets/benign");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the benign corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let one: Vec<u8> = files
        .iter()
        .flat_map(|p| std::fs::read(p).expect("readable"))
        .collect();
    one.iter().copied().cycle().take(target).collect()
}

fn prefilter(c: &mut Criterion) {
    let rules = RuleSet::default_pack().expect("the default pack");
    let mut kws: Vec<Vec<u8>> = rules
        .rules()
        .iter()
        .flat_map(|r| {
            r.def()
                .keywords
                .iter()
                .map(|k| k.to_ascii_lowercase().into_bytes())
        })
        .collect();
    kws.sort();
    kws.dedup();
    let text = benign(8 << 20);
    let mut g = c.benchmark_group("prefilter");
    g.throughput(Throughput::Bytes(text.len() as u64));
    let lower_dfa = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&kws)
        .expect("builds");
    g.bench_function("lowercase_copy_dfa_overlapping", |b| {
        b.iter(|| {
            let lower = text.to_ascii_lowercase();
            lower_dfa.find_overlapping_iter(&lower).count()
        })
    });
    let ci_dfa = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&kws)
        .expect("builds");
    g.bench_function("raw_ci_dfa_overlapping", |b| {
        b.iter(|| ci_dfa.find_overlapping_iter(black_box(&text)).count())
    });
    g.bench_function("raw_ci_dfa_standard_find", |b| {
        b.iter(|| ci_dfa.find_iter(black_box(&text)).count())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = prefilter
}
criterion_main!(benches);
