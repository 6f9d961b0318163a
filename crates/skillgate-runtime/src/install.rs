//! Building a runtime's tree: a virtualenv filled by pip from pinned, hashed wheels.
use crate::{Definition, RuntimeError};
use skillgate_core::Language;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How to install.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// Where wheels are kept between installs (`~/.cache/skillgate/wheels`): an install
    /// whose wheels are all there downloads nothing.
    pub wheel_cache: PathBuf,
    /// Never contact a package index: install from `wheel_cache` only.
    pub offline: bool,
    /// Replace an installed runtime even if it was changed after install.
    pub force: bool,
}

impl Default for InstallOptions {
    fn default() -> Self {
        InstallOptions {
            wheel_cache: default_wheel_cache(),
            offline: false,
            force: false,
        }
    }
}

/// `$SKILLGATE_WHEEL_CACHE`, else `$XDG_CACHE_HOME/skillgate/wheels`, else
/// `~/.cache/skillgate/wheels`, else a folder under the temporary directory (the same
/// place `scripts/fetch-runtime-wheels` fills).
fn default_wheel_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("SKILLGATE_WHEEL_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("skillgate")
        .join("wheels")
}

/// A step of an install, for a progress display.
pub type Progress<'a> = &'a mut dyn FnMut(&str);

/// Runs `cmd`; a failure becomes an install error carrying the tail of its output.
fn run(name: &str, what: &str, cmd: &mut Command) -> Result<String, RuntimeError> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| RuntimeError::Install {
            name: name.into(),
            message: format!("{what}: cannot start {:?}: {e}", cmd.get_program()),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    // stderr last: the tail kept is where the tool says what went wrong.
    let tail: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = tail[tail.len().saturating_sub(12)..].join("\n  ");
    Err(RuntimeError::Install {
        name: name.into(),
        message: format!("{what} failed ({}):\n  {tail}", out.status),
    })
}

/// The Python version `program` reports, as `major.minor`.
pub(crate) fn python_version(name: &str, program: &Path) -> Result<String, RuntimeError> {
    let v = run(
        name,
        "asking the interpreter its version",
        Command::new(program).args([
            "-I",
            "-c",
            "import sys; print('%d.%d' % sys.version_info[:2])",
        ]),
    )?;
    Ok(v.trim().to_string())
}

/// Builds the runtime's tree in `env` (which must not exist) with the base interpreter
/// `program`.
pub(crate) fn build_tree(
    def: &Definition,
    program: &Path,
    env: &Path,
    scratch: &Path,
    opts: &InstallOptions,
    progress: Progress<'_>,
) -> Result<(), RuntimeError> {
    let name = def.name.as_str();
    match def.language {
        // Refused when the definition loads; never built.
        Language::Shell => Err(RuntimeError::Definition {
            origin: name.to_string(),
            message: "there are no shell runtimes".into(),
        }),
        Language::JavaScript => {
            std::fs::create_dir(env)
                .map_err(|e| RuntimeError::io(format!("creating {}", env.display()), e))?;
            Ok(())
        }
        Language::Python => {
            progress("creating the virtualenv");
            run(
                name,
                "creating the virtualenv",
                Command::new(program)
                    .args(["-I", "-m", "venv", "--without-pip"])
                    .arg(env),
            )?;
            // The activation scripts name the temporary path; skills never use them.
            for script in ["activate", "activate.csh", "activate.fish", "Activate.ps1"] {
                let _ = std::fs::remove_file(env.join("bin").join(script));
            }
            for (path, text) in &def.files {
                let dst = env.join(path);
                if let Some(dir) = dst.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| RuntimeError::io(format!("creating {}", dir.display()), e))?;
                }
                std::fs::write(&dst, text)
                    .map_err(|e| RuntimeError::io(format!("writing {}", dst.display()), e))?;
            }
            if !def.packages.is_empty() {
                install_packages(def, program, env, scratch, opts, progress)?;
            }
            Ok(())
        }
    }
}

fn install_packages(
    def: &Definition,
    program: &Path,
    env: &Path,
    scratch: &Path,
    opts: &InstallOptions,
    progress: Progress<'_>,
) -> Result<(), RuntimeError> {
    let name = def.name.as_str();
    let reqs = scratch.join("requirements.txt");
    std::fs::write(&reqs, def.requirements())
        .map_err(|e| RuntimeError::io(format!("writing {}", reqs.display()), e))?;
    std::fs::create_dir_all(&opts.wheel_cache).map_err(|e| {
        RuntimeError::io(
            format!("creating the wheel cache {}", opts.wheel_cache.display()),
            e,
        )
    })?;
    let env_python = env.join("bin/python3");
    // `pip [--python ENV] SUBCOMMAND ARGS... <pins>`: every wheel is checked against the
    // definition's hashes, nothing is built from source, no dependency is chosen by pip.
    let pip = |target: Option<&Path>, sub: &[&std::ffi::OsStr]| {
        let mut c = Command::new(program);
        c.args([
            "-I",
            "-m",
            "pip",
            "--disable-pip-version-check",
            "--no-input",
        ]);
        if let Some(t) = target {
            c.arg("--python").arg(t);
        }
        c.args(sub)
            .args([
                "--require-hashes",
                "--no-deps",
                "--only-binary=:all:",
                "--no-cache-dir",
            ])
            .arg("--requirement")
            .arg(&reqs);
        c
    };
    let cache = opts.wheel_cache.as_os_str();
    let install = || {
        pip(
            Some(&env_python),
            &[
                "install".as_ref(),
                "--no-index".as_ref(),
                "--find-links".as_ref(),
                cache,
            ],
        )
    };
    progress("installing the pinned wheels from the cache");
    let first = run(name, "pip install (from the wheel cache)", &mut install());
    if first.is_ok() || opts.offline {
        return first.map(drop);
    }
    progress("downloading the pinned wheels (pip download --require-hashes)");
    run(
        name,
        "pip download",
        &mut pip(None, &["download".as_ref(), "--dest".as_ref(), cache]),
    )?;
    progress("installing the pinned wheels");
    run(name, "pip install", &mut install()).map(drop)
}
