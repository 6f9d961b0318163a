//! The `secrets_planted` target: a secret from a rule's examples planted into arbitrary
//! text must be found by the whole-buffer scan and by the streaming scanner, wherever the
//! stream is split.
use arbitrary::{Arbitrary, Unstructured};
use skillgate_secrets::{SecretFinding, SecretScanner};
use std::sync::OnceLock;

/// What separates the planted example from the fuzz text around it. Every rule example is
/// a line of its own in the rule files, so a line break (or a blank) on each side is what
/// a real secret has around it in output. A blank alone is no separator for the examples
/// of a line-anchored rule (its regex is multi-line and anchored with `^` or `$`: "a
/// password on its own line"): with text on the same line it is another line, which the
/// rule means not to match; those get a line break instead.
pub const SEPARATORS: &[&str] = &["\n", "\r\n", "\n\n", " \n", "\n\t", " "];

/// Whether `regex` is anchored to lines (multi-line mode, with `^` or `$`).
pub fn line_anchored(regex: &str) -> bool {
    regex.contains("(?m)") && (regex.contains("(?m)^") || regex.contains('$'))
}

/// One planting: text before and after, which example, which separator, and the chunk
/// sizes the stream is fed in (cycled; 0 is read as 1).
#[derive(Debug, Arbitrary)]
pub struct Planting {
    /// Text before the example.
    pub before: Vec<u8>,
    /// Text after the example.
    pub after: Vec<u8>,
    /// The example (taken modulo the number of examples).
    pub example: u16,
    /// The separator (modulo [`SEPARATORS`]).
    pub separator: u8,
    /// The stream's chunk sizes.
    pub chunks: Vec<u16>,
}

/// An example to plant: its rule's id, the example, and whether the rule is
/// [`line_anchored`].
pub type Example = (String, String, bool);

/// The scanner with the default pack, and every rule's examples.
pub fn examples() -> &'static (SecretScanner, Vec<Example>) {
    static EXAMPLES: OnceLock<(SecretScanner, Vec<Example>)> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let scanner = SecretScanner::default_pack().expect("the default pack loads");
        let examples = scanner
            .rules()
            .rules()
            .iter()
            .flat_map(|r| {
                let anchored = line_anchored(&r.def().regex);
                r.def()
                    .examples
                    .iter()
                    .map(move |e| (r.id().to_string(), e.clone(), anchored))
            })
            .collect();
        (scanner, examples)
    })
}

/// What a planting found: the buffer, the planted span, the rule, and the findings of the
/// whole-buffer scan and of the stream.
#[derive(Debug)]
pub struct Outcome {
    /// The text scanned.
    pub text: Vec<u8>,
    /// Where the example is in `text`.
    pub span: std::ops::Range<usize>,
    /// The example's rule.
    pub rule: String,
    /// Whether the whole-buffer scan found a secret over the span.
    pub whole: bool,
    /// Whether the stream found one.
    pub streamed: bool,
}

fn covers(findings: &[SecretFinding], span: &std::ops::Range<usize>) -> bool {
    findings
        .iter()
        .any(|f| f.start < span.end && span.start < f.end)
}

/// Plants and scans.
pub fn plant(p: &Planting) -> Option<Outcome> {
    let (scanner, examples) = examples();
    if examples.is_empty() {
        return None;
    }
    let (rule, example, anchored) = &examples[usize::from(p.example) % examples.len()];
    let sep = match SEPARATORS[usize::from(p.separator) % SEPARATORS.len()] {
        " " if *anchored => "\n",
        sep => sep,
    }
    .as_bytes();
    let mut text = p.before.clone();
    text.extend_from_slice(sep);
    let start = text.len();
    text.extend_from_slice(example.as_bytes());
    let span = start..text.len();
    text.extend_from_slice(sep);
    text.extend_from_slice(&p.after);
    let whole = covers(&scanner.scan(&text), &span);
    let mut stream = scanner.stream();
    let mut found = Vec::new();
    let mut rest = &text[..];
    let mut sizes = p.chunks.iter().cycle();
    while !rest.is_empty() {
        let n = sizes
            .next()
            .map_or(rest.len(), |&n| usize::from(n).max(1))
            .min(rest.len());
        found.extend(stream.feed(&rest[..n]));
        rest = &rest[n..];
    }
    found.extend(stream.finish());
    let streamed = covers(&found, &span);
    Some(Outcome {
        text,
        span,
        rule: rule.clone(),
        whole,
        streamed,
    })
}

/// Decodes a planting from fuzz bytes.
pub fn planting(data: &[u8]) -> Option<Planting> {
    Planting::arbitrary_take_rest(Unstructured::new(data)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_is_found_planted_in_plain_text() {
        let (_, examples) = examples();
        assert!(examples.len() > 50, "only {} examples", examples.len());
        for i in 0..examples.len() {
            let p = Planting {
                before: b"log line one\nstatus: ok".to_vec(),
                after: b"done".to_vec(),
                example: i as u16,
                separator: 0,
                chunks: vec![7, 1, 300],
            };
            let o = plant(&p).unwrap();
            assert!(
                o.whole && o.streamed,
                "{} missed: {:?}",
                o.rule,
                String::from_utf8_lossy(&o.text)
            );
        }
    }

    /// Found by a campaign: `# REACT_APP_PASS=whiteduke` (a `password-config-line`
    /// example) planted with a blank on each side, mid-line, was "missed" by the rule for
    /// passwords on a line of their own. Such a rule's examples are now planted on a line.
    #[test]
    fn a_line_anchored_rules_example_is_planted_on_a_line_of_its_own() {
        let input = include_bytes!(
            "../../corpora/fuzz/secrets_planted/regression-anchored-rule-blank-separator"
        );
        let o = plant(&planting(input).unwrap()).unwrap();
        assert_eq!(o.rule, "password-config-line");
        assert!(
            o.whole && o.streamed,
            "{:?}",
            String::from_utf8_lossy(&o.text)
        );
        assert!(line_anchored(r"(?m)^[ \t]*x=([a-z]+)\r?$"));
        assert!(!line_anchored(r"(?i)password[=:]([a-z]+)"));
        assert!(!line_anchored(r"ghp_[A-Za-z0-9]{36}"));
    }
}
