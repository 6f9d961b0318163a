//! Skill folders in the [Agent Skills](https://agentskills.io/specification) format.
//!
//! ```text
//! analyze-rows/
//!   SKILL.md              frontmatter + instructions for the agent
//!   scripts/main.py       the entry script
//!   input.schema.json     optional JSON Schema of the input
//! ```
//!
//! `SKILL.md` starts with YAML frontmatter holding the spec's fields: `name` (1–64
//! lowercase letters, digits and hyphens, no leading, trailing or double hyphen, equal to
//! the folder's name), `description` (1–1024 characters), and optional `license`,
//! `compatibility` (at most 500 characters), `metadata` (string keys and values) and
//! `allowed-tools`. Any other field is an error.
//!
//! skillgate's own settings live in `metadata`, under keys starting with `skillgate.`, so a
//! skill folder stays a valid Agent Skill for every other tool:
//!
//! | key | meaning | default |
//! |-----|---------|---------|
//! | `skillgate.entry` | entry script, relative to the folder | `scripts/main.py` or `scripts/main.js`, whichever exists |
//! | `skillgate.language` | `python` or `javascript` | from the entry's extension |
//! | `skillgate.input-schema` | JSON Schema file of the input | `input.schema.json` if present |
//! | `skillgate.visibility` | `public`, `restricted` or `private` | `private` |
//! | `skillgate.owner` | the builder who owns the skill | none |
//! | `skillgate.tenant` | the tenant the skill belongs to | none |
//! | `skillgate.timeout` | wall-clock limit it asks for (`5s`) | config default |
//! | `skillgate.cpu-time` | CPU-time limit it asks for | config default |
//! | `skillgate.memory` | memory limit it asks for (`256MiB`) | config default |
//! | `skillgate.pids` | process limit it asks for | config default |
//! | `skillgate.file-size` | file-size limit it asks for | config default |
//! | `skillgate.runtime` | the named runtime it runs on (`python-data`) | `[runtimes]` default of its language |
//!
//! A `skillgate.` key not in this table is an error (a typo must not silently drop a
//! setting); other `metadata` keys belong to other tools and are ignored.
use serde::Deserialize;
use skillgate_core::{Language, LimitOverrides, Skill, Visibility, units};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest entry script accepted, in bytes.
pub const MAX_CODE_BYTES: u64 = 1024 * 1024;
/// Largest `SKILL.md` or schema file accepted, in bytes.
pub const MAX_META_BYTES: u64 = 256 * 1024;

/// Why a skill folder could not be loaded. Each variant names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A file is larger than allowed.
    #[error("{} is {size} bytes, larger than the {max} bytes allowed", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The maximum.
        max: u64,
    },
    /// `SKILL.md` is malformed.
    #[error("{}: {message}", path.display())]
    Manifest {
        /// The SKILL.md file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The input schema is not valid.
    #[error("{}: {message}", path.display())]
    Schema {
        /// The schema file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The frontmatter of `SKILL.md`, as the Agent Skills specification defines it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Frontmatter {
    /// The skill's name.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// License name or file.
    #[serde(default)]
    pub license: Option<String>,
    /// Environment requirements.
    #[serde(default)]
    pub compatibility: Option<String>,
    /// Free-form string metadata; skillgate reads its `skillgate.*` keys.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// Pre-approved tools (experimental in the spec).
    #[serde(default, rename = "allowed-tools")]
    pub allowed_tools: Option<String>,
}

/// Checks a skill name against the specification's rules.
///
/// ```
/// use skillgate::skill_dir::validate_name;
/// assert!(validate_name("analyze-rows").is_ok());
/// assert!(validate_name("Analyze").is_err());
/// assert!(validate_name("a--b").is_err());
/// assert!(validate_name("-a").is_err());
/// ```
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > 64 {
        return Err(format!(
            "`name` must be 1 to 64 characters, `{name}` is {}",
            name.chars().count()
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(format!(
            "`name` may hold only lowercase letters, digits and hyphens: `{name}`"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "`name` may not start or end with a hyphen or hold two in a row: `{name}`"
        ));
    }
    Ok(())
}

fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, SkillError> {
    let meta = std::fs::metadata(path).map_err(|source| SkillError::Read {
        path: path.into(),
        source,
    })?;
    if meta.len() > max {
        return Err(SkillError::TooLarge {
            path: path.into(),
            size: meta.len(),
            max,
        });
    }
    std::fs::read(path).map_err(|source| SkillError::Read {
        path: path.into(),
        source,
    })
}

/// Splits `SKILL.md` into its frontmatter text and body.
fn split_frontmatter(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

/// Parses and validates `SKILL.md` text (`path` is for messages).
pub fn parse_manifest(text: &str, path: &Path) -> Result<Frontmatter, SkillError> {
    let bad = |message: String| SkillError::Manifest {
        path: path.into(),
        message,
    };
    let yaml = split_frontmatter(text)
        .ok_or_else(|| bad("must start with YAML frontmatter between `---` lines".into()))?;
    let fm: Frontmatter =
        serde_saphyr::from_str(yaml).map_err(|e| bad(format!("invalid frontmatter: {e}")))?;
    validate_name(&fm.name).map_err(bad)?;
    let dlen = fm.description.trim().chars().count();
    if dlen == 0 || fm.description.chars().count() > 1024 {
        return Err(bad(format!(
            "`description` must be 1 to 1024 characters, it is {}",
            fm.description.chars().count()
        )));
    }
    if let Some(c) = &fm.compatibility
        && c.chars().count() > 500
    {
        return Err(bad(format!(
            "`compatibility` must be at most 500 characters, it is {}",
            c.chars().count()
        )));
    }
    Ok(fm)
}

const KNOWN_KEYS: [&str; 12] = [
    "skillgate.entry",
    "skillgate.language",
    "skillgate.input-schema",
    "skillgate.visibility",
    "skillgate.owner",
    "skillgate.tenant",
    "skillgate.timeout",
    "skillgate.cpu-time",
    "skillgate.memory",
    "skillgate.pids",
    "skillgate.file-size",
    "skillgate.runtime",
];

/// Loads a skill folder: `SKILL.md`, the entry script and the input schema.
pub fn load(dir: &Path) -> Result<Skill, SkillError> {
    let manifest_path = dir.join("SKILL.md");
    let raw = read_capped(&manifest_path, MAX_META_BYTES)?;
    let text = String::from_utf8(raw).map_err(|e| SkillError::Manifest {
        path: manifest_path.clone(),
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
    })?;
    let fm = parse_manifest(&text, &manifest_path)?;
    let bad = |message: String| SkillError::Manifest {
        path: manifest_path.clone(),
        message,
    };

    let folder = std::fs::canonicalize(dir).map_err(|source| SkillError::Read {
        path: dir.into(),
        source,
    })?;
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if folder_name != fm.name {
        return Err(bad(format!(
            "`name` is `{}` but the folder is `{folder_name}`; they must match",
            fm.name
        )));
    }
    for key in fm.metadata.keys() {
        if key.starts_with("skillgate.") && !KNOWN_KEYS.contains(&key.as_str()) {
            return Err(bad(format!(
                "unknown metadata key `{key}` (known: {})",
                KNOWN_KEYS.join(", ")
            )));
        }
    }
    let meta = |k: &str| fm.metadata.get(k).map(String::as_str);

    let entry = match meta("skillgate.entry") {
        Some(e) => e.to_string(),
        None => {
            let found: Vec<&str> = ["scripts/main.py", "scripts/main.js"]
                .into_iter()
                .filter(|p| dir.join(p).is_file())
                .collect();
            match found.as_slice() {
                [one] => one.to_string(),
                [] => return Err(bad("no entry script: set `metadata.skillgate.entry` or add scripts/main.py or scripts/main.js".into())),
                _ => return Err(bad("both scripts/main.py and scripts/main.js exist: set `metadata.skillgate.entry`".into())),
            }
        }
    };
    let entry_path = Path::new(&entry);
    if entry_path.is_absolute()
        || entry_path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(bad(format!(
            "`skillgate.entry` `{entry}` must be a relative path inside the folder"
        )));
    }
    let language = match meta("skillgate.language") {
        Some(l) => l
            .parse::<Language>()
            .map_err(|e| bad(format!("`skillgate.language`: {e}")))?,
        None => entry_path
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Language::from_extension)
            .ok_or_else(|| {
                bad(format!(
                    "cannot tell the language of `{entry}`: set `metadata.skillgate.language`"
                ))
            })?,
    };
    let code = read_capped(&dir.join(&entry), MAX_CODE_BYTES)?;

    let schema_file = match meta("skillgate.input-schema") {
        Some(s) => Some(dir.join(s)),
        None => Some(dir.join("input.schema.json")).filter(|p| p.is_file()),
    };
    let input_schema = schema_file.map(|p| load_schema(&p)).transpose()?;

    let visibility = meta("skillgate.visibility")
        .map(|v| {
            v.parse::<Visibility>()
                .map_err(|e| bad(format!("`skillgate.visibility`: {e}")))
        })
        .transpose()?
        .unwrap_or_default();
    let dur = |k: &str| {
        meta(k)
            .map(|v| units::parse_duration(v).map_err(|e| bad(format!("`{k}`: {e}"))))
            .transpose()
    };
    let size = |k: &str| {
        meta(k)
            .map(|v| units::parse_size(v).map_err(|e| bad(format!("`{k}`: {e}"))))
            .transpose()
    };
    let limits = LimitOverrides {
        wall_timeout: dur("skillgate.timeout")?,
        cpu_time: dur("skillgate.cpu-time")?,
        memory_bytes: size("skillgate.memory")?,
        pids: meta("skillgate.pids")
            .map(|v| {
                v.parse::<u32>()
                    .map_err(|e| bad(format!("`skillgate.pids`: `{v}`: {e}")))
            })
            .transpose()?,
        file_size_bytes: size("skillgate.file-size")?,
    };

    let mut b = Skill::builder(fm.name, language, code)
        .description(fm.description)
        .entry(entry)
        .visibility(visibility)
        .limits(limits)
        .source_dir(folder);
    if let Some(s) = input_schema {
        b = b.input_schema(s);
    }
    if let Some(o) = meta("skillgate.owner") {
        b = b.owner(o);
    }
    if let Some(t) = meta("skillgate.tenant") {
        b = b.tenant(t);
    }
    if let Some(r) = meta("skillgate.runtime") {
        b = b.runtime(r);
    }
    Ok(b.build())
}

/// Reads a JSON Schema file and checks that it is a valid schema.
pub fn load_schema(path: &Path) -> Result<serde_json::Value, SkillError> {
    let raw = read_capped(path, MAX_META_BYTES)?;
    let schema: serde_json::Value =
        serde_json::from_slice(&raw).map_err(|e| SkillError::Schema {
            path: path.into(),
            message: format!("not valid JSON: {e}"),
        })?;
    jsonschema::validator_for(&schema).map_err(|e| SkillError::Schema {
        path: path.into(),
        message: format!("not a valid JSON Schema: {e}"),
    })?;
    Ok(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_skill(dir: &Path, manifest: &str, files: &[(&str, &str)]) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), manifest).unwrap();
        for (name, body) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
    }

    #[test]
    fn loads_a_minimal_skill() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("echo-it");
        write_skill(
            &d,
            "---\nname: echo-it\ndescription: Echoes.\n---\n# Echo\n",
            &[("scripts/main.js", "0")],
        );
        let s = load(&d).unwrap();
        assert_eq!(s.language, Language::JavaScript);
        assert_eq!(s.entry, "scripts/main.js");
        assert_eq!(s.visibility, Visibility::Private);
    }

    #[test]
    fn every_manifest_error_names_the_problem() {
        let t = tempfile::tempdir().unwrap();
        /// (folder, SKILL.md, other files, what the error must mention)
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            (
                "no-front",
                "# hi\n",
                &[("scripts/main.py", "")],
                "frontmatter",
            ),
            (
                "bad-yaml",
                "---\nname: [\n---\n",
                &[],
                "invalid frontmatter",
            ),
            ("no-desc", "---\nname: no-desc\n---\n", &[], "description"),
            (
                "Upper",
                "---\nname: Upper\ndescription: x\n---\n",
                &[],
                "lowercase",
            ),
            (
                "mismatch",
                "---\nname: other\ndescription: x\n---\n",
                &[("scripts/main.py", "")],
                "folder",
            ),
            (
                "extra",
                "---\nname: extra\ndescription: x\nauthor: me\n---\n",
                &[],
                "author",
            ),
            (
                "no-entry",
                "---\nname: no-entry\ndescription: x\n---\n",
                &[],
                "entry",
            ),
            (
                "bad-lang",
                "---\nname: bad-lang\ndescription: x\nmetadata:\n  skillgate.language: ruby\n---\n",
                &[("scripts/main.py", "")],
                "ruby",
            ),
            (
                "typo-key",
                "---\nname: typo-key\ndescription: x\nmetadata:\n  skillgate.timout: 5s\n---\n",
                &[("scripts/main.py", "")],
                "skillgate.timout",
            ),
            (
                "bad-time",
                "---\nname: bad-time\ndescription: x\nmetadata:\n  skillgate.timeout: soon\n---\n",
                &[("scripts/main.py", "")],
                "skillgate.timeout",
            ),
            (
                "bad-schema",
                "---\nname: bad-schema\ndescription: x\n---\n",
                &[("scripts/main.py", ""), ("input.schema.json", "{not json")],
                "input.schema.json",
            ),
            (
                "escape",
                "---\nname: escape\ndescription: x\nmetadata:\n  skillgate.entry: ../x.py\n---\n",
                &[],
                "inside the folder",
            ),
        ];
        for (name, manifest, files, needle) in cases {
            let d = t.path().join(name);
            write_skill(&d, manifest, files);
            let err = load(&d).expect_err(name).to_string();
            assert!(err.contains(needle), "{name}: `{err}` lacks `{needle}`");
        }
        let err = load(&t.path().join("missing")).unwrap_err().to_string();
        assert!(err.contains("SKILL.md"), "{err}");
    }
}
