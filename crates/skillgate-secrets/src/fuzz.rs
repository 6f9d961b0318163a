//! Entry points for the fuzz target `secrets_scan` (also run over every seed in
//! `corpora/secrets/` by `cargo test`).
use crate::{SecretScanner, decode_segments, redact};
use std::sync::OnceLock;

fn scanner() -> &'static SecretScanner {
    static SCANNER: OnceLock<SecretScanner> = OnceLock::new();
    SCANNER.get_or_init(|| SecretScanner::default_pack().expect("the default pack loads"))
}

/// Runs the scanner, the decoders, streaming (chunk sizes taken from the first byte) and
/// redaction over `data`, and checks what must always hold: nothing panics, every finding
/// lies inside the input and has a masked preview, and the redacted text scans clean.
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
    let (redacted, _) = s.redact(data);
    let again = s.scan(&redacted);
    assert!(again.is_empty(), "redacted text still holds {again:?}");
}
