//! Entry points for the cargo-fuzz targets in `fuzz/`: the monitor's two parsers (a
//! detection rule file and an audit trail) must answer any bytes with a value or an
//! error, never a panic. `tests/fuzz_seeds.rs` runs every seed in `corpora/monitor/`.

/// Feeds `data` to the rule-file parser (as text, when it is UTF-8) and to the audit
/// trail parser; evaluates a parsed rule set once, to reach the evaluation code too.
///
/// ```
/// skillgate_monitor::fuzz::parse_any(b"[[detection]]\nid = 3");
/// skillgate_monitor::fuzz::parse_any(b"{\"kind\":\"release\"}\n");
/// ```
pub fn parse_any(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(rules) = crate::detections::Detections::from_toml(text, "fuzz")
    {
        let sig = crate::signals::Signals::from_outcome(&Default::default(), 0);
        let base = crate::baseline::Baselines::default();
        let history = crate::RecentEvents::default();
        let ctx = crate::detections::Context {
            skill: &base,
            agent: &base,
            history: &history,
            min_samples: 0,
        };
        let _ = rules.evaluate(&sig, &ctx);
    }
    if let Ok(trail) = crate::audit::parse(data) {
        let _ = trail.unfinished().count();
    }
}
