//! Shannon entropy of a byte string.

/// Shannon entropy in bits per byte (0 for empty input, at most 8).
///
/// ```
/// use skillgate_secrets::shannon_entropy;
/// assert_eq!(shannon_entropy(b"aaaa"), 0.0);
/// assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
/// ```
pub fn shannon_entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}
