//! A set of compiled rules and the keyword prefilter over all of them.
use crate::prefilter::KeywordFilter;
use crate::rule::{Rule, RuleDef, RuleError, RuleFile};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A rule pack that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RuleSetError {
    /// A rule file could not be read.
    #[error("cannot read rule file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A rule file is not valid TOML in the rule format.
    #[error("invalid rule file {origin}: {message}")]
    Parse {
        /// The file.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A rule does not compile.
    #[error("{origin}: {source}")]
    Rule {
        /// The file.
        origin: String,
        /// The rule's error.
        #[source]
        source: RuleError,
    },
    /// Two rules share an id.
    #[error("duplicate rule id `{id}` in {origin} (first defined in {first})")]
    Duplicate {
        /// The id.
        id: String,
        /// Where it appears again.
        origin: String,
        /// Where it was first defined.
        first: String,
    },
    /// The keyword automaton could not be built.
    #[error("cannot build the keyword prefilter: {0}")]
    Prefilter(String),
    /// A rule's own example is not found, or its negative example is.
    #[error("rule `{id}` in {origin}: {message}")]
    Example {
        /// The file.
        origin: String,
        /// The rule id.
        id: String,
        /// Which example, and what happened.
        message: String,
    },
}

/// Compiled rules plus the one keyword prefilter over all their keywords.
///
/// ```
/// let rules = skillgate_secrets::RuleSet::default_pack().unwrap();
/// assert!(rules.len() >= 40);
/// assert!(rules.get("aws-access-key-id").is_some());
/// ```
#[derive(Debug, Clone)]
pub struct RuleSet {
    rules: Vec<Rule>,
    origins: Vec<String>,
    prefilter: Option<KeywordFilter>,
    /// For each keyword pattern of the prefilter, the rules that listed it.
    keyword_rules: Vec<Vec<u32>>,
    /// Rules without keywords: their regex runs over all the text.
    unkeyed: Vec<u32>,
    max_window: usize,
}

impl RuleSet {
    /// An empty set (finds nothing).
    pub fn empty() -> Self {
        RuleSet::build(Vec::new(), Vec::new()).expect("an empty set always builds")
    }

    /// The default pack embedded at build time from `rules/secrets/*.toml`.
    pub fn default_pack() -> Result<Self, RuleSetError> {
        RuleSetBuilder::with_default_pack()?.build()
    }

    /// Loads one or more rule files (without the default pack).
    pub fn from_files<P: AsRef<Path>>(paths: &[P]) -> Result<Self, RuleSetError> {
        let mut b = RuleSetBuilder::new();
        for p in paths {
            b.add_file(p.as_ref())?;
        }
        b.build()
    }

    /// A set of these rules, for tests.
    #[cfg(test)]
    pub(crate) fn from_rules(rules: Vec<Rule>) -> Result<Self, RuleSetError> {
        let origins = vec!["(test)".to_string(); rules.len()];
        RuleSet::build(rules, origins)
    }

    fn build(rules: Vec<Rule>, origins: Vec<String>) -> Result<Self, RuleSetError> {
        let mut keyword_index: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut keywords: Vec<Vec<u8>> = Vec::new();
        let mut keyword_rules: Vec<Vec<u32>> = Vec::new();
        let mut unkeyed = Vec::new();
        let mut max_window = 0;
        for (i, rule) in rules.iter().enumerate() {
            max_window = max_window.max(rule.window);
            if rule.def.keywords.is_empty() {
                unkeyed.push(i as u32);
            }
            for k in &rule.def.keywords {
                let k = k.to_ascii_lowercase().into_bytes();
                let idx = *keyword_index.entry(k.clone()).or_insert_with(|| {
                    keywords.push(k);
                    keyword_rules.push(Vec::new());
                    keywords.len() - 1
                });
                if !keyword_rules[idx].contains(&(i as u32)) {
                    keyword_rules[idx].push(i as u32);
                }
            }
        }
        let prefilter = if keywords.is_empty() {
            None
        } else {
            Some(KeywordFilter::new(keywords).map_err(RuleSetError::Prefilter)?)
        };
        Ok(RuleSet {
            rules,
            origins,
            prefilter,
            keyword_rules,
            unkeyed,
            max_window,
        })
    }

    /// Checks the examples of the rules in `range` (see [`RuleSetBuilder::build`]); the
    /// first failure is the error. `skillgate rules test` runs it over every rule.
    pub fn check_examples(&self, range: std::ops::Range<usize>) -> Result<(), RuleSetError> {
        let scanner = crate::SecretScanner::new(self.clone());
        for i in range {
            let rule = &self.rules[i];
            let fail = |message: String| RuleSetError::Example {
                origin: self.origins[i].clone(),
                id: rule.id().to_string(),
                message,
            };
            let hits = |text: &str| {
                scanner
                    .scan(text.as_bytes())
                    .iter()
                    .any(|f| f.rule_id == rule.id())
            };
            for ex in &rule.def().examples {
                if !hits(ex) {
                    return Err(fail(format!("example {ex:?} is not found by the rule")));
                }
            }
            for ex in &rule.def().negative_examples {
                if hits(ex) {
                    return Err(fail(format!(
                        "negative example {ex:?} is found by the rule"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, in load order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id() == id)
    }

    /// The file a rule came from (by index in [`rules`](Self::rules)).
    pub fn origin(&self, index: usize) -> Option<&str> {
        self.origins.get(index).map(String::as_str)
    }

    pub(crate) fn prefilter(&self) -> Option<&KeywordFilter> {
        self.prefilter.as_ref()
    }

    pub(crate) fn keyword_rules(&self, pattern: usize) -> &[u32] {
        &self.keyword_rules[pattern]
    }

    pub(crate) fn unkeyed(&self) -> &[u32] {
        &self.unkeyed
    }

    /// The same rules with the assignment prechecks turned off: every keyword hit of an
    /// assignment rule is searched in its window (the reference the prechecks are tested
    /// against).
    #[cfg(test)]
    pub(crate) fn without_assignment_prechecks(&self) -> RuleSet {
        let mut set = self.clone();
        for r in &mut set.rules {
            r.without_assignment_precheck();
        }
        set
    }

    /// The largest window of any rule.
    pub fn max_window(&self) -> usize {
        self.max_window
    }
}

/// Collects rules from several sources, then builds a [`RuleSet`]. Ids must be unique.
///
/// ```
/// use skillgate_secrets::RuleSetBuilder;
/// let mut b = RuleSetBuilder::with_default_pack().unwrap();
/// b.add_toml(r#"
///     [[rule]]
///     id = "acme-token"
///     description = "ACME internal token"
///     keywords = ["acme_"]
///     regex = '''\b(acme_[a-z0-9]{20})\b'''
/// "#, "acme.toml").unwrap();
/// let set = b.build().unwrap();
/// assert!(set.get("acme-token").is_some());
/// ```
#[derive(Debug, Default)]
pub struct RuleSetBuilder {
    rules: Vec<Rule>,
    origins: Vec<String>,
    seen: BTreeMap<String, String>,
    /// The first rules, built in, whose examples the test suite checks (not each load).
    builtin: usize,
}

impl RuleSetBuilder {
    /// No rules yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from the embedded default pack.
    /// Its rules' regexes are compiled when a scan first needs them (the crate's tests
    /// compile them all, and check every rule's examples).
    pub fn with_default_pack() -> Result<Self, RuleSetError> {
        let mut b = RuleSetBuilder::new();
        for (name, json) in crate::DEFAULT_PACK_JSON {
            let origin = format!("rules/secrets/{name}");
            let file: RuleFile = serde_json::from_str(json).map_err(|e| RuleSetError::Parse {
                origin: origin.clone(),
                message: e.to_string(),
            })?;
            b.add_rules(file, &origin, Rule::deferred)?;
        }
        b.builtin = b.rules.len();
        Ok(b)
    }

    /// Adds the rules of a rule file in the skillgate format.
    pub fn add_file(&mut self, path: &Path) -> Result<&mut Self, RuleSetError> {
        let text = std::fs::read_to_string(path).map_err(|source| RuleSetError::Read {
            path: path.display().to_string(),
            source,
        })?;
        self.add_toml(&text, &path.display().to_string())
    }

    /// Adds the rules of rule-file text; `origin` names it in errors.
    pub fn add_toml(&mut self, text: &str, origin: &str) -> Result<&mut Self, RuleSetError> {
        let file: RuleFile = toml::from_str(text).map_err(|e| RuleSetError::Parse {
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        self.add_rules(file, origin, Rule::compile)
    }

    /// Adds the rules of a rule file, each made a [`Rule`] by `make`.
    fn add_rules(
        &mut self,
        file: RuleFile,
        origin: &str,
        make: fn(RuleDef) -> Result<Rule, RuleError>,
    ) -> Result<&mut Self, RuleSetError> {
        for def in file.rule {
            self.add_made(def, origin, make)?;
        }
        Ok(self)
    }

    /// Adds one rule definition.
    pub fn add_def(&mut self, def: RuleDef, origin: &str) -> Result<&mut Self, RuleSetError> {
        self.add_made(def, origin, Rule::compile)
    }

    fn add_made(
        &mut self,
        def: RuleDef,
        origin: &str,
        make: fn(RuleDef) -> Result<Rule, RuleError>,
    ) -> Result<&mut Self, RuleSetError> {
        if let Some(first) = self.seen.get(&def.id) {
            return Err(RuleSetError::Duplicate {
                id: def.id,
                origin: origin.to_string(),
                first: first.clone(),
            });
        }
        let rule = make(def).map_err(|source| RuleSetError::Rule {
            origin: origin.to_string(),
            source,
        })?;
        self.seen.insert(rule.id().to_string(), origin.to_string());
        self.rules.push(rule);
        self.origins.push(origin.to_string());
        Ok(self)
    }

    /// Builds the set, and checks the `examples` and `negative_examples` of every rule
    /// that is not built in against the whole set: each example must produce a finding
    /// of its rule, no negative example may. (The built-in pack's examples are checked by
    /// its test suite, since they cannot change after the build: about 0.6k examples
    /// would otherwise be scanned at every start.)
    pub fn build(self) -> Result<RuleSet, RuleSetError> {
        let builtin = self.builtin;
        let set = RuleSet::build(self.rules, self.origins)?;
        if set.len() > builtin {
            set.check_examples(builtin..set.len())?;
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_time_json_of_the_default_pack_is_its_toml() {
        assert_eq!(crate::DEFAULT_PACK.len(), crate::DEFAULT_PACK_JSON.len());
        let mut rules = 0;
        for ((name, toml_text), (json_name, json)) in
            crate::DEFAULT_PACK.iter().zip(crate::DEFAULT_PACK_JSON)
        {
            assert_eq!(name, json_name);
            let from_toml: RuleFile = toml::from_str(toml_text).unwrap();
            let from_json: RuleFile = serde_json::from_str(json).unwrap();
            assert_eq!(from_toml.rule, from_json.rule, "{name}");
            rules += from_toml.rule.len();
        }
        assert_eq!(RuleSet::default_pack().unwrap().len(), rules);
    }
}
