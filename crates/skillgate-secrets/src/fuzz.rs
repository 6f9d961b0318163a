//! Entry points for the fuzz targets (also run over the seed corpus by `cargo test`).
use crate::{SecretScanner, decode_segments, redact};
use std::sync::OnceLock;

fn scanner() -> &'static SecretScanner {
    static SCANNER: OnceLock<SecretScanner> = OnceLock::new();
    SCANNER.get_or_init(|| SecretScanner::default_pack().expect("the default pack loads"))
}

/// Scans `data` whole and in chunks (sizes taken from its first bytes), decodes it, and
/// redacts it, checking the invariants: streaming finds what the whole scan finds, and
/// the redacted text scans clean.
pub fn scan_any(data: &[u8]) {
    let s = scanner();
    let whole = s.scan(data);
    let _ = decode_segments(data);
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1) * 7;
    let mut stream = s.stream();
    let mut streamed = Vec::new();
    for chunk in data.chunks(step) {
        streamed.extend(stream.feed(chunk));
    }
    streamed.extend(stream.finish());
    assert_eq!(
        whole.len(),
        streamed.len(),
        "streaming and whole scans differ"
    );
    let _ = redact(data, &whole);
    let (redacted, _) = s.redact(data);
    let again = s.scan(&redacted);
    assert!(again.is_empty(), "redacted text still holds {again:?}");
}
