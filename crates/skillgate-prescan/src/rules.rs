//! Rule packs: data files of rules, each with its matcher and its own examples.
//!
//! A pack is a TOML file under `python/`, `javascript/` or `shell/` of a rules directory.
//! It holds any number of `[[rule]]` tables and at most one `[modules]` table (the
//! allow-list; in a shell pack it is spelled `[commands]` and lists the commands a shell
//! step may run, see [`crate::shell`]):
//!
//! ```toml
//! [modules]
//! allowed = ["json", "re", "pandas"]   # a name also allows its submodules
//!
//! [[rule]]
//! id = "py.process.subprocess"          # unique across the packs of a language
//! severity = "critical"                 # info | low | medium | high | critical
//! message = "subprocess starts other programs"
//! what = "Imports of subprocess and any use of its functions."
//! why = "A skill must not start other programs: they escape the pre-scan."
//! example = "import subprocess\nsubprocess.run(['id'])"
//! facts = ["import:subprocess", "ref:subprocess.*"]   # semantic facts (globs, `*` = any run)
//! queries = []                          # tree-sitter queries; `@hit` marks the location
//! must_match = ["import subprocess"]
//! must_not_match = ["text = 'subprocess'"]
//! ```
//!
//! A rules directory replaces the built-in packs, so it needs both `python/` and
//! `javascript/` (a `shell/` folder is optional: without one no command is allowed and
//! every shell step is blocked), unless it holds a `pack.toml` saying
//!
//! ```toml
//! extends = "builtin"
//! ```
//!
//! Then its packs are added to the built-in ones: either language folder may be left out,
//! a rule id already built in is an error (a custom rule never silently replaces one), and
//! `[modules]` lists add to the built-in allow-lists.
//!
//! The facts a matcher can name are listed in [`crate::facts`].
use crate::decode::glob_match;
use serde::Deserialize;
use skillgate_core::{Language, Severity};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tree_sitter::Query;

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// A rule pack that cannot be used. Every variant names the file and, where it applies,
/// the rule.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid TOML or has unknown or missing keys.
    #[error("invalid rule file {file}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A rule is wrong.
    #[error("rule `{rule}` in {file}: {message}")]
    Rule {
        /// The file.
        file: String,
        /// The rule id.
        rule: String,
        /// What is wrong.
        message: String,
    },
    /// A rules directory that replaces the built-in packs lacks a language's folder.
    #[error(
        "{} has no {language}/ folder: a rules directory replaces the built-in packs and needs both python/ and javascript/; to add rules to the built-in packs instead, put `extends = \"builtin\"` in {}",
        dir.display(),
        dir.join("pack.toml").display()
    )]
    Missing {
        /// The rules directory.
        dir: PathBuf,
        /// The language without a folder.
        language: Language,
    },
    /// A directory holds no rules for a language.
    #[error("no rule packs for {language} in {}", dir.display())]
    Empty {
        /// The directory.
        dir: PathBuf,
        /// The language.
        language: Language,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackFile {
    #[serde(default)]
    rule: Vec<RuleDef>,
    /// The allow-list: modules in Python and JavaScript, commands (`[commands]`) in shell.
    #[serde(default, alias = "commands")]
    modules: Option<ModulesDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModulesDef {
    allowed: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDef {
    id: String,
    severity: Severity,
    message: String,
    what: String,
    why: String,
    example: String,
    #[serde(default)]
    facts: Vec<String>,
    #[serde(default)]
    queries: Vec<String>,
    must_match: Vec<String>,
    #[serde(default)]
    must_not_match: Vec<String>,
}

/// One rule of a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Unique id (`py.process.subprocess`).
    pub id: String,
    /// The language it applies to.
    pub language: Language,
    /// How serious a match is.
    pub severity: Severity,
    /// The finding's message.
    pub message: String,
    /// What it detects.
    pub what: String,
    /// Why that is dangerous.
    pub why: String,
    /// An example of code it blocks.
    pub example: String,
    /// Fact globs (any one matches).
    pub facts: Vec<String>,
    /// Tree-sitter queries (any one matches).
    pub queries: Vec<String>,
    /// Code the rule must match.
    pub must_match: Vec<String>,
    /// Code the rule must not match.
    pub must_not_match: Vec<String>,
    /// The pack file it came from.
    pub file: String,
}

/// The rules of one language, compiled for matching.
#[derive(Debug)]
pub(crate) struct Compiled {
    language: Language,
    /// Rule indices (into [`RuleSet::rules`]) of this language.
    pub(crate) rules: Vec<usize>,
    /// Exact fact name to rules.
    pub(crate) exact: foldhash::HashMap<String, Vec<usize>>,
    /// Glob patterns: (literal prefix, pattern, rule).
    pub(crate) globs: Vec<(String, String, usize)>,
    /// Indices into `globs` by the fact kind their literal prefix names (`ref:`); a fact
    /// of another kind cannot start with that prefix.
    glob_kinds: foldhash::HashMap<String, Vec<usize>>,
    /// Indices into `globs` whose literal prefix names no kind (checked for every fact).
    glob_any: Vec<usize>,
    /// Allowed modules.
    pub(crate) allowed: HashSet<String>,
    /// The free names read as modules (the roots of the rules' name patterns).
    pub(crate) free: crate::facts::FreeNames,
    /// All queries of the language in one source, and the byte offset at which each
    /// rule's part starts.
    query_source: String,
    query_starts: Vec<(usize, usize)>,
    /// The combined query, compiled on first use (compiling costs milliseconds; a process
    /// that scans only one language never pays for the other). `None` when the language
    /// has no queries; an error says why the combined query does not compile.
    plan: OnceLock<Result<Option<QueryPlan>, String>>,
}

/// A language's combined query, ready to run.
#[derive(Debug)]
pub(crate) struct QueryPlan {
    pub(crate) query: Query,
    /// The rule of each pattern.
    pub(crate) pattern_rule: Vec<usize>,
    /// The literals each pattern needs in the source to match at all.
    literals: Vec<Vec<String>>,
}

impl QueryPlan {
    /// Whether any pattern can match `src` (when none can, running the query is skipped).
    pub(crate) fn possible(&self, src: &str) -> bool {
        crate::prefilter::any_possible(&self.literals, src)
    }
}

impl Compiled {
    /// The combined query, compiling it on first use.
    pub(crate) fn plan(&self) -> Result<Option<&QueryPlan>, &str> {
        self.plan
            .get_or_init(|| build_plan(self.language, &self.query_source, &self.query_starts))
            .as_ref()
            .map(Option::as_ref)
            .map_err(String::as_str)
    }
}

/// A loaded, validated set of rule packs for both languages.
///
/// ```
/// let rules = skillgate_prescan::RuleSet::embedded().unwrap();
/// assert!(rules.get("py.process.subprocess").is_some());
/// ```
#[derive(Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
    python: Compiled,
    javascript: Compiled,
    shell: Compiled,
    digest: [u8; 32],
}

/// The sha256 of a set of rule files: each file's language, name and text, length-prefixed.
fn pack_digest(files: &[(Language, String, String)]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (lang, name, text) in files {
        for part in [lang_dir(*lang).as_bytes(), name.as_bytes(), text.as_bytes()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
    }
    h.finalize().into()
}

/// [`RuleSet::embedded`]'s digest, without parsing the packs.
pub(crate) fn embedded_digest() -> [u8; 32] {
    pack_digest(&embedded_sources())
}

pub(crate) fn ts_language(lang: Language) -> tree_sitter::Language {
    match lang {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::Shell => tree_sitter_bash::LANGUAGE.into(),
    }
}

fn lang_dir(lang: Language) -> &'static str {
    match lang {
        Language::Python => "python",
        Language::JavaScript => "javascript",
        Language::Shell => "shell",
    }
}

/// The built-in packs as `(language, file name, TOML text)`.
fn embedded_sources() -> Vec<(Language, String, String)> {
    EMBEDDED
        .iter()
        .map(|(dir, name, text)| {
            (
                embedded_language(dir),
                format!("rules/prescan/{dir}/{name}"),
                (*text).to_string(),
            )
        })
        .collect()
}

fn embedded_language(dir: &str) -> Language {
    match dir {
        "python" => Language::Python,
        "javascript" => Language::JavaScript,
        _ => Language::Shell,
    }
}

impl RuleSet {
    /// A set without rules, shown by a scanner whose embedded packs failed to load (its
    /// scans are blocked).
    pub(crate) fn none() -> &'static RuleSet {
        static NONE: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
        NONE.get_or_init(|| RuleSet {
            rules: Vec::new(),
            python: compile(&[], Language::Python, HashSet::new()),
            javascript: compile(&[], Language::JavaScript, HashSet::new()),
            shell: compile(&[], Language::Shell, HashSet::new()),
            digest: [0; 32],
        })
    }

    /// The default packs built into the crate (from `rules/prescan/`).
    pub fn embedded() -> Result<RuleSet, RuleError> {
        let files = embedded_sources();
        // The embedded queries are compiled lazily, per language, on first use: the test
        // suite proves they compile, and a process scanning Python never compiles the
        // JavaScript query. Should one ever fail, scans fail closed.
        RuleSet::build(files, false)
    }

    /// Loads the packs of a directory laid out like `rules/prescan/`: `python/*.toml`
    /// and `javascript/*.toml`. Both languages must have rules, unless the directory's
    /// `pack.toml` says `extends = "builtin"`: then its packs add to the built-in ones
    /// (see the [module docs](self)).
    pub fn load_dir(dir: &Path) -> Result<RuleSet, RuleError> {
        let meta = dir.join(skillgate_core::PACK_FILE);
        let extends = match std::fs::read_to_string(&meta) {
            Ok(text) => {
                let m: skillgate_core::PackMeta =
                    toml::from_str(&text).map_err(|e| RuleError::Parse {
                        file: meta.display().to_string(),
                        message: e.to_string().trim_end().to_string(),
                    })?;
                m.extends_builtin()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(source) => return Err(RuleError::Read { path: meta, source }),
        };
        if !dir.is_dir() {
            return Err(RuleError::Read {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not a directory (or it does not exist)",
                ),
            });
        }
        let mut files = if extends {
            embedded_sources()
        } else {
            Vec::new()
        };
        let mut found_any = false;
        for lang in Language::ALL {
            let sub = dir.join(lang_dir(lang));
            // Without shell packs no command is on the allow-list: every shell step is
            // blocked, so a directory written before shell steps existed stays valid.
            if (extends || lang == Language::Shell) && !sub.exists() {
                continue;
            }
            let read = std::fs::read_dir(&sub).map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => RuleError::Missing {
                    dir: dir.to_path_buf(),
                    language: lang,
                },
                _ => RuleError::Read {
                    path: sub.clone(),
                    source,
                },
            })?;
            let mut paths: Vec<PathBuf> = read
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            paths.sort();
            if paths.is_empty() {
                return Err(RuleError::Empty {
                    dir: sub,
                    language: lang,
                });
            }
            found_any = true;
            for p in paths {
                let text = std::fs::read_to_string(&p).map_err(|source| RuleError::Read {
                    path: p.clone(),
                    source,
                })?;
                files.push((lang, p.display().to_string(), text));
            }
        }
        if !found_any {
            // Only reachable when extending: neither language folder is there.
            return Err(RuleError::Empty {
                dir: dir.to_path_buf(),
                language: Language::Python,
            });
        }
        RuleSet::from_sources(files)
    }

    /// Builds a rule set from `(language, file name, TOML text)` triples.
    pub fn from_sources(files: Vec<(Language, String, String)>) -> Result<RuleSet, RuleError> {
        RuleSet::build(files, true)
    }

    /// Builds a rule set; with `eager`, the queries are compiled now so that an error
    /// names the file and rule at fault.
    fn build(files: Vec<(Language, String, String)>, eager: bool) -> Result<RuleSet, RuleError> {
        let digest = pack_digest(&files);
        let mut rules = Vec::new();
        let mut allowed: [HashSet<String>; 3] = Default::default();
        for (lang, file, text) in files {
            let pack: PackFile = toml::from_str(&text).map_err(|e| RuleError::Parse {
                file: file.clone(),
                message: e.to_string().trim_end().to_string(),
            })?;
            if let Some(m) = pack.modules {
                let mut seen = HashSet::new();
                if let Some(twice) = m.allowed.iter().find(|name| !seen.insert(name.as_str())) {
                    return Err(RuleError::Parse {
                        file,
                        message: format!("`{twice}` is listed twice in `allowed`"),
                    });
                }
                allowed[lang as usize].extend(m.allowed);
            }
            for d in pack.rule {
                rules.push(Rule {
                    id: d.id,
                    language: lang,
                    severity: d.severity,
                    message: d.message,
                    what: d.what,
                    why: d.why,
                    example: d.example,
                    facts: d.facts,
                    queries: d.queries,
                    must_match: d.must_match,
                    must_not_match: d.must_not_match,
                    file: file.clone(),
                });
            }
        }
        let [py_allowed, js_allowed, sh_allowed] = allowed;
        let python = compile(&rules, Language::Python, py_allowed);
        let javascript = compile(&rules, Language::JavaScript, js_allowed);
        let shell = compile(&rules, Language::Shell, sh_allowed);
        // One combined query per language, compiled once. Only when it does not compile are
        // the rules' queries compiled one by one, to name the rule at fault.
        let combined_ok = |lang: Language| {
            let c = match lang {
                Language::Python => &python,
                Language::JavaScript => &javascript,
                Language::Shell => &shell,
            };
            !eager || c.plan().is_ok()
        };
        let combined_ok = [
            combined_ok(Language::Python),
            combined_ok(Language::JavaScript),
            combined_ok(Language::Shell),
        ];
        let mut seen = HashSet::new();
        for r in &rules {
            let err = |message: String| RuleError::Rule {
                file: r.file.clone(),
                rule: r.id.clone(),
                message,
            };
            if r.id.is_empty() || r.id.contains(char::is_whitespace) {
                return Err(err("the id must be non-empty without spaces".into()));
            }
            if !seen.insert(r.id.clone()) {
                return Err(err("duplicate id".into()));
            }
            if r.facts.is_empty() && r.queries.is_empty() {
                return Err(err("needs `facts` or `queries`".into()));
            }
            if r.must_match.is_empty() {
                return Err(err("needs at least one `must_match` example".into()));
            }
            if let Some(f) = r
                .facts
                .iter()
                .find(|f| f.is_empty() || f.contains(char::is_whitespace))
            {
                return Err(err(format!("fact pattern `{f}` is empty or has spaces")));
            }
            for q in r
                .queries
                .iter()
                .filter(|_| !combined_ok[r.language as usize])
            {
                Query::new(&ts_language(r.language), q)
                    .map_err(|e| err(format!("query does not compile: {e}")))?;
            }
        }
        for c in [&python, &javascript, &shell].into_iter().filter(|_| eager) {
            c.plan().map_err(|message| RuleError::Parse {
                file: format!("{} packs", lang_dir(c.language)),
                message: message.to_string(),
            })?;
        }
        Ok(RuleSet {
            rules,
            python,
            javascript,
            shell,
            digest,
        })
    }

    /// The sha256 of the rule files the set was built from (their languages, names and
    /// texts): two sets with the same digest scan alike.
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// Every rule, in pack order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// The modules allowed without a warning in a language.
    pub fn allowed_modules(&self, lang: Language) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .compiled(lang)
            .allowed
            .iter()
            .map(String::as_str)
            .collect();
        v.sort_unstable();
        v
    }

    pub(crate) fn compiled(&self, lang: Language) -> &Compiled {
        match lang {
            Language::Python => &self.python,
            Language::JavaScript => &self.javascript,
            Language::Shell => &self.shell,
        }
    }

    /// The rules whose fact patterns match `fact`.
    pub(crate) fn rules_for_fact<'a>(
        &'a self,
        c: &'a Compiled,
        fact: &'a str,
    ) -> impl Iterator<Item = usize> + 'a {
        let exact = c.exact.get(fact).into_iter().flatten().copied();
        let of_kind = fact_kind(fact)
            .and_then(|k| c.glob_kinds.get(k))
            .into_iter()
            .flatten();
        let globs = of_kind
            .chain(&c.glob_any)
            .map(|&g| &c.globs[g])
            .filter(move |(prefix, pat, _)| {
                fact.starts_with(prefix.as_str()) && glob_match(pat, fact)
            })
            .map(|(_, _, r)| *r);
        exact.chain(globs)
    }
}

/// The queries of `lang`'s rules joined into one source, and the byte offset at which each
/// rule's part starts (in source order).
fn combined_source(rules: &[Rule], lang: Language) -> (String, Vec<(usize, usize)>) {
    let mut source = String::new();
    let mut starts = Vec::new();
    for (i, r) in rules.iter().enumerate().filter(|(_, r)| r.language == lang) {
        for q in &r.queries {
            starts.push((source.len(), i));
            source.push_str(q);
            source.push('\n');
        }
    }
    (source, starts)
}

fn compile(rules: &[Rule], lang: Language, allowed: HashSet<String>) -> Compiled {
    let (query_source, query_starts) = combined_source(rules, lang);
    let mut c = Compiled {
        language: lang,
        rules: Vec::new(),
        exact: foldhash::HashMap::default(),
        globs: Vec::new(),
        glob_kinds: foldhash::HashMap::default(),
        glob_any: Vec::new(),
        allowed,
        free: crate::facts::FreeNames::of_patterns(
            rules
                .iter()
                .filter(|r| r.language == lang)
                .flat_map(|r| r.facts.iter().map(String::as_str)),
        ),
        query_source,
        query_starts,
        plan: OnceLock::new(),
    };
    for (i, r) in rules.iter().enumerate().filter(|(_, r)| r.language == lang) {
        c.rules.push(i);
        for f in &r.facts {
            match f.find('*') {
                None => c.exact.entry(f.clone()).or_default().push(i),
                Some(star) => {
                    let prefix = &f[..star];
                    let g = c.globs.len();
                    match fact_kind(prefix) {
                        Some(kind) => c.glob_kinds.entry(kind.to_string()).or_default().push(g),
                        None => c.glob_any.push(g),
                    }
                    c.globs.push((prefix.to_string(), f.clone(), i));
                }
            }
        }
    }
    c
}

/// A fact's kind with its colon (`ref:` of `ref:os.system`), if it has one.
fn fact_kind(fact: &str) -> Option<&str> {
    fact.find(':').map(|i| &fact[..=i])
}

/// Compiles a language's combined query source.
fn build_plan(
    lang: Language,
    source: &str,
    starts: &[(usize, usize)],
) -> Result<Option<QueryPlan>, String> {
    if source.is_empty() {
        return Ok(None);
    }
    let query = Query::new(&ts_language(lang), source)
        .map_err(|e| format!("the combined queries do not compile: {e}"))?;
    // Each pattern belongs to the rule whose part of the source it starts in.
    let pattern_rule = (0..query.pattern_count())
        .map(|p| {
            let at = query.start_byte_for_pattern(p);
            let k = starts.partition_point(|&(s, _)| s <= at).saturating_sub(1);
            starts[k].1
        })
        .collect();
    let literals = crate::prefilter::required_literals(&query, source);
    Ok(Some(QueryPlan {
        query,
        pattern_rule,
        literals,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_digest_is_known_without_parsing_and_is_the_parsed_sets() {
        let set = RuleSet::embedded().expect("embedded packs");
        assert_eq!(&embedded_digest(), set.digest());
        assert_ne!(embedded_digest(), *RuleSet::none().digest());
        assert!(RuleSet::none().rules().is_empty());
    }

    #[test]
    fn embedded_queries_compile_and_name_their_rules() {
        let set = RuleSet::embedded().expect("embedded packs");
        for lang in [Language::Python, Language::JavaScript] {
            let plan = set
                .compiled(lang)
                .plan()
                .expect("the embedded queries compile")
                .expect("the embedded packs have queries");
            assert_eq!(plan.pattern_rule.len(), plan.query.pattern_count());
            for &r in &plan.pattern_rule {
                assert_eq!(set.rules()[r].language, lang);
                assert!(!set.rules()[r].queries.is_empty());
            }
        }
    }

    #[test]
    fn a_broken_query_is_an_error_at_load_not_at_scan() {
        let pack = r#"
[[rule]]
id = "py.bad"
severity = "high"
message = "m"
what = "w"
why = "y"
example = "x"
queries = ["(call nonsense_field: (identifier)) @hit"]
must_match = ["f()"]
"#;
        let js = r#"
[[rule]]
id = "js.ok"
severity = "high"
message = "m"
what = "w"
why = "y"
example = "x"
facts = ["call:eval"]
must_match = ["eval('1')"]
"#;
        let err = RuleSet::from_sources(vec![
            (Language::Python, "p.toml".into(), pack.into()),
            (Language::JavaScript, "j.toml".into(), js.into()),
        ])
        .expect_err("broken query");
        assert!(err.to_string().contains("py.bad"), "{err}");
    }
}
