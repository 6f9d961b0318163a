//! Decoders: find base64, hex, percent-encoded and escaped (`\uXXXX`, `\"`) text in a
//! buffer, so secrets hidden behind one (or, to a bounded depth, several) encodings are
//! still found.
//!
//! Only decodings that yield *text* are kept: a base64 PNG decodes to binary and is skipped,
//! which is also the false-positive guard for charts that skills return as base64.
use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// An encoding the scanner sees through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// Standard or URL-safe base64, padded or not.
    Base64,
    /// Hexadecimal bytes.
    Hex,
    /// URL percent-encoding (`%41`).
    Percent,
    /// JSON / JavaScript / Python string escapes (`\u0041`, `\x41`, `\"`, `\/`).
    JsonEscape,
}

impl Encoding {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Base64 => "base64",
            Encoding::Hex => "hex",
            Encoding::Percent => "percent",
            Encoding::JsonEscape => "json_escape",
        }
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Shortest base64 run worth decoding (a 12-byte secret).
pub const MIN_BASE64: usize = 16;
/// Shortest run of base64 bytes that, with up to two `=`, reaches [`MIN_BASE64`].
const MIN_RUN: usize = MIN_BASE64 - 2;
/// Shortest hex run worth decoding.
pub const MIN_HEX: usize = 32;
/// Longest encoded segment decoded; longer runs are scanned only as they are.
pub const MAX_SEGMENT: usize = 4 << 20;
/// How far an escaped or percent-encoded segment reaches either side of its first escape.
const ESCAPE_REACH: usize = 8 * 1024;

/// One decoded segment of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// How it was encoded.
    pub encoding: Encoding,
    /// Where the encoded text is in the buffer.
    pub span: Range<usize>,
    /// The decoded bytes (always text: UTF-8 without control characters other than
    /// tab, CR and LF).
    pub bytes: Vec<u8>,
    /// For escape decodings: for every decoded byte (and one past the end) the buffer
    /// offset it came from, so a secret maps back to exactly its encoded bytes. `None`
    /// when only the whole span can be named (base64, hex).
    pub map: Option<Vec<usize>>,
}

impl Decoded {
    /// The buffer range a decoded range came from.
    pub fn source_range(&self, decoded: Range<usize>) -> Range<usize> {
        match &self.map {
            Some(map) => map[decoded.start]..map[decoded.end],
            None => self.span.clone(),
        }
    }
}

const B64: u8 = 1;
const HEX: u8 = 2;
const URLSAFE: u8 = 4;
const STDONLY: u8 = 8;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        if b.is_ascii_alphanumeric() {
            t[i] = B64;
        }
        if b.is_ascii_hexdigit() {
            t[i] |= HEX;
        }
        if b == b'-' || b == b'_' {
            t[i] = B64 | URLSAFE;
        }
        if b == b'+' || b == b'/' {
            t[i] = B64 | STDONLY;
        }
        i += 1;
    }
    t
};

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// Whether decoded bytes are text worth scanning: UTF-8 without control characters other
/// than tab, CR and LF.
pub fn is_text(bytes: &[u8]) -> bool {
    bytes.len() >= 6
        && std::str::from_utf8(bytes).is_ok_and(|s| {
            s.chars()
                .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        })
}

/// Finds and decodes every encoded segment of `hay` (one level deep).
///
/// ```
/// use skillgate_secrets::{decode_segments, Encoding};
/// let found = decode_segments(b"env: cGFzc3dvcmQ9aHVudGVyMg== and 68656c6c6f20776f726c642c2068656c6c6f21");
/// assert_eq!(found[0].encoding, Encoding::Base64);
/// assert_eq!(found[0].bytes, b"password=hunter2");
/// assert_eq!(found[1].encoding, Encoding::Hex);
/// assert_eq!(found[1].bytes, b"hello world, hello!");
/// ```
pub fn decode_segments(hay: &[u8]) -> Vec<Decoded> {
    let mut out = Vec::new();
    runs(hay, &mut out);
    escapes(hay, b'%', Encoding::Percent, &mut out);
    escapes(hay, b'\\', Encoding::JsonEscape, &mut out);
    out
}

/// Base64 and hex runs.
///
/// Only runs of at least [`MIN_RUN`] bytes can be decoded, so the search looks at every
/// `MIN_RUN`-th byte: when it is not a run byte, no such run covers it and the search
/// jumps past it; when it is, it walks back to where the run starts.
fn runs(hay: &[u8], out: &mut Vec<Decoded>) {
    let n = hay.len();
    let is_run = |b: u8| CLASS[b as usize] & B64 != 0;
    let mut i = 0;
    while i + MIN_RUN <= n {
        let probe = i + MIN_RUN - 1;
        if !is_run(hay[probe]) {
            i = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > i && is_run(hay[start - 1]) {
            start -= 1;
        }
        // Short runs, by far the most common, end within a few bytes: only a run that
        // reaches `MIN_RUN` bytes is followed to its end.
        let need = start + MIN_RUN;
        let mut j = probe + 1;
        while j < need && j < n && is_run(hay[j]) {
            j += 1;
        }
        if j < need {
            i = j;
            continue;
        }
        let j = run_end(hay, j);
        let mut end = j;
        while end < n && end - j < 2 && hay[end] == b'=' {
            end += 1;
        }
        let len = end - start;
        if (MIN_BASE64..=MAX_SEGMENT).contains(&len) {
            let run = &hay[start..j];
            // Branch-free over the whole run, so that it is vectorised.
            if run.iter().fold(true, |hex, b| hex & b.is_ascii_hexdigit()) {
                if len >= MIN_HEX && len % 2 == 0 && end == j {
                    decode_hex(hay, start..end, out);
                }
            } else if in_image_data_uri(hay, start) {
                // A chart or picture: binary, never decoded.
            } else {
                let seen = run.iter().fold(0, |s, &b| s | CLASS[b as usize]);
                if seen & URLSAFE != 0 && seen & STDONLY != 0 {
                    // Mixed alphabets: a path or an identifier, not base64.
                } else {
                    decode_base64(hay, start..end, seen & URLSAFE != 0, out);
                }
            }
        }
        i = end.max(j);
    }
}

/// Whether `b` is a base64 (standard or URL-safe) byte, without a table so that a
/// block of them is checked in one go.
fn is_run_byte(b: u8) -> bool {
    ((b | 0x20).wrapping_sub(b'a') < 26)
        | (b.wrapping_sub(b'0') < 10)
        | (b == b'+')
        | (b == b'/')
        | (b == b'-')
        | (b == b'_')
}

/// The end of the run of base64 bytes going on at `from`: byte by byte for the first 32
/// bytes (most runs end there), then 32 bytes at a time (a branch-free block test the
/// compiler vectorises), then byte by byte in the block that ends it.
fn run_end(hay: &[u8], from: usize) -> usize {
    let is_stop = |b: &u8| CLASS[*b as usize] & B64 == 0;
    let near = hay.len().min(from + 32);
    if let Some(p) = hay[from..near].iter().position(is_stop) {
        return from + p;
    }
    let mut from = near;
    while let Some(block) = hay.get(from..from + 32) {
        let stop = block.iter().fold(false, |stop, &b| stop | !is_run_byte(b));
        if stop {
            break;
        }
        from += 32;
    }
    from + hay[from..]
        .iter()
        .position(is_stop)
        .unwrap_or(hay.len() - from)
}

fn in_image_data_uri(hay: &[u8], start: usize) -> bool {
    let head = &hay[start.saturating_sub(64)..start];
    head.ends_with(b";base64,") && memchr::memmem::rfind(head, b"data:image/").is_some()
}

/// Whether `prefix`, the first bytes of a decoding, can start text that [`is_text`]
/// accepts: valid UTF-8 (a character may be cut at the end) without control characters
/// other than tab, CR and LF. When it cannot, decoding the rest is pointless: random
/// bytes (hashes, ids, images) fail this within a few bytes.
fn may_start_text(prefix: &[u8]) -> bool {
    if prefix.first().is_some_and(|&b| !may_start_text_at(b)) {
        return false;
    }
    let valid = match std::str::from_utf8(prefix) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&prefix[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
    };
    valid
        .chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
}

/// Whether text can start with byte `b`: printable ASCII, tab, LF, CR or a UTF-8 lead
/// byte. This alone rejects most random data.
fn may_start_text_at(b: u8) -> bool {
    !((b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
        || b == 0x7F
        || (0x80..0xC2).contains(&b)
        || b >= 0xF5)
}

/// Bytes of a decoding checked with [`may_start_text`] before decoding all of it.
const PREFIX: usize = 12;

fn decode_hex(hay: &[u8], span: Range<usize>, out: &mut Vec<Decoded>) {
    let digits = &hay[span.clone()];
    if hex_at(digits, 0, 2).is_some_and(|b| !may_start_text_at(b as u8)) {
        return;
    }
    let mut prefix = [0u8; PREFIX];
    let n = (digits.len() / 2).min(PREFIX);
    for (i, b) in prefix[..n].iter_mut().enumerate() {
        match hex_at(digits, 2 * i, 2) {
            Some(v) => *b = v as u8,
            None => return,
        }
    }
    if !may_start_text(&prefix[..n]) {
        return;
    }
    if let Ok(bytes) = hex::decode(&hay[span.clone()])
        && is_text(&bytes)
    {
        out.push(Decoded {
            encoding: Encoding::Hex,
            span,
            bytes,
            map: None,
        });
    }
}

fn decode_base64(hay: &[u8], span: Range<usize>, urlsafe: bool, out: &mut Vec<Decoded>) {
    let mut body = &hay[span.clone()];
    while body.last() == Some(&b'=') {
        body = &body[..body.len() - 1];
    }
    if body.len() % 4 == 1 {
        body = &body[..body.len() - 1];
    }
    let engine = if urlsafe { &URL_SAFE } else { &STANDARD };
    if body.len() > PREFIX / 3 * 4 {
        // Four characters decode to three bytes, independently of the rest.
        let mut prefix = [0u8; PREFIX];
        if engine.decode_slice(&body[..PREFIX / 3 * 4], &mut prefix) == Ok(PREFIX)
            && !may_start_text(&prefix)
        {
            return;
        }
    }
    if let Ok(bytes) = engine.decode(body)
        && is_text(&bytes)
    {
        out.push(Decoded {
            encoding: Encoding::Base64,
            span,
            bytes,
            map: None,
        });
    }
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex_at(s: &[u8], i: usize, n: usize) -> Option<u32> {
    let digits = s.get(i..i + n)?;
    digits
        .iter()
        .try_fold(0u32, |acc, &b| Some(acc * 16 + u32::from(hex_val(b)?)))
}

/// Percent or backslash escapes: each segment is the stretch around an escape, bounded by
/// whitespace (percent) or line ends (backslash) and by [`ESCAPE_REACH`].
fn escapes(hay: &[u8], marker: u8, encoding: Encoding, out: &mut Vec<Decoded>) {
    let mut done_until = 0;
    for pos in memchr::memchr_iter(marker, hay) {
        if pos < done_until || !escape_starts(hay, pos, encoding) {
            continue;
        }
        let stop = |b: u8| match encoding {
            Encoding::Percent => b.is_ascii_whitespace() || b == b'"' || b == b'\'',
            _ => b == b'\n',
        };
        let lo = pos.saturating_sub(ESCAPE_REACH).max(done_until);
        let start = hay[lo..pos]
            .iter()
            .rposition(|&b| stop(b))
            .map_or(lo, |p| lo + p + 1);
        let hi = (pos + ESCAPE_REACH).min(hay.len());
        let end = hay[pos..hi]
            .iter()
            .position(|&b| stop(b))
            .map_or(hi, |p| pos + p);
        done_until = end;
        let (bytes, map) = match encoding {
            Encoding::Percent => unescape_percent(&hay[start..end], start),
            _ => unescape_backslash(&hay[start..end], start),
        };
        if is_text(&bytes) {
            out.push(Decoded {
                encoding,
                span: start..end,
                bytes,
                map: Some(map),
            });
        }
    }
}

fn escape_starts(hay: &[u8], pos: usize, encoding: Encoding) -> bool {
    match encoding {
        Encoding::Percent => hex_at(hay, pos + 1, 2).is_some(),
        _ => match hay.get(pos + 1) {
            Some(b'u') => hex_at(hay, pos + 2, 4).is_some(),
            Some(b'x') => hex_at(hay, pos + 2, 2).is_some(),
            Some(b'"' | b'/' | b'\\' | b'\'') => true,
            _ => false,
        },
    }
}

fn unescape_percent(s: &[u8], base: usize) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%'
            && let Some(v) = hex_at(s, i + 1, 2)
        {
            bytes.push(v as u8);
            map.push(base + i);
            i += 3;
        } else {
            bytes.push(s[i]);
            map.push(base + i);
            i += 1;
        }
    }
    map.push(base + s.len());
    (bytes, map)
}

fn unescape_backslash(s: &[u8], base: usize) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    let mut push = |bytes: &mut Vec<u8>, out: &[u8], at: usize| {
        for &b in out {
            bytes.push(b);
            map.push(base + at);
        }
    };
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 == s.len() {
            push(&mut bytes, &s[i..i + 1], i);
            i += 1;
            continue;
        }
        let (decoded, used): (Option<char>, usize) = match s[i + 1] {
            b'u' => match hex_at(s, i + 2, 4) {
                Some(hi @ 0xD800..=0xDBFF) => {
                    let lo = (s.get(i + 6..i + 8) == Some(b"\\u"))
                        .then(|| hex_at(s, i + 8, 4))
                        .flatten()
                        .filter(|lo| (0xDC00..=0xDFFF).contains(lo));
                    match lo {
                        Some(lo) => (
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)),
                            12,
                        ),
                        None => (None, 0),
                    }
                }
                Some(v) => (char::from_u32(v), 6),
                None => (None, 0),
            },
            b'x' => (hex_at(s, i + 2, 2).and_then(char::from_u32), 4),
            b'n' => (Some('\n'), 2),
            b't' => (Some('\t'), 2),
            b'r' => (Some('\r'), 2),
            c @ (b'"' | b'/' | b'\\' | b'\'') => (Some(c as char), 2),
            _ => (None, 0),
        };
        match decoded {
            Some(c) if used > 0 => {
                let mut buf = [0u8; 4];
                push(&mut bytes, c.encode_utf8(&mut buf).as_bytes(), i);
                i += used;
            }
            _ => {
                push(&mut bytes, &s[i..i + 1], i);
                i += 1;
            }
        }
    }
    map.push(base + s.len());
    (bytes, map)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain byte-by-byte search [`runs`] must agree with.
    fn runs_reference(hay: &[u8], out: &mut Vec<Decoded>) {
        let n = hay.len();
        let mut i = 0;
        while i < n {
            if CLASS[hay[i] as usize] & B64 == 0 {
                i += 1;
                continue;
            }
            let start = i;
            let mut all = HEX | URLSAFE | STDONLY;
            let mut seen = 0u8;
            while i < n {
                let c = CLASS[hay[i] as usize];
                if c & B64 == 0 {
                    break;
                }
                all &= c | URLSAFE | STDONLY;
                seen |= c;
                i += 1;
            }
            let mut end = i;
            while end < n && end - i < 2 && hay[end] == b'=' {
                end += 1;
            }
            let len = end - start;
            if (MIN_BASE64..=MAX_SEGMENT).contains(&len) {
                let is_hex = all & HEX != 0;
                if is_hex {
                    if len >= MIN_HEX && len % 2 == 0 && end == i {
                        decode_hex(hay, start..end, out);
                    }
                } else if seen & URLSAFE != 0 && seen & STDONLY != 0 {
                    // Mixed alphabets: a path or an identifier, not base64.
                } else if !in_image_data_uri(hay, start) {
                    decode_base64(hay, start..end, seen & URLSAFE != 0, out);
                }
            }
            i = end.max(i);
        }
    }

    #[test]
    fn the_skipping_run_search_finds_what_a_byte_by_byte_one_finds() {
        let mut texts = crate::testing::corpus_texts();
        // Runs of 14 and 15 bytes that reach 16 only with their padding.
        let pieces: [&[u8]; 14] = [
            b"aGVsbG8gd29ybA",
            b"aGVsbG8gd29ybGQ",
            b"cGFzc3dvcmQ9aHVudGVyMg",
            b"68656c6c6f20776f726c64",
            b"=",
            b"==",
            b" ",
            b"-",
            b"_",
            b"+",
            b"/",
            b"abc",
            b"\n",
            b"dG9rZW49",
        ];
        texts.extend(crate::testing::soup(&pieces, 0xDEC0DE, 3000, 20));
        let mut total = 0;
        for t in &texts {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            runs(t, &mut fast);
            runs_reference(t, &mut slow);
            total += slow.len();
            assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(t));
        }
        assert!(total > 300, "only {total} decodings");
    }

    #[test]
    fn escapes_map_back_to_their_source_bytes() {
        let hay = br#"x = "tok\u0065n\/abc" end"#;
        let d = decode_segments(hay);
        let d = d
            .iter()
            .find(|d| d.encoding == Encoding::JsonEscape)
            .unwrap();
        let text = String::from_utf8(d.bytes.clone()).unwrap();
        assert_eq!(text, r#"x = "token/abc" end"#);
        let at = text.find("token").unwrap();
        let src = d.source_range(at..at + 5);
        assert_eq!(&hay[src], b"tok\\u0065n");
    }

    #[test]
    fn percent_decoding_and_surrogates() {
        let d = decode_segments(b"GET /a?p=s%65cret%21 HTTP");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].bytes, b"/a?p=secret!");
        let d = decode_segments(br#""\ud83d\ude00 ok fine""#);
        assert_eq!(
            String::from_utf8(d[0].bytes.clone()).unwrap(),
            "\"😀 ok fine\""
        );
    }

    #[test]
    fn binary_and_image_data_is_not_decoded() {
        // A PNG header in base64, inside a data URI and bare.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        assert!(decode_segments(format!("data:image/png;base64,{png}").as_bytes()).is_empty());
        assert!(decode_segments(png.as_bytes()).is_empty());
        // A sha256 is hex but not text.
        let sha = b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert!(decode_segments(sha).is_empty());
    }

    #[test]
    fn the_prefix_check_rejects_only_what_is_text_would_reject() {
        assert!(may_start_text(b"password=hunter2"));
        assert!(may_start_text("h\u{e9}llo".as_bytes()));
        // A multi-byte character cut by the end of the prefix is fine.
        assert!(may_start_text(&"ab\u{e9}".as_bytes()[..3]));
        assert!(!may_start_text(b"\x89PNG\r\n"));
        assert!(!may_start_text(b"ab\x00cd"));
        assert!(!may_start_text(b"ab\xffcd"));
        assert!(!may_start_text(b"\x7fabc"));
        assert!(!may_start_text(b"\x80abc"));
        assert!(!may_start_text(b"\xf5abc"));
        assert!(may_start_text(b"\tab"));
        assert!(may_start_text("\u{10FFFF}".as_bytes()));
        // Every prefix of text passes; text longer than the prefix still decodes.
        let text = "r\u{e9}sum\u{e9}: token=ghp_0123456789abcdef \u{1F600}\n\tend";
        for i in 0..=text.len() {
            assert!(may_start_text(&text.as_bytes()[..i]), "{i}");
        }
        use base64::Engine as _;
        for cut in 0..4 {
            let t = &text[..text.len() - cut];
            let b64 = base64::engine::general_purpose::STANDARD.encode(t);
            let found = decode_segments(format!("v: {b64} .").as_bytes());
            assert_eq!(found[0].bytes, t.as_bytes(), "{b64}");
            let hexed = hex::encode(t);
            let found = decode_segments(format!("v: {hexed} .").as_bytes());
            assert_eq!(found[0].bytes, t.as_bytes(), "{hexed}");
        }
    }

    #[test]
    fn paths_and_identifiers_are_not_decoded() {
        let d = decode_segments(b"/usr/lib/python3/dist-packages/numpy/core/_methods.py");
        assert!(d.is_empty(), "{d:?}");
    }
}
