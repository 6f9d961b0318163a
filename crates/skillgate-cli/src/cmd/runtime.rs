//! `skillgate runtime`: install, list, verify and locate named runtimes.
use crate::UsageError;
use clap::{Args, Subcommand};
use skillgate::Config;
use skillgate::runtimes::Runtimes;
use skillgate_runtime::InstallOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct RuntimeArgs {
    #[command(subcommand)]
    command: RuntimeCommand,
    /// The config file (skillgate.toml), for `[runtimes]`.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// The state directory; runtimes live in its `runtimes/` unless `[runtimes] dir` is set
    /// (default: `[monitor] state_dir`, else `$XDG_STATE_HOME/skillgate` or
    /// `~/.local/state/skillgate`).
    #[arg(long, value_name = "DIR", global = true)]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum RuntimeCommand {
    /// Build a runtime into `<state dir>/runtimes/<name>-<digest>` (a no-op when it is
    /// installed and intact).
    Install {
        /// The runtime (`skillgate runtime list` shows them).
        name: String,
        /// Replace an installed runtime that was changed after install.
        #[arg(long)]
        force: bool,
        /// Install from the wheel cache only; never contact a package index.
        #[arg(long)]
        offline: bool,
        /// Where wheels are cached (default `~/.cache/skillgate/wheels`).
        #[arg(long, value_name = "DIR")]
        wheel_cache: Option<PathBuf>,
    },
    /// The defined runtimes, and where each is installed.
    List,
    /// Compare every file of an installed runtime with the sha256 recorded at install.
    /// Exit 1 when anything differs.
    Verify {
        /// The runtime.
        name: String,
    },
    /// Print the installed runtime's directory (exit 1 when it is not installed).
    Path {
        /// The runtime.
        name: String,
    },
    /// Write the installed runtime as a container image: an OCI image layout tarball
    /// (the tree at /runtime, the base interpreter, its standard library and the shared
    /// libraries they load), for container executors.
    Export {
        /// The runtime.
        name: String,
        /// The archive format.
        #[arg(long, value_enum, default_value_t = ExportFormat::OciArchive)]
        format: ExportFormat,
        /// The file to write.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
    },
    /// Load the installed runtime's image into the container engine of the config's
    /// `[executor]` (`kind = "docker"`: Docker Engine or Podman, at its `socket`), as
    /// `skillgate-runtime-NAME:latest`, the image its skills run in there. Nothing goes
    /// through a registry; loading the same runtime again changes nothing.
    Load {
        /// The runtime.
        name: String,
    },
}

/// Formats `runtime export` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ExportFormat {
    /// An OCI image layout in a tar file (`podman load`, `skopeo copy oci-archive:FILE`).
    OciArchive,
}

pub(crate) fn run(args: RuntimeArgs) -> Result<ExitCode, UsageError> {
    let mut config = Config::load_or_default(args.config.as_deref())?;
    if let Some(dir) = &args.state_dir {
        config.monitor.state_dir = Some(dir.clone());
    }
    let runtimes = Runtimes::from_config(&config)?;
    let store = runtimes.store()?;
    match args.command {
        RuntimeCommand::Install {
            name,
            force,
            offline,
            wheel_cache,
        } => {
            let def = runtimes.catalog().get(&name)?;
            let mut opts = InstallOptions {
                force,
                offline,
                ..InstallOptions::default()
            };
            if let Some(dir) = wheel_cache {
                opts.wheel_cache = dir;
            }
            let tty = std::io::stderr().is_terminal();
            let installed = store.install(def, &opts, &mut |step| {
                if tty {
                    anstream::eprintln!("{name}: {step}");
                }
            })?;
            println!("{}", installed.dir.display());
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCommand::List => {
            let installed = store.list()?;
            for def in runtimes.catalog().iter() {
                let dirs: Vec<String> = installed
                    .iter()
                    .filter(|(n, _)| n == &def.name)
                    .map(|(_, d)| d.display().to_string())
                    .collect();
                let state = match store.resolve(def) {
                    Ok(i) => format!("installed {}", i.dir.display()),
                    Err(skillgate_runtime::RuntimeError::NotInstalled { .. })
                        if dirs.is_empty() =>
                    {
                        "not installed".to_string()
                    }
                    Err(skillgate_runtime::RuntimeError::NotInstalled { .. }) => {
                        format!("not installed (stale: {})", dirs.join(", "))
                    }
                    Err(e) => format!("unusable: {e}"),
                };
                println!(
                    "{:<14} {:<10} {:>3} packages  {state}\n{:<14} {}",
                    def.name,
                    def.language.as_str(),
                    def.packages.len(),
                    "",
                    def.description
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCommand::Verify { name } => {
            let def = runtimes.catalog().get(&name)?;
            let report = store.verify(def)?;
            if report.differences.is_empty() {
                println!("{name}: intact ({})", report.dir.display());
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{name}: {} difference(s) from the manifest written at install ({}):",
                report.differences.len(),
                report.dir.display()
            );
            for d in &report.differences {
                println!("  {d}");
            }
            println!("reinstall it with `skillgate runtime install {name} --force`");
            Ok(ExitCode::from(1))
        }
        RuntimeCommand::Export {
            name,
            format: ExportFormat::OciArchive,
            output,
        } => {
            let def = runtimes.catalog().get(&name)?;
            let installed = store.resolve(def)?;
            let digest = skillgate_runtime::export_oci_archive(&installed, &output)?;
            println!("{} {digest}", output.display());
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCommand::Load { name } => {
            let def = runtimes.catalog().get(&name)?;
            let installed = store.resolve(def)?;
            let socket = match (&config.executor.kind, &config.executor.socket) {
                (skillgate::config::ExecutorKind::Docker, Some(socket)) => socket.clone(),
                _ => {
                    return Err(UsageError(format!(
                        "runtime load loads into the engine of `[executor] kind = \"docker\"` \
                         (with its `socket`); this config's executor is `{}`. For another \
                         engine or a cluster, write the image with `skillgate runtime export \
                         {name} -o FILE` and import it there",
                        config.executor.kind.as_str()
                    )));
                }
            };
            let dir = tempfile::tempdir()
                .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
            let archive = dir.path().join(format!("{name}.oci.tar"));
            skillgate_runtime::export_oci_archive(&installed, &archive)?;
            let image = skillgate_executors::docker::image::runtime_image(&name);
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the async runtime: {e}"))?;
            rt.block_on(async {
                let exec = skillgate_executors::docker::DockerExecutor::connect(
                    skillgate_executors::docker::DockerSettings::new(socket),
                )
                .await?;
                skillgate_executors::docker::image::load_oci_archive(
                    exec.client(),
                    &archive,
                    &image,
                )
                .await
            })
            .map_err(|e| format!("loading runtime `{name}`: {e}"))?;
            println!("{image}");
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCommand::Path { name } => {
            let def = runtimes.catalog().get(&name)?;
            match store.resolve(def) {
                Ok(i) => {
                    println!("{}", i.dir.display());
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    anstream::eprintln!("{e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}
