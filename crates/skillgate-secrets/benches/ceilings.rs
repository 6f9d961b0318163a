//! Ceilings: each pass of the scanner alone over the 8 MiB benign buffer (the same text
//! as `throughput`'s `benign_scan`), to see what the design can reach at best.
#![allow(dead_code, unreachable_pub, missing_docs)]
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind, packed};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

mod common;
use common::benign;

pub use skillgate_secrets::RuleSet;
#[path = "../src/decode.rs"]
mod decode;
#[path = "../src/prefilter.rs"]
mod prefilter;
#[path = "../src/prefilter_avx2.rs"]
mod prefilter_avx2;
#[path = "../src/testing.rs"]
mod testing;

fn teddy(pats: &[Vec<u8>]) -> Option<packed::Searcher> {
    let mut c = packed::Config::new();
    c.match_kind(packed::MatchKind::LeftmostFirst)
        .heuristic_pattern_limits(false);
    let mut b = c.builder();
    for p in pats {
        b.add(p);
    }
    b.build()
}

fn count_teddy(t: &packed::Searcher, hay: &[u8]) -> usize {
    let mut n = 0;
    let mut at = 0;
    while let Some(m) = t.find_in(hay, aho_corasick::Span::from(at..hay.len())) {
        n += 1;
        at = m.start() + 1;
    }
    n
}

fn ceilings(c: &mut Criterion) {
    let kws = testing::default_keywords();
    let text = benign(8 << 20);
    let lower = text.to_ascii_lowercase();
    let mut g = c.benchmark_group("ceiling");
    g.throughput(Throughput::Bytes(text.len() as u64));

    let filter = prefilter::KeywordFilter::new(kws.clone()).unwrap();
    for (name, simd) in [
        ("trigram_prefilter", true),
        ("trigram_prefilter_portable", false),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut n = 0usize;
                filter.for_each_with(simd, black_box(&text), |k, s, _| n += k ^ s);
                n
            })
        });
    }
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&kws)
        .unwrap();
    g.bench_function("ac_dfa_all_keywords_ci", |b| {
        b.iter(|| ac.find_overlapping_iter(black_box(&text)).count())
    });
    g.bench_function("lowercase_copy", |b| {
        let mut buf = vec![0u8; text.len()];
        b.iter(|| {
            buf.copy_from_slice(black_box(&text));
            buf.make_ascii_lowercase();
            buf[buf.len() / 2]
        })
    });
    // Teddy over lowercased text: the first three bytes of the N keywords rarest in
    // the benign text (best case for a fingerprint set of that size).
    let mut heads: Vec<Vec<u8>> = kws.iter().map(|k| k[..3.min(k.len())].to_vec()).collect();
    heads.sort();
    heads.dedup();
    println!("distinct 3-byte keyword heads: {}", heads.len());
    let freq = |p: &[u8]| memchr::memmem::find_iter(&lower[..300_000], p).count();
    heads.sort_by_key(|h| freq(h));
    for n in [8usize, 32, 64, 128] {
        let pats = &heads[..n.min(heads.len())];
        if let Some(t) = teddy(pats) {
            println!("teddy {n}: {} hits", count_teddy(&t, &lower));
            g.bench_function(format!("teddy_lower_{n}_heads"), |b| {
                b.iter(|| count_teddy(&t, black_box(&lower)))
            });
        }
    }
    // Teddy over raw text with case variants of a few long keywords.
    let long: Vec<Vec<u8>> = kws
        .iter()
        .filter(|k| k.len() >= 8)
        .take(16)
        .cloned()
        .collect();
    let mut variants = Vec::new();
    for k in &long {
        for m in 0..8u8 {
            let v: Vec<u8> = k[..3]
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if m >> i & 1 == 1 {
                        b.to_ascii_uppercase()
                    } else {
                        *b
                    }
                })
                .collect();
            variants.push(v);
        }
    }
    variants.sort();
    variants.dedup();
    if let Some(t) = teddy(&variants[..variants.len().min(128)]) {
        g.bench_function("teddy_raw_case_variants_16_keywords", |b| {
            b.iter(|| count_teddy(&t, black_box(&text)))
        });
    }
    g.bench_function("memchr_count_newlines", |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(&text)).count())
    });
    g.bench_function("memchr2_backslash_percent", |b| {
        b.iter(|| memchr::memchr2_iter(b'\\', b'%', black_box(&text)).count())
    });
    g.bench_function("from_utf8_whole", |b| {
        b.iter(|| std::str::from_utf8(black_box(&text)).is_ok())
    });
    g.bench_function("decode_segments", |b| {
        b.iter(|| {
            let mut n = 0;
            decode::for_each_segment(black_box(&text), &mut |d| n += d.bytes.len());
            n
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = ceilings
}
criterion_main!(benches);
