//! Prints what a full pre-scan of a file costs against tree-sitter's bare parse of it
//! (issue 19's yardstick: at most 1.5 times), robust to a busy machine: the two alternate,
//! and the fastest and the median of each are compared.
//!
//! `cargo run --release -p skillgate-prescan --example parse_ratio -- FILE [ROUNDS]`
use skillgate_core::Language;
use skillgate_prescan::PreScanner;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: parse_ratio FILE [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(300);
    let code = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let lang = Language::from_extension(path.rsplit('.').next().unwrap_or_default())
        .unwrap_or_else(|| panic!("{path}: not a .py or .js file"));
    let grammar: tree_sitter::Language = match lang {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::Shell => tree_sitter_bash::LANGUAGE.into(),
    };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&grammar).expect("grammar");
    let scanner = PreScanner::new().expect("default packs");
    let (mut parse, mut scan) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(parser.parse(black_box(&code), None));
        parse.push(t.elapsed());
        let t = Instant::now();
        black_box(scanner.scan(black_box(&code), lang));
        scan.push(t.elapsed());
    }
    parse.sort();
    scan.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (p0, s0) = (parse[0], scan[0]);
    let (pm, sm) = (parse[rounds / 2], scan[rounds / 2]);
    println!("{path}: {} bytes, {rounds} rounds", code.len());
    println!(
        "bare parse : fastest {:.3} ms, median {:.3} ms",
        ms(p0),
        ms(pm)
    );
    println!(
        "full scan  : fastest {:.3} ms, median {:.3} ms",
        ms(s0),
        ms(sm)
    );
    println!(
        "scan / parse: {:.2}x fastest, {:.2}x median",
        ms(s0) / ms(p0),
        ms(sm) / ms(pm)
    );
}
