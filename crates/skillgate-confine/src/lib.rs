//! Layers 4 and 5 of skillgate: which system calls a skill may make (seccomp) and what it
//! may reach over the network.
//!
//! One model of each, defined in `skillgate-core` ([`SeccompProfile`],
//! [`NetworkPolicy`]), decided once by the layers and carried everywhere:
//!
//! - [`profile`]: what a seccomp profile means (the reference semantics, the
//!   never-allowed list);
//! - [`preset()`]: the measured presets `python`, `node` and `strict` under
//!   `rules/seccomp/`;
//! - [`bpf`]: compiled to BPF with seccompiler for the native sandbox;
//! - [`oci`]: emitted as OCI runtime-spec `linux.seccomp` JSON for container runtimes;
//! - [`network`]: the network policy file, its default-deny ranges and the Kubernetes
//!   `NetworkPolicy` emitter;
//! - [`SeccompLayer`] and [`NetworkLayer`]: the tower layers putting both into the
//!   request's sandbox spec, from [`SeccompConfig`] and [`NetworkConfig`].
//!
//! ```
//! use skillgate_confine::{Arch, bpf, oci, preset};
//! let profile = preset("python")?;
//! let filters = bpf::compile(&profile, Arch::X86_64)?;
//! assert!(!filters.is_empty());
//! let json = oci::to_json(&profile, &[])?;
//! assert!(json.contains("SCMP_ACT_ERRNO"));
//! # Ok::<(), skillgate_confine::ConfineError>(())
//! ```

mod arch;
pub mod bpf;
mod error;
pub mod fuzz;
mod layer;
pub mod network;
pub mod oci;
mod preset;
pub mod profile;

pub use arch::Arch;
pub use error::ConfineError;
pub use layer::{
    LanguagePresets, NetworkCeiling, NetworkConfig, NetworkLayer, SeccompConfig, SeccompLayer,
    SeccompProfiles,
};
pub use preset::{Violation, load_preset, parse_preset, preset, preset_description, preset_names};
pub use skillgate_core::{NetworkPolicy, SeccompProfile};
