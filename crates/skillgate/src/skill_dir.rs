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
//! | `skillgate.input-schema` | JSON Schema file of the input, relative to the folder | `input.schema.json` if present |
//! | `skillgate.data` | data files: comma-separated globs relative to the folder (`*` matches any characters, `/` included: `data/*`) | none (but see `assets/` and `references/` below) |
//! | `skillgate.visibility` | `public`, `restricted` or `private` | `private` |
//! | `skillgate.owner` | the builder who owns the skill | none |
//! | `skillgate.tenant` | the tenant the skill belongs to | none |
//! | `skillgate.timeout` | wall-clock limit it asks for (`5s`); every limit is clamped to `[isolation.max]`, by default the config's defaults | config default |
//! | `skillgate.cpu-time` | CPU-time limit it asks for | config default |
//! | `skillgate.memory` | memory limit it asks for (`256MiB`) | config default |
//! | `skillgate.pids` | process limit it asks for | config default |
//! | `skillgate.file-size` | file-size limit it asks for | config default |
//! | `skillgate.runtime` | the named runtime it runs on (`python-data`) | `[runtimes]` default of its language |
//! | `skillgate.read-only` | `true` or `false`: the skill changes nothing outside its run (an MCP tool's `readOnlyHint`) | unknown |
//! | `skillgate.destructive` | `true` or `false`: the skill may destroy or overwrite something (an MCP tool's `destructiveHint`) | unknown |
//!
//! A `skillgate.` key not in this table is an error (a typo must not silently drop a
//! setting); other `metadata` keys belong to other tools and are ignored.
//!
//! ## The folder's files
//!
//! The folder is read once, from beneath itself ([`crate::folder`]): a symbolic link, a
//! hard link, a FIFO, a device or a socket anywhere in it is refused, naming it, and so is
//! an entry or schema path that is absolute or leaves the folder. Every file then gets a
//! kind, and its bytes travel on the [`Skill`] (the sandbox gets exactly these bytes):
//!
//! | file | kind |
//! |------|------|
//! | `.py`, `.js`, `.mjs`, `.cjs`, anywhere | code: the pre-scan reads it, in its language |
//! | `.pth`, `.pyc`, `.pyo`, `.pyd`, `.so`, `.node` | refused: an interpreter loads it as code, the pre-scan cannot read it |
//! | `SKILL.md`, the input schema | data |
//! | under `assets/` or `references/` (the Agent Skills folders for resources) | data |
//! | matching a `skillgate.data` glob | data |
//! | anything else | refused: neither code the pre-scan has seen nor declared data |
//!
//! A code extension always wins: a data glob never exempts a `.py` file from the scan.
//!
//! `visibility`, `owner` and `tenant` are claims, not facts: the policy gate takes them
//! from the operator's catalogue record for the skill's digest (the [`Skill`]'s digest,
//! over the entry and every file of the folder, `SKILL.md` included), refuses a `SKILL.md` that disagrees with the
//! record, and runs a skill without a record only as its caller's own code.
use serde::Deserialize;
use skillgate_core::{FileKind, Language, LimitOverrides, Skill, Visibility, units};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest entry script accepted, in bytes.
pub const MAX_CODE_BYTES: u64 = 1024 * 1024;
/// Largest `SKILL.md` or schema file accepted, in bytes.
pub const MAX_META_BYTES: u64 = 256 * 1024;
/// Extensions of files an interpreter loads as code but the pre-scan cannot read.
pub const UNSCANNABLE_EXTENSIONS: [&str; 6] = ["pth", "pyc", "pyo", "pyd", "so", "node"];
/// Folders whose files are data by convention (the Agent Skills resource folders).
pub const DATA_FOLDERS: [&str; 2] = ["assets/", "references/"];

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
    /// The skill folder cannot be used as a whole (missing, too large, too many files).
    #[error("skill folder {}: {message}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file of the folder is refused.
    #[error("refused {}: {reason}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why, and what to do about it.
        reason: String,
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

const KNOWN_KEYS: [&str; 15] = [
    "skillgate.entry",
    "skillgate.language",
    "skillgate.input-schema",
    "skillgate.data",
    "skillgate.visibility",
    "skillgate.owner",
    "skillgate.tenant",
    "skillgate.timeout",
    "skillgate.cpu-time",
    "skillgate.memory",
    "skillgate.pids",
    "skillgate.file-size",
    "skillgate.runtime",
    "skillgate.read-only",
    "skillgate.destructive",
];

/// What a skill says about its effects (`skillgate.read-only`, `skillgate.destructive`):
/// hints for a client (MCP tool annotations), never used to decide anything. `None`: the
/// skill does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EffectHints {
    /// The skill changes nothing outside its run.
    pub read_only: Option<bool>,
    /// The skill may destroy or overwrite something.
    pub destructive: Option<bool>,
}

impl EffectHints {
    /// The hints `SKILL.md`'s frontmatter gives; `Err` names a key whose value is not
    /// `true` or `false`.
    ///
    /// ```
    /// use skillgate::skill_dir::{EffectHints, parse_manifest};
    /// let fm = parse_manifest(
    ///     "---\nname: a\ndescription: d\nmetadata:\n  skillgate.read-only: \"true\"\n---\n",
    ///     "SKILL.md".as_ref(),
    /// ).unwrap();
    /// assert_eq!(EffectHints::of(&fm).unwrap().read_only, Some(true));
    /// ```
    pub fn of(fm: &Frontmatter) -> Result<EffectHints, String> {
        let flag = |key: &str| {
            fm.metadata
                .get(key)
                .map(|v| match v.as_str() {
                    "true" => Ok(true),
                    "false" => Ok(false),
                    other => Err(format!("`{key}`: `{other}` is not `true` or `false`")),
                })
                .transpose()
        };
        Ok(EffectHints {
            read_only: flag("skillgate.read-only")?,
            destructive: flag("skillgate.destructive")?,
        })
    }

    /// The hints of a loaded skill, read from the `SKILL.md` among its files (none for a
    /// skill without one; [`load`] refused a folder whose values are bad).
    pub fn of_skill(skill: &Skill) -> EffectHints {
        skill
            .files
            .iter()
            .find(|f| f.path == "SKILL.md")
            .and_then(|f| std::str::from_utf8(&f.bytes).ok())
            .and_then(|text| parse_manifest(text, Path::new("SKILL.md")).ok())
            .and_then(|fm| EffectHints::of(&fm).ok())
            .unwrap_or_default()
    }
}

/// The skill folders under `dir`: `dir` itself if it has a `SKILL.md`, else its
/// subfolders that have one, sorted by path.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>, SkillError> {
    if dir.join("SKILL.md").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let unreadable = |source: std::io::Error| SkillError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.join("SKILL.md").is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Loads and checks a skill folder: reads it from beneath itself, parses `SKILL.md`,
/// finds the entry script and the input schema (which must be valid), and gives every
/// other file its kind (see [the module docs](self)). Nothing is run or pre-scanned: the
/// pre-scan of the returned skill's code is `skillgate_prescan::PreScanner::scan_skill`.
pub fn load(dir: &Path) -> Result<Skill, SkillError> {
    let manifest_path = dir.join("SKILL.md");
    // Say so at once when this is no skill folder, before walking it.
    if let Err(source) = std::fs::symlink_metadata(&manifest_path) {
        return Err(SkillError::Read {
            path: manifest_path,
            source,
        });
    }
    let crate::folder::Folder { root, mut files } = crate::folder::read(dir)?;
    let raw = files.get("SKILL.md").ok_or_else(|| SkillError::Read {
        path: manifest_path.clone(),
        source: std::io::ErrorKind::NotFound.into(),
    })?;
    check_size(&manifest_path, raw, MAX_META_BYTES)?;
    let text = String::from_utf8(raw.clone()).map_err(|e| SkillError::Manifest {
        path: manifest_path.clone(),
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
    })?;
    let fm = parse_manifest(&text, &manifest_path)?;
    let bad = |message: String| SkillError::Manifest {
        path: manifest_path.clone(),
        message,
    };

    let folder = root;
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
    EffectHints::of(&fm).map_err(bad)?;

    let entry = match meta("skillgate.entry") {
        Some(e) => e.to_string(),
        None => {
            let found: Vec<&str> = ["scripts/main.py", "scripts/main.js"]
                .into_iter()
                .filter(|p| files.contains_key(*p))
                .collect();
            match found.as_slice() {
                [one] => one.to_string(),
                [] => return Err(bad("no entry script: set `metadata.skillgate.entry` or add scripts/main.py or scripts/main.js".into())),
                _ => return Err(bad("both scripts/main.py and scripts/main.js exist: set `metadata.skillgate.entry`".into())),
            }
        }
    };
    let entry = inside(&entry).ok_or_else(|| {
        bad(format!(
            "`skillgate.entry` `{entry}` must be a relative path inside the folder"
        ))
    })?;
    let entry_path = Path::new(&entry);
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
    let code = files.remove(&entry).ok_or_else(|| {
        bad(format!(
            "the entry script `{entry}` is not a file of the folder"
        ))
    })?;
    check_size(&dir.join(&entry), &code, MAX_CODE_BYTES)?;

    let schema_file = match meta("skillgate.input-schema") {
        Some(s) => Some(inside(s).ok_or_else(|| {
            bad(format!(
                "`skillgate.input-schema` `{s}` must be a relative path inside the folder"
            ))
        })?),
        None => Some("input.schema.json".to_string()).filter(|p| files.contains_key(p)),
    };
    let input_schema = schema_file
        .as_deref()
        .map(|name| {
            let bytes = files.get(name).ok_or_else(|| {
                bad(format!(
                    "`skillgate.input-schema` `{name}` is not a file of the folder"
                ))
            })?;
            parse_schema(bytes, &dir.join(name))
        })
        .transpose()?;
    let data_globs = meta("skillgate.data")
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(|g| {
                    inside(g).ok_or_else(|| {
                        bad(format!(
                            "`skillgate.data` glob `{g}` must be relative and stay inside the folder"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    let mut kinds = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let kind = classify(&path, schema_file.as_deref(), &data_globs).map_err(|reason| {
            SkillError::Refused {
                path: dir.join(&path),
                reason,
            }
        })?;
        if matches!(kind, FileKind::Code(_)) {
            check_size(&dir.join(&path), &bytes, MAX_CODE_BYTES)?;
        }
        kinds.push((path, kind, bytes));
    }

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
    for (path, kind, bytes) in kinds {
        b = b.file(path, kind, bytes);
    }
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

/// What a file of the folder (not the entry) is; `Err` says why it is refused. See the
/// table in [the module docs](self).
fn classify(path: &str, schema: Option<&str>, data_globs: &[String]) -> Result<FileKind, String> {
    let ext = Path::new(path).extension().and_then(|e| e.to_str());
    if let Some(lang) = ext.and_then(Language::from_extension) {
        return Ok(FileKind::Code(lang));
    }
    if let Some(e) = ext.filter(|e| UNSCANNABLE_EXTENSIONS.contains(e)) {
        return Err(format!(
            "an interpreter loads `.{e}` files as code, which the pre-scan cannot read; \
             ship the source instead"
        ));
    }
    let declared = path == "SKILL.md"
        || Some(path) == schema
        || DATA_FOLDERS.iter().any(|d| path.starts_with(d))
        || data_globs
            .iter()
            .any(|g| skillgate_prescan::glob_match(g, path));
    if declared {
        Ok(FileKind::Data)
    } else {
        Err(format!(
            "it is neither code the pre-scan reads (.py, .js, .mjs, .cjs) nor declared data; \
             list it in `metadata.skillgate.data` or move it under {}",
            DATA_FOLDERS.join(" or ")
        ))
    }
}

/// A path relative to the folder, `/`-separated, without `.` components; `None` when it
/// is absolute, empty or climbs out with `..`.
fn inside(p: &str) -> Option<String> {
    use std::path::Component;
    let mut parts = Vec::new();
    for c in Path::new(p).components() {
        match c {
            Component::Normal(n) => parts.push(n.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn check_size(path: &Path, bytes: &[u8], max: u64) -> Result<(), SkillError> {
    let size = bytes.len() as u64;
    if size > max {
        return Err(SkillError::TooLarge {
            path: path.into(),
            size,
            max,
        });
    }
    Ok(())
}

/// Reads a JSON Schema file and checks that it is a valid schema.
pub fn load_schema(path: &Path) -> Result<serde_json::Value, SkillError> {
    let raw = read_capped(path, MAX_META_BYTES)?;
    parse_schema(&raw, path)
}

/// Parses JSON Schema bytes (`path` is for messages) and checks that it is a valid schema.
pub fn parse_schema(raw: &[u8], path: &Path) -> Result<serde_json::Value, SkillError> {
    check_size(path, raw, MAX_META_BYTES)?;
    let schema: serde_json::Value =
        serde_json::from_slice(raw).map_err(|e| SkillError::Schema {
            path: path.into(),
            message: format!("not valid JSON: {e}"),
        })?;
    if let Some(message) = crate::input::external_ref(&schema) {
        return Err(SkillError::Schema {
            path: path.into(),
            message,
        });
    }
    // Compiled into the input gate's cache: the run checks its input with this validator.
    crate::input::compiled(&schema).map_err(|e| SkillError::Schema {
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
    fn every_file_travels_on_the_skill_with_its_kind_or_is_refused_by_name() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("files");
        let manifest = "---\nname: files\ndescription: x\nmetadata:\n  skillgate.entry: ./scripts/main.py\n  skillgate.data: data/*, notes.txt\n---\n";
        let ok: &[(&str, &str)] = &[
            ("scripts/main.py", "import helper\n"),
            ("scripts/helper.py", "X = 1\n"),
            ("input.schema.json", "{\"type\": \"object\"}"),
            ("data/a/b.csv", "1,2"),
            ("notes.txt", "n"),
            ("assets/logo.svg", "<svg/>"),
            ("references/guide.md", "# g"),
            // A data glob or folder never exempts code from the scan.
            ("data/tool.js", "0"),
        ];
        write_skill(&d, manifest, ok);
        let s = load(&d).unwrap();
        assert_eq!(s.entry, "scripts/main.py");
        assert_eq!(&s.code[..], b"import helper\n");
        let kinds: Vec<(&str, FileKind)> =
            s.files.iter().map(|f| (f.path.as_str(), f.kind)).collect();
        let py = FileKind::Code(Language::Python);
        assert_eq!(
            kinds,
            [
                ("SKILL.md", FileKind::Data),
                ("assets/logo.svg", FileKind::Data),
                ("data/a/b.csv", FileKind::Data),
                ("data/tool.js", FileKind::Code(Language::JavaScript)),
                ("input.schema.json", FileKind::Data),
                ("notes.txt", FileKind::Data),
                ("references/guide.md", FileKind::Data),
                ("scripts/helper.py", py),
            ]
        );
        assert!(s.input_schema.is_some());

        // Each of these makes the folder refused, naming the file.
        let refused: &[(&str, &str)] = &[
            ("README.txt", "neither code"),
            (".local/lib/python3.12/site-packages/x.pth", ".pth"),
            ("scripts/__pycache__/helper.cpython-312.pyc", ".pyc"),
            ("node_modules/addon.node", ".node"),
        ];
        for (file, needle) in refused {
            let d = t.path().join("refused");
            let _ = std::fs::remove_dir_all(&d);
            write_skill(
                &d,
                "---\nname: refused\ndescription: x\n---\n",
                &[("scripts/main.py", ""), (file, "x")],
            );
            let e = load(&d).expect_err(file).to_string();
            assert!(e.contains(file) && e.contains(needle), "{file}: {e}");
        }
    }

    #[test]
    fn effect_hints_are_read_from_the_manifest_and_a_bad_value_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("hinted");
        write_skill(
            &d,
            "---\nname: hinted\ndescription: x\nmetadata:\n  skillgate.read-only: \"true\"\n  skillgate.destructive: \"false\"\n---\n",
            &[("scripts/main.py", "0")],
        );
        let hints = EffectHints::of_skill(&load(&d).unwrap());
        assert_eq!(hints.read_only, Some(true));
        assert_eq!(hints.destructive, Some(false));
        write_skill(
            &d,
            "---\nname: hinted\ndescription: x\nmetadata:\n  skillgate.read-only: \"yes\"\n---\n",
            &[("scripts/main.py", "0")],
        );
        let err = load(&d).unwrap_err().to_string();
        assert!(
            err.contains("skillgate.read-only") && err.contains("yes"),
            "{err}"
        );
    }

    #[test]
    fn discover_finds_the_skill_folders_under_a_directory_or_the_directory_itself() {
        let t = tempfile::tempdir().unwrap();
        write_skill(&t.path().join("b"), "---\n---\n", &[]);
        write_skill(&t.path().join("a"), "---\n---\n", &[]);
        std::fs::create_dir(t.path().join("not-a-skill")).unwrap();
        let found = discover(t.path()).unwrap();
        assert_eq!(found, [t.path().join("a"), t.path().join("b")]);
        assert_eq!(discover(&t.path().join("a")).unwrap(), [t.path().join("a")]);
        assert!(discover(&t.path().join("absent")).is_err());
    }

    #[test]
    fn paths_in_the_manifest_must_stay_inside_the_folder() {
        let t = tempfile::tempdir().unwrap();
        for (key, value) in [
            ("skillgate.input-schema", "/etc/passwd"),
            ("skillgate.input-schema", "../outside.json"),
            ("skillgate.entry", "/etc/passwd"),
            ("skillgate.data", "a, ../../etc/*"),
        ] {
            let d = t.path().join("paths");
            let _ = std::fs::remove_dir_all(&d);
            let manifest =
                format!("---\nname: paths\ndescription: x\nmetadata:\n  {key}: {value}\n---\n");
            write_skill(&d, &manifest, &[("scripts/main.py", "")]);
            let e = load(&d).expect_err(value).to_string();
            assert!(
                e.contains(key) && e.contains("inside the folder"),
                "{value}: {e}"
            );
        }
        // A schema that is named but absent is an error too, not silently no schema.
        let d = t.path().join("paths");
        let _ = std::fs::remove_dir_all(&d);
        write_skill(
            &d,
            "---\nname: paths\ndescription: x\nmetadata:\n  skillgate.input-schema: gone.json\n---\n",
            &[("scripts/main.py", "")],
        );
        let e = load(&d).unwrap_err().to_string();
        assert!(e.contains("gone.json") && e.contains("not a file"), "{e}");
    }

    #[test]
    fn a_symlinked_entry_is_refused_before_anything_is_read() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("linked");
        write_skill(&d, "---\nname: linked\ndescription: x\n---\n", &[]);
        std::fs::create_dir(d.join("scripts")).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", d.join("scripts/main.py")).unwrap();
        let e = load(&d).unwrap_err().to_string();
        assert!(
            e.contains("scripts/main.py") && e.contains("symbolic link"),
            "{e}"
        );
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
