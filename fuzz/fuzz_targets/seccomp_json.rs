//! The seccomp profile as JSON (`skillgate_core::SeccompProfile`, the form the executors
//! receive): whatever parses is validated, compiled to BPF for every architecture and
//! emitted as OCI JSON, which must parse back as JSON. Seeds: every built-in preset as
//! JSON.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate_confine::{Arch, SeccompProfile, bpf, oci, profile};

fuzz_target!(|data: &[u8]| {
    let Ok(p) = serde_json::from_slice::<SeccompProfile>(data) else {
        return;
    };
    if profile::validate(&p).is_err() {
        return;
    }
    for arch in Arch::ALL {
        let _ = bpf::compile(&p, arch);
    }
    if let Ok(json) = oci::to_json(&p, &[]) {
        assert!(
            serde_json::from_str::<serde_json::Value>(&json).is_ok(),
            "OCI JSON does not parse"
        );
    }
});
