//! A runtime as data: `rules/runtimes/<name>.toml`.
use crate::RuntimeError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use skillgate_core::Language;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One runtime: an interpreter, a pinned package set and what the sandbox must show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Definition {
    /// The runtime's name: the file's stem (not a key in the file).
    #[serde(skip_deserializing)]
    pub name: String,
    /// What it offers, for `skillgate runtime list`.
    #[serde(default)]
    pub description: String,
    /// The language of the skills it runs.
    pub language: Language,
    /// The base interpreter: an absolute path or a command name looked up in `PATH`.
    /// Shims are followed to the real executable.
    pub interpreter: PathBuf,
    /// For Python: the `major.minor` the interpreter must be (the wheels are built for
    /// it).
    #[serde(default)]
    pub python_version: Option<String>,
    /// Environment variables the skill's process gets.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Further host paths the sandbox makes visible read-only (data the packages read).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Small text files written into the runtime's tree at install (Python runtimes),
    /// by path relative to the tree, which a sandbox mounts at `/runtime`.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The packages, each pinned; every dependency must be listed (no resolution).
    #[serde(default)]
    pub packages: Vec<Package>,
}

/// A package pinned by version and the sha256 of its wheel(s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    /// The distribution name on the package index.
    pub name: String,
    /// The exact version.
    pub version: String,
    /// The sha256 of each accepted wheel (one per platform).
    pub sha256: Vec<String>,
}

impl Package {
    /// The line of a pip requirements file pinning this package.
    pub fn requirement(&self) -> String {
        let hashes: Vec<String> = self
            .sha256
            .iter()
            .map(|h| format!("--hash=sha256:{h}"))
            .collect();
        format!("{}=={} {}", self.name, self.version, hashes.join(" "))
    }
}

/// Names: lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit.
fn is_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl Definition {
    /// Parses and checks a definition; `name` is the file's stem, `origin` names the file
    /// in errors.
    ///
    /// ```
    /// let def = skillgate_runtime::Definition::parse(
    ///     "py", "language = \"python\"\ninterpreter = \"/usr/bin/python3\"\n", "inline").unwrap();
    /// assert!(def.packages.is_empty());
    /// let err = skillgate_runtime::Definition::parse(
    ///     "py", "language = \"python\"\ninterpreter = \"x\"\npackage = []\n", "inline").unwrap_err();
    /// assert!(err.to_string().contains("package"));
    /// ```
    pub fn parse(name: &str, text: &str, origin: &str) -> Result<Definition, RuntimeError> {
        let bad = |message: String| RuntimeError::Definition {
            origin: origin.to_string(),
            message,
        };
        let mut def: Definition =
            toml::from_str(text).map_err(|e| bad(e.to_string().trim_end().to_string()))?;
        if !is_name(name, 64) || name.chars().any(|c| c.is_ascii_uppercase()) {
            return Err(bad(format!(
                "runtime name `{name}` must be 1-64 lowercase letters, digits, `-`, `_` or `.`"
            )));
        }
        def.name = name.to_string();
        if def.interpreter.as_os_str().is_empty() {
            return Err(bad("`interpreter` is empty".into()));
        }
        match def.language {
            Language::JavaScript => {
                if !def.packages.is_empty() {
                    return Err(bad(
                        "`packages`: JavaScript runtimes offer the built-in modules only".into(),
                    ));
                }
                if def.python_version.is_some() {
                    return Err(bad("`python_version` is for Python runtimes".into()));
                }
                if !def.files.is_empty() {
                    return Err(bad("`files` are for Python runtimes".into()));
                }
            }
            Language::Python => {}
            Language::Shell => {
                return Err(bad(
                    "`language`: a shell step runs on the host's dash, which the sandbox shows read-only; there are no shell runtimes".into(),
                ));
            }
        }
        if let Some(v) = &def.python_version {
            let ok = v.split('.').count() == 2 && v.split('.').all(|p| p.parse::<u32>().is_ok());
            if !ok {
                return Err(bad(format!("`python_version` `{v}` must be `major.minor`")));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &def.packages {
            if !is_name(&p.name, 100) {
                return Err(bad(format!(
                    "package name `{}` is not a valid name",
                    p.name
                )));
            }
            if !seen.insert(p.name.to_ascii_lowercase().replace('_', "-")) {
                return Err(bad(format!("package `{}` is listed twice", p.name)));
            }
            let version_ok = !p.version.is_empty()
                && p.version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '-' | '_'));
            if !version_ok {
                return Err(bad(format!(
                    "package `{}`: version `{}` must be an exact version",
                    p.name, p.version
                )));
            }
            if p.sha256.is_empty() {
                return Err(bad(format!("package `{}` has no sha256", p.name)));
            }
            for h in &p.sha256 {
                if h.len() != 64
                    || !h
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
                {
                    return Err(bad(format!(
                        "package `{}`: sha256 `{h}` must be 64 lowercase hex digits",
                        p.name
                    )));
                }
            }
        }
        for (k, v) in &def.env {
            let key_ok = !k.is_empty()
                && !k.starts_with(|c: char| c.is_ascii_digit())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !key_ok || v.contains('\0') {
                return Err(bad(format!(
                    "`env.{k}` is not a valid environment variable"
                )));
            }
            if matches!(
                k.as_str(),
                "PATH" | "HOME" | "TMPDIR" | "SKILLGATE_OUTPUT_DIR"
            ) || k.starts_with("LD_")
                || k.starts_with("PYTHON")
                || k.starts_with("NODE_")
            {
                return Err(bad(format!(
                    "`env.{k}` is set by the sandbox or changes how the interpreter loads code; a runtime cannot set it"
                )));
            }
        }
        for (path, text) in &def.files {
            let p = std::path::Path::new(path);
            let plain = !path.is_empty()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
                && !p.starts_with("bin")
                && !p.starts_with("lib")
                && path != "pyvenv.cfg";
            if !plain {
                return Err(bad(format!(
                    "`files.\"{path}\"` must be a relative path inside the tree, outside `bin`, `lib` and `pyvenv.cfg`"
                )));
            }
            if text.len() > 64 * 1024 {
                return Err(bad(format!("`files.\"{path}\"` is over 64 KiB")));
            }
        }
        for p in &def.read_only {
            if !p.is_absolute() {
                return Err(bad(format!(
                    "`read_only` path `{}` must be absolute",
                    p.display()
                )));
            }
        }
        Ok(def)
    }

    /// The content digest of this definition with its interpreter resolved to
    /// `program`: the installed directory's name carries it, so a changed definition (a
    /// new pin, another interpreter) installs next to the old one.
    pub fn digest(&self, program: &std::path::Path) -> String {
        #[derive(Serialize)]
        struct Keyed<'a> {
            format: u32,
            def: &'a Definition,
            program: &'a std::path::Path,
        }
        let json = serde_json::to_vec(&Keyed {
            format: 2,
            def: self,
            program,
        })
        .unwrap_or_default();
        hex::encode(Sha256::digest(json))
    }

    /// The pip requirements file pinning every package.
    pub fn requirements(&self) -> String {
        self.packages
            .iter()
            .map(|p| p.requirement() + "\n")
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = "language = \"python\"\ninterpreter = \"/usr/bin/python3\"\n";

    fn err(text: &str) -> String {
        Definition::parse("t", text, "t.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn unknown_keys_are_named() {
        assert!(err(&format!("{OK}interpeter = \"x\"\n")).contains("interpeter"));
        let e = err(&format!(
            "{OK}[[packages]]\nname = \"a\"\nversion = \"1\"\nsha256 = []\nsha = 1\n"
        ));
        assert!(e.contains("sha"), "{e}");
    }

    #[test]
    fn packages_are_pinned_exactly_with_hashes() {
        let h = "a".repeat(64);
        let pkg = |name: &str, version: &str, hash: &str| {
            format!(
                "{OK}[[packages]]\nname = \"{name}\"\nversion = \"{version}\"\nsha256 = [\"{hash}\"]\n"
            )
        };
        let def = Definition::parse("t", &pkg("numpy", "2.2.6", &h), "t.toml").unwrap();
        assert_eq!(
            def.requirements(),
            format!("numpy==2.2.6 --hash=sha256:{h}\n")
        );
        assert!(err(&pkg("numpy", ">=2", &h)).contains("exact version"));
        assert!(err(&pkg("numpy --index-url x", "1", &h)).contains("not a valid name"));
        assert!(err(&pkg("numpy", "1", "abc")).contains("64 lowercase hex"));
        let twice = format!(
            "{}[[packages]]\nname = \"numpy\"\nversion = \"1\"\nsha256 = [\"{h}\"]\n",
            pkg("numpy", "2", &h)
        );
        assert!(err(&twice).contains("listed twice"));
    }

    #[test]
    fn javascript_runtimes_have_no_packages_and_env_cannot_redirect_loading() {
        let e = err(
            "language = \"javascript\"\ninterpreter = \"node\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nsha256 = []\n",
        );
        assert!(e.contains("built-in modules"), "{e}");
        assert!(err(&format!("{OK}[env]\nLD_PRELOAD = \"/x.so\"\n")).contains("LD_PRELOAD"));
        assert!(err(&format!("{OK}[env]\nPYTHONPATH = \"/x\"\n")).contains("PYTHONPATH"));
        assert!(err(&format!("{OK}python_version = \"3\"\n")).contains("major.minor"));
        for path in [
            "../x",
            "/etc/x",
            "lib/python3.11/site-packages/x.pth",
            "pyvenv.cfg",
            "",
        ] {
            let e = err(&format!("{OK}[files]\n\"{path}\" = \"x\"\n"));
            assert!(e.contains("relative path inside the tree"), "{path}: {e}");
        }
        assert!(
            Definition::parse(
                "t",
                &format!("{OK}[files]\n\"etc/fonts.conf\" = \"x\"\n"),
                "t"
            )
            .is_ok()
        );
        assert!(Definition::parse("Bad Name", OK, "x").is_err());
    }

    #[test]
    fn the_digest_changes_with_the_pins_and_the_interpreter() {
        let a = Definition::parse("t", OK, "t").unwrap();
        let mut b = a.clone();
        b.env.insert("X".into(), "1".into());
        let p = std::path::Path::new("/usr/bin/python3.11");
        assert_ne!(a.digest(p), b.digest(p));
        assert_ne!(a.digest(p), a.digest(std::path::Path::new("/opt/python3")));
        assert_eq!(a.digest(p), a.clone().digest(p));
    }
}
