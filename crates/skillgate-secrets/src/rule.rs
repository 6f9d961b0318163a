//! The rule format (`rules/secrets/*.toml`) and its compiled form.
//!
//! ```toml
//! [[rule]]
//! id = "aws-access-key-id"            # kebab-case, unique across all files
//! description = "AWS access key id"
//! keywords = ["AKIA", "ASIA"]         # prefilter, matched case-insensitively
//! regex = '''\b((?:AKIA|ASIA)[A-Z2-7]{16})\b'''
//! secret_group = 1                    # optional, see below
//! entropy = 3.0                       # optional minimum Shannon entropy (bits per byte)
//! window = 256                        # optional bytes scanned either side of a keyword hit
//! severity = "high"                   # optional (default high)
//! allowlist = { stopwords = ["EXAMPLE"], regexes = ['''^AKIAIOSFODNN7EXAMPLE$'''] }
//! references = ["https://docs.aws.amazon.com/"]
//! examples = ['''aws_access_key_id = AKIAZ3MSJV4WXQ7LTN2H''']
//! negative_examples = ['''AKIAIOSFODNN7EXAMPLE''']
//! ```
//!
//! - `secret_group` defaults to 1 when the regex has a capture group and to 0 (the whole
//!   match) when it has none.
//! - `window` (default [`DEFAULT_WINDOW`]) is how far before the start and after the end of
//!   a keyword hit the rule's regex looks; a match that reaches the window's end is extended
//!   to its full length, so the window only needs to cover where a match may *start*.
//! - Allow-list `stopwords` drop a secret that contains one of them (case-insensitively);
//!   allow-list `regexes` drop a secret they match (unanchored unless the regex anchors).
//! - Rules whose id starts with `generic-` are *generic*: they also pass the shape guards
//!   (UUIDs, hashes, code) and yield to a provider rule that finds the same secret.
use crate::entropy::shannon_entropy;
use regex_automata::meta::{self, Regex};
use regex_automata::util::syntax;
use serde::{Deserialize, Serialize};
use skillgate_core::Severity;
use std::sync::OnceLock;

/// Bytes scanned either side of a keyword hit when a rule does not say.
pub const DEFAULT_WINDOW: usize = 256;
/// The largest `window` a rule may ask for.
pub const MAX_WINDOW: usize = 64 * 1024;

/// One rule file: a list of `[[rule]]` tables.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// The rules.
    #[serde(default)]
    pub rule: Vec<RuleDef>,
}

/// A rule as written in a rule file.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    /// Unique kebab-case id.
    pub id: String,
    /// One line saying what the secret is.
    pub description: String,
    /// Prefilter keywords (case-insensitive). Empty: the regex runs over all the text.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The `regex::bytes` syntax pattern.
    pub regex: String,
    /// The capture group holding the secret (default: 1 if the regex has groups, else 0).
    #[serde(default)]
    pub secret_group: Option<usize>,
    /// Minimum Shannon entropy of the secret, in bits per byte.
    #[serde(default)]
    pub entropy: Option<f64>,
    /// Bytes scanned either side of a keyword hit.
    #[serde(default)]
    pub window: Option<usize>,
    /// How serious a leak is (default high).
    #[serde(default)]
    pub severity: Option<Severity>,
    /// Values that are never secrets.
    #[serde(default)]
    pub allowlist: Allowlist,
    /// Where the format is documented.
    #[serde(default)]
    pub references: Vec<String>,
    /// Text that must produce a finding of this rule.
    #[serde(default)]
    pub examples: Vec<String>,
    /// Text that must not produce a finding of this rule.
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

/// A rule's allow-list.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    /// A secret containing one of these (case-insensitively) is not reported.
    #[serde(default)]
    pub stopwords: Vec<String>,
    /// A secret matching one of these is not reported.
    #[serde(default)]
    pub regexes: Vec<String>,
}

/// A rule that could not be compiled, naming the rule and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("rule `{id}`: {message}")]
pub struct RuleError {
    /// The rule id (or `?` when it has none).
    pub id: String,
    /// What is wrong.
    pub message: String,
}

/// A rule, ready to scan with. Its regexes are compiled when it is loaded
/// ([`Rule::compile`]) or, for the embedded default pack, the first time the scanner needs
/// them (a keyword of the rule hit): building every rule's automata at every start would
/// cost more than the run of a small skill.
#[derive(Debug, Clone)]
pub struct Rule {
    pub(crate) def: RuleDef,
    pub(crate) window: usize,
    pub(crate) severity: Severity,
    pub(crate) generic: bool,
    stopwords: Vec<Vec<u8>>,
    patterns: OnceLock<Result<Patterns, RuleError>>,
}

/// A rule's compiled regexes and what compiling them tells.
#[derive(Debug, Clone)]
pub(crate) struct Patterns {
    pub(crate) regex: Regex,
    pub(crate) group: usize,
    /// The regex has the generic assignment shape (see [`assignment_shape`]): a keyword
    /// hit not followed by an assignment operator cannot be part of a match.
    pub(crate) assignment: bool,
    allow_regexes: Vec<Regex>,
}

/// Compiles a `regex::bytes`-syntax pattern: Unicode off when the pattern allows it (faster,
/// and secrets are ASCII), on otherwise.
pub(crate) fn compile_regex(pattern: &str) -> Result<Regex, String> {
    compile_regex_mode(pattern).map(|(re, _)| re)
}

/// Like [`compile_regex`], also saying whether Unicode mode was needed.
fn compile_regex_mode(pattern: &str) -> Result<(Regex, bool), String> {
    let build = |unicode: bool| -> Result<Regex, String> {
        Regex::builder()
            .syntax(syntax::Config::new().unicode(unicode).utf8(false))
            .configure(
                meta::Config::new()
                    .utf8_empty(false)
                    .nfa_size_limit(Some(16 << 20)),
            )
            .build(pattern)
            .map_err(|e| format!("invalid regex `{pattern}`: {e}"))
    };
    build(false)
        .map(|re| (re, false))
        .or_else(|_| build(true).map(|re| (re, true)))
}

/// How the generic assignment rules begin, up to their keyword alternation.
const ASSIGNMENT_HEAD: &str = r#"(?i)(?:^|[\s"'`{,;(\[&?])[A-Za-z0-9_.-]*?(?:"#;
/// What follows their keyword alternation: an optional suffix, an optional quote,
/// whitespace, an assignment operator, whitespace, an optional quote and a value of at
/// least 8 bytes of [`is_value_byte`].
const ASSIGNMENT_TAIL: &str = r#")(?:[_.-]?(?:key|value|token|str|string))?["']?\s*(?::=|=>|:|=)\s*["']?([A-Za-z0-9!#$%&*+./:<>?@^_~-]{8,"#;
/// The optional name suffixes of [`ASSIGNMENT_TAIL`].
const ASSIGNMENT_SUFFIXES: [&[u8]; 5] = [b"key", b"value", b"token", b"str", b"string"];
/// The shortest value [`ASSIGNMENT_TAIL`] accepts.
const ASSIGNMENT_MIN_VALUE: usize = 8;

/// The value bytes of [`ASSIGNMENT_TAIL`]: `[A-Za-z0-9!#$%&*+./:<>?@^_~-]`.
fn is_value_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&*+./:<>?@^_~-".contains(&b)
}

/// `\s` without Unicode.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

/// Whether a regex (compiled without Unicode) has the generic assignment shape
/// `ASSIGNMENT_HEAD alternatives ASSIGNMENT_TAIL ...` where every alternative is a plain
/// word or two words joined by `[_.-]?`, and every spelling of it is one of the rule's
/// keywords. Then every match contains a keyword hit of the prefilter that
/// [`assignment_follows`].
fn assignment_shape(def: &RuleDef) -> bool {
    let Some(rest) = def.regex.strip_prefix(ASSIGNMENT_HEAD) else {
        return false;
    };
    let Some(end) = rest.find(ASSIGNMENT_TAIL) else {
        return false;
    };
    let is_keyword = |w: &str| def.keywords.iter().any(|k| k.eq_ignore_ascii_case(w));
    let is_word =
        |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let alternatives = &rest[..end];
    !alternatives.is_empty()
        && alternatives
            .split('|')
            .all(|a| match a.split_once("[_.-]?") {
                None => is_word(a) && is_keyword(a),
                Some((x, y)) => {
                    is_word(x)
                        && is_word(y)
                        && ["", "_", ".", "-"]
                            .iter()
                            .all(|sep| is_keyword(&format!("{x}{sep}{y}")))
                }
            })
}

/// Whether the rest of the generic assignment shape can follow a keyword hit ending at
/// `at`: an optional suffix (`_key`, `value`, ...), an optional quote, whitespace, an
/// assignment operator, whitespace, an optional quote, then at least 8 value bytes. This
/// is exactly what [`ASSIGNMENT_TAIL`] requires, so a hit that fails it is in no match.
///
/// ```text
/// db_password_value" = hunter2!!   -> true
/// password_hash FROM users         -> false
/// "token_type": "bearer"           -> false
/// ```
pub(crate) fn assignment_follows(hay: &[u8], at: usize) -> bool {
    let at_suffix = |p: usize, w: &[u8]| {
        hay.get(p..p + w.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(w))
    };
    let mut names = [at; 11];
    let mut len = 1;
    for sep in [false, true] {
        if sep && !matches!(hay.get(at), Some(b'_' | b'.' | b'-')) {
            continue;
        }
        let p = at + usize::from(sep);
        for w in ASSIGNMENT_SUFFIXES {
            if at_suffix(p, w) {
                names[len] = p + w.len();
                len += 1;
            }
        }
    }
    names[..len].iter().any(|&p| {
        let mut q = p;
        if matches!(hay.get(q), Some(b'"' | b'\'')) {
            q += 1;
        }
        while hay.get(q).is_some_and(|&b| is_space(b)) {
            q += 1;
        }
        let two = matches!(hay.get(q..q + 2), Some(b":=" | b"=>"));
        let one = matches!(hay.get(q), Some(b':' | b'='));
        (one && value_follows(hay, q + 1)) || (two && value_follows(hay, q + 2))
    })
}

/// Where a match of an assignment rule using the keyword hit at `kstart` must start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AssignmentStart {
    /// At this offset (a delimiter before the name, or 0 for `^`).
    At(usize),
    /// Nowhere: the name holding the keyword follows a byte that is not a delimiter.
    None,
    /// Before `lo`: the name is longer than the window, search the window as it is.
    BeyondWindow,
}

/// `[\s"'`{,;(\[&?]`: what may precede a name in [`ASSIGNMENT_HEAD`].
fn is_name_delimiter(b: u8) -> bool {
    is_space(b) || b"\"'`{,;([&?".contains(&b)
}

/// `[A-Za-z0-9_.-]`: the bytes of a name in [`ASSIGNMENT_HEAD`].
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Where a match of an assignment rule containing the keyword hit at `kstart` starts: the
/// head `(?:^|delimiter)name*?` puts only name bytes between the start and the keyword,
/// and a delimiter is never a name byte, so it is the nearest byte before `kstart` that
/// is not a name byte (or the start of `hay`), looked for no further back than `lo`.
pub(crate) fn assignment_start(hay: &[u8], kstart: usize, lo: usize) -> AssignmentStart {
    let mut p = kstart;
    while p > lo && is_name_byte(hay[p - 1]) {
        p -= 1;
    }
    if p == 0 {
        return AssignmentStart::At(0);
    }
    if p == lo {
        return AssignmentStart::BeyondWindow;
    }
    if is_name_delimiter(hay[p - 1]) {
        AssignmentStart::At(p - 1)
    } else {
        AssignmentStart::None
    }
}

/// Whitespace, an optional quote, then at least [`ASSIGNMENT_MIN_VALUE`] value bytes.
fn value_follows(hay: &[u8], mut at: usize) -> bool {
    while hay.get(at).is_some_and(|&b| is_space(b)) {
        at += 1;
    }
    if matches!(hay.get(at), Some(b'"' | b'\'')) {
        at += 1;
    }
    hay.get(at..)
        .and_then(|rest| rest.get(..ASSIGNMENT_MIN_VALUE))
        .is_some_and(|v| v.iter().all(|&b| is_value_byte(b)))
}

/// A [`RuleError`] of `def` (named `?` when it has no id).
fn rule_error(def: &RuleDef, message: String) -> RuleError {
    RuleError {
        id: if def.id.is_empty() {
            "?".into()
        } else {
            def.id.clone()
        },
        message,
    }
}

impl Patterns {
    /// Compiles the regex and allow-list regexes of `def`, and checks its `secret_group`.
    fn compile(def: &RuleDef) -> Result<Patterns, RuleError> {
        let err = |message: String| rule_error(def, message);
        let (regex, unicode) = compile_regex_mode(&def.regex).map_err(err)?;
        let assignment = !unicode && assignment_shape(def);
        let groups = regex
            .group_info()
            .group_len(regex_automata::PatternID::ZERO);
        let group = def.secret_group.unwrap_or(if groups > 1 { 1 } else { 0 });
        if group >= groups {
            return Err(err(format!(
                "secret_group {group} does not exist (the regex has {} capture groups)",
                groups - 1
            )));
        }
        let allow_regexes = def
            .allowlist
            .regexes
            .iter()
            .map(|r| compile_regex(r).map_err(|m| err(format!("allowlist: {m}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Patterns {
            regex,
            group,
            assignment,
            allow_regexes,
        })
    }
}

impl Rule {
    /// Compiles a rule definition.
    ///
    /// ```
    /// use skillgate_secrets::{Rule, RuleDef};
    /// let def: RuleDef = toml::from_str(r#"
    ///     id = "demo"
    ///     description = "demo token"
    ///     keywords = ["demo_"]
    ///     regex = '''\b(demo_[a-z0-9]{8})\b'''
    /// "#).unwrap();
    /// let rule = Rule::compile(def).unwrap();
    /// assert_eq!(rule.id(), "demo");
    /// ```
    pub fn compile(def: RuleDef) -> Result<Rule, RuleError> {
        let rule = Rule::deferred(def)?;
        let patterns = Patterns::compile(&rule.def)?;
        rule.patterns
            .set(Ok(patterns))
            .expect("a rule just checked has no patterns yet");
        Ok(rule)
    }

    /// Checks a rule definition but leaves its regexes to be compiled on first use
    /// ([`Rule::patterns`]). Only for rules whose regexes are known to compile: the
    /// embedded default pack, which the crate's tests compile in full.
    pub(crate) fn deferred(def: RuleDef) -> Result<Rule, RuleError> {
        let err = |message: String| rule_error(&def, message);
        if def.id.is_empty()
            || !def
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(err(
                "the id must be non-empty kebab-case (a-z, 0-9, -)".into()
            ));
        }
        if def.keywords.iter().any(|k| k.is_empty()) {
            return Err(err("a keyword is empty".into()));
        }
        if let Some(e) = def.entropy
            && !(0.0..=8.0).contains(&e)
        {
            return Err(err(format!("entropy {e} is outside 0..=8 bits per byte")));
        }
        let window = def.window.unwrap_or(DEFAULT_WINDOW);
        if window == 0 || window > MAX_WINDOW {
            return Err(err(format!("window {window} is outside 1..={MAX_WINDOW}")));
        }
        let stopwords = def
            .allowlist
            .stopwords
            .iter()
            .map(|s| s.to_ascii_lowercase().into_bytes())
            .collect();
        Ok(Rule {
            severity: def.severity.unwrap_or(Severity::High),
            generic: def.id.starts_with("generic-"),
            window,
            stopwords,
            patterns: OnceLock::new(),
            def,
        })
    }

    /// The rule's compiled regexes, compiled now if they were deferred; an error names the
    /// rule and the pattern that does not compile.
    pub(crate) fn patterns(&self) -> Result<&Patterns, &RuleError> {
        self.patterns
            .get_or_init(|| Patterns::compile(&self.def))
            .as_ref()
    }

    /// Whether the rule's regexes have been compiled (eagerly, or by a scan that needed
    /// them).
    pub fn is_compiled(&self) -> bool {
        self.patterns.get().is_some()
    }

    /// The same rule with the assignment precheck off, for tests.
    #[cfg(test)]
    pub(crate) fn without_assignment_precheck(&mut self) {
        let _ = self.patterns();
        if let Some(Ok(p)) = self.patterns.get_mut() {
            p.assignment = false;
        }
    }

    /// The rule id.
    pub fn id(&self) -> &str {
        &self.def.id
    }

    /// The rule's description.
    pub fn description(&self) -> &str {
        &self.def.description
    }

    /// The definition it was compiled from.
    pub fn def(&self) -> &RuleDef {
        &self.def
    }

    /// How serious a leak of this secret is.
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// Whether the secret passes the rule's entropy threshold and allow-list.
    pub(crate) fn accepts(&self, patterns: &Patterns, secret: &[u8]) -> bool {
        if secret.is_empty() {
            return false;
        }
        if let Some(min) = self.def.entropy
            && shannon_entropy(secret) < min
        {
            return false;
        }
        if !self.stopwords.is_empty() {
            let lower = secret.to_ascii_lowercase();
            if self
                .stopwords
                .iter()
                .any(|w| memchr::memmem::find(&lower, w).is_some())
            {
                return false;
            }
        }
        !patterns.allow_regexes.iter().any(|r| r.is_match(secret))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_generic_assignment_rules_get_the_operator_precheck() {
        let set = crate::RuleSet::default_pack().unwrap();
        for id in [
            "generic-password-assignment",
            "generic-secret-assignment",
            "generic-token-assignment",
        ] {
            assert!(set.get(id).unwrap().patterns().unwrap().assignment, "{id}");
        }
        assert!(
            !set.get("aws-access-key-id")
                .unwrap()
                .patterns()
                .unwrap()
                .assignment
        );
    }

    #[test]
    fn an_assignment_with_a_value_must_follow_the_keyword() {
        let t = b"password_value\"  = hunter2!x";
        assert!(assignment_follows(t, 8));
        assert!(assignment_follows(b"token:x1234567", 5));
        assert!(assignment_follows(b"token\n\t=> 'x1234567'", 5));
        assert!(assignment_follows(b"TOKEN_KEY := \"x1234567\"", 5));
        assert!(assignment_follows(b"token.string'=>x1234567", 5));
        assert!(assignment_follows(b"tokenstr=x1234567", 5));
        assert!(assignment_follows(b"token=>x1234567", 5));
        assert!(assignment_follows(b"token: :1234567", 5));
        assert!(!assignment_follows(b"token:x123456", 5), "value too short");
        assert!(!assignment_follows(b"token: \"x12 4567\"", 5));
        assert!(!assignment_follows(b"password_hash FROM users", 8));
        assert!(!assignment_follows(b"\"token_type\": \"bearer\"", 6));
        assert!(!assignment_follows(b"token_string_value=x1234567", 5));
        assert!(!assignment_follows(b"token__key=x1234567", 5));
        assert!(!assignment_follows(b"token", 5));
        assert!(!assignment_follows(b"token=", 5));
    }

    #[test]
    fn the_api_key_rule_gets_the_precheck_through_its_joined_words() {
        let set = crate::RuleSet::default_pack().unwrap();
        assert!(
            set.get("generic-api-key-assignment")
                .unwrap()
                .patterns()
                .unwrap()
                .assignment
        );
    }

    #[test]
    fn every_match_of_an_assignment_rule_has_a_keyword_hit_that_passes_the_precheck() {
        let set = crate::RuleSet::default_pack().unwrap();
        let rules: Vec<&Rule> = set
            .rules()
            .iter()
            .filter(|r| r.patterns().unwrap().assignment)
            .collect();
        assert!(rules.len() >= 4);
        let mut matches = 0;
        for text in crate::testing::soup(&crate::testing::ASSIGNMENT_PIECES, 0x9E37, 4000, 24) {
            let lower = text.to_ascii_lowercase();
            for rule in &rules {
                for m in rule.patterns().unwrap().regex.find_iter(&text) {
                    matches += 1;
                    let ok = rule.def.keywords.iter().any(|k| {
                        let k = k.to_ascii_lowercase();
                        (m.start()..m.end()).any(|s| {
                            lower[s..m.end()].starts_with(k.as_bytes())
                                && assignment_follows(&text, s + k.len())
                        })
                    });
                    assert!(
                        ok,
                        "{}: {:?}",
                        rule.id(),
                        String::from_utf8_lossy(&text[m.range()])
                    );
                }
            }
        }
        assert!(matches > 100, "only {matches} matches");
    }
}
