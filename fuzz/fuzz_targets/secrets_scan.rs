//! The secret scanner and its decoders on arbitrary bytes and arbitrary chunkings.
//! Seeds: `cargo fuzz run secrets_scan corpora/secrets/benign corpora/secrets/positive`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| skillgate_secrets::fuzz::scan_any(data));
