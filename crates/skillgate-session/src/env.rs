//! What environment a step sees.
//!
//! Nothing of the caller's own environment reaches a step: the sandbox rebuilds it
//! (`PATH`, `LANG`, `HOME`, `TMPDIR`, `SKILLGATE_OUTPUT_DIR`, and the runtime's own
//! variables). A step may ask for more variables by name and value ([`StepSpec::env`]),
//! recorded in the log with it and part of its cache key, but only names on an
//! allow-list: variables that change how output is formatted or ordered, never ones that
//! load code or move the interpreter (`LD_PRELOAD`, `PYTHONPATH`, `PYTHONSTARTUP`,
//! `NODE_OPTIONS`, `PATH`), which would run code the pre-scan never saw.
//!
//! [`StepSpec::env`]: crate::StepSpec::env
use std::collections::BTreeMap;

/// The names a step may set by default: the time zone, the locale's categories, hash
/// and build-date determinism, and terminal width and colour.
pub const DEFAULT_ALLOW: &[&str] = &[
    "TZ",
    "LC_ALL",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "PYTHONHASHSEED",
    "SOURCE_DATE_EPOCH",
    "COLUMNS",
    "NO_COLOR",
];

/// The most variables a step may set.
pub const MAX_VARS: usize = 32;

/// The most bytes of one variable's value.
pub const MAX_VALUE_BYTES: usize = 4096;

/// Checks a step's variables against `allow`: every name on it, at most [`MAX_VARS`]
/// of them, every value at most [`MAX_VALUE_BYTES`] without a NUL byte. `Err` names the
/// first variable that is not.
pub fn check(env: &BTreeMap<String, String>, allow: &[String]) -> Result<(), String> {
    if env.len() > MAX_VARS {
        return Err(format!(
            "a step sets {} environment variables, over the limit of {MAX_VARS}",
            env.len()
        ));
    }
    for (name, value) in env {
        if !allow.iter().any(|a| a == name) {
            return Err(format!(
                "environment variable `{name}` is not on the step allow-list ({})",
                allow.join(", ")
            ));
        }
        if value.len() > MAX_VALUE_BYTES || value.contains('\0') {
            return Err(format!(
                "environment variable `{name}`: its value must be at most {MAX_VALUE_BYTES} \
                 bytes without a NUL byte"
            ));
        }
    }
    Ok(())
}

/// [`DEFAULT_ALLOW`] as owned names.
pub fn default_allow() -> Vec<String> {
    DEFAULT_ALLOW.iter().map(|s| s.to_string()).collect()
}

/// The names the sandbox sets itself: a step never replaces them.
const SANDBOX_OWNS: &[&str] = &["PATH", "LANG", "HOME", "TMPDIR"];

/// Prefixes of names that load code, move an interpreter or change how a shell reads a
/// command line (the dynamic loader, glibc's module and locale loading, the
/// interpreters' start-up hooks, `BASH_ENV`); [`LOADER_EXCEPTIONS`] are the harmless
/// ones among them.
const LOADERS: &[&str] = &[
    "LD_",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "MALLOC_",
    "LOCPATH",
    "NLSPATH",
    "PYTHON",
    "NODE_",
    "NPM_",
    "BASH_",
    "PERL",
    "RUBY",
    "JAVA_TOOL_OPTIONS",
    "MPLBACKEND",
    "OPENSSL_",
];

/// Names of the [`LOADERS`] families that only fix an output (Python's hash seed).
const LOADER_EXCEPTIONS: &[&str] = &["PYTHONHASHSEED"];

/// Names a shell reads to decide how it runs a command line.
const SHELL_OWNS: &[&str] = &["ENV", "IFS", "PS4", "SHELLOPTS", "CDPATH"];

/// Checks that `name` may be put on a step allow-list: a valid variable name
/// (`[A-Za-z_][A-Za-z0-9_]*`), not one the sandbox sets (`PATH`, `LANG`, `HOME`,
/// `TMPDIR`, `SKILLGATE_*`) and not one that loads code or changes how an interpreter or
/// the shell starts (`LD_*`, `PYTHON*` but `PYTHONHASHSEED`, `NODE_*`, `BASH_*`, `IFS`,
/// ...). Every name of [`DEFAULT_ALLOW`] passes. `Err` says why not.
pub fn check_allowed_name(name: &str) -> Result<(), String> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "`{}` is not an environment variable name (letters, digits and `_`, not \
             starting with a digit)",
            name.escape_debug()
        ));
    }
    if SANDBOX_OWNS.contains(&name) || name.starts_with("SKILLGATE_") {
        return Err(format!(
            "`{name}` is set by the sandbox; a step cannot set it"
        ));
    }
    let loader = LOADERS.iter().any(|p| name.starts_with(p)) || SHELL_OWNS.contains(&name);
    if loader && !LOADER_EXCEPTIONS.contains(&name) {
        return Err(format!(
            "`{name}` can load code or change how an interpreter or the shell starts (code \
             the pre-scan never saw); a step cannot set it"
        ));
    }
    Ok(())
}

/// The step allow-list a configuration gives (`[sessions] env_allow`): `configured`
/// when set, each name checked with [`check_allowed_name`], else [`DEFAULT_ALLOW`].
/// `Err` names the key and the first bad entry.
pub fn allow_list(configured: Option<&[String]>) -> Result<Vec<String>, String> {
    let Some(names) = configured else {
        return Ok(default_allow());
    };
    for name in names {
        check_allowed_name(name).map_err(|e| format!("`[sessions] env_allow`: {e}"))?;
    }
    Ok(names.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn names_off_the_list_and_bad_values_are_refused_by_name() {
        let allow = default_allow();
        assert!(check(&vars(&[("TZ", "Asia/Tokyo"), ("LC_ALL", "C")]), &allow).is_ok());
        for name in [
            "LD_PRELOAD",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PATH",
            "tz",
        ] {
            let e = check(&vars(&[("TZ", "UTC"), (name, "x")]), &allow).unwrap_err();
            assert!(e.contains(&format!("`{name}`")), "{e}");
        }
        let e = check(&vars(&[("TZ", "a\0b")]), &allow).unwrap_err();
        assert!(e.contains("`TZ`"), "{e}");
        let long = "x".repeat(MAX_VALUE_BYTES + 1);
        assert!(check(&vars(&[("TZ", &long)]), &allow).is_err());
        let many: BTreeMap<String, String> = (0..=MAX_VARS)
            .map(|i| (format!("V{i}"), String::new()))
            .collect();
        let all: Vec<String> = many.keys().cloned().collect();
        assert!(check(&many, &all).unwrap_err().contains("over the limit"));
    }

    #[test]
    fn a_configured_allow_list_refuses_bad_and_dangerous_names_by_name() {
        for name in DEFAULT_ALLOW {
            assert_eq!(check_allowed_name(name), Ok(()), "{name}");
        }
        let extra = vec!["REPORT_TITLE".to_string(), "_x1".to_string()];
        assert_eq!(allow_list(Some(&extra)).unwrap(), extra);
        assert_eq!(allow_list(None).unwrap(), default_allow());
        for (name, why) in [
            ("", "not an environment variable name"),
            ("A=B", "not an environment variable name"),
            ("1X", "not an environment variable name"),
            ("A B", "not an environment variable name"),
            ("PATH", "set by the sandbox"),
            ("HOME", "set by the sandbox"),
            ("SKILLGATE_OUTPUT_DIR", "set by the sandbox"),
            ("LD_PRELOAD", "load code"),
            ("LD_LIBRARY_PATH", "load code"),
            ("PYTHONPATH", "load code"),
            ("PYTHONWARNINGS", "load code"),
            ("NODE_OPTIONS", "load code"),
            ("BASH_ENV", "load code"),
            ("GCONV_PATH", "load code"),
            ("IFS", "load code"),
        ] {
            let e = allow_list(Some(&["TZ".to_string(), name.to_string()])).unwrap_err();
            assert!(
                e.contains("`[sessions] env_allow`") && e.contains(why),
                "{name}: {e}"
            );
            assert!(e.contains(&format!("`{name}`")), "{name}: {e}");
        }
    }

    #[test]
    fn the_example_config_documents_the_default_allow_list() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skillgate.toml");
        let config = skillgate::Config::load(&path).unwrap();
        assert_eq!(
            config.sessions.env_allow.as_deref(),
            Some(&default_allow()[..])
        );
    }
}
