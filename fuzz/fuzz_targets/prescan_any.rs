//! Arbitrary bytes through the pre-scan, as Python, as JavaScript and as a shell step's
//! command line: no panic, no hang,
//! and the report invariants of `skillgate_prescan::fuzz::scan_any` hold.
//!
//! Seed it from the corpora:
//! `cargo +nightly fuzz run prescan_any ../corpora/prescan/python ../corpora/prescan/javascript`
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = skillgate_prescan::fuzz::scan_any(data);
});
