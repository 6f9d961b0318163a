//! The scanner: parse with bounds, extract facts, match rules, decide.
use crate::facts::{Ctx, Fact, FreeNames, walk};
use crate::rules::{RuleSet, ts_language};
use serde::{Deserialize, Serialize};
use skillgate_core::{FileKind, Finding, Language, LayerName, Location, Severity, Skill};
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator, Tree};

/// What the pre-scan decides about a piece of code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No findings.
    Allow,
    /// Findings below the blocking severity.
    Warn,
    /// A finding at or above the blocking severity, or code that could not be scanned.
    Block,
}

impl Verdict {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Warn => "warn",
            Verdict::Block => "block",
        }
    }
}

/// What to do about an import of a module outside the allow-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnknownModuleAction {
    /// A low-severity finding (verdict `warn`).
    #[default]
    Warn,
    /// A critical finding (verdict `block`).
    Block,
}

impl std::str::FromStr for UnknownModuleAction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "warn" => Ok(UnknownModuleAction::Warn),
            "block" => Ok(UnknownModuleAction::Block),
            _ => Err(format!(
                "unknown module action `{s}` (expected warn or block)"
            )),
        }
    }
}

/// Bounds on the work one scan may do. Passing any of them blocks the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Largest source accepted, in bytes.
    pub max_bytes: usize,
    /// Deepest syntax-tree nesting accepted.
    pub max_depth: usize,
    /// Longest the parser may take.
    pub parse_timeout: Duration,
}

impl Default for ScanLimits {
    fn default() -> Self {
        ScanLimits {
            max_bytes: 1024 * 1024,
            max_depth: 200,
            parse_timeout: Duration::from_millis(500),
        }
    }
}

/// Settings of a [`PreScanner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// Findings at or above this severity block (default `high`).
    pub threshold: Severity,
    /// What an import outside the allow-list yields (default warn).
    pub unknown_module: UnknownModuleAction,
    /// Work bounds.
    pub limits: ScanLimits,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            threshold: Severity::High,
            unknown_module: UnknownModuleAction::Warn,
            limits: ScanLimits::default(),
        }
    }
}

/// The result of scanning one piece of code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanReport {
    /// The decision.
    pub verdict: Verdict,
    /// What was found, in source order.
    pub findings: Vec<Finding>,
}

/// Ids of the findings the engine itself produces when code cannot be scanned.
pub mod engine_rules {
    /// The source does not parse.
    pub const PARSE_ERROR: &str = "prescan.parse-error";
    /// The source is larger than the cap.
    pub const TOO_LARGE: &str = "prescan.too-large";
    /// The syntax tree is nested deeper than the cap.
    pub const TOO_DEEP: &str = "prescan.too-deep";
    /// Parsing took longer than the timeout.
    pub const TIMEOUT: &str = "prescan.timeout";
    /// The source is not UTF-8.
    pub const NOT_UTF8: &str = "prescan.not-utf8";
    /// The code produced more facts than the cap.
    pub const TOO_COMPLEX: &str = "prescan.too-complex";
    /// The rule packs' queries do not compile.
    pub const RULES_INVALID: &str = "prescan.rules-invalid";
    /// A Python module outside the allow-list.
    pub const PY_UNLISTED: &str = "py.module.unlisted";
    /// A JavaScript module outside the allow-list.
    pub const JS_UNLISTED: &str = "js.module.unlisted";
    /// A shell command outside the allow-list (always critical: shell is allow-list only).
    pub const SH_UNLISTED: &str = "sh.command.unlisted";
    /// A local import that loads one of the skill's data files as code.
    pub const DATA_AS_CODE: &str = "prescan.data-as-code";

    /// What an engine finding means, for `skillgate rules explain`.
    ///
    /// ```
    /// assert!(skillgate_prescan::engine_rules::describe("prescan.too-deep").is_some());
    /// ```
    pub fn describe(id: &str) -> Option<&'static str> {
        Some(match id {
            PARSE_ERROR => {
                "The code does not parse as the language it claims to be. The pre-scan cannot judge what it cannot read, so the code is blocked (fail closed)."
            }
            TOO_LARGE => {
                "The code is larger than the pre-scan's size cap (1 MiB by default). Skills are short programs; a huge one is blocked rather than half-scanned."
            }
            TOO_DEEP => {
                "The syntax tree is nested deeper than the cap (200 levels by default). Such nesting only serves to exhaust analysers; it is blocked."
            }
            TIMEOUT => {
                "Parsing took longer than the time budget (500 ms by default); the code is blocked."
            }
            NOT_UTF8 => {
                "The code is not valid UTF-8. Interpreters and the scanner could read it differently, so it is blocked."
            }
            TOO_COMPLEX => {
                "The semantic pass ran out of its budget (too many facts or folding steps, e.g. nested comprehensions over long constant lists); the code is blocked."
            }
            RULES_INVALID => {
                "The rule packs' tree-sitter queries do not compile, so the code cannot be checked against them; it is blocked (fail closed)."
            }
            DATA_AS_CODE => {
                "A relative `require`/`import` names one of the skill's data files (not `.js`, `.mjs`, `.cjs` or `.json`), which Node would load as JavaScript although the pre-scan never read it as code; it is blocked."
            }
            PY_UNLISTED | JS_UNLISTED => {
                "An import of a module that is not on the library allow-list (`modules.toml` of the pack). Low severity (warn) by default; `[prescan] unknown_module = \"block\"` makes it critical."
            }
            SH_UNLISTED => {
                "A shell step runs a command that is not on the shell allow-list (`[commands]` of `rules/prescan/shell/`), or a shell function of its own. Always critical: a shell step runs only what the list names."
            }
            _ => return None,
        })
    }
}

/// Most findings one rule reports for one file.
const MAX_FINDINGS_PER_RULE: usize = 20;
/// Longest snippet kept.
const MAX_SNIPPET_CHARS: usize = 160;

/// The pre-scanner: usable alone, and inside [`crate::PreScanLayer`].
///
/// ```
/// use skillgate_prescan::{PreScanner, Verdict};
/// use skillgate_core::Language;
/// let scanner = PreScanner::new().unwrap();
/// let report = scanner.scan(b"import os as o\no.system('id')\n", Language::Python);
/// assert_eq!(report.verdict, Verdict::Block);
/// assert!(report.findings.iter().any(|f| f.rule_id == "py.process.os-exec"));
/// let report = scanner.scan(b"import json\nprint(json.dumps({}))\n", Language::Python);
/// assert_eq!(report.verdict, Verdict::Allow);
/// ```
#[derive(Debug, Clone)]
pub struct PreScanner {
    rules: RuleSource,
    options: ScanOptions,
    cache: Option<Arc<crate::VerdictCache>>,
}

/// A scanner's rules: loaded, or the embedded packs, parsed when a scan first needs them.
#[derive(Debug, Clone)]
enum RuleSource {
    Loaded(Arc<RuleSet>),
    Embedded(Arc<EmbeddedRules>),
}

/// The embedded packs, known by their digest before they are parsed.
#[derive(Debug)]
struct EmbeddedRules {
    digest: [u8; 32],
    set: std::sync::OnceLock<Result<RuleSet, String>>,
}

impl PreScanner {
    /// A scanner with the embedded default packs and default options.
    pub fn new() -> Result<PreScanner, crate::RuleError> {
        Ok(PreScanner::with_rules(
            Arc::new(RuleSet::embedded()?),
            ScanOptions::default(),
        ))
    }

    /// A scanner with these rules and options.
    pub fn with_rules(rules: Arc<RuleSet>, options: ScanOptions) -> PreScanner {
        PreScanner {
            rules: RuleSource::Loaded(rules),
            options,
            cache: None,
        }
    }

    /// A scanner with the embedded default packs and these options, which parses the packs
    /// only when a scan first needs them: a verdict found in the cache
    /// ([`with_cache`](Self::with_cache)) needs only their digest. A fresh process that
    /// runs a skill it has scanned before (`skillgate run`) skips the parse. Should the
    /// packs ever fail to load, every scan is blocked (`prescan.rules-invalid`) and
    /// [`rules`](Self::rules) shows none.
    ///
    /// ```
    /// use skillgate_prescan::{PreScanner, ScanOptions, Verdict};
    /// use skillgate_core::Language;
    /// let scanner = PreScanner::embedded(ScanOptions::default());
    /// let report = scanner.scan(b"import os\nos.system('id')\n", Language::Python);
    /// assert_eq!(report.verdict, Verdict::Block);
    /// ```
    pub fn embedded(options: ScanOptions) -> PreScanner {
        PreScanner {
            rules: RuleSource::Embedded(Arc::new(EmbeddedRules {
                digest: crate::rules::embedded_digest(),
                set: std::sync::OnceLock::new(),
            })),
            options,
            cache: None,
        }
    }

    /// The rules, parsing the embedded packs if this is their first use.
    fn loaded(&self) -> Result<&RuleSet, &str> {
        match &self.rules {
            RuleSource::Loaded(set) => Ok(set),
            RuleSource::Embedded(e) => e
                .set
                .get_or_init(|| RuleSet::embedded().map_err(|e| e.to_string()))
                .as_ref()
                .map_err(String::as_str),
        }
    }

    /// The digest of the rules ([`RuleSet::digest`]), known without parsing them.
    pub fn rules_digest(&self) -> &[u8; 32] {
        match &self.rules {
            RuleSource::Loaded(set) => set.digest(),
            RuleSource::Embedded(e) => &e.digest,
        }
    }

    /// Whether the rules are parsed (always, but for [`embedded`](Self::embedded) before
    /// its first scan).
    #[cfg(test)]
    pub(crate) fn rules_parsed(&self) -> bool {
        match &self.rules {
            RuleSource::Loaded(_) => true,
            RuleSource::Embedded(e) => e.set.get().is_some(),
        }
    }

    /// The same scanner, keeping the findings of every skill it scans in `cache` and
    /// reusing them for a skill with the same content ([`scan_skill_cached`](Self::scan_skill_cached)).
    pub fn with_cache(mut self, cache: crate::VerdictCache) -> PreScanner {
        self.cache = Some(Arc::new(cache));
        self
    }

    /// [`scan_skill`](Self::scan_skill), through the cache when the scanner has one: the
    /// findings stored for the same scanner, rules, options and skill content, else a scan
    /// whose findings are then stored.
    pub fn scan_skill_cached(&self, skill: &Skill) -> ScanReport {
        let Some(cache) = &self.cache else {
            return self.scan_skill(skill);
        };
        let key = crate::VerdictCache::key(self, skill);
        if let Some(findings) = cache.get(&key) {
            return ScanReport {
                verdict: self.verdict(&findings),
                findings,
            };
        }
        let report = self.scan_skill(skill);
        cache.put(&key, &report.findings);
        report
    }

    /// The rules.
    pub fn rules(&self) -> &RuleSet {
        self.loaded().unwrap_or_else(|_| RuleSet::none())
    }

    /// The options.
    pub fn options(&self) -> &ScanOptions {
        &self.options
    }

    /// Scans `code` written in `lang`. Never panics; code that cannot be scanned is
    /// blocked with a finding saying why.
    pub fn scan(&self, code: &[u8], lang: Language) -> ScanReport {
        let findings = match self.analyse(code, lang, &|_| Resolution::Unknown) {
            Ok(f) => f,
            Err(f) => vec![*f],
        };
        self.decide(findings)
    }

    /// Scans a whole skill: its entry script and every other file of kind
    /// [`FileKind::Code`], each in its own language. An import that resolves to one of
    /// these files is local, not "unlisted": in Python a module beneath the entry's folder
    /// (`sys.path[0]`: `helper` is `helper.py` or `helper/__init__.py` there); in
    /// JavaScript a relative specifier (`./helper`, with the extensions and `index` files
    /// Node tries) naming a code file or a `.json` file. A relative specifier naming any
    /// other data file is blocked (`prescan.data-as-code`: Node would run it as
    /// JavaScript); an import that resolves to nothing is unlisted as before. Findings come
    /// file by file, the entry first; those of another file start with its path.
    ///
    /// ```
    /// use skillgate_core::{FileKind, Language, Skill};
    /// use skillgate_prescan::{PreScanner, Verdict};
    /// let skill = Skill::builder("s", Language::Python, b"import helper\n".to_vec())
    ///     .entry("scripts/main.py")
    ///     .file("scripts/helper.py", FileKind::Code(Language::Python), b"import subprocess\n".to_vec())
    ///     .build();
    /// let report = PreScanner::new().unwrap().scan_skill(&skill);
    /// assert_eq!(report.verdict, Verdict::Block);
    /// assert!(report.findings[0].message.starts_with("scripts/helper.py: "));
    /// ```
    pub fn scan_skill(&self, skill: &Skill) -> ScanReport {
        let mut findings = Vec::new();
        for (i, (path, report)) in self.scan_skill_files(skill).into_iter().enumerate() {
            let mut found = report.findings;
            if i > 0 {
                for f in &mut found {
                    f.message = format!("{path}: {}", f.message);
                }
            }
            findings.append(&mut found);
        }
        ScanReport {
            verdict: self.verdict(&findings),
            findings,
        }
    }

    /// As [`scan_skill`](Self::scan_skill), one report per code file (the entry first,
    /// then the others in path order), with local imports resolved the same way: what
    /// `skillgate skill check` shows line by line.
    pub fn scan_skill_files(&self, skill: &Skill) -> Vec<(String, ScanReport)> {
        let code_files = skill.files.iter().filter_map(|f| match f.kind {
            FileKind::Code(lang) => Some((f.path.as_str(), &f.bytes[..], lang)),
            FileKind::Data => None,
        });
        let sources: Vec<(&str, &[u8], Language)> =
            std::iter::once((skill.entry.as_str(), &skill.code[..], skill.language))
                .chain(code_files)
                .collect();
        let tree = LocalFiles {
            code: sources.iter().map(|s| s.0).collect(),
            all: skill
                .files
                .iter()
                .map(|f| f.path.as_str())
                .chain([skill.entry.as_str()])
                .collect(),
            entry_dir: parent_of(&skill.entry),
        };
        sources
            .iter()
            .map(|&(path, code, lang)| {
                let resolve = |m: &str| tree.resolve(m, lang, path);
                let mut found = match self.analyse(code, lang, &resolve) {
                    Ok(f) => f,
                    Err(f) => vec![*f],
                };
                sort_by_location(&mut found);
                (path.to_string(), self.decide(found))
            })
            .collect()
    }

    /// Scans several pieces of code, on as many threads as there are cores (each thread
    /// with its own parser); the reports come back in input order.
    ///
    /// ```
    /// use skillgate_prescan::{PreScanner, Verdict};
    /// use skillgate_core::Language;
    /// let scanner = PreScanner::new().unwrap();
    /// let inputs: [(&[u8], Language); 2] = [
    ///     (b"import json\n", Language::Python),
    ///     (b"require('child_process').exec('id')\n", Language::JavaScript),
    /// ];
    /// let reports = scanner.scan_all(&inputs);
    /// assert_eq!(reports[0].verdict, Verdict::Allow);
    /// assert_eq!(reports[1].verdict, Verdict::Block);
    /// ```
    pub fn scan_all(&self, inputs: &[(&[u8], Language)]) -> Vec<ScanReport> {
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(inputs.len());
        if threads <= 1 {
            return inputs
                .iter()
                .map(|&(code, lang)| self.scan(code, lang))
                .collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut done: Vec<(usize, ScanReport)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(&(code, lang)) = inputs.get(i) else {
                                return out;
                            };
                            out.push((i, self.scan(code, lang)));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| match w.join() {
                    Ok(reports) => reports,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        });
        done.sort_unstable_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, r)| r).collect()
    }

    /// The semantic facts of `code` (for debugging rules), or the finding that says why
    /// there are none.
    pub fn facts(&self, code: &[u8], lang: Language) -> Result<Vec<Fact>, Box<Finding>> {
        let src = self.check_source(code)?;
        let tree = self.parse(src, lang)?;
        let free = &self.rules_or_finding()?.compiled(lang).free;
        extract(
            &tree,
            src.as_bytes(),
            lang,
            self.options.limits.max_depth,
            free,
        )
        .map(|(facts, _)| facts)
    }

    /// The rules, or the finding that blocks a scan without them.
    fn rules_or_finding(&self) -> Result<&RuleSet, Box<Finding>> {
        self.loaded().map_err(|e| {
            Box::new(engine_finding(
                engine_rules::RULES_INVALID,
                format!("the built-in rule packs cannot be loaded: {e}"),
            ))
        })
    }

    fn decide(&self, mut findings: Vec<Finding>) -> ScanReport {
        sort_by_location(&mut findings);
        ScanReport {
            verdict: self.verdict(&findings),
            findings,
        }
    }

    fn verdict(&self, findings: &[Finding]) -> Verdict {
        if findings
            .iter()
            .any(|f| f.severity >= self.options.threshold || f.rule_id.starts_with("prescan."))
        {
            Verdict::Block
        } else if findings.is_empty() {
            Verdict::Allow
        } else {
            Verdict::Warn
        }
    }

    fn check_source<'c>(&self, code: &'c [u8]) -> Result<&'c str, Box<Finding>> {
        if code.len() > self.options.limits.max_bytes {
            return Err(engine(
                engine_rules::TOO_LARGE,
                format!(
                    "the code is {} bytes, more than the {}-byte limit of the pre-scan",
                    code.len(),
                    self.options.limits.max_bytes
                ),
            ));
        }
        std::str::from_utf8(code).map_err(|e| {
            engine(
                engine_rules::NOT_UTF8,
                format!("the code is not valid UTF-8 (at byte {})", e.valid_up_to()),
            )
        })
    }

    fn parse(&self, src: &str, lang: Language) -> Result<Tree, Box<Finding>> {
        thread_local! {
            /// One parser per language and thread, reused across scans.
            static PARSERS: RefCell<[Option<Parser>; 3]> =
                const { RefCell::new([None, None, None]) };
        }
        PARSERS.with(|cell| {
            let Ok(mut parsers) = cell.try_borrow_mut() else {
                // Re-entered from inside a parse: use a parser of its own.
                return self.parse_with(&mut None, src, lang);
            };
            self.parse_with(&mut parsers[lang as usize], src, lang)
        })
    }

    fn parse_with(
        &self,
        slot: &mut Option<Parser>,
        src: &str,
        lang: Language,
    ) -> Result<Tree, Box<Finding>> {
        let parser = match slot {
            Some(p) => p,
            None => {
                let mut parser = Parser::new();
                parser.set_language(&ts_language(lang)).map_err(|e| {
                    engine(
                        engine_rules::PARSE_ERROR,
                        format!("the {lang} grammar cannot be loaded: {e}"),
                    )
                })?;
                slot.insert(parser)
            }
        };
        // A parse cut short (timeout) leaves state behind; start every parse clean.
        parser.reset();
        let started = Instant::now();
        let timeout = self.options.limits.parse_timeout;
        let mut timed_out = false;
        let mut progress = |_: &tree_sitter::ParseState| {
            timed_out = started.elapsed() > timeout;
            timed_out
        };
        let bytes = src.as_bytes();
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            None,
            Some(tree_sitter::ParseOptions::new().progress_callback(&mut progress)),
        );
        match tree {
            Some(t) => Ok(t),
            None if timed_out => Err(engine(
                engine_rules::TIMEOUT,
                format!(
                    "parsing took longer than the {} ms limit",
                    timeout.as_millis()
                ),
            )),
            None => Err(engine(
                engine_rules::PARSE_ERROR,
                "the parser gave up".to_string(),
            )),
        }
    }

    fn analyse(
        &self,
        code: &[u8],
        lang: Language,
        resolve: &dyn Fn(&str) -> Resolution,
    ) -> Result<Vec<Finding>, Box<Finding>> {
        let src = self.check_source(code)?;
        let tree = self.parse(src, lang)?;
        let root = tree.root_node();
        let lines = LineIndex::new(src);
        let max_depth = self.options.limits.max_depth;
        if root.has_error() {
            // Too deep is reported before a syntax error; otherwise the extraction walk
            // itself bounds the depth.
            check_depth(root, max_depth)?;
            let bad = first_error(root);
            return Err(Box::new(
                engine_finding(
                    engine_rules::PARSE_ERROR,
                    format!("the code is not valid {lang}: a syntax error"),
                )
                .with_location(lines.location(bad.start_byte(), bad.end_byte()))
                .with_snippet(lines.snippet(bad.start_byte(), bad.end_byte())),
            ));
        }
        let rules = self.rules_or_finding()?;
        let compiled = rules.compiled(lang);
        let (facts, imports) = extract(&tree, src.as_bytes(), lang, max_depth, &compiled.free)?;
        let mut hits: Vec<(usize, usize, usize)> = Vec::new(); // (rule, start, end)
        for fact in &facts {
            for r in rules.rules_for_fact(compiled, &fact.name) {
                hits.push((r, fact.start, fact.end));
            }
        }
        let plan = compiled.plan().map_err(|e| {
            engine(
                engine_rules::RULES_INVALID,
                format!("the {lang} rule queries cannot be used: {e}"),
            )
        })?;
        if let Some(plan) = plan.filter(|p| p.possible(src)) {
            let query = &plan.query;
            let hit_idx = query.capture_index_for_name("hit");
            let mut cursor = QueryCursor::new();
            cursor.set_match_limit(10_000);
            let mut matches = cursor.matches(query, root, src.as_bytes());
            while let Some(m) = matches.next() {
                let Some(&rule) = plan.pattern_rule.get(m.pattern_index) else {
                    continue;
                };
                let cap = m
                    .captures
                    .iter()
                    .find(|c| Some(c.index) == hit_idx)
                    .or(m.captures.first());
                if let Some(c) = cap {
                    hits.push((rule, c.node.start_byte(), c.node.end_byte()));
                }
            }
        }
        hits.sort_unstable();
        hits.dedup_by_key(|h| (h.0, h.1));
        let mut per_rule: std::collections::HashMap<usize, usize> =
            std::collections::HashMap::new();
        let mut findings = Vec::new();
        let mut covered: Vec<(usize, usize)> = Vec::new();
        for (r, start, end) in hits {
            let n = per_rule.entry(r).or_default();
            *n += 1;
            if *n > MAX_FINDINGS_PER_RULE {
                continue;
            }
            let rule = &rules.rules()[r];
            if rule.severity >= Severity::Medium {
                covered.push((start, end));
            }
            findings.push(
                Finding::new(
                    LayerName::Prescan,
                    rule.id.clone(),
                    rule.severity,
                    rule.message.clone(),
                )
                .with_location(lines.location(start, end))
                .with_snippet(lines.snippet(start, end)),
            );
        }
        let mut reported = HashSet::new();
        for (module, start, end) in imports {
            match resolve(&module) {
                Resolution::Local => continue,
                Resolution::Data(path) => {
                    if reported.insert(module.clone()) {
                        findings.push(
                            engine_finding(
                                engine_rules::DATA_AS_CODE,
                                format!("`{module}` loads the data file `{path}` as code"),
                            )
                            .with_location(lines.location(start, end))
                            .with_snippet(lines.snippet(start, end)),
                        );
                    }
                    continue;
                }
                Resolution::Unknown => {}
            }
            if is_allowed(&compiled.allowed, &module, lang)
                || covered
                    .iter()
                    .any(|&(s, e)| s <= start && end <= e || start <= s && e <= end)
                || !reported.insert(module.clone())
            {
                continue;
            }
            let (id, sev) = match (lang, self.options.unknown_module) {
                (Language::Python, UnknownModuleAction::Warn) => {
                    (engine_rules::PY_UNLISTED, Severity::Low)
                }
                (Language::Python, UnknownModuleAction::Block) => {
                    (engine_rules::PY_UNLISTED, Severity::Critical)
                }
                (Language::JavaScript, UnknownModuleAction::Warn) => {
                    (engine_rules::JS_UNLISTED, Severity::Low)
                }
                (Language::JavaScript, UnknownModuleAction::Block) => {
                    (engine_rules::JS_UNLISTED, Severity::Critical)
                }
                // A command is run, not imported: nothing off the list runs, whatever
                // `unknown_module` says.
                (Language::Shell, _) => (engine_rules::SH_UNLISTED, Severity::Critical),
            };
            let what = match lang {
                Language::Shell => "command",
                _ => "module",
            };
            findings.push(
                Finding::new(
                    LayerName::Prescan,
                    id,
                    sev,
                    format!("{what} `{module}` is not on the allow-list"),
                )
                .with_location(lines.location(start, end))
                .with_snippet(lines.snippet(start, end)),
            );
        }
        Ok(findings)
    }
}

fn sort_by_location(findings: &mut [Finding]) {
    findings.sort_by_key(|f| f.location.map(|l| (l.line, l.column)).unwrap_or_default());
}

/// Where an import leads among a skill's own files.
enum Resolution {
    /// To a file the pre-scan reads as code (or, in JavaScript, to a `.json` file).
    Local,
    /// To this data file, which the interpreter would load as code.
    Data(String),
    /// Not to a file of the skill.
    Unknown,
}

/// A skill's files, for resolving its local imports.
struct LocalFiles<'a> {
    /// The entry and every code file.
    code: HashSet<&'a str>,
    /// Every file.
    all: HashSet<&'a str>,
    /// The entry's folder: Python's `sys.path[0]`.
    entry_dir: &'a str,
}

impl LocalFiles<'_> {
    fn resolve(&self, module: &str, lang: Language, importer: &str) -> Resolution {
        match lang {
            Language::Shell => Resolution::Unknown,
            Language::Python => {
                let parts: Vec<&str> = module.split('.').collect();
                let found = (1..=parts.len()).any(|n| {
                    let base = join(self.entry_dir, &parts[..n].join("/"));
                    self.code.contains(format!("{base}.py").as_str())
                        || self.code.contains(format!("{base}/__init__.py").as_str())
                });
                if found {
                    Resolution::Local
                } else {
                    Resolution::Unknown
                }
            }
            Language::JavaScript => {
                if !(module.starts_with("./") || module.starts_with("../")) {
                    return Resolution::Unknown;
                }
                let Some(base) = normalize(&join(parent_of(importer), module)) else {
                    return Resolution::Unknown;
                };
                const TRIED: [&str; 9] = [
                    "",
                    ".js",
                    ".mjs",
                    ".cjs",
                    ".json",
                    "/index.js",
                    "/index.mjs",
                    "/index.cjs",
                    "/index.json",
                ];
                for suffix in TRIED {
                    let candidate = format!("{base}{suffix}");
                    if self.code.contains(candidate.as_str())
                        || candidate.ends_with(".json") && self.all.contains(candidate.as_str())
                    {
                        return Resolution::Local;
                    }
                    if self.all.contains(candidate.as_str()) {
                        return Resolution::Data(candidate);
                    }
                }
                Resolution::Unknown
            }
        }
    }
}

/// `scripts/main.py` → `scripts`; `main.py` → ``.
fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Resolves `.` and `..` in a `/`-separated relative path; `None` when it leaves the top.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out.join("/"))
}

/// Whether `module` or one of its parents is allowed.
fn is_allowed(allowed: &HashSet<String>, module: &str, lang: Language) -> bool {
    let module = module.strip_prefix("node:").unwrap_or(module);
    let sep = match lang {
        Language::Python => '.',
        Language::JavaScript => '/',
        // A command is allowed by its exact name.
        Language::Shell => return allowed.contains(module),
    };
    let mut prefix = module;
    loop {
        if allowed.contains(prefix) {
            return true;
        }
        match prefix.rfind(sep) {
            Some(i) => prefix = &prefix[..i],
            None => return false,
        }
    }
}

type Extracted = (Vec<Fact>, Vec<(String, usize, usize)>);

fn extract(
    tree: &Tree,
    src: &[u8],
    lang: Language,
    max_depth: usize,
    free: &FreeNames,
) -> Result<Extracted, Box<Finding>> {
    let mut ctx = Ctx::new(src, free);
    let walked = match lang {
        Language::Python => crate::python::extract(tree.root_node(), max_depth, &mut ctx),
        Language::JavaScript => crate::javascript::extract(tree.root_node(), max_depth, &mut ctx),
        Language::Shell => crate::shell::extract(tree.root_node(), max_depth, &mut ctx),
    };
    if let Err(n) = walked {
        return Err(too_deep(n, max_depth));
    }
    if ctx.exhausted() {
        return Err(engine(
            engine_rules::TOO_COMPLEX,
            "the code produces too many facts to analyse".into(),
        ));
    }
    Ok((ctx.facts, ctx.imports))
}

fn check_depth(root: Node<'_>, max: usize) -> Result<(), Box<Finding>> {
    walk(root, max, |_, _, _| true).map_err(|n| too_deep(n, max))
}

/// The finding for a node nested deeper than `max`.
fn too_deep(n: Node<'_>, max: usize) -> Box<Finding> {
    Box::new(
        engine_finding(
            engine_rules::TOO_DEEP,
            format!("the code is nested deeper than {max} levels"),
        )
        .at(
            n.start_position().row as u32 + 1,
            n.start_position().column as u32 + 1,
        ),
    )
}

fn first_error(root: Node<'_>) -> Node<'_> {
    let mut found = None;
    let _ = walk(root, usize::MAX, |n, _, _| {
        if found.is_none() && (n.is_error() || n.is_missing()) {
            found = Some(n);
        }
        true
    });
    found.unwrap_or(root)
}

fn engine_finding(id: &str, message: String) -> Finding {
    Finding::new(LayerName::Prescan, id, Severity::Critical, message)
}

fn engine(id: &str, message: String) -> Box<Finding> {
    Box::new(engine_finding(id, message))
}

/// Byte offsets to 1-based lines and character columns.
pub(crate) struct LineIndex<'s> {
    src: &'s str,
    starts: Vec<usize>,
}

impl<'s> LineIndex<'s> {
    pub(crate) fn new(src: &'s str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { src, starts }
    }

    fn point(&self, byte: usize) -> (u32, u32) {
        let line = self
            .starts
            .partition_point(|&s| s <= byte)
            .saturating_sub(1);
        let start = self.starts[line];
        let col = self
            .src
            .get(start..byte.min(self.src.len()))
            .map_or(byte.saturating_sub(start), |t| t.chars().count());
        (line as u32 + 1, col as u32 + 1)
    }

    pub(crate) fn location(&self, start: usize, end: usize) -> Location {
        let (line, column) = self.point(start);
        let (el, ec) = self.point(end);
        Location {
            line,
            column,
            end_line: Some(el),
            end_column: Some(ec),
        }
    }

    pub(crate) fn snippet(&self, start: usize, end: usize) -> String {
        let text = self.src.get(start..end).unwrap_or_default();
        let first = text.lines().next().unwrap_or_default();
        let mut s: String = first.chars().take(MAX_SNIPPET_CHARS).collect();
        if first.chars().count() > MAX_SNIPPET_CHARS || text.lines().nth(1).is_some() {
            s.push('…');
        }
        s
    }
}
