//! What the pre-scan's behaviour tests share.
use skillgate_core::Language;
use skillgate_prescan::{PreScanner, Verdict};

/// The default packs' verdict on `code`, and the rule ids of its findings.
pub(crate) fn scan(code: &str, lang: Language) -> (Verdict, Vec<String>) {
    let r = PreScanner::new()
        .expect("default packs load")
        .scan(code.as_bytes(), lang);
    (
        r.verdict,
        r.findings.into_iter().map(|f| f.rule_id).collect(),
    )
}
