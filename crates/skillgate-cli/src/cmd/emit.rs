//! `skillgate emit`: writes the seccomp profile and network policy the pipeline enforces
//! in the formats container platforms consume.
use crate::UsageError;
use clap::{Args, Subcommand, ValueEnum};
use skillgate_confine::network::{K8sOptions, k8s_yaml, load_policy};
use skillgate_confine::profile::with_violation;
use skillgate_confine::{Arch, NetworkPolicy, Violation, load_preset, oci, preset};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct EmitArgs {
    #[command(subcommand)]
    what: EmitWhat,
}

#[derive(Debug, Subcommand)]
enum EmitWhat {
    /// A seccomp profile: OCI `linux.seccomp` JSON (runc, crun, containerd, Docker's
    /// `--security-opt seccomp=FILE`, Kubernetes `seccompProfile: Localhost`), or
    /// skillgate's own profile JSON.
    Seccomp(SeccompArgs),
    /// The network policy as a Kubernetes NetworkPolicy (default-deny egress plus the
    /// allowed destinations, the metadata and private ranges excepted).
    Network(NetworkArgs),
    /// The seccomp profile installer for a Kubernetes cluster: a ConfigMap with every
    /// profile the config can give a run (named as the `kubernetes` executor names them)
    /// and a DaemonSet copying them into each node's profile root (`kubectl apply -f -`).
    K8sProfileInstaller(InstallerArgs),
}

#[derive(Debug, Args)]
struct InstallerArgs {
    /// The config file (skillgate.toml): its `[seccomp]` decides the profiles.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The namespace of the ConfigMap and the DaemonSet.
    #[arg(long, value_name = "NS", default_value = "kube-system")]
    namespace: String,
    /// The kubelet's seccomp profile root on the nodes.
    #[arg(long, value_name = "DIR", default_value = "/var/lib/kubelet/seccomp")]
    node_dir: String,
    /// An image with `sh`, `mkdir` and `cp`, which copies the profiles.
    #[arg(long, value_name = "IMAGE", default_value = "busybox:1.36")]
    copy_image: String,
    /// The image holding each node's pod once the profiles are copied.
    #[arg(
        long,
        value_name = "IMAGE",
        default_value = "registry.k8s.io/pause:3.9"
    )]
    hold_image: String,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SeccompFormat {
    /// OCI runtime-spec `linux.seccomp`.
    Oci,
    /// skillgate's profile model (what the native sandbox compiles).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum NetworkFormat {
    /// Kubernetes `networking.k8s.io/v1` NetworkPolicy YAML.
    K8s,
}

#[derive(Debug, Args)]
struct SeccompArgs {
    /// A built-in preset (python, node, strict).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "strict",
        conflicts_with = "preset_file"
    )]
    preset: String,
    /// A preset file instead.
    #[arg(long, value_name = "FILE")]
    preset_file: Option<PathBuf>,
    /// Kill the process on a violation instead of failing the call with EPERM.
    #[arg(long)]
    kill: bool,
    /// Architectures to resolve for (x86_64, aarch64); default both.
    #[arg(long = "arch", value_name = "ARCH", value_parser = |s: &str| s.parse::<Arch>())]
    archs: Vec<Arch>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SeccompFormat::Oci)]
    format: SeccompFormat,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct NetworkArgs {
    /// The network policy file (TOML); default: no network at all.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum)]
    format: NetworkFormat,
    /// `metadata.name`.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// `metadata.namespace`.
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
    /// A pod label to select, `key=value` (repeatable); default: every pod.
    #[arg(long = "pod-label", value_name = "KEY=VALUE")]
    pod_labels: Vec<String>,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

fn write_out(out: Option<&PathBuf>, text: &str) -> Result<(), UsageError> {
    let text = if text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    };
    match out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display()))),
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed stdout (`| head`) is not an error worth reporting.
            let _ = stdout.write_all(text.as_bytes());
            Ok(())
        }
    }
}

fn seccomp(args: SeccompArgs) -> Result<(), UsageError> {
    let profile = match &args.preset_file {
        Some(path) => load_preset(path)?,
        None => preset(&args.preset)?,
    };
    let violation = if args.kill {
        Violation::Kill
    } else {
        Violation::Errno
    };
    let profile = with_violation(profile, violation.action());
    let text = match args.format {
        SeccompFormat::Oci => oci::to_json(&profile, &args.archs)?,
        SeccompFormat::Json => serde_json::to_string_pretty(&profile)?,
    };
    write_out(args.out.as_ref(), &text)
}

fn network(args: NetworkArgs) -> Result<(), UsageError> {
    let policy = match &args.policy {
        Some(path) => load_policy(path)?,
        None => NetworkPolicy::None,
    };
    let mut options = K8sOptions {
        name: args.name,
        namespace: args.namespace,
        ..K8sOptions::default()
    };
    for label in &args.pod_labels {
        let (k, v) = label
            .split_once('=')
            .ok_or_else(|| UsageError(format!("--pod-label `{label}` is not KEY=VALUE")))?;
        options.pod_labels.insert(k.into(), v.into());
    }
    let text = match args.format {
        NetworkFormat::K8s => k8s_yaml(&policy, &options)?,
    };
    write_out(args.out.as_ref(), &text)
}

fn k8s_profile_installer(args: InstallerArgs) -> Result<(), UsageError> {
    use skillgate_executors::kubernetes::installer::{InstallerOptions, installer};
    use skillgate_executors::kubernetes::profile::node_profile;
    let config = skillgate::Config::load_or_default(args.config.as_deref())?;
    let profiles = config
        .seccomp
        .profiles()?
        .iter()
        .map(node_profile)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UsageError(e.to_string()))?;
    let options = InstallerOptions {
        namespace: args.namespace,
        node_dir: args.node_dir,
        copy_image: args.copy_image,
        hold_image: args.hold_image,
        ..InstallerOptions::default()
    };
    let (config_map, daemon_set) = installer(&profiles, &options);
    let yaml = |what: &str, e: serde_saphyr::SerializeError| {
        UsageError(format!("writing the {what} as YAML: {e}"))
    };
    let text = format!(
        "{}---\n{}",
        serde_saphyr::to_string(&config_map).map_err(|e| yaml("ConfigMap", e))?,
        serde_saphyr::to_string(&daemon_set).map_err(|e| yaml("DaemonSet", e))?
    );
    write_out(args.out.as_ref(), &text)
}

pub(crate) fn run(args: EmitArgs) -> Result<ExitCode, UsageError> {
    match args.what {
        EmitWhat::Seccomp(a) => seccomp(a)?,
        EmitWhat::Network(a) => network(a)?,
        EmitWhat::K8sProfileInstaller(a) => k8s_profile_installer(a)?,
    }
    Ok(ExitCode::SUCCESS)
}
