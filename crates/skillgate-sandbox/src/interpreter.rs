//! Finding the real interpreter executable for a language.
//!
//! A version-manager shim (pyenv's `python3` is a bash script) costs hundreds of
//! milliseconds per start, so the shim is resolved once, by asking the interpreter itself
//! where it lives, and the answer is cached in memory and on disk
//! (`$XDG_CACHE_HOME/skillgate/interpreters.json`), keyed by the shim's path, its
//! modification time, the working directory and `PYENV_VERSION`.
use serde::{Deserialize, Serialize};
use skillgate_core::{ExecError, Language};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::UNIX_EPOCH;

/// A resolved interpreter: the real executable and the prefix it needs at run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interpreter {
    /// The language it runs.
    pub language: Language,
    /// The real executable (no shim, no symlink).
    pub program: PathBuf,
    /// The installation prefix (e.g. `/usr`, or `~/.pyenv/versions/3.11.7`), which a
    /// sandbox must make visible read-only.
    pub prefix: PathBuf,
}

impl Interpreter {
    /// The command name looked up in `PATH` for a language.
    pub fn command_name(language: Language) -> &'static str {
        match language {
            Language::Python => "python3",
            Language::JavaScript => "node",
            // The POSIX shell the shell pre-scan is written for (Debian's /bin/sh): not
            // bash, whose `${!x}`, `${x@P}` and array subscripts run `$(...)` found in
            // data.
            Language::Shell => "dash",
        }
    }

    /// Arguments every run passes before the script: for Python `-s`, so no user
    /// site-packages (`$HOME/.local/lib/python3.*/site-packages`, where `HOME` is the
    /// skill's own folder) and none of their `.pth` files load before the entry.
    ///
    /// ```
    /// use skillgate_core::Language;
    /// assert_eq!(skillgate_sandbox::Interpreter::isolation_args_of(Language::Python), ["-s"]);
    /// ```
    pub fn isolation_args(&self) -> &'static [&'static str] {
        Self::isolation_args_of(self.language)
    }

    /// [`Interpreter::isolation_args`] of a language.
    pub fn isolation_args_of(language: Language) -> &'static [&'static str] {
        match language {
            Language::Python => &["-s"],
            Language::JavaScript | Language::Shell => &[],
        }
    }

    /// Resolves the interpreter for `language`: `explicit` when given (a path or a
    /// command name), else the language's command in `PATH`.
    ///
    /// ```no_run
    /// use skillgate_core::Language;
    /// use skillgate_sandbox::Interpreter;
    /// let py = Interpreter::resolve(Language::Python, None).unwrap();
    /// assert!(py.program.is_absolute());
    /// ```
    pub fn resolve(language: Language, explicit: Option<&Path>) -> Result<Interpreter, ExecError> {
        static MEMO: OnceLock<Mutex<HashMap<MemoKey, Interpreter>>> = OnceLock::new();
        let memo = MEMO.get_or_init(Default::default);
        let key = (language, explicit.map(Path::to_path_buf));
        if let Some(found) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(found);
        }
        let name = explicit
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(Self::command_name(language)));
        let found = which(&name).ok_or_else(|| {
            ExecError::InterpreterNotFound(if is_path(&name) {
                format!(
                    "`{}` for {language} does not exist or is not an executable file (fix [interpreters].{} in skillgate.toml)",
                    name.display(),
                    language.as_str()
                )
            } else {
                format!(
                    "`{}` for {language} is not on PATH (install it, or set [interpreters].{} in skillgate.toml)",
                    name.display(),
                    language.as_str()
                )
            })
        })?;
        let interp = if is_script(&found) {
            resolve_shim(language, &found)?
        } else {
            let program = std::fs::canonicalize(&found)
                .map_err(|e| ExecError::io(format!("resolving {}", found.display()), e))?;
            Interpreter {
                language,
                prefix: prefix_of(&program),
                program,
            }
        };
        if let Ok(mut m) = memo.lock() {
            m.insert(key, interp.clone());
        }
        Ok(interp)
    }
}

/// The interpreter for a run: the spec's runtime interpreter when it has one (run as
/// given, not canonicalised: a virtualenv is found from the path Python was started
/// by), else the executor's interpreter for the language. A skill that asks for a
/// runtime nobody resolved (the isolation layer off, say) is refused, never run on the
/// default interpreter.
pub(crate) fn for_run(
    req: &skillgate_core::ExecRequest,
    explicit: Option<&Path>,
) -> Result<Interpreter, ExecError> {
    match (&req.spec.interpreter, &req.skill.runtime) {
        (Some(r), _) => Ok(Interpreter {
            language: req.skill.language,
            program: r.program.clone(),
            prefix: r.prefix.clone(),
        }),
        (None, Some(name)) => Err(ExecError::Other(format!(
            "the skill asks for runtime `{name}` but no runtime was resolved for this run \
             (the isolation layer resolves it: is it disabled?)"
        ))),
        (None, None) => Interpreter::resolve(req.skill.language, explicit),
    }
}

/// `/x/bin/python3.11` → `/x`; anything not in a `bin` directory → its directory.
fn prefix_of(program: &Path) -> PathBuf {
    let dir = program.parent().unwrap_or(Path::new("/"));
    if dir.file_name().is_some_and(|n| n == "bin") {
        dir.parent().unwrap_or(Path::new("/")).to_path_buf()
    } else {
        dir.to_path_buf()
    }
}

/// A path (`/usr/bin/python3`, `bin/node`) rather than a command name looked up in `PATH`.
fn is_path(name: &Path) -> bool {
    name.components().count() > 1
}

fn which(name: &Path) -> Option<PathBuf> {
    if is_path(name) {
        return name.is_file().then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn is_script(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == b"#!")
}

/// In-process memo key: the language and the explicit program, if any.
type MemoKey = (Language, Option<PathBuf>);

#[derive(Debug, Serialize, Deserialize, Default)]
struct DiskCache {
    entries: HashMap<String, Interpreter>,
}

fn cache_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("skillgate").join("interpreters.json"))
}

fn cache_key(shim: &Path) -> String {
    let mtime = std::fs::metadata(shim)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let cwd = std::env::current_dir().unwrap_or_default();
    let pyenv = std::env::var("PYENV_VERSION").unwrap_or_default();
    format!("{}|{mtime}|{}|{pyenv}", shim.display(), cwd.display())
}

/// Asks the interpreter behind a shim for its real executable, once per key.
fn resolve_shim(language: Language, shim: &Path) -> Result<Interpreter, ExecError> {
    let key = cache_key(shim);
    let file = cache_file();
    let mut cache: DiskCache = file
        .as_deref()
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if let Some(hit) = cache.entries.get(&key)
        && hit.language == language
        && is_executable(&hit.program)
    {
        return Ok(hit.clone());
    }
    let probe: &[&str] = match language {
        Language::Python => &["-c", "import sys; print(sys.executable)"],
        Language::JavaScript => &["-p", "process.execPath"],
        Language::Shell => &["-c", "readlink -f /proc/$$/exe"],
    };
    let out = Command::new(shim)
        .args(probe)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| ExecError::io(format!("running {}", shim.display()), e))?;
    let reported = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || reported.is_empty() {
        return Err(ExecError::InterpreterNotFound(format!(
            "{} did not report its executable: {}",
            shim.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let program = std::fs::canonicalize(&reported)
        .map_err(|e| ExecError::io(format!("resolving {reported}"), e))?;
    let interp = Interpreter {
        language,
        prefix: prefix_of(&program),
        program,
    };
    cache.entries.insert(key, interp.clone());
    if let Some(f) = file {
        // The cache is an optimisation: failing to write it only costs the next start.
        let _ = f.parent().map(std::fs::create_dir_all);
        if let Ok(json) = serde_json::to_vec(&cache) {
            let tmp = f.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, json).is_ok() {
                let _ = std::fs::rename(&tmp, &f);
            }
        }
    }
    Ok(interp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_is_parent_of_bin() {
        assert_eq!(
            prefix_of(Path::new("/usr/bin/python3.11")),
            PathBuf::from("/usr")
        );
        assert_eq!(prefix_of(Path::new("/opt/node")), PathBuf::from("/opt"));
    }

    #[test]
    fn missing_interpreter_is_named() {
        let err = Interpreter::resolve(
            Language::Python,
            Some(Path::new("/nonexistent/python-nope")),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/python-nope"),
            "{err}"
        );
    }
}
