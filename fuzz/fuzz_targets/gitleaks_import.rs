//! A gitleaks TOML configuration through the importer; what it translates is built into a
//! rule set and scans a fixed text. Seeds: `corpora/secrets/gitleaks/`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate_secrets::{RuleSetBuilder, SecretScanner};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut builder = RuleSetBuilder::new();
    let Ok(import) = builder.add_gitleaks(text, "gitleaks.toml") else {
        return;
    };
    for u in &import.untranslated {
        assert!(!u.reason.is_empty());
    }
    if let Ok(rules) = builder.build() {
        let scanner = SecretScanner::new(rules);
        let hay = b"password = \"hunter2hunter2\"\nAKIAZ3MSJV4WXQ7LTN2H ghp_0123456789abcdefABCDEF0123456789abcd\n";
        for f in scanner.scan(hay) {
            assert!(f.start < f.end && f.end <= hay.len());
        }
    }
});
