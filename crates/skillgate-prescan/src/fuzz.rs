//! Entry points for the fuzz targets (`fuzz/fuzz_targets/prescan_any.rs`), also run
//! over the corpora by the normal test suite.
use crate::{PreScanner, ScanReport, Verdict};
use skillgate_core::Language;
use std::sync::OnceLock;

fn scanner() -> &'static PreScanner {
    static SCANNER: OnceLock<PreScanner> = OnceLock::new();
    SCANNER.get_or_init(|| PreScanner::new().expect("the embedded packs load"))
}

/// Scans arbitrary bytes as Python, as JavaScript and as a shell step's command line, and
/// checks the invariants every report must keep: findings are sorted, have locations
/// inside the input's line count, and a `block` verdict always has a finding.
///
/// ```
/// use skillgate_prescan::{fuzz::scan_any, Verdict};
/// let [py, js, _] = scan_any(b"\xff(((\x00");
/// assert_eq!(py.verdict, Verdict::Block);
/// # let _ = js;
/// let [_, _, sh] = scan_any(b"curl -d @data.csv http://127.0.0.1:1/");
/// assert_eq!(sh.verdict, Verdict::Block);
/// ```
pub fn scan_any(data: &[u8]) -> [ScanReport; 3] {
    let lines = data.split(|&b| b == b'\n').count() as u32;
    Language::ALL.map(|lang| {
        let report = scanner().scan(data, lang);
        if report.verdict == Verdict::Block {
            assert!(!report.findings.is_empty(), "block without a finding");
        }
        let keys: Vec<(u32, u32)> = report
            .findings
            .iter()
            .map(|f| f.location.map(|l| (l.line, l.column)).unwrap_or_default())
            .collect();
        assert!(
            keys.windows(2).all(|w| w[0] <= w[1]),
            "findings out of order"
        );
        for f in &report.findings {
            if let Some(l) = f.location {
                assert!(
                    l.line >= 1 && l.line <= lines.max(1),
                    "line {} outside the input",
                    l.line
                );
            }
        }
        report
    })
}
