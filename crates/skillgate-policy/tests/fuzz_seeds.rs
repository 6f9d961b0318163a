//! Runs every seed of the `policy_request` fuzz target (`corpora/policy/`).
use std::path::Path;

#[test]
fn every_seed_runs_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/policy");
    let mut seeds = 0;
    let mut allowed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        seeds += 1;
        if skillgate_policy::fuzz::policy_request(&data) {
            allowed += 1;
        }
    }
    assert!(seeds >= 5, "{seeds} seeds");
    // The well-formed seed with a permitted agent allows; garbage never does.
    assert!(allowed >= 1);
    assert!(!skillgate_policy::fuzz::policy_request(b"\xff\xfe"));
    assert!(!skillgate_policy::fuzz::policy_request(b"[{\"uid\": 1}]"));
}
