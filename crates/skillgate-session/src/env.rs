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
}
