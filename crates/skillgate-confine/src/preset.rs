//! Seccomp presets: profiles as data under `rules/seccomp/`, derived by measurement
//! (`rules/seccomp/derive.sh` traces real skills; see its header).
//!
//! A preset file is TOML:
//!
//! ```toml
//! name = "mine"
//! description = "What it is for."
//! violation = "errno"          # errno (EPERM, the default) or kill
//! allow = ["read", "write", "exit_group"]
//!
//! [[rules]]                    # optional: rules with conditions or other actions
//! names = ["socket"]
//! action = { action = "allow" }
//! args = [{ index = 0, op = "eq", value = 1 }]
//! ```
use crate::ConfineError;
use crate::profile::{EPERM, validate};
use serde::Deserialize;
use skillgate_core::{SeccompAction, SeccompProfile, SyscallRule};
use std::path::Path;

/// What happens to a call a profile does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Violation {
    /// The call fails with `EPERM` and the process goes on (the default).
    #[default]
    Errno,
    /// The kernel kills the process (reported as `security_violation`).
    Kill,
}

impl Violation {
    /// The profile action.
    pub fn action(self) -> SeccompAction {
        match self {
            Violation::Errno => SeccompAction::Errno(EPERM),
            Violation::Kill => SeccompAction::KillProcess,
        }
    }
}

/// The built-in presets: name and file text (compiled in from `rules/seccomp/`).
const BUILTIN: &[(&str, &str)] = &[
    ("python", include_str!("../../../rules/seccomp/python.toml")),
    ("node", include_str!("../../../rules/seccomp/node.toml")),
    ("strict", include_str!("../../../rules/seccomp/strict.toml")),
    ("shell", include_str!("../../../rules/seccomp/shell.toml")),
];

/// A preset file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    violation: Violation,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    rules: Vec<SyscallRule>,
}

/// The names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// A built-in preset by name (`python`, `node`, `strict`, `shell`), validated.
///
/// ```
/// let p = skillgate_confine::preset("node").unwrap();
/// assert_eq!(p.name, "node");
/// assert!(skillgate_confine::preset("nope").unwrap_err().to_string().contains("python"));
/// ```
pub fn preset(name: &str) -> Result<SeccompProfile, ConfineError> {
    let (_, text) =
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| ConfineError::UnknownPreset {
                name: name.into(),
                available: preset_names().join(", "),
            })?;
    parse_preset(text, &format!("built-in preset `{name}`"))
}

/// The description line of a built-in preset.
pub fn preset_description(name: &str) -> Option<String> {
    let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
    toml::from_str::<PresetFile>(text)
        .ok()
        .map(|p| p.description)
}

/// Parses preset text; `origin` names it in errors.
pub fn parse_preset(text: &str, origin: &str) -> Result<SeccompProfile, ConfineError> {
    let file: PresetFile = toml::from_str(text).map_err(|e| ConfineError::Parse {
        origin: origin.into(),
        message: e.to_string().trim_end().into(),
    })?;
    let mut syscalls = Vec::with_capacity(file.rules.len() + 1);
    if !file.allow.is_empty() {
        syscalls.push(SyscallRule {
            names: file.allow,
            action: SeccompAction::Allow,
            args: Vec::new(),
        });
    }
    syscalls.extend(file.rules);
    let profile = SeccompProfile {
        name: file.name,
        default_action: file.violation.action(),
        syscalls,
    };
    validate(&profile)?;
    Ok(profile)
}

/// Loads a preset file.
pub fn load_preset(path: &Path) -> Result<SeccompProfile, ConfineError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfineError::Read {
        path: path.into(),
        source,
    })?;
    parse_preset(&text, &path.display().to_string())
}
