//! Runs the fuzz target's logic over every seed in `corpora/confine/fuzz/`, and checks
//! that the refusals among them are clear errors.
use skillgate_confine::{Arch, bpf, network::parse_policy, parse_preset};

#[test]
fn every_seed_runs_through_the_fuzz_target() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/confine/fuzz");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        skillgate_confine::fuzz::parse_any(&data);
        n += 1;
    }
    assert!(n >= 7, "seeds in {}", dir.display());
}

#[test]
fn the_refusing_seeds_refuse_for_the_right_reason() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/confine/fuzz");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let p = parse_preset(&read("preset-self-blocking.toml"), "t").unwrap();
    let err = bpf::compile(&p, Arch::X86_64).unwrap_err().to_string();
    assert!(err.contains("seccomp"), "{err}");
    let err = parse_preset(&read("preset-bad-index.toml"), "t")
        .unwrap_err()
        .to_string();
    assert!(err.contains("index 9"), "{err}");
    assert!(parse_policy(&read("network-invalid.toml"), "t").is_err());
    // The mixed-actions seed compiles to stacked filters: errno(13), log, then the
    // kill default.
    let p = parse_preset(&read("preset-mixed-actions.toml"), "t").unwrap();
    assert_eq!(bpf::compile(&p, Arch::X86_64).unwrap().len(), 3);
}
