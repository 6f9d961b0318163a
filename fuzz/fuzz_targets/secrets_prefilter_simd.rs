//! Differential: the keyword prefilter's AVX2 candidate test reports exactly the hits of
//! its portable one, on arbitrary bytes at every block alignment.
//! Seeds: `cargo fuzz run secrets_prefilter_simd corpora/secrets/benign corpora/secrets/positive`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| skillgate_secrets::fuzz::prefilter_simd_equals_portable(data)
);
