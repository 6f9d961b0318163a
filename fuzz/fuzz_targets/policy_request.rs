//! Arbitrary entities JSON and context JSON (split at the first NUL byte) to the policy
//! gate's request builder. Seeds: `corpora/policy/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = skillgate_policy::fuzz::policy_request(data);
});
