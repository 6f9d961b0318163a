//! Installed runtimes: `<dir>/<name>-<digest>/` holding `env/` (the tree the sandbox
//! sees), `runtime.json` (what a run needs, with the tree's [`Stamp`]) and
//! `manifest.json` (every file's sha256).
use crate::install::{self, InstallOptions, Progress};
use crate::{Definition, Manifest, RuntimeError, Stamp};
use serde::{Deserialize, Serialize};
use skillgate_core::{Language, RuntimeInterpreter};
use skillgate_sandbox::Interpreter;
use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

const RECORD: &str = "runtime.json";
const MANIFEST: &str = "manifest.json";
const TREE: &str = "env";

/// What `runtime.json` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    name: String,
    language: Language,
    definition_digest: String,
    /// The base interpreter's real executable.
    base_program: PathBuf,
    /// Its installation prefix.
    base_prefix: PathBuf,
    /// The program to run, relative to the tree (`bin/python3`), or `None` to run the
    /// base interpreter itself.
    program_in_tree: Option<PathBuf>,
    env: BTreeMap<String, String>,
    read_only: Vec<PathBuf>,
    stamp: Stamp,
}

/// An installed runtime, ready for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The runtime's name.
    pub name: String,
    /// The language it runs.
    pub language: Language,
    /// Its directory (`<name>-<digest>`).
    pub dir: PathBuf,
    /// The interpreter a run executes, and the base prefix it needs.
    pub interpreter: RuntimeInterpreter,
    /// Further host paths the sandbox makes visible read-only (the definition's
    /// `read_only`); the tree itself is `interpreter.tree`.
    pub read_only: Vec<PathBuf>,
    /// Environment variables the skill's process gets.
    pub env: BTreeMap<String, String>,
    /// The base interpreter's real executable.
    pub base_program: PathBuf,
}

/// The outcome of a full verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The runtime's directory.
    pub dir: PathBuf,
    /// What differs from the manifest written at install (empty: intact).
    pub differences: Vec<String>,
}

/// The runtimes installed under one directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// The base interpreter of `def`, resolved to a real executable (shims followed; anything
/// that cannot be resolved is refused).
fn base_interpreter(def: &Definition) -> Result<Interpreter, RuntimeError> {
    Interpreter::resolve(def.language, Some(&def.interpreter)).map_err(|e| RuntimeError::Install {
        name: def.name.clone(),
        message: format!(
            "the interpreter `{}` cannot be resolved to a real executable: {e}",
            def.interpreter.display()
        ),
    })
}

impl Store {
    /// The store under `root` (`<state dir>/runtimes`).
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// Its directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir_for(&self, def: &Definition, program: &Path) -> PathBuf {
        let digest = def.digest(program);
        self.root.join(format!("{}-{}", def.name, &digest[..16]))
    }

    fn read_record(dir: &Path) -> Result<Record, RuntimeError> {
        let path = dir.join(RECORD);
        let bytes = std::fs::read(&path)
            .map_err(|e| RuntimeError::io(format!("reading {}", path.display()), e))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            RuntimeError::io(
                format!("{} is not a runtime record: {e}", path.display()),
                std::io::ErrorKind::InvalidData.into(),
            )
        })
    }

    fn installed_from(dir: &Path, r: Record) -> Installed {
        let tree = dir.join(TREE);
        let (program, tree) = match &r.program_in_tree {
            Some(rel) => (tree.join(rel), Some(tree)),
            None => (r.base_program.clone(), None),
        };
        Installed {
            name: r.name,
            language: r.language,
            dir: dir.to_path_buf(),
            interpreter: RuntimeInterpreter {
                runtime: String::new(),
                program,
                prefix: r.base_prefix,
                tree,
            },
            read_only: r.read_only,
            env: r.env,
            base_program: r.base_program,
        }
        .named()
    }

    /// The installed runtime for `def`, checked with the cheap stamp (see
    /// [`crate::manifest`]): what every run calls.
    pub fn resolve(&self, def: &Definition) -> Result<Installed, RuntimeError> {
        let base = base_interpreter(def)?;
        let dir = self.dir_for(def, &base.program);
        if !dir.join(RECORD).is_file() {
            return Err(RuntimeError::NotInstalled {
                name: def.name.clone(),
            });
        }
        let record = Self::read_record(&dir)?;
        let modified = |what: String| RuntimeError::Modified {
            name: def.name.clone(),
            dir: dir.clone(),
            what,
        };
        if record.name != def.name || record.definition_digest != def.digest(&base.program) {
            return Err(modified("its record does not match the definition".into()));
        }
        let holds = record
            .stamp
            .holds(&dir.join(TREE))
            .map_err(|e| modified(e.to_string()))?;
        if !holds {
            return Err(modified(
                "files were added, removed or rewritten; `skillgate runtime verify` lists them"
                    .into(),
            ));
        }
        Ok(Self::installed_from(&dir, record))
    }

    /// Installs `def` unless it is installed and intact (then this is a no-op). The tree
    /// is built in `tmp-*` next to the final directory and renamed into place, so a
    /// failure leaves nothing behind. A runtime changed after install is refused unless
    /// `opts.force` replaces it.
    pub fn install(
        &self,
        def: &Definition,
        opts: &InstallOptions,
        progress: Progress<'_>,
    ) -> Result<Installed, RuntimeError> {
        let base = base_interpreter(def)?;
        match self.resolve(def) {
            Ok(installed) => {
                progress("already installed");
                return Ok(installed);
            }
            Err(RuntimeError::NotInstalled { .. }) => {}
            Err(e @ RuntimeError::Modified { .. }) if !opts.force => return Err(e),
            Err(RuntimeError::Modified { .. }) => progress("replacing the changed runtime"),
            Err(e) => return Err(e),
        }
        if def.language == Language::Python
            && let Some(want) = &def.python_version
        {
            let have = install::python_version(&def.name, &base.program)?;
            if &have != want {
                return Err(RuntimeError::Install {
                    name: def.name.clone(),
                    message: format!(
                        "{} is Python {have}, the definition needs {want}",
                        base.program.display()
                    ),
                });
            }
        }
        // 0700, like the monitor's state directory it usually lives in (and which this may
        // create first): the bind mount reads the tree as root, so nobody else needs in.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)
            .map_err(|e| RuntimeError::io(format!("creating {}", self.root.display()), e))?;
        self.sweep_abandoned();
        let tmp = tempfile::Builder::new()
            .prefix(&scratch_prefix("tmp"))
            .tempdir_in(&self.root)
            .map_err(|e| {
                RuntimeError::io(
                    format!("creating a directory in {}", self.root.display()),
                    e,
                )
            })?;
        let tree = tmp.path().join(TREE);
        let scratch =
            tempfile::tempdir().map_err(|e| RuntimeError::io("creating a scratch directory", e))?;
        install::build_tree(def, &base.program, &tree, scratch.path(), opts, progress)?;
        progress("recording every file's sha256");
        let manifest = Manifest::of_tree(&tree)?;
        let record = Record {
            name: def.name.clone(),
            language: def.language,
            definition_digest: def.digest(&base.program),
            base_program: base.program.clone(),
            base_prefix: base.prefix.clone(),
            program_in_tree: (def.language == Language::Python)
                .then(|| PathBuf::from("bin/python3")),
            env: def.env.clone(),
            read_only: def.read_only.clone(),
            stamp: Stamp::of_tree(&tree)?,
        };
        for (file, json) in [
            (MANIFEST, serde_json::to_vec(&manifest)),
            (RECORD, serde_json::to_vec_pretty(&record)),
        ] {
            let path = tmp.path().join(file);
            let json = json.map_err(|e| {
                RuntimeError::io(format!("encoding {file}"), std::io::Error::other(e))
            })?;
            std::fs::write(&path, json)
                .map_err(|e| RuntimeError::io(format!("writing {}", path.display()), e))?;
        }
        let dir = self.dir_for(def, &base.program);
        let tmp = tmp.keep();
        // Another install of the same definition may have finished meanwhile: keep it.
        if !opts.force
            && let Ok(installed) = self.resolve(def)
        {
            let _ = std::fs::remove_dir_all(&tmp);
            progress("installed by another process meanwhile");
            return Ok(installed);
        }
        let placed = (|| {
            if dir.exists() {
                // --force: move the changed runtime aside, then remove it.
                let old = tempfile::Builder::new()
                    .prefix(&scratch_prefix("old"))
                    .tempdir_in(&self.root)?
                    .keep();
                std::fs::rename(&dir, old.join("runtime"))?;
                std::fs::rename(&tmp, &dir)?;
                std::fs::remove_dir_all(&old)
            } else {
                std::fs::rename(&tmp, &dir)
            }
        })();
        if let Err(e) = placed {
            let _ = std::fs::remove_dir_all(&tmp);
            // Lost a race with another install of the same definition: theirs is as good.
            if !opts.force
                && let Ok(installed) = self.resolve(def)
            {
                return Ok(installed);
            }
            return Err(RuntimeError::io(
                format!("moving the runtime to {}", dir.display()),
                e,
            ));
        }
        progress("installed");
        Ok(Self::installed_from(&dir, record))
    }

    /// Compares every file of the installed runtime with the manifest written at
    /// install.
    pub fn verify(&self, def: &Definition) -> Result<VerifyReport, RuntimeError> {
        let base = base_interpreter(def)?;
        let dir = self.dir_for(def, &base.program);
        if !dir.join(RECORD).is_file() {
            return Err(RuntimeError::NotInstalled {
                name: def.name.clone(),
            });
        }
        let path = dir.join(MANIFEST);
        let bytes = std::fs::read(&path)
            .map_err(|e| RuntimeError::io(format!("reading {}", path.display()), e))?;
        let installed: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
            RuntimeError::io(
                format!("{} is not a manifest: {e}", path.display()),
                std::io::ErrorKind::InvalidData.into(),
            )
        })?;
        let mut differences = installed.differences(&Manifest::of_tree(&dir.join(TREE))?);
        match Self::read_record(&dir) {
            Ok(r) if r.definition_digest == def.digest(&base.program) => {}
            Ok(_) => differences.push(format!("changed: {RECORD}")),
            Err(e) => differences.push(format!("unreadable: {RECORD} ({e})")),
        }
        Ok(VerifyReport { dir, differences })
    }

    /// Removes the scratch directories (`tmp-PID-*`, `old-PID-*`) of installs whose process
    /// is gone: an install killed mid-way (SIGKILL, a crash, a power cut) cannot remove
    /// its own, and a python-data tree is hundreds of megabytes. Directories of a live
    /// process, and anything not named that way, are left alone. Best effort: what cannot
    /// be removed now is tried again by the next install.
    pub fn sweep_abandoned(&self) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        for entry in rd.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(scratch_owner) else {
                continue;
            };
            let alive = Path::new("/proc").join(pid.to_string()).exists();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if !alive && is_dir && std::fs::remove_dir_all(entry.path()).is_ok() {
                removed.push(entry.path());
            }
        }
        removed
    }

    /// Every installed runtime: (name, directory), sorted. Directories that are not
    /// runtimes (an install's scratch `tmp-*`) are skipped.
    pub fn list(&self) -> Result<Vec<(String, PathBuf)>, RuntimeError> {
        let rd = match std::fs::read_dir(&self.root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(RuntimeError::io(
                    format!("reading {}", self.root.display()),
                    e,
                ));
            }
        };
        let mut out = Vec::new();
        for entry in rd.flatten() {
            let dir = entry.path();
            if let Ok(r) = Self::read_record(&dir) {
                out.push((r.name, dir));
            }
        }
        out.sort();
        Ok(out)
    }
}

/// The prefix of a scratch directory of this process: `KIND-PID-`.
fn scratch_prefix(kind: &str) -> String {
    format!("{kind}-{}-", std::process::id())
}

/// The pid of the process a scratch directory name (`tmp-PID-*`, `old-PID-*`) belongs to.
fn scratch_owner(name: &str) -> Option<u32> {
    let rest = name
        .strip_prefix("tmp-")
        .or_else(|| name.strip_prefix("old-"))?;
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok().filter(|&p| p > 0)
}

impl Installed {
    fn named(mut self) -> Self {
        self.interpreter.runtime = self.name.clone();
        self
    }
}
