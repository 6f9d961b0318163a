//! Metamorphic: a secret from the rule examples, planted into arbitrary text on a line of
//! its own, must be found by the whole-buffer scan and by the streaming scanner, wherever
//! the stream's chunks split it (see `skillgate_fuzz::planted`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate_fuzz::planted::{plant, planting};

fuzz_target!(|data: &[u8]| {
    let Some(p) = planting(data) else { return };
    let Some(o) = plant(&p) else { return };
    assert!(
        o.whole && o.streamed,
        "planted {} secret missed (whole scan found it: {}, stream: {}) at {:?} in {:?}",
        o.rule,
        o.whole,
        o.streamed,
        o.span,
        String::from_utf8_lossy(&o.text)
    );
});
