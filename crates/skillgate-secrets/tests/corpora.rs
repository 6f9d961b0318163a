//! The corpora under `corpora/secrets/`: the benign corpus yields no finding, every
//! positive file yields at least one, and every file is a fuzz seed.
use skillgate_secrets::SecretScanner;
use std::path::{Path, PathBuf};

fn corpus(dir: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpora/secrets")
        .join(dir);
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_benign_corpus_has_no_finding() {
    let s = SecretScanner::default_pack().unwrap();
    let files = corpus("benign");
    assert!(files.len() >= 8, "the benign corpus is missing");
    for (path, bytes) in &files {
        let found = s.scan(bytes);
        assert!(found.is_empty(), "{}: {found:#?}", path.display());
        let mut stream = s.stream();
        let mut streamed = Vec::new();
        for chunk in bytes.chunks(4093) {
            streamed.extend(stream.feed(chunk));
        }
        streamed.extend(stream.finish());
        assert!(
            streamed.is_empty(),
            "{} (streamed): {streamed:#?}",
            path.display()
        );
    }
}

/// Every `positive/<family>.txt` holds one planted secret per rule listed in
/// `<family>.ids`: each of those rules must find something in it.
#[test]
fn every_positive_file_has_a_finding_of_every_listed_rule() {
    let s = SecretScanner::default_pack().unwrap();
    let files = corpus("positive");
    let mut checked = 0;
    for (path, bytes) in &files {
        if path.extension().is_some_and(|e| e == "ids") {
            continue;
        }
        let found: std::collections::BTreeSet<String> =
            s.scan(bytes).into_iter().map(|f| f.rule_id).collect();
        assert!(!found.is_empty(), "{}: nothing found", path.display());
        let ids = path.with_extension("ids");
        if let Ok(listed) = std::fs::read_to_string(&ids) {
            for id in listed.lines().map(str::trim).filter(|l| !l.is_empty()) {
                assert!(
                    s.rules().get(id).is_some(),
                    "{}: unknown rule `{id}`",
                    ids.display()
                );
                assert!(
                    found.contains(id),
                    "{}: rule `{id}` found nothing",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 150, "only {checked} rules have a planted secret");
}

#[test]
fn the_fuzz_targets_hold_on_every_seed() {
    let mut n = 0;
    for dir in ["benign", "positive"] {
        for (_, bytes) in corpus(dir) {
            skillgate_secrets::fuzz::scan_any(&bytes);
            skillgate_secrets::fuzz::prefilter_simd_equals_portable(&bytes);
            n += 1;
        }
    }
    assert!(n > 0);
}

/// The inputs of the fuzz campaigns' findings, kept in their corpora as `regression-*`.
#[test]
fn the_fuzz_campaigns_regressions_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fuzz/secrets_scan");
    let mut n = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("regression-") {
            skillgate_secrets::fuzz::scan_any(&std::fs::read(&path).unwrap());
            n += 1;
        }
    }
    assert!(n >= 1, "no regression input in {}", root.display());
}
