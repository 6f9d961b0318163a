//! Measures the default pack against a peer's rule examples (`scripts/secret-recall`).
//!
//! Reads a JSON array of `{"rule": "...", "positive": bool, "text": "...",
//! "other_peer_rules": ["..."]}` on stdin, scans each text alone, and prints how many
//! positive examples produced a finding and how many negative examples did, also counted
//! over the negative examples no other peer rule matches; with `--misses`, also every
//! positive example missed and every negative example flagged (with the rules that flagged
//! it, and the other peer rules that match it).
use serde::Deserialize;
use skillgate_secrets::SecretScanner;
use std::io::Read as _;
use std::process::ExitCode;

#[derive(Deserialize)]
struct Example {
    rule: String,
    positive: bool,
    text: String,
    /// Other rules of the peer whose patterns match the text.
    #[serde(default)]
    other_peer_rules: Vec<String>,
}

fn main() -> ExitCode {
    let misses = std::env::args().any(|a| a == "--misses");
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("secret_recall: cannot read stdin: {e}");
        return ExitCode::FAILURE;
    }
    let examples: Vec<Example> = match serde_json::from_str(&input) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("secret_recall: stdin is not a JSON array of examples: {e}");
            return ExitCode::FAILURE;
        }
    };
    let scanner = match SecretScanner::default_pack() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("secret_recall: the default pack does not load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (mut pos, mut found, mut neg, mut flagged) = (0, 0, 0, 0);
    // Negative examples no other peer rule matches, and how many of those were flagged.
    let (mut neg_only, mut flagged_only) = (0, 0);
    for ex in &examples {
        let hits = scanner.scan(ex.text.as_bytes());
        let ids: Vec<&str> = hits.iter().map(|f| f.rule_id.as_str()).collect();
        if ex.positive {
            pos += 1;
            if hits.is_empty() {
                if misses {
                    println!("MISSED   {}: {:?}", ex.rule, ex.text);
                }
            } else {
                found += 1;
            }
        } else {
            neg += 1;
            let only = ex.other_peer_rules.is_empty();
            neg_only += usize::from(only);
            if !hits.is_empty() {
                flagged += 1;
                flagged_only += usize::from(only);
                if misses {
                    println!(
                        "FLAGGED  {} by {ids:?} (other peer rules: {:?}): {:?}",
                        ex.rule, ex.other_peer_rules, ex.text
                    );
                }
            }
        }
    }
    let pct = |a: usize, b: usize| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    println!(
        "examples found: {found}/{pos} ({:.1}%); negative examples flagged: {flagged}/{neg} ({:.1}%); \
         of those no other peer rule matches: {flagged_only}/{neg_only} ({:.1}%)",
        pct(found, pos),
        pct(flagged, neg),
        pct(flagged_only, neg_only)
    );
    ExitCode::SUCCESS
}
