//! Seccomp preset and network policy files: parse, compile, emit; never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skillgate_confine::fuzz::parse_any(data);
});
