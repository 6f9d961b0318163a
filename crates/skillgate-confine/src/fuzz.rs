//! The fuzz target's logic (`fuzz/fuzz_targets/confine_files.rs`), also run over the seeds
//! in `corpora/confine/fuzz/` by `cargo test`.

use crate::network::{K8sOptions, k8s_network_policy, parse_policy};
use crate::{Arch, bpf, oci, parse_preset};

/// Parses `data` as a seccomp preset file and as a network policy file; whatever parses
/// is compiled to BPF for both architectures and emitted as OCI JSON or a Kubernetes
/// NetworkPolicy. Every step may refuse; none may panic.
pub fn parse_any(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(profile) = parse_preset(text, "fuzz") {
        for arch in Arch::ALL {
            let _ = bpf::compile(&profile, arch);
        }
        let _ = oci::to_json(&profile, &[]);
    }
    if let Ok(policy) = parse_policy(text, "fuzz") {
        let _ = k8s_network_policy(&policy, &K8sOptions::default());
        let _ = crate::network::uncovered(&policy, &policy);
    }
}
