//! Decoders the folder applies to constant strings: base64, hex, rot13, character codes.
use base64::Engine as _;

/// Decodes standard or URL-safe base64, padded or not.
pub(crate) fn base64(s: &str) -> Option<String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|e| e.decode(t.as_bytes()).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Decodes hex (whitespace ignored).
pub(crate) fn hex(s: &str) -> Option<String> {
    let t: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if t.len() % 2 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(t.len() / 2);
    for pair in t.chunks(2) {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out.push((hi * 16 + lo) as u8);
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Applies rot13 to ASCII letters.
pub(crate) fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
            _ => c,
        })
        .collect()
}

/// The character with code point `n`, if there is one.
pub(crate) fn chr(n: i64) -> Option<char> {
    u32::try_from(n).ok().and_then(char::from_u32)
}

/// Python-style slicing of a string by characters, `s[start:stop:step]`.
pub(crate) fn slice(
    s: &str,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as i64;
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let norm = |i: i64, lo: i64, hi: i64| -> i64 {
        let i = if i < 0 { i + len } else { i };
        i.clamp(lo, hi)
    };
    let mut out = String::new();
    if step > 0 {
        let a = start.map_or(0, |i| norm(i, 0, len));
        let b = stop.map_or(len, |i| norm(i, 0, len));
        let mut i = a;
        while i < b {
            out.push(chars[i as usize]);
            i += step;
        }
    } else {
        let a = start.map_or(len - 1, |i| norm(i, -1, len - 1));
        let b = stop.map_or(-1, |i| norm(i, -1, len - 1));
        let mut i = a;
        while i > b {
            out.push(chars[i as usize]);
            i += step;
        }
    }
    Some(out)
}

/// Decodes backslash escapes of a Python (`python = true`) or JavaScript string body.
pub(crate) fn unescape(body: &str, python: bool) -> String {
    let mut out = String::with_capacity(body.len());
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            out.push('\\');
            break;
        };
        let hex_n = |n: usize, it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut v = 0u32;
            for _ in 0..n {
                match it.peek().and_then(|c| c.to_digit(16)) {
                    Some(d) => {
                        v = v * 16 + d;
                        it.next();
                    }
                    None => return None,
                }
            }
            char::from_u32(v)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' if python => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(v));
            }
            '0' => out.push('\0'),
            'x' => out.extend(hex_n(2, &mut it)),
            'u' if !python && it.peek() == Some(&'{') => {
                it.next();
                let mut v = 0u32;
                for c in it.by_ref() {
                    if c == '}' {
                        break;
                    }
                    v = v
                        .saturating_mul(16)
                        .saturating_add(c.to_digit(16).unwrap_or(0));
                }
                out.extend(char::from_u32(v));
            }
            'u' => out.extend(hex_n(4, &mut it)),
            'U' if python => out.extend(hex_n(8, &mut it)),
            '\n' => {}
            other => out.push(other),
        }
    }
    out
}

/// Decodes `\uXXXX` and `\u{X..}` escapes in a JavaScript identifier.
pub(crate) fn js_identifier(raw: &str) -> String {
    if raw.contains('\\') {
        unescape(raw, false)
    } else {
        raw.to_string()
    }
}

/// Matches `text` against a glob where `*` stands for any run of characters.
///
/// ```
/// # use skillgate_prescan::glob_match;
/// assert!(glob_match("ref:os.exec*", "ref:os.execv"));
/// assert!(!glob_match("ref:os.exec*", "ref:os.path"));
/// ```
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let (mut pi, mut ti) = (0usize, 0usize);
    let (mut star, mut mark) = (None, 0usize);
    while ti < t.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders_round_trip_known_values() {
        assert_eq!(base64("b3M=").as_deref(), Some("os"));
        assert_eq!(base64("b3M").as_deref(), Some("os"));
        assert_eq!(hex("6f73").as_deref(), Some("os"));
        assert_eq!(hex("6f7"), None);
        assert_eq!(rot13("flfgrz"), "system");
        assert_eq!(
            slice("metsys", None, None, Some(-1)).as_deref(),
            Some("system")
        );
        assert_eq!(
            slice("xsystemx", Some(1), Some(-1), None).as_deref(),
            Some("system")
        );
        assert_eq!(unescape(r"\x6f\u0073\n", true), "os\n");
        assert_eq!(unescape(r"\157\163", true), "os");
        assert_eq!(js_identifier(r"\u0065val"), "eval");
        assert_eq!(js_identifier(r"\u{65}val"), "eval");
    }

    #[test]
    fn globs_anchor_both_ends() {
        assert!(glob_match("import:requests", "import:requests"));
        assert!(!glob_match("import:requests", "import:requests_mock"));
        assert!(glob_match("path:*/.ssh/*", "path:/root/.ssh/id_rsa"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a*b", "ac"));
    }
}
