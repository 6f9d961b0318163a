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

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// Whether decoded bytes are text worth scanning: UTF-8 without control characters other
/// than tab, CR and LF.
pub fn is_text(bytes: &[u8]) -> bool {
    bytes.len() >= 6 && std::str::from_utf8(bytes).is_ok() && !has_control(bytes)
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
    for_each_segment(hay, &mut |d| out.push(d));
    out
}

/// Like [`decode_segments`], handing each segment to `out` as it is decoded (so that
/// the decodings of a large buffer are not all held at once).
pub(crate) fn for_each_segment(hay: &[u8], out: &mut impl FnMut(Decoded)) {
    runs(hay, out);
    escapes(hay, out);
}

/// Base64 and hex runs.
///
/// The search reads 64 bytes at a time as a bit mask of run bytes ([`run_mask`], a
/// branch-free loop the compiler vectorises). Only runs of at least [`MIN_RUN`] bytes can
/// be decoded: a few shifts and ands of the mask show the first such run that starts in
/// the block, or that none does, and then the search moves on to the run of ones at the
/// end of the block (which the next block may continue) without reading byte by byte.
fn runs(hay: &[u8], out: &mut impl FnMut(Decoded)) {
    let n = hay.len();
    let mut masks = RunMasks::new(hay);
    let mut i = 0;
    while i + MIN_RUN <= n {
        let m = masks.at(i);
        let starts = long_runs(m);
        if starts == 0 {
            // No run of `MIN_RUN` fits in the block; a run at its end may go on.
            let tail = m.leading_ones() as usize;
            i += 64 - tail;
            continue;
        }
        // The first bit of `starts` begins a maximal run: the bit before it is clear
        // (or it is bit 0, and `i` is where the previous run ended).
        let start = i + starts.trailing_zeros() as usize;
        let j = run_end(&mut masks, start + MIN_RUN);
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
                // Branch-free folds again (a table lookup per byte would not vectorise).
                let urlsafe = run
                    .iter()
                    .fold(false, |u, &b| u | (b == b'-') | (b == b'_'));
                let stdonly = run
                    .iter()
                    .fold(false, |s, &b| s | (b == b'+') | (b == b'/'));
                if urlsafe && stdonly {
                    // Mixed alphabets: a path or an identifier, not base64.
                } else {
                    decode_base64(hay, start..end, urlsafe, out);
                }
            }
        }
        i = end;
    }
}

/// Bit `k` set when bits `k..k + MIN_RUN` of `m` are all set: the starts of runs of at
/// least [`MIN_RUN`] ones that end inside `m`.
fn long_runs(m: u64) -> u64 {
    const _: () = assert!(MIN_RUN == 14);
    let m2 = m & (m >> 1); // 2 ones from here
    let m4 = m2 & (m2 >> 2); // 4
    let m8 = m4 & (m4 >> 4); // 8
    m8 & (m4 >> 8) & (m2 >> 12) // 8 + 4 + 2
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

/// Bit `k` set when `hay[at + k]` is a base64 byte, for the 64 bytes from `at` (bytes
/// past the end count as non-run bytes).
fn run_mask(hay: &[u8], at: usize) -> u64 {
    let block: [u8; 64] = match hay.get(at..at + 64) {
        Some(b) => b.try_into().expect("64 bytes"),
        None => {
            let mut b = [0u8; 64];
            let rest = &hay[at.min(hay.len())..];
            b[..rest.len()].copy_from_slice(rest);
            b
        }
    };
    // One flag byte per input byte (vectorised), then eight flags to eight bits with a
    // multiplication: flag `k` of a word lands in bit `56 + k` of the product.
    let mut flags = [0u8; 64];
    for (f, &b) in flags.iter_mut().zip(&block) {
        *f = u8::from(is_run_byte(b));
    }
    let mut m = 0u64;
    for (g, word) in flags.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        m |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * g);
    }
    m
}

/// The end of the run of base64 bytes going on at `from`, 64 bytes at a time.
fn run_end(masks: &mut RunMasks<'_>, mut from: usize) -> usize {
    loop {
        let ones = masks.at(from).trailing_ones() as usize;
        if ones < 64 {
            return (from + ones).min(masks.hay.len());
        }
        from += 64;
    }
}

/// [`run_mask`]s of the aligned 64-byte blocks of a buffer, the last two remembered, so
/// that a search moving forward computes each block's mask once.
struct RunMasks<'a> {
    hay: &'a [u8],
    /// (block index, mask), older first.
    cached: [(usize, u64); 2],
}

impl<'a> RunMasks<'a> {
    fn new(hay: &'a [u8]) -> Self {
        RunMasks {
            hay,
            cached: [(usize::MAX, 0); 2],
        }
    }

    fn block(&mut self, k: usize) -> u64 {
        if self.cached[1].0 == k {
            return self.cached[1].1;
        }
        if self.cached[0].0 == k {
            return self.cached[0].1;
        }
        let m = run_mask(self.hay, k * 64);
        self.cached = [self.cached[1], (k, m)];
        m
    }

    /// The run mask of the 64 bytes from `at`.
    fn at(&mut self, at: usize) -> u64 {
        let (k, r) = (at / 64, at % 64);
        let lo = self.block(k);
        if r == 0 {
            lo
        } else {
            (lo >> r) | (self.block(k + 1) << (64 - r))
        }
    }
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
        Ok(_) => prefix,
        Err(e) if e.error_len().is_none() => &prefix[..e.valid_up_to()],
        Err(_) => return false,
    };
    !has_control(valid)
}

/// Whether valid UTF-8 holds a control character (`char::is_control`: U+0000..=U+001F,
/// U+007F, U+0080..=U+009F) other than tab, LF and CR. The last ones are `0xC2` followed
/// by `0x80..=0x9F` in UTF-8, so bytes are checked (branch-free) instead of characters.
fn has_control(utf8: &[u8]) -> bool {
    utf8.iter().fold(false, |bad, &b| {
        bad | ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r')) | (b == 0x7F)
    }) || memchr::memchr_iter(0xC2, utf8).any(|p| utf8.get(p + 1).is_some_and(|&c| c <= 0x9F))
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

fn decode_hex(hay: &[u8], span: Range<usize>, out: &mut impl FnMut(Decoded)) {
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
        out(Decoded {
            encoding: Encoding::Hex,
            span,
            bytes,
            map: None,
        });
    }
}

fn decode_base64(hay: &[u8], span: Range<usize>, urlsafe: bool, out: &mut impl FnMut(Decoded)) {
    let mut body = &hay[span.clone()];
    while body.last() == Some(&b'=') {
        body = &body[..body.len() - 1];
    }
    if body.len() % 4 == 1 {
        body = &body[..body.len() - 1];
    }
    let engine = if urlsafe { &URL_SAFE } else { &STANDARD };
    if let Some(head) = body.get(..PREFIX / 3 * 4) {
        // Four characters decode to three bytes, independently of the rest.
        let mut prefix = [0u8; PREFIX];
        if engine.decode_slice(head, &mut prefix) == Ok(PREFIX) && !may_start_text(&prefix) {
            return;
        }
    }
    if let Ok(bytes) = engine.decode(body)
        && is_text(&bytes)
    {
        out(Decoded {
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
///
/// One pass finds both markers. Percent segments are decoded as they are found; the
/// (disjoint) backslash segments are only delimited then and decoded after them, so
/// segments come out percent first, as two separate passes would give them.
fn escapes(hay: &[u8], out: &mut impl FnMut(Decoded)) {
    let (mut percent_done, mut backslash_done) = (0, 0);
    let mut backslash = Vec::new();
    for pos in memchr::memchr2_iter(b'%', b'\\', hay) {
        if hay[pos] == b'%' {
            if let Some(seg) = escape_segment(hay, pos, Encoding::Percent, &mut percent_done) {
                decode_escapes(hay, seg, Encoding::Percent, out);
            }
        } else if let Some(seg) =
            escape_segment(hay, pos, Encoding::JsonEscape, &mut backslash_done)
        {
            backslash.push(seg);
        }
    }
    for seg in backslash {
        decode_escapes(hay, seg, Encoding::JsonEscape, out);
    }
}

/// The segment around the escape marker at `pos`, unless it is not an escape or lies in
/// the previous segment (which ends at `done_until`; updated).
fn escape_segment(
    hay: &[u8],
    pos: usize,
    encoding: Encoding,
    done_until: &mut usize,
) -> Option<Range<usize>> {
    if pos < *done_until || !escape_starts(hay, pos, encoding) {
        return None;
    }
    let lo = pos.saturating_sub(ESCAPE_REACH).max(*done_until);
    let hi = (pos + ESCAPE_REACH).min(hay.len());
    let (start, end) = match encoding {
        Encoding::Percent => {
            let stop = |b: &u8| b.is_ascii_whitespace() || *b == b'"' || *b == b'\'';
            (
                hay[lo..pos]
                    .iter()
                    .rposition(stop)
                    .map_or(lo, |p| lo + p + 1),
                hay[pos..hi].iter().position(stop).map_or(hi, |p| pos + p),
            )
        }
        _ => (
            memchr::memrchr(b'\n', &hay[lo..pos]).map_or(lo, |p| lo + p + 1),
            memchr::memchr(b'\n', &hay[pos..hi]).map_or(hi, |p| pos + p),
        ),
    };
    *done_until = end;
    Some(start..end)
}

/// Decodes the escapes of one segment; reports it when the result is text.
fn decode_escapes(
    hay: &[u8],
    span: Range<usize>,
    encoding: Encoding,
    out: &mut impl FnMut(Decoded),
) {
    let (bytes, map) = match encoding {
        Encoding::Percent => unescape_percent(&hay[span.clone()], span.start),
        _ => unescape_backslash(&hay[span.clone()], span.start),
    };
    if is_text(&bytes) {
        out(Decoded {
            encoding,
            span,
            bytes,
            map: Some(map),
        });
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

/// Copies `s[from..to]` unchanged into `bytes`, each byte mapped to its own offset.
fn copy_plain(
    s: &[u8],
    from: usize,
    to: usize,
    base: usize,
    bytes: &mut Vec<u8>,
    map: &mut Vec<usize>,
) {
    bytes.extend_from_slice(&s[from..to]);
    map.extend(base + from..base + to);
}

fn unescape_percent(s: &[u8], base: usize) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    let mut i = 0;
    while i < s.len() {
        let next = memchr::memchr(b'%', &s[i..]).map_or(s.len(), |p| i + p);
        copy_plain(s, i, next, base, &mut bytes, &mut map);
        i = next;
        if i == s.len() {
            break;
        }
        match hex_at(s, i + 1, 2) {
            Some(v) => {
                bytes.push(v as u8);
                map.push(base + i);
                i += 3;
            }
            None => {
                copy_plain(s, i, i + 1, base, &mut bytes, &mut map);
                i += 1;
            }
        }
    }
    map.push(base + s.len());
    (bytes, map)
}

fn unescape_backslash(s: &[u8], base: usize) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    let push = |bytes: &mut Vec<u8>, map: &mut Vec<usize>, out: &[u8], at: usize| {
        for &b in out {
            bytes.push(b);
            map.push(base + at);
        }
    };
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            let next = memchr::memchr(b'\\', &s[i..]).map_or(s.len(), |p| i + p);
            copy_plain(s, i, next, base, &mut bytes, &mut map);
            i = next;
            continue;
        }
        if i + 1 == s.len() {
            push(&mut bytes, &mut map, &s[i..i + 1], i);
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
                push(&mut bytes, &mut map, c.encode_utf8(&mut buf).as_bytes(), i);
                i += used;
            }
            _ => {
                push(&mut bytes, &mut map, &s[i..i + 1], i);
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

    /// Byte classes of the reference search.
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

    /// The plain byte-by-byte search [`runs`] must agree with.
    fn runs_reference(hay: &[u8], out: &mut impl FnMut(Decoded)) {
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
            runs(t, &mut |d| fast.push(d));
            runs_reference(t, &mut |d| slow.push(d));
            total += slow.len();
            assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(t));
        }
        assert!(total > 300, "only {total} decodings");
    }

    #[test]
    fn the_byte_level_text_check_agrees_with_the_character_level_one() {
        let reference = |b: &[u8]| {
            b.len() >= 6
                && std::str::from_utf8(b).is_ok_and(|s| {
                    s.chars()
                        .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
                })
        };
        let pieces: [&[u8]; 12] = [
            b"plain ascii ",
            b"\t\r\n",
            b"\x00",
            b"\x1f",
            b"\x7f",
            "\u{80}".as_bytes(),
            "\u{9f}".as_bytes(),
            "\u{a0}\u{e9}".as_bytes(),
            "\u{1F600}".as_bytes(),
            b"\xc2",
            b"\x9f",
            b"\xff",
        ];
        let texts = crate::testing::soup(&pieces, 0x7E47, 4000, 8);
        let prefix_reference = |b: &[u8]| {
            let valid = match std::str::from_utf8(b) {
                Ok(s) => s,
                Err(e) if e.error_len().is_none() => {
                    std::str::from_utf8(&b[..e.valid_up_to()]).unwrap()
                }
                Err(_) => return false,
            };
            b.first().is_none_or(|&c| may_start_text_at(c))
                && valid
                    .chars()
                    .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        };
        let mut accepted = 0;
        for t in &texts {
            assert_eq!(is_text(t), reference(t), "{t:?}");
            for cut in [t.len().min(12), t.len().saturating_sub(1)] {
                assert_eq!(
                    may_start_text(&t[..cut]),
                    prefix_reference(&t[..cut]),
                    "{t:?}"
                );
            }
            accepted += usize::from(reference(t));
        }
        assert!(accepted > 100 && accepted < texts.len() - 100, "{accepted}");
    }

    #[test]
    fn the_base64_prefix_check_keeps_every_decoding_that_is_text() {
        use base64::Engine as _;
        let mut next = crate::testing::xorshift(0xB64);
        let texts = crate::testing::soup(
            &[
                b"token=",
                b"h\xc3\xa9",
                b"\x00",
                b"\x7f",
                b" ",
                b"\n",
                b"\xff",
                b"ab",
            ],
            0xB640,
            3000,
            12,
        );
        let mut kept = 0;
        for t in &texts {
            for (engine, urlsafe) in [
                (&base64::engine::general_purpose::STANDARD, false),
                (&base64::engine::general_purpose::URL_SAFE_NO_PAD, true),
            ] {
                let mut enc = engine.encode(t).into_bytes();
                // Sometimes a stray last character, as runs in text have (padding only
                // ever ends a run).
                if next() % 4 == 0 {
                    while enc.last() == Some(&b'=') {
                        enc.pop();
                    }
                    enc.push(b'Q');
                }
                let mut out = Vec::new();
                decode_base64(&enc, 0..enc.len(), urlsafe, &mut |d| out.push(d));
                let mut body = &enc[..];
                while body.last() == Some(&b'=') {
                    body = &body[..body.len() - 1];
                }
                if body.len() % 4 == 1 {
                    body = &body[..body.len() - 1];
                }
                let reference = if urlsafe { &URL_SAFE } else { &STANDARD }
                    .decode(body)
                    .ok()
                    .filter(|b| is_text(b));
                assert_eq!(out.pop().map(|d| d.bytes), reference, "{t:?}");
                kept += usize::from(reference.is_some());
            }
        }
        assert!(kept > 200, "{kept}");
    }

    #[test]
    fn one_pass_over_both_escape_markers_gives_what_a_pass_per_marker_gives() {
        let pieces: [&[u8]; 10] = [
            b"%41", b"%2", b"\\u0041", b"\\\"", b"\\q", b" ", b"\n", b"token=", b"'", b"\\x4",
        ];
        let mut total = 0;
        for t in crate::testing::soup(&pieces, 0xE5C, 3000, 30) {
            let mut one = Vec::new();
            escapes(&t, &mut |d| one.push(d));
            let mut two = Vec::new();
            for (marker, encoding) in [(b'%', Encoding::Percent), (b'\\', Encoding::JsonEscape)] {
                let mut done = 0;
                for pos in memchr::memchr_iter(marker, &t) {
                    if let Some(seg) = escape_segment(&t, pos, encoding, &mut done) {
                        decode_escapes(&t, seg, encoding, &mut |d| two.push(d));
                    }
                }
            }
            total += two.len();
            assert_eq!(one, two, "{:?}", String::from_utf8_lossy(&t));
        }
        assert!(total > 1000, "{total}");
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
