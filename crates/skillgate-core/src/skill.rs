use crate::NetworkPolicy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The language a skill is written in.
///
/// ```
/// use skillgate_core::Language;
/// assert_eq!("javascript".parse::<Language>().unwrap(), Language::JavaScript);
/// assert_eq!(Language::from_extension("py"), Some(Language::Python));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python 3, run by `python3`.
    Python,
    /// JavaScript, run by `node`.
    #[serde(rename = "javascript")]
    JavaScript,
    /// A POSIX shell command line, run by `dash` (Debian's `/bin/sh`): only a session's
    /// shell step
    /// (`skillgate session exec --sh`) is one. It is authorised with the Cedar action
    /// `run_command`, not `execute`, and pre-scanned against the shell pack's command
    /// allow-list. Not a skill language: neither a name nor a file extension parses to it.
    Shell,
}

impl Language {
    /// Every language, in declaration order.
    pub const ALL: [Language; 3] = [Language::Python, Language::JavaScript, Language::Shell];

    /// The lowercase name used in reports and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::Shell => "shell",
        }
    }

    /// The language a file extension (without the dot) implies.
    pub fn from_extension(ext: &str) -> Option<Language> {
        match ext {
            "py" => Some(Language::Python),
            "js" | "mjs" | "cjs" => Some(Language::JavaScript),
            _ => None,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "python" | "py" => Ok(Language::Python),
            "javascript" | "js" | "node" => Ok(Language::JavaScript),
            _ => Err(format!(
                "unknown language `{s}` (expected python or javascript)"
            )),
        }
    }
}

/// Who may discover and execute a skill (the policy layer decides what it means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Every agent of the skill's tenant.
    Public,
    /// Only agents or groups granted explicitly.
    Restricted,
    /// Only agents belonging to the skill's builder.
    #[default]
    Private,
}

impl Visibility {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Restricted => "restricted",
            Visibility::Private => "private",
        }
    }
}

impl std::str::FromStr for Visibility {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "public" => Ok(Visibility::Public),
            "restricted" => Ok(Visibility::Restricted),
            "private" => Ok(Visibility::Private),
            _ => Err(format!(
                "unknown visibility `{s}` (expected public, restricted or private)"
            )),
        }
    }
}

/// Limits a skill asks for. The isolation layer clamps them to the tenant's maxima: a
/// skill can ask for less or more than the default, never more than the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LimitOverrides {
    /// Wall-clock limit.
    #[serde(default, with = "crate::units::opt_duration")]
    pub wall_timeout: Option<Duration>,
    /// CPU time limit.
    #[serde(default, with = "crate::units::opt_duration")]
    pub cpu_time: Option<Duration>,
    /// Memory limit in bytes.
    #[serde(default, with = "crate::units::opt_size")]
    pub memory_bytes: Option<u64>,
    /// Maximum number of processes and threads.
    #[serde(default)]
    pub pids: Option<u32>,
    /// Largest file the skill may write, in bytes.
    #[serde(default, with = "crate::units::opt_size")]
    pub file_size_bytes: Option<u64>,
}

/// What a file of a skill folder, other than the entry script, is to the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// Source an interpreter of this language can load: the pre-scan reads it.
    Code(Language),
    /// Read by the skill as data (the manifest, the schema, declared data files).
    Data,
}

/// One file of a skill folder besides the entry script, read once when the skill was
/// loaded. Executors write these bytes into the sandbox and never read the folder again,
/// so what runs is what was checked.
#[derive(Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its path relative to the skill folder, `/`-separated (e.g. `scripts/helper.py`).
    pub path: String,
    /// Code or data.
    pub kind: FileKind,
    /// Its bytes.
    pub bytes: Arc<[u8]>,
}

impl fmt::Debug for SkillFile {
    /// The path, kind and size: a folder's bytes (up to megabytes) have no place in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillFile")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// A skill: the code an agent asks to run, with what the pipeline needs to know about it.
///
/// The digest is computed from the code and the other files when the skill is built, so
/// it always matches them.
#[derive(Debug, Clone, Serialize)]
pub struct Skill {
    /// Agent Skills name: 1–64 lowercase letters, digits and hyphens.
    pub name: String,
    /// What the skill does.
    pub description: String,
    /// The language of the entry script.
    pub language: Language,
    /// The entry script's file name, relative to the skill folder (e.g. `scripts/main.py`).
    pub entry: String,
    /// The entry script's bytes.
    #[serde(skip)]
    pub code: Arc<[u8]>,
    /// Lowercase hex sha256 identifying what runs: of `code` alone when the skill has no
    /// other `files`; otherwise of the entry's path and bytes followed by every file's
    /// path and bytes in path order, each length-prefixed (so no two different folders
    /// share a digest).
    pub digest: String,
    /// JSON Schema the input must satisfy, if any.
    pub input_schema: Option<serde_json::Value>,
    /// Who may run it.
    pub visibility: Visibility,
    /// The builder who owns it.
    pub owner: Option<String>,
    /// The tenant it belongs to.
    pub tenant: Option<String>,
    /// Limits it asks for.
    pub limits: LimitOverrides,
    /// Network it asks for (default: none).
    pub network: NetworkPolicy,
    /// The folder's other files, as read when it was loaded, sorted by path; executors
    /// write them next to the entry script.
    #[serde(skip)]
    pub files: Arc<[SkillFile]>,
    /// The folder it was loaded from, for messages only: executors use `files`, never
    /// this path.
    pub source_dir: Option<PathBuf>,
    /// The named runtime it asks for (`python-data`): an interpreter with a pinned
    /// package set; `None` means the language's default.
    pub runtime: Option<String>,
}

impl Skill {
    /// Starts building a skill from its name, language and code.
    pub fn builder(
        name: impl Into<String>,
        language: Language,
        code: impl Into<Vec<u8>>,
    ) -> SkillBuilder {
        let name = name.into();
        let entry = match language {
            Language::Python => "main.py",
            Language::JavaScript => "main.js",
            Language::Shell => "main.sh",
        }
        .to_string();
        SkillBuilder {
            skill: Skill {
                description: String::new(),
                name,
                language,
                entry,
                code: Arc::from(Vec::new()),
                digest: String::new(),
                input_schema: None,
                visibility: Visibility::default(),
                owner: None,
                tenant: None,
                limits: LimitOverrides::default(),
                network: NetworkPolicy::None,
                files: Arc::from(Vec::new()),
                source_dir: None,
                runtime: None,
            },
            code: code.into(),
            files: Vec::new(),
        }
    }

    /// The code as UTF-8, if it is.
    pub fn code_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.code).ok()
    }
}

/// Builds a [`Skill`]; see [`Skill::builder`].
#[derive(Debug)]
pub struct SkillBuilder {
    skill: Skill,
    code: Vec<u8>,
    files: Vec<SkillFile>,
}

impl SkillBuilder {
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.skill.description = d.into();
        self
    }
    /// Sets the entry script's relative path.
    pub fn entry(mut self, e: impl Into<String>) -> Self {
        self.skill.entry = e.into();
        self
    }
    /// Sets the input schema.
    pub fn input_schema(mut self, s: serde_json::Value) -> Self {
        self.skill.input_schema = Some(s);
        self
    }
    /// Sets the visibility.
    pub fn visibility(mut self, v: Visibility) -> Self {
        self.skill.visibility = v;
        self
    }
    /// Sets the owning builder.
    pub fn owner(mut self, o: impl Into<String>) -> Self {
        self.skill.owner = Some(o.into());
        self
    }
    /// Sets the tenant.
    pub fn tenant(mut self, t: impl Into<String>) -> Self {
        self.skill.tenant = Some(t.into());
        self
    }
    /// Sets the requested limits.
    pub fn limits(mut self, l: LimitOverrides) -> Self {
        self.skill.limits = l;
        self
    }
    /// Sets the requested network.
    pub fn network(mut self, n: NetworkPolicy) -> Self {
        self.skill.network = n;
        self
    }
    /// Sets the source folder.
    pub fn source_dir(mut self, d: impl Into<PathBuf>) -> Self {
        self.skill.source_dir = Some(d.into());
        self
    }
    /// Adds a file of the folder besides the entry (a later file of the same path
    /// replaces an earlier one).
    pub fn file(
        mut self,
        path: impl Into<String>,
        kind: FileKind,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        let path = path.into();
        self.files.retain(|f| f.path != path);
        self.files.push(SkillFile {
            path,
            kind,
            bytes: Arc::from(bytes.into()),
        });
        self
    }
    /// Sets the runtime it asks for.
    pub fn runtime(mut self, r: impl Into<String>) -> Self {
        self.skill.runtime = Some(r.into());
        self
    }
    /// Finishes: computes the digest.
    pub fn build(self) -> Skill {
        let mut skill = self.skill;
        let mut files = self.files;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        skill.digest = if files.is_empty() {
            hex::encode(Sha256::digest(&self.code))
        } else {
            let mut h = Sha256::new();
            let mut put = |bytes: &[u8]| {
                h.update((bytes.len() as u64).to_le_bytes());
                h.update(bytes);
            };
            put(skill.entry.as_bytes());
            put(&self.code);
            for f in &files {
                put(f.path.as_bytes());
                put(&f.bytes);
            }
            hex::encode(h.finalize())
        };
        skill.code = Arc::from(self.code);
        skill.files = Arc::from(files);
        skill
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_is_recorded_by_name_but_never_parsed_from_one() {
        assert_eq!(
            serde_json::to_string(&Language::Shell).unwrap(),
            r#""shell""#
        );
        assert_eq!(
            serde_json::from_str::<Language>(r#""shell""#).unwrap(),
            Language::Shell
        );
        // A skill folder or `--lang` never names it: only a session's shell step is one.
        for name in ["shell", "sh", "bash"] {
            assert!(name.parse::<Language>().is_err(), "{name}");
            assert_eq!(Language::from_extension(name), None);
        }
    }

    #[test]
    fn digest_is_sha256_of_code() {
        let s = Skill::builder("x", Language::Python, b"abc".to_vec()).build();
        assert_eq!(
            s.digest,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_digest_covers_every_file_and_its_path() {
        let with = |path: &str, bytes: &[u8]| {
            Skill::builder("x", Language::Python, b"abc".to_vec())
                .file(path, FileKind::Code(Language::Python), bytes.to_vec())
                .build()
                .digest
        };
        let base = with("helper.py", b"x = 1");
        assert_ne!(
            base,
            Skill::builder("x", Language::Python, b"abc".to_vec())
                .build()
                .digest
        );
        assert_ne!(base, with("helper.py", b"x = 2"), "a file's bytes count");
        assert_ne!(base, with("helper2.py", b"x = 1"), "a file's path counts");
        // Length prefixes: moving bytes from a path into the content changes the digest.
        assert_ne!(with("ab", b"c"), with("a", b"bc"));
        assert_eq!(base, with("helper.py", b"x = 1"), "and it is stable");
    }
}
