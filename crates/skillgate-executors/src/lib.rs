//! Executors of skillgate for the services users already run, and the conformance kit
//! every executor passes.
//!
//! One cargo feature per backend, so a user compiles only what they use:
//! - `docker`: [`docker::DockerExecutor`], one container per run through the Docker Engine
//!   API (Docker Engine itself, or Podman's compatible service; the flavour is detected
//!   from the engine's `/_ping` answer and its quirks handled);
//! - `oci`: [`oci::OciExecutor`], one OCI bundle per run under `runc`, gVisor's `runsc`
//!   or `crun`, with no daemon;
//! - `jupyter`: [`jupyter::JupyterExecutor`], one kernel per run through a Jupyter Kernel
//!   Gateway (no isolation of its own: its capabilities say so);
//! - `kubernetes`: [`kubernetes::KubernetesExecutor`], one hardened pod per run on a
//!   cluster, with a NetworkPolicy per tenant;
//! - `conformance`: [`conformance`], a test suite that checks any executor against the
//!   executor contract (JSON in and out, exit codes, separate streams, timeouts, limits,
//!   containment, artifacts, cleanup).

#[cfg(any(feature = "docker", feature = "kubernetes"))]
pub mod archive;
#[cfg(any(
    feature = "docker",
    feature = "oci",
    feature = "jupyter",
    feature = "kubernetes"
))]
mod capture;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "docker")]
pub mod docker;
#[cfg(feature = "jupyter")]
pub mod jupyter;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
#[cfg(any(feature = "docker", feature = "oci"))]
mod limits;
#[cfg(feature = "oci")]
pub mod oci;
#[cfg(any(feature = "docker", feature = "oci", feature = "kubernetes"))]
pub mod run_dir;
#[cfg(any(feature = "oci", feature = "kubernetes"))]
mod timing;
