//! Every rule of every file in `rules/secrets/` against its own examples and negative
//! examples, whole, streamed (split at every offset) and redacted.
use skillgate_secrets::{RuleSet, SecretFinding, SecretScanner, default_rule_files};
use std::collections::BTreeSet;

fn scanner() -> SecretScanner {
    SecretScanner::default_pack().expect("the default pack loads")
}

fn spans(found: &[SecretFinding]) -> BTreeSet<(String, usize, usize)> {
    found
        .iter()
        .map(|f| (f.rule_id.clone(), f.start, f.end))
        .collect()
}

#[test]
fn every_rule_file_loads_and_every_rule_is_documented() {
    let set = RuleSet::default_pack().unwrap();
    assert!(!default_rule_files().is_empty());
    assert!(set.len() >= 40, "only {} rules", set.len());
    for rule in set.rules() {
        let d = rule.def();
        assert!(
            !d.keywords.is_empty(),
            "{}: built-in rules need keywords",
            d.id
        );
        assert!(!d.examples.is_empty(), "{}: no examples", d.id);
        assert!(
            !d.negative_examples.is_empty(),
            "{}: no negative examples",
            d.id
        );
        assert!(!d.references.is_empty(), "{}: no references", d.id);
        assert!(!d.description.is_empty(), "{}: no description", d.id);
    }
}

#[test]
fn every_example_is_found_and_every_negative_example_is_not() {
    let s = scanner();
    let mut failures = Vec::new();
    for rule in s.rules().rules() {
        let id = rule.id();
        for ex in &rule.def().examples {
            let found = s.scan(ex.as_bytes());
            if !found.iter().any(|f| f.rule_id == id) {
                failures.push(format!("{id}: example not found: {ex:?} (found {found:?})"));
            }
            for f in &found {
                let secret = &ex.as_bytes()[f.start..f.end];
                if f.decoded_from.is_empty() && secret.len() > 8 {
                    let shown = String::from_utf8_lossy(secret);
                    assert!(
                        !f.preview.contains(&*shown),
                        "{id}: preview leaks the secret"
                    );
                }
            }
        }
        for neg in &rule.def().negative_examples {
            let found = s.scan(neg.as_bytes());
            if found.iter().any(|f| f.rule_id == id) {
                failures.push(format!("{id}: negative example matched: {neg:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn redacting_every_example_leaves_nothing_to_find() {
    let s = scanner();
    for rule in s.rules().rules() {
        for ex in &rule.def().examples {
            let (redacted, found) = s.redact(ex.as_bytes());
            assert!(!found.is_empty());
            // Overlapping findings merge into one redaction named after one of them.
            assert!(
                found.iter().any(|f| {
                    let marker = format!("[REDACTED:{}]", f.rule_id);
                    redacted
                        .windows(marker.len())
                        .any(|w| w == marker.as_bytes())
                }),
                "{}: no redaction marker in {}",
                rule.id(),
                String::from_utf8_lossy(&redacted)
            );
            let again = s.scan(&redacted);
            assert!(
                again.is_empty(),
                "{}: after redaction {again:?} in {}",
                rule.id(),
                String::from_utf8_lossy(&redacted)
            );
        }
    }
}

#[test]
fn every_example_split_at_every_offset_is_found_exactly_once() {
    let s = scanner();
    let overlap = s.stream().overlap();
    // Enough benign text before the example that the first chunk triggers a scan and
    // part of the buffer is dropped before the example is complete.
    let line = b"row 17: value=0.4412 status=ok\n";
    let filler: Vec<u8> = line.repeat(overlap * 3 / line.len());
    for rule in s.rules().rules() {
        for ex in &rule.def().examples {
            let mut text = filler.clone();
            let at = text.len();
            text.extend_from_slice(ex.as_bytes());
            text.extend_from_slice(b"\ntrailing line\n");
            let whole = s.scan(&text);
            assert!(
                whole.iter().any(|f| f.rule_id == rule.id()),
                "{}: {ex:?} not found after filler",
                rule.id()
            );
            for split in at..=at + ex.len() {
                let mut stream = s.stream();
                let mut found = stream.feed(&text[..split]);
                found.extend(stream.feed(&text[split..]));
                found.extend(stream.finish());
                assert_eq!(found.len(), whole.len(), "{}: split at {split}", rule.id());
                assert_eq!(
                    spans(&found),
                    spans(&whole),
                    "{}: split at {split}",
                    rule.id()
                );
                assert_eq!(found, whole, "{}: split at {split} (positions)", rule.id());
            }
        }
    }
}

/// Found by the `secrets_scan` fuzz campaign (2026-12-03): a key redacted inside
/// `curl --user "..."` became `[REDACTED:<rule-id>]`, whose `:` made the curl rule read
/// the rule id as a password; every round of redaction made the same finding again.
#[test]
fn a_redaction_marker_is_never_read_as_a_password() {
    let s = scanner();
    for text in [
        &b"curl -s --user \"key-10313d69386da74ad2403bc3eb31d011\" https://api.mailgun.net/v3/mg.corp.io/messages\n"[..],
        b"curl -s --user \"\xff\xff\xff\xdekey-10313d69386da74ad2403bc3eb31d011\" https://api.mailgun.net/v3/mg.corp.io/messages\n",
    ] {
        let (redacted, found) = s.redact(text);
        assert!(!found.is_empty());
        let again = s.scan(&redacted);
        assert!(
            again.is_empty(),
            "{again:?} in {}",
            String::from_utf8_lossy(&redacted)
        );
    }
    // A value written to look like a marker is no marker: it is still found.
    let fake = b"curl -s --user \"admin:[REDACTED:Hq7vT2pLx!]\" https://ci.corp.test/api\n";
    assert!(
        s.scan(fake)
            .iter()
            .any(|f| f.rule_id == "curl-user-password"),
        "{:?}",
        s.scan(fake)
    );
}
