//! Which query patterns can possibly match a source, decided from its text alone.
//!
//! A pattern with `(#eq? @capture "literal")`, where the capture always holds at least one
//! node, only matches when some node's text is exactly `literal`, so `literal` must occur
//! in the source. Running a query cursor walks the whole tree; when no pattern of a
//! language's query can match, the walk is skipped. The test is conservative: anything
//! the reader does not fully understand (escapes, other predicates, optional captures)
//! requires nothing, and the pattern runs.
use tree_sitter::{CaptureQuantifier, Query};

/// The literals each pattern of `query` needs in the source (any one missing rules the
/// pattern out).
pub(crate) fn required_literals(query: &Query, source: &str) -> Vec<Vec<String>> {
    (0..query.pattern_count())
        .map(|p| {
            let text = source
                .get(query.start_byte_for_pattern(p)..query.end_byte_for_pattern(p))
                .unwrap_or_default();
            eq_predicates(text)
                .into_iter()
                .filter(|(capture, _)| {
                    query
                        .capture_index_for_name(capture)
                        .and_then(|i| query.capture_quantifiers(p).get(i as usize))
                        .is_some_and(|q| {
                            matches!(q, CaptureQuantifier::One | CaptureQuantifier::OneOrMore)
                        })
                })
                .map(|(_, literal)| literal)
                .filter(|l| !l.is_empty())
                .collect()
        })
        .collect()
}

/// Whether any pattern can match `src`.
pub(crate) fn any_possible(literals: &[Vec<String>], src: &str) -> bool {
    literals
        .iter()
        .any(|needs| needs.iter().all(|l| src.contains(l.as_str())))
}

/// The `(#eq? @capture "literal")` predicates of a pattern's text, skipping comments and
/// strings elsewhere. Literals with escapes are left out.
fn eq_predicates(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b';' => {
                // A comment runs to the end of the line.
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => i = skip_string(b, i),
            b'(' => {
                if let Some((capture, literal, end)) = eq_at(text, i + 1) {
                    out.push((capture, literal));
                    i = end;
                    continue;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Index just past the string that starts at `start` (a `"`).
fn skip_string(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// `#eq? @capture "literal")` at `at` (just after a `(`): the capture name, the literal
/// and the index past the closing parenthesis.
fn eq_at(text: &str, at: usize) -> Option<(String, String, usize)> {
    let rest = text.get(at..)?.trim_start();
    let rest = rest.strip_prefix("#eq?")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('@')?;
    let name_len = rest
        .find(|c: char| c.is_whitespace() || c == ')' || c == '"')
        .unwrap_or(rest.len());
    let (capture, rest) = rest.split_at(name_len);
    let rest = rest.trim_start().strip_prefix('"')?;
    let close = rest.find('"')?;
    let literal = &rest[..close];
    if literal.contains('\\') || capture.is_empty() {
        return None;
    }
    let after = rest[close + 1..].trim_start().strip_prefix(')')?;
    let end = text.len() - after.len();
    Some((capture.to_string(), literal.to_string(), end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(q: &str) -> Vec<Vec<String>> {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let query = Query::new(&lang, q).expect("query");
        required_literals(&query, q)
    }

    #[test]
    fn a_required_literal_is_found() {
        let lits = py(
            r#"((call arguments: (argument_list (keyword_argument name: (identifier) @k value: (true)))) @hit (#eq? @k "allow_pickle"))"#,
        );
        assert_eq!(lits, vec![vec!["allow_pickle".to_string()]]);
        assert!(!any_possible(&lits, "np.load(f)\n"));
        assert!(any_possible(&lits, "np.load(f, allow_pickle=True)\n"));
    }

    #[test]
    fn optional_captures_and_other_predicates_require_nothing() {
        assert_eq!(
            py(
                r#"((call function: (identifier) @f arguments: (argument_list (identifier)? @a)) (#eq? @a "x"))"#
            ),
            vec![Vec::<String>::new()]
        );
        assert_eq!(
            py(r#"((identifier) @f (#not-eq? @f "x"))"#),
            vec![Vec::<String>::new()]
        );
        assert_eq!(
            py(r#"((identifier) @f (#match? @f "^x$"))"#),
            vec![Vec::<String>::new()]
        );
        assert_eq!(
            py(r#"((identifier) @f (#eq? @f "a\"b"))"#),
            vec![Vec::<String>::new()]
        );
        // A pattern without predicates can always match.
        let lits = py("(call) @hit");
        assert!(any_possible(&lits, ""));
    }

    #[test]
    fn comments_and_strings_are_not_predicates() {
        let lits = py(
            "((identifier) @f\n ; (#eq? @f \"commented\")\n (#eq? @f \"live\"))\n((string) @s (#eq? @s \"(#eq? @s \\\"no\\\")\"))",
        );
        assert_eq!(lits, vec![vec!["live".to_string()], Vec::<String>::new()]);
    }

    #[test]
    fn one_possible_pattern_runs_the_query() {
        let lits = py(r#"((identifier) @a (#eq? @a "alpha"))
((identifier) @b (#eq? @b "beta"))"#);
        assert!(!any_possible(&lits, "gamma = 1"));
        assert!(any_possible(&lits, "beta = 1"));
    }
}
