//! The labelled corpora: every malicious sample is blocked, no benign one is, and every
//! file is also a fuzz seed (`fuzz::scan_any` keeps its invariants on it).
//!
//! Two roots: the project's corpora (`corpora/prescan/`, written separately; when present
//! they must hold at least 60 malicious Python, 40 malicious JavaScript and 40 benign
//! samples) and this crate's own samples (`tests/corpus/`, always present).
use skillgate_core::Language;
use skillgate_prescan::{PreScanner, Verdict, fuzz};
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(Language::from_extension)
            .is_some()
    });
    v.sort();
    v
}

struct Counts {
    malicious: [usize; 2],
    benign: usize,
}

fn check_root(root: &Path, scanner: &PreScanner, failures: &mut Vec<String>) -> Counts {
    let mut counts = Counts {
        malicious: [0, 0],
        benign: 0,
    };
    for (i, lang) in ["python", "javascript"].iter().enumerate() {
        for kind in ["malicious", "benign"] {
            for path in files(&root.join(lang).join(kind)) {
                let code = std::fs::read(&path).unwrap();
                let language = if i == 0 {
                    Language::Python
                } else {
                    Language::JavaScript
                };
                let report = scanner.scan(&code, language);
                let ids: Vec<&str> = report.findings.iter().map(|f| f.rule_id.as_str()).collect();
                match kind {
                    "malicious" => {
                        counts.malicious[i] += 1;
                        if report.verdict != Verdict::Block {
                            failures.push(format!("not blocked: {} ({ids:?})", path.display()));
                        }
                    }
                    _ => {
                        counts.benign += 1;
                        if report.verdict == Verdict::Block {
                            failures.push(format!("blocked: {} ({ids:?})", path.display()));
                        }
                    }
                }
            }
        }
    }
    counts
}

#[test]
fn malicious_samples_are_blocked_and_benign_ones_are_not() {
    let scanner = PreScanner::new().unwrap();
    let mut failures = Vec::new();
    let own = check_root(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"),
        &scanner,
        &mut failures,
    );
    assert!(own.malicious[0] >= 6 && own.malicious[1] >= 4 && own.benign >= 4);
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/prescan");
    if project.is_dir() {
        let c = check_root(&project, &scanner, &mut failures);
        assert!(
            c.malicious[0] >= 60 && c.malicious[1] >= 40 && c.benign >= 40,
            "corpora/prescan is too small: {:?} malicious, {} benign",
            c.malicious,
            c.benign
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_corpus_file_is_a_fuzz_seed_that_keeps_the_invariants() {
    let roots = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/prescan"),
    ];
    let mut n = 0;
    for root in roots.iter().filter(|r| r.is_dir()) {
        for lang in ["python", "javascript"] {
            for kind in ["malicious", "benign"] {
                for path in files(&root.join(lang).join(kind)) {
                    let code = std::fs::read(&path).unwrap();
                    fuzz::scan_any(&code);
                    // Truncations are the cheapest mutations: every prefix must scan too.
                    for cut in [code.len() / 3, code.len() / 2, code.len().saturating_sub(1)] {
                        fuzz::scan_any(&code[..cut]);
                    }
                    n += 1;
                }
            }
        }
    }
    assert!(n >= 14);
}
