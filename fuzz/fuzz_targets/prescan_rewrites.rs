//! Metamorphic: a dangerous program from the pre-scan's rule examples, rewritten without
//! changing its meaning (renaming, aliasing, inlining, string encodings, attribute lookups
//! through `getattr`/`vars`/`__dict__`/`Reflect`, wrapping in functions, lambdas,
//! comprehensions, decorators, classes), must stay blocked. The first byte picks the
//! language; see `skillgate_fuzz::rewrite_py` and `rewrite_js`. Misses with a rewrite listed
//! in `skillgate_fuzz::KNOWN_PRESCAN_MISSES` (documented in docs/FUZZING.md)
//! are not reported again.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(miss) = skillgate_fuzz::prescan_miss(data) {
        panic!(
            "pre-scan miss ({}):\n{}",
            miss.rewrites.join(" "),
            miss.code
        );
    }
});
