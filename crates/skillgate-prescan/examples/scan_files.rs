//! The pre-scan engine alone over many files, as `skillgate scan code` runs it (the
//! built-in packs, `PreScanner::scan_all` on every core), printing one line per file:
//! `path verdict findings`. The Bandit comparison (`benches/prescan_vs_bandit.sh`) uses
//! it with `PRESCAN_ENGINE=1` to time the scanner without building the whole CLI.
use skillgate_core::Language;
use skillgate_prescan::PreScanner;
use std::io::Write;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let inputs: Vec<(String, Vec<u8>, Language)> = paths
        .into_iter()
        .filter_map(|p| {
            let lang = Language::from_extension(p.rsplit('.').next()?)?;
            let code = std::fs::read(&p).unwrap_or_else(|e| panic!("cannot read {p}: {e}"));
            Some((p, code, lang))
        })
        .collect();
    let scanner = PreScanner::new().expect("default packs");
    let code: Vec<(&[u8], Language)> = inputs.iter().map(|(_, c, l)| (&c[..], *l)).collect();
    let reports = scanner.scan_all(&code);
    let mut out = std::io::stdout().lock();
    for ((path, _, _), r) in inputs.iter().zip(reports) {
        let _ = writeln!(out, "{path} {} {}", r.verdict.as_str(), r.findings.len());
    }
}
