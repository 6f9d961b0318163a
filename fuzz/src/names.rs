//! Fresh identifiers and string encodings for the program rewriters.
use arbitrary::Unstructured;

/// Identifier stems the rewriters pick from (renaming is one of the rewrites); each use
/// gets a numeric suffix so two names never clash with each other or with a builtin.
const STEMS: &[&str] = &[
    "v", "helper", "run", "_x", "data", "result", "cmd", "Obj", "ζ", "tool", "__h", "fn",
];

/// Hands out fresh identifiers.
#[derive(Debug, Default)]
pub struct Names {
    next: usize,
}

impl Names {
    /// A fresh identifier whose stem the fuzzer picks.
    pub fn fresh(&mut self, u: &mut Unstructured) -> String {
        let stem = u.choose(STEMS).copied().unwrap_or("v");
        self.next += 1;
        format!("{stem}_{}", self.next)
    }
}

/// Picks a variant index below `n` (0 when the fuzz input is used up, so a short input is
/// the unrewritten program).
pub fn pick(u: &mut Unstructured, n: usize) -> usize {
    u.choose_index(n).unwrap_or(0)
}

/// Splits `s` in two at a char boundary the fuzzer picks (both parts may be empty only
/// when `s` has fewer than two chars).
pub fn split(u: &mut Unstructured, s: &str) -> (String, String) {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).skip(1).collect();
    let at = if bounds.is_empty() {
        s.len()
    } else {
        bounds[pick(u, bounds.len())]
    };
    (s[..at].to_string(), s[at..].to_string())
}

/// `s` as lowercase hex.
pub fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// `s` in standard base64.
pub fn base64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// `s` with ASCII letters rotated by 13.
pub fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
            _ => c,
        })
        .collect()
}

/// `s` reversed (by chars).
pub fn reversed(s: &str) -> String {
    s.chars().rev().collect()
}

/// The char codes of `s`, comma-separated.
pub fn codes(s: &str) -> String {
    s.chars()
        .map(|c| (c as u32).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoders_are_right() {
        assert_eq!(hex("os"), "6f73");
        assert_eq!(base64("os"), "b3M=");
        assert_eq!(rot13("system"), "flfgrz");
        assert_eq!(reversed("abc"), "cba");
        assert_eq!(codes("os"), "111, 115");
        let mut u = Unstructured::new(&[1]);
        assert_eq!(split(&mut u, "abc"), ("ab".into(), "c".into()));
    }
}
