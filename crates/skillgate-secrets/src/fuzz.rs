//! Entry points for the fuzz targets `secrets_scan` and `secrets_prefilter_simd` (also run
//! over every seed in `corpora/secrets/` by `cargo test`).
use crate::{SecretScanner, decode_segments, redact};
use std::sync::OnceLock;

fn scanner() -> &'static SecretScanner {
    static SCANNER: OnceLock<SecretScanner> = OnceLock::new();
    SCANNER.get_or_init(|| SecretScanner::default_pack().expect("the default pack loads"))
}

/// Runs the scanner, the decoders, streaming (chunk sizes taken from the first byte) and
/// redaction over `data`, and checks what must always hold: nothing panics, every finding
/// lies inside the input and has a masked preview, the redaction converges (it never
/// withholds the whole text), and the redacted text scans clean.
///
/// ```
/// skillgate_secrets::fuzz::scan_any(b"\x07key=AKIAZ3MSJV4WXQ7LTN2H %41 \\u0041");
/// ```
pub fn scan_any(data: &[u8]) {
    let s = scanner();
    let whole = s.scan(data);
    for f in &whole {
        assert!(
            f.start < f.end && f.end <= data.len(),
            "finding out of bounds: {f:?}"
        );
        assert!(f.line >= 1 && f.column >= 1);
    }
    for d in decode_segments(data) {
        assert!(d.span.end <= data.len());
        if let Some(map) = &d.map {
            assert_eq!(map.len(), d.bytes.len() + 1);
            assert!(map.windows(2).all(|w| w[0] <= w[1]));
        }
    }
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1) * 7;
    let mut stream = s.stream();
    let mut streamed = Vec::new();
    for chunk in data.chunks(step) {
        streamed.extend(stream.feed(chunk));
    }
    streamed.extend(stream.finish());
    assert!(
        streamed
            .iter()
            .all(|f| f.start < f.end && f.end <= data.len())
    );
    let once = redact(data, &whole);
    assert!(once.len() <= data.len() + whole.len() * 80 + 80);
    let (redacted, found) = s.redact(data);
    // The default pack's redaction converges: it never falls back to withholding.
    assert!(
        found
            .iter()
            .all(|f| f.rule_id != crate::REDACTION_INCOMPLETE),
        "the redaction did not converge"
    );
    let again = s.scan(&redacted);
    assert!(again.is_empty(), "redacted text still holds {again:?}");
}

/// The keyword prefilter's AVX2 candidate test against its portable one: over `data`
/// (whole, and from each of the first 32 offsets, so that every alignment of the 32-byte
/// blocks is met), both must report exactly the same `(keyword, start, end)` hits. The
/// keywords are the default pack's plus two made of `data`'s first bytes (so that inputs
/// can steer hits), and the short ones the automaton handles.
///
/// On a CPU without AVX2 both runs take the portable path (and trivially agree).
///
/// ```
/// skillgate_secrets::fuzz::prefilter_simd_equals_portable(b"tokXpassword=ghp_ AKIA xoxb- secret");
/// ```
pub fn prefilter_simd_equals_portable(data: &[u8]) {
    use crate::prefilter::KeywordFilter;
    static KEYWORDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    let base = KEYWORDS.get_or_init(|| {
        let mut k: Vec<Vec<u8>> = scanner()
            .rules()
            .rules()
            .iter()
            .flat_map(|r| &r.def().keywords)
            .map(|k| k.to_ascii_lowercase().into_bytes())
            .collect();
        k.extend([b"x".to_vec(), b"q_".to_vec()]);
        k.sort();
        k.dedup();
        k
    });
    let mut keywords = base.clone();
    for len in [3, 5] {
        if let Some(head) = data.get(..len) {
            keywords.push(head.to_ascii_lowercase());
        }
    }
    let filter = KeywordFilter::new(keywords).expect("non-empty keywords build a filter");
    let hits = |simd: bool, text: &[u8]| {
        let mut out = Vec::new();
        filter.for_each_with(simd, text, |k, s, e| out.push((k, s, e)));
        out.sort_unstable();
        out
    };
    for shift in 0..32.min(data.len() + 1) {
        let text = &data[shift..];
        assert_eq!(
            hits(true, text),
            hits(false, text),
            "the AVX2 and portable prefilters differ at shift {shift}"
        );
    }
}
