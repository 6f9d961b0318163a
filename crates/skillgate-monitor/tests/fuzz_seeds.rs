//! Every fuzz seed in `corpora/monitor/` goes through the fuzz entry point (no panic), and
//! the seeds that are meant to parse do.
use skillgate_monitor::{audit, detections::Detections, fuzz};
use std::path::Path;

#[test]
fn every_seed_runs_and_the_valid_ones_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/monitor");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        fuzz::parse_any(&bytes);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("valid-rules") {
            Detections::from_toml(std::str::from_utf8(&bytes).unwrap(), &name).unwrap();
        }
        if name.starts_with("valid-audit") {
            assert!(!audit::parse(&bytes).unwrap().records.is_empty(), "{name}");
        }
        if name.starts_with("invalid-rules") {
            assert!(
                Detections::from_toml(&String::from_utf8_lossy(&bytes), &name).is_err(),
                "{name}"
            );
        }
        n += 1;
    }
    assert!(n >= 5, "seeds found: {n}");
}
