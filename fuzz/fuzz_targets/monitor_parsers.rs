#![no_main]
//! The monitor's rule-file and audit-trail parsers on arbitrary bytes.
//! Seeds: `corpora/monitor/`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skillgate_monitor::fuzz::parse_any(data);
});
