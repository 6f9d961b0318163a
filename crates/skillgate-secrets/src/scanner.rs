//! The scanner: keyword prefilter, per-rule regexes in windows, decoders, guards.
use crate::decode::{Encoding, for_each_segment};
use crate::guards;
use crate::rule::{AssignmentStart, Patterns, Rule, assignment_follows, assignment_start};
use crate::ruleset::{RuleSet, RuleSetError};
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input};
use serde::{Deserialize, Serialize};
use skillgate_core::Severity;
use std::sync::Arc;

/// How many encodings deep the scanner looks by default (base64 inside a JSON string is
/// two).
pub const DEFAULT_DECODE_DEPTH: usize = 2;
/// How far past its window a match may be extended.
const MAX_EXTEND: usize = 64 * 1024;
/// Longest secret any rule reports in streaming mode.
pub(crate) const MAX_SECRET: usize = 16 * 1024;

/// A leaked secret: where it is and which rule found it. Never the secret itself, only a
/// masked [`preview`](Self::preview).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretFinding {
    /// The rule that matched.
    pub rule_id: String,
    /// The rule's description.
    pub description: String,
    /// How serious it is.
    pub severity: Severity,
    /// 1-based line of the start.
    pub line: u32,
    /// 1-based column (in characters) of the start.
    pub column: u32,
    /// Byte offset of the first byte (of the encoded text, when a decoding revealed it).
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
    /// The secret's first few characters followed by `*`s.
    pub preview: String,
    /// The decodings (outermost first) that revealed the secret; empty when it was in
    /// plain sight.
    pub decoded_from: Vec<Encoding>,
}

/// A match before positions are resolved into lines and columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) rule: u32,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) preview: String,
    pub(crate) decoded_from: Vec<Encoding>,
}

/// The masked preview of a secret: up to four leading characters, then one `*` for each
/// further byte (at most 12).
///
/// ```
/// assert_eq!(skillgate_secrets::mask(b"AKIAZ3MSJV4WXQ7LTN2H"), "AKIA************");
/// assert_eq!(skillgate_secrets::mask(b"hunter2"), "h******");
/// ```
pub fn mask(secret: &[u8]) -> String {
    let shown = (secret.len() / 4).min(4);
    let mut s: String = secret[..shown]
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '?' })
        .collect();
    s.extend(std::iter::repeat_n('*', (secret.len() - shown).min(12)));
    s
}

/// Scans bytes for secrets with a [`RuleSet`].
///
/// ```
/// let scanner = skillgate_secrets::SecretScanner::default_pack().unwrap();
/// let found = scanner.scan(b"{\"aws\": \"AKIAZ3MSJV4WXQ7LTN2H\"}");
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].rule_id, "aws-access-key-id");
/// assert_eq!((found[0].line, found[0].column, found[0].start), (1, 10, 9));
/// assert!(!found[0].preview.contains("XQ7LTN2H"));
/// ```
#[derive(Debug, Clone)]
pub struct SecretScanner {
    rules: Arc<RuleSet>,
    depth: usize,
}

impl SecretScanner {
    /// A scanner over `rules`, decoding to [`DEFAULT_DECODE_DEPTH`].
    pub fn new(rules: RuleSet) -> Self {
        SecretScanner {
            rules: Arc::new(rules),
            depth: DEFAULT_DECODE_DEPTH,
        }
    }

    /// A scanner over the embedded default pack.
    pub fn default_pack() -> Result<Self, RuleSetError> {
        Ok(Self::new(RuleSet::default_pack()?))
    }

    /// Sets how many encodings deep to look (0 turns decoding off).
    pub fn with_decode_depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }

    /// The rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Every secret in `hay`, ordered by position.
    pub fn scan(&self, hay: &[u8]) -> Vec<SecretFinding> {
        let cands = self.candidates(hay);
        let mut pos = Positions::new(0, 0);
        cands
            .into_iter()
            .map(|c| self.finding(c, hay, &mut pos))
            .collect()
    }

    /// Whether `hay` holds any secret.
    pub fn is_clean(&self, hay: &[u8]) -> bool {
        self.candidates(hay).is_empty()
    }

    pub(crate) fn finding(&self, c: Candidate, hay: &[u8], pos: &mut Positions) -> SecretFinding {
        let rule = &self.rules.rules()[c.rule as usize];
        let (line, column) = pos.locate(hay, c.start);
        SecretFinding {
            rule_id: rule.id().to_string(),
            description: rule.description().to_string(),
            severity: rule.severity(),
            line,
            column,
            start: c.start + pos.base,
            end: c.end + pos.base,
            preview: c.preview,
            decoded_from: c.decoded_from,
        }
    }

    /// Candidates in `hay`, resolved (one per secret) and sorted by position.
    pub(crate) fn candidates(&self, hay: &[u8]) -> Vec<Candidate> {
        let mut out = Vec::new();
        self.collect(hay, self.depth, &mut out);
        self.resolve(out)
    }

    fn collect(&self, hay: &[u8], depth: usize, out: &mut Vec<Candidate>) {
        let rules = self.rules.rules();
        let n = hay.len();
        let mut windows: Vec<(u32, usize, usize)> = Vec::new();
        // Assignment rules: (rule, match start, window end), searched anchored.
        let mut anchored: Vec<(u32, usize, usize)> = Vec::new();
        if let Some(filter) = self.rules.prefilter() {
            filter.for_each(hay, |k, kstart, kend| {
                for &r in self.rules.keyword_rules(k) {
                    let rule = &rules[r as usize];
                    let w = rule.window;
                    let (lo, hi) = (kstart.saturating_sub(w), (kend + w).min(n));
                    let Ok(patterns) = rule.patterns() else {
                        // Fail closed: a rule whose regex does not compile (never one of
                        // the tested default pack) takes its whole window as a secret.
                        out.push(unscannable(r, lo, hi));
                        continue;
                    };
                    if patterns.assignment {
                        if !assignment_follows(hay, kend) {
                            // No match of the rule contains this keyword hit.
                            continue;
                        }
                        match assignment_start(hay, kstart, lo) {
                            AssignmentStart::At(d) => {
                                anchored.push((r, d, hi));
                                continue;
                            }
                            AssignmentStart::None => continue,
                            AssignmentStart::BeyondWindow => {}
                        }
                    }
                    windows.push((r, lo, hi));
                }
            });
        }
        windows.sort_unstable();
        let mut state = SearchState::default();
        let mut i = 0;
        while i < windows.len() {
            let (r, start, mut end) = windows[i];
            i += 1;
            while i < windows.len() && windows[i].0 == r && windows[i].1 <= end {
                end = end.max(windows[i].2);
                i += 1;
            }
            search_window(&rules[r as usize], r, hay, start, end, out, &mut state);
        }
        // Every match of an assignment rule starts where the name holding its keyword
        // starts: searching anchored there, leftmost first and without overlaps, finds
        // what a search over the whole window finds, reading only the assignment.
        anchored.sort_unstable();
        anchored.dedup_by_key(|a| (a.0, a.1));
        let mut last: Option<(u32, usize)> = None;
        for &(r, d, end) in &anchored {
            if let Some((lr, at)) = last
                && lr == r
                && d < at
            {
                continue;
            }
            if let Some(m_end) = search_at(&rules[r as usize], r, hay, d, end, out, &mut state) {
                last = Some((r, m_end));
            }
        }
        for &r in self.rules.unkeyed() {
            search_window(&rules[r as usize], r, hay, 0, n, out, &mut state);
        }
        if depth > 0 {
            let mut inner = Vec::new();
            for_each_segment(hay, &mut |d| {
                self.collect(&d.bytes, depth - 1, &mut inner);
                for mut c in inner.drain(..) {
                    let src = d.source_range(c.start..c.end);
                    c.start = src.start;
                    c.end = src.end;
                    c.decoded_from.insert(0, d.encoding);
                    out.push(c);
                }
            });
        }
    }

    /// One candidate per secret: duplicates of a rule collapse (the plainest decoding
    /// wins), and a generic rule yields to a provider rule on the same bytes.
    fn resolve(&self, mut cands: Vec<Candidate>) -> Vec<Candidate> {
        let rules = self.rules.rules();
        cands.sort_by(|a, b| {
            (
                a.start,
                a.decoded_from.len(),
                std::cmp::Reverse(a.end),
                a.rule,
            )
                .cmp(&(
                    b.start,
                    b.decoded_from.len(),
                    std::cmp::Reverse(b.end),
                    b.rule,
                ))
        });
        // Provider rules first, so generic ones can yield to them. Kept candidates are
        // named by index and moved out at the end.
        let mut kept: Vec<usize> = Vec::with_capacity(cands.len());
        for pass_generic in [false, true] {
            for (i, c) in cands.iter().enumerate() {
                if rules[c.rule as usize].generic != pass_generic {
                    continue;
                }
                let overlaps = |k: &Candidate| k.start < c.end && c.start < k.end;
                let clash = kept.iter().rev().take(256).any(|&k| {
                    let k = &cands[k];
                    overlaps(k)
                        && (k.rule == c.rule || (pass_generic && !rules[k.rule as usize].generic))
                });
                if !clash {
                    kept.push(i);
                }
            }
            if !pass_generic {
                kept.sort_by_key(|&k| cands[k].start);
            }
        }
        kept.sort_by_key(|&k| (cands[k].start, cands[k].end, cands[k].rule));
        let mut slots: Vec<Option<Candidate>> = cands.into_iter().map(Some).collect();
        kept.iter().filter_map(|&k| slots[k].take()).collect()
    }
}

/// What the searches of one buffer share: the guards' line memo and the captures of the
/// rule searched last (searches come grouped by rule), so that they are not allocated
/// per search.
#[derive(Default)]
struct SearchState {
    minified: Option<guards::LineMemo>,
    caps: Option<(u32, Captures)>,
}

impl SearchState {
    /// Captures for rule `r`, and the line memo.
    fn parts(
        &mut self,
        r: u32,
        patterns: &Patterns,
    ) -> (&mut Captures, &mut Option<guards::LineMemo>) {
        if self.caps.as_ref().is_none_or(|(cr, _)| *cr != r) {
            self.caps = Some((r, patterns.regex.create_captures()));
        }
        let (_, caps) = self.caps.as_mut().expect("just set");
        (caps, &mut self.minified)
    }
}

fn search_window(
    rule: &Rule,
    r: u32,
    hay: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<Candidate>,
    state: &mut SearchState,
) {
    let Ok(patterns) = rule.patterns() else {
        out.push(unscannable(r, start, end));
        return;
    };
    let re = &patterns.regex;
    let (caps, minified) = state.parts(r, patterns);
    let mut at = start;
    while at < end {
        re.search_captures(&Input::new(hay).span(at..end), caps);
        let Some(m) = found(rule, patterns, r, hay, end, caps, out, minified) else {
            break;
        };
        at = if m.end > m.start { m.end } else { m.end + 1 };
    }
}

/// The match of `rule` that starts at `at` (searched up to `end`, extended past it when
/// it reaches it), if any, as [`search_window`] reports it; returns where it ends.
fn search_at(
    rule: &Rule,
    r: u32,
    hay: &[u8],
    at: usize,
    end: usize,
    out: &mut Vec<Candidate>,
    state: &mut SearchState,
) -> Option<usize> {
    let Ok(patterns) = rule.patterns() else {
        out.push(unscannable(r, at, end));
        return None;
    };
    let re = &patterns.regex;
    let (caps, minified) = state.parts(r, patterns);
    let input = Input::new(hay).span(at..end).anchored(Anchored::Yes);
    re.search_captures(&input, caps);
    let m = found(rule, patterns, r, hay, end, caps, out, minified)?;
    Some(if m.end > m.start { m.end } else { m.end + 1 })
}

/// Given the result of a search that ended at `end`: extends a match cut short by `end`,
/// reports its secret when the rule and the guards accept it, and returns the match.
#[allow(clippy::too_many_arguments)]
fn found(
    rule: &Rule,
    patterns: &Patterns,
    r: u32,
    hay: &[u8],
    end: usize,
    caps: &mut Captures,
    out: &mut Vec<Candidate>,
    minified: &mut Option<guards::LineMemo>,
) -> Option<std::ops::Range<usize>> {
    let re = &patterns.regex;
    let m = caps.get_match()?;
    if m.end() == end && end < hay.len() {
        // The window may have cut the match short: let it run to its natural end.
        let limit = (m.start() + MAX_EXTEND).min(hay.len());
        let input = Input::new(hay)
            .span(m.start()..limit)
            .anchored(Anchored::Yes);
        re.search_captures(&input, caps);
    }
    let m = caps.get_match()?;
    if let Some(g) = caps.get_group(patterns.group) {
        let secret = &hay[g.start..g.end];
        if rule.accepts(patterns, secret)
            && guards::benign(hay, g.start, g.end, rule.generic, minified).is_none()
        {
            out.push(Candidate {
                rule: r,
                start: g.start,
                end: g.end,
                preview: mask(secret),
                decoded_from: Vec::new(),
            });
        }
    }
    Some(m.range())
}

/// The candidate of a rule that cannot search `start..end` because its regex does not
/// compile: all of it, so that it is redacted or blocked rather than passed unscanned.
fn unscannable(r: u32, start: usize, end: usize) -> Candidate {
    Candidate {
        rule: r,
        start,
        end,
        preview: "(rule does not compile)".into(),
        decoded_from: Vec::new(),
    }
}

/// Turns byte offsets into 1-based lines and character columns, walking forward.
#[derive(Debug, Clone)]
pub(crate) struct Positions {
    /// Absolute offset of the buffer's first byte.
    pub(crate) base: usize,
    /// Newlines before `cursor` (plus those before the buffer).
    lines: u32,
    /// Buffer offset up to which newlines are counted.
    cursor: usize,
    /// Buffer offset where the current line starts (None: before the buffer).
    line_start: Option<usize>,
    /// Characters between the start of the line and the buffer's start, when the line
    /// started before the buffer.
    carried_chars: u32,
}

impl Positions {
    pub(crate) fn new(lines_before: u32, chars_before_on_line: u32) -> Self {
        Positions {
            base: 0,
            lines: lines_before,
            cursor: 0,
            line_start: None,
            carried_chars: chars_before_on_line,
        }
    }

    pub(crate) fn locate(&mut self, hay: &[u8], at: usize) -> (u32, u32) {
        if at < self.cursor {
            // Out of order: recount from the buffer start.
            let saved_base = self.base;
            let mut fresh = Positions::new(self.lines_at_start(hay), self.carried_chars);
            fresh.base = saved_base;
            *self = fresh;
        }
        let seg = &hay[self.cursor..at];
        let nl = memchr::memchr_iter(b'\n', seg).count() as u32;
        if let Some(p) = memchr::memrchr(b'\n', seg) {
            self.line_start = Some(self.cursor + p + 1);
        }
        self.lines += nl;
        self.cursor = at;
        let (from, extra) = match self.line_start {
            Some(s) => (s, 0),
            None => (0, self.carried_chars),
        };
        let chars = hay[from..at]
            .iter()
            .filter(|&&b| (b & 0xC0) != 0x80)
            .count() as u32;
        (self.lines + 1, chars + extra + 1)
    }

    fn lines_at_start(&self, hay: &[u8]) -> u32 {
        self.lines - memchr::memchr_iter(b'\n', &hay[..self.cursor]).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn the_default_pack_compiles_a_rules_regex_only_when_its_keyword_hits() {
        let scanner = SecretScanner::default_pack().unwrap();
        let rules = scanner.rules().rules();
        assert!(
            rules.iter().all(|r| !r.is_compiled()),
            "nothing compiled at load"
        );
        let found = scanner.scan(b"aws_access_key_id = AKIAZ3MSJV4WXQ7LTN2H\n");
        assert_eq!(found[0].rule_id, "aws-access-key-id");
        let aws = scanner.rules().get("aws-access-key-id").unwrap();
        assert!(aws.is_compiled());
        let compiled = rules.iter().filter(|r| r.is_compiled()).count();
        assert!(compiled < rules.len() / 4, "{compiled} rules compiled");
        assert!(!scanner.rules().get("github-pat").unwrap().is_compiled());
    }

    #[test]
    fn every_rule_of_the_default_pack_compiles() {
        // Loading the embedded pack defers its regexes: this is where they are checked.
        for rule in SecretScanner::default_pack().unwrap().rules().rules() {
            if let Err(e) = rule.patterns() {
                panic!("{e}");
            }
        }
    }

    #[test]
    fn a_deferred_rule_whose_regex_does_not_compile_takes_its_window_as_a_secret() {
        let def: crate::RuleDef = toml::from_str(
            r#"
                id = "broken"
                description = "a regex that does not compile"
                keywords = ["tok_"]
                regex = '''(tok_[a-z'''
                window = 8
            "#,
        )
        .unwrap();
        assert!(
            Rule::compile(def.clone()).is_err(),
            "loading it eagerly fails"
        );
        let rule = Rule::deferred(def).unwrap();
        let scanner = SecretScanner::new(RuleSet::from_rules(vec![rule]).unwrap());
        let text = b"clean text, then tok_abcdef and more";
        let (redacted, found) = scanner.redact(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule_id, "broken");
        assert!(!String::from_utf8_lossy(&redacted).contains("tok_abcdef"));
        assert!(scanner.is_clean(b"nothing to see"));
    }

    #[test]
    fn assignment_prechecks_and_anchored_search_find_what_window_search_finds() {
        let fast = SecretScanner::default_pack().unwrap();
        let slow = SecretScanner::new(fast.rules().without_assignment_prechecks());
        let mut texts = testing::soup(&testing::ASSIGNMENT_PIECES, 0x5EED, 3000, 40);
        texts.extend(testing::corpus_texts());
        for r in fast.rules().rules() {
            texts.extend(r.def().examples.iter().map(|e| e.clone().into_bytes()));
            texts.extend(
                r.def()
                    .negative_examples
                    .iter()
                    .map(|e| e.clone().into_bytes()),
            );
        }
        let mut found = 0;
        for t in &texts {
            let want = slow.candidates(t);
            found += want.len();
            assert_eq!(fast.candidates(t), want, "{:?}", String::from_utf8_lossy(t));
        }
        assert!(found > 500, "only {found} candidates");
    }
}
