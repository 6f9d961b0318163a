//! False-positive guards: shapes and contexts that look like secrets but are not.
//!
//! Contextual guards apply to every rule: a match inside an image data URI, a hex value
//! labelled as a hash or digest, a line of a checksum listing. Shape guards apply only to
//! *generic* rules (ids `generic-*`), whose regexes accept any high-entropy value: UUIDs,
//! hashes, template placeholders, code identifiers and member chains in minified code.

/// What [`benign`] remembers of the last line whose minified verdict it worked out: many
/// candidates share one long minified line, and judging it reads all of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineMemo {
    /// Where the line starts.
    start: usize,
    /// The first newline at or after `start` (or the end of the text): a candidate
    /// starting in `start..=first_newline` is on this line.
    first_newline: usize,
    /// Whether [`is_minified`] judged it minified.
    minified: bool,
}

/// Opens a redaction marker, `[REDACTED:<rule-id>]`.
const MARKER_OPEN: &[u8] = b"[REDACTED:";

/// Longest rule id a redaction marker names.
const MARKER_ID_MAX: usize = 80;

/// Whether `start..end` lies inside a redaction marker, `[REDACTED:<rule-id>]` with a
/// rule id's characters (`a-z`, `0-9`, `-`, `.`, `_`). Redacting puts a `:` into the text, so
/// a rule for `user:password` shapes could read the marker's own rule id as a password
/// (`--user "[REDACTED:mailgun-api-key]"`), and redaction would never reach a text that
/// scans clean. The id's characters are narrow so that a marker cannot wrap a value that
/// is one (a written `[REDACTED:hunter2!]` is no marker).
pub(crate) fn in_redaction_marker(hay: &[u8], start: usize, end: usize) -> bool {
    let from = start.saturating_sub(MARKER_OPEN.len() + MARKER_ID_MAX);
    let to = (start + MARKER_OPEN.len()).min(hay.len());
    let Some(open) = memchr::memmem::rfind(&hay[from..to], MARKER_OPEN).map(|p| from + p) else {
        return false;
    };
    if open > start {
        return false;
    }
    let id_start = open + MARKER_OPEN.len();
    let id_len = hay[id_start..]
        .iter()
        .take(MARKER_ID_MAX + 1)
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(b))
        .count();
    let close = id_start + id_len;
    (1..=MARKER_ID_MAX).contains(&id_len) && hay.get(close) == Some(&b']') && end <= close + 1
}

/// Why a candidate was dropped, when a guard dropped it.
///
/// `minified` remembers the last line [`is_minified`] judged.
pub(crate) fn benign(
    hay: &[u8],
    start: usize,
    end: usize,
    generic: bool,
    minified: &mut Option<LineMemo>,
) -> Option<&'static str> {
    let secret = &hay[start..end];
    if in_redaction_marker(hay, start, end) {
        return Some("part of a redaction marker");
    }
    // The contextual guards read at most 512 bytes of the line before the secret: look
    // for its start no further back (a minified line is long).
    let near = start.saturating_sub(512);
    let before_from = memchr::memrchr(b'\n', &hay[near..start]).map_or(near, |p| near + p + 1);
    let before = &hay[before_from..start];
    if in_data_uri(before) {
        return Some("inside an image data URI");
    }
    let hex = secret.len() >= 32 && secret.iter().all(u8::is_ascii_hexdigit);
    if hex && labelled_as_hash(before) {
        return Some("a labelled hash or digest");
    }
    let at_line_start = start == 0 || hay[start - 1] == b'\n';
    if hex && at_line_start && checksum_listing(&hay[end..]) {
        return Some("a checksum listing");
    }
    if !generic {
        return None;
    }
    if is_uuid(secret) {
        return Some("a UUID");
    }
    if hex && matches!(secret.len(), 32 | 40 | 56 | 64 | 96 | 128) {
        return Some("a hash-shaped hex value");
    }
    if secret.iter().all(u8::is_ascii_digit) {
        return Some("a number");
    }
    if is_placeholder(secret) {
        return Some("a placeholder");
    }
    if is_reference(secret) {
        return Some("a reference to a value, not a value");
    }
    if is_identifier_like(secret) {
        return Some("an identifier, not a value");
    }
    if is_member_chain(secret) && minified_line(hay, start, end, minified) {
        return Some("code in a minified line");
    }
    None
}

/// Whether the line holding `start` (up to the line end after `end`) is minified code,
/// remembered for the last line asked about.
fn minified_line(hay: &[u8], start: usize, end: usize, memo: &mut Option<LineMemo>) -> bool {
    if let Some(m) = *memo
        && m.start <= start
        && start <= m.first_newline
    {
        return m.minified;
    }
    let line_start = memchr::memrchr(b'\n', &hay[..start]).map_or(0, |p| p + 1);
    let line_end = memchr::memchr(b'\n', &hay[end..]).map_or(hay.len(), |p| end + p);
    let verdict = is_minified(&hay[line_start..line_end]);
    let first_newline =
        memchr::memchr(b'\n', &hay[line_start..]).map_or(hay.len(), |p| line_start + p);
    *memo = Some(LineMemo {
        start: line_start,
        first_newline,
        minified: verdict,
    });
    verdict
}

fn in_data_uri(before: &[u8]) -> bool {
    match memchr::memmem::rfind(before, b"data:") {
        Some(p) => {
            let tail = &before[p..];
            tail.len() > 12
                && tail[5..].starts_with(b"image/")
                && memchr::memmem::find(tail, b";base64,").is_some()
                && !tail
                    .iter()
                    .any(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'\'')
        }
        None => false,
    }
}

fn labelled_as_hash(before: &[u8]) -> bool {
    const LABELS: [&[u8]; 16] = [
        b"sha",
        b"md5",
        b"hash",
        b"digest",
        b"checksum",
        b"commit",
        b"etag",
        b"integrity",
        b"blake",
        b"revision",
        b"parent",
        b"tree ",
        b"object",
        b"fingerprint",
        b"crc",
        b"rev",
    ];
    let tail = &before[before.len().saturating_sub(40)..];
    let lower = tail.to_ascii_lowercase();
    LABELS
        .iter()
        .any(|l| memchr::memmem::find(&lower, l).is_some())
}

/// `<hex>  <file>` or `<hex> *<file>` as `sha256sum` and friends print them.
fn checksum_listing(after: &[u8]) -> bool {
    let rest = after.split(|&b| b == b'\n').next().unwrap_or(b"");
    let trimmed = rest.trim_ascii_start();
    trimmed.len() < rest.len() && !trimmed.is_empty() && !trimmed.contains(&b' ')
}

/// `8-4-4-4-12` hex.
pub(crate) fn is_uuid(s: &[u8]) -> bool {
    s.len() == 36
        && s.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

fn is_placeholder(s: &[u8]) -> bool {
    let lower = s.to_ascii_lowercase();
    let has = |w: &[u8]| memchr::memmem::find(&lower, w).is_some();
    s.starts_with(b"${")
        || s.starts_with(b"{{")
        || s.starts_with(b"<")
        || s.starts_with(b"%(")
        || has(b"xxxxx")
        || has(b"*****")
        || has(b"changeme")
        || has(b"placeholder")
        || has(b"your_")
        || has(b"your-")
        || has(b"example")
        || has(b"redacted")
        || has(b"dummy")
        || has(b"123456789")
        || has(b"abcdefg")
        || s.windows(6).any(|w| w.iter().all(|&b| b == w[0]))
}

/// A value that names where the secret is rather than holding it: a shell or environment
/// variable (`$NAME`, `$(cmd)`), an AWS ARN, a CSS/URL fragment selector (`#some-id`).
fn is_reference(s: &[u8]) -> bool {
    let shell_variable = match s.strip_prefix(b"$") {
        Some([b'(', ..]) => true,
        Some(rest)
            if rest
                .first()
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') =>
        {
            let name = rest
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            matches!(rest.get(name), None | Some(b'/' | b'.' | b':'))
        }
        _ => false,
    };
    let selector = s.len() > 1
        && s[0] == b'#'
        && s[1..]
            .iter()
            .all(|b| b.is_ascii_lowercase() || matches!(b, b'-' | b'_'));
    shell_variable || selector || s.starts_with(b"arn:")
}

/// `snake_case_words` or `camelCaseWords` without digits: a name, not a value.
fn is_identifier_like(s: &[u8]) -> bool {
    !s.iter().any(u8::is_ascii_digit)
        && s.iter()
            .all(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'.')
        && (s.contains(&b'_') || s.contains(&b'.') || s.iter().all(u8::is_ascii_lowercase))
}

fn is_member_chain(s: &[u8]) -> bool {
    s.iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'))
        && (s.contains(&b'.') || !s.iter().any(u8::is_ascii_digit))
}

/// A long line dense with code punctuation and nearly free of spaces.
pub(crate) fn is_minified(line: &[u8]) -> bool {
    if line.len() < 500 {
        return false;
    }
    let spaces = line.iter().filter(|&&b| b == b' ').count();
    let punct = line
        .iter()
        .filter(|&&b| matches!(b, b';' | b'{' | b'}' | b'(' | b')' | b',' | b'='))
        .count();
    spaces * 20 < line.len() && punct * 15 > line.len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_spans_inside_a_well_formed_marker_are_part_of_it() {
        let hay = b"--user \"x[REDACTED:mailgun-api-key]\" z";
        let open = 9;
        let close = hay.iter().position(|&b| b == b']').unwrap();
        let inside = |s: usize, e: usize| in_redaction_marker(hay, s, e);
        assert!(inside(open, close + 1));
        assert!(inside(open + 10, close + 1));
        assert!(inside(open + 11, close));
        assert!(!inside(open - 1, close + 1), "starts before the marker");
        assert!(!inside(open + 10, close + 2), "ends after it");
        assert!(!inside(0, 5));
        for not_marker in [
            &b"[REDACTED:hunter2!]"[..],
            b"[REDACTED:]",
            b"[REDACTED:Upper]",
            b"[REDACTED:no-close",
        ] {
            assert!(
                !in_redaction_marker(not_marker, 10, not_marker.len()),
                "{not_marker:?}"
            );
        }
        let long = format!("[REDACTED:{}]", "a".repeat(MARKER_ID_MAX + 1));
        assert!(!in_redaction_marker(long.as_bytes(), 10, long.len()));
    }

    use super::*;

    fn guard(text: &str, secret: &str, generic: bool) -> Option<&'static str> {
        let start = text.find(secret).unwrap();
        benign(
            text.as_bytes(),
            start,
            start + secret.len(),
            generic,
            &mut None,
        )
    }

    #[test]
    fn the_remembered_line_verdict_is_the_one_worked_out_afresh() {
        let minified = format!(
            "{}token:e.session.token1{}",
            "a(b);c={d:1},".repeat(60),
            "x(y);".repeat(40)
        );
        let text = format!(
            "a.b.c.d\n{minified}\nshort e.session.token1 line\n{minified}\n{}",
            "q".repeat(700)
        );
        let t = text.as_bytes();
        let mut memo = None;
        let mut dropped = 0;
        for start in 0..t.len() {
            for end in start + 1..(start + 20).min(t.len()) {
                let shared = benign(t, start, end, true, &mut memo);
                assert_eq!(
                    shared,
                    benign(t, start, end, true, &mut None),
                    "{start}..{end}"
                );
                dropped += usize::from(shared == Some("code in a minified line"));
            }
        }
        assert!(dropped > 20, "{dropped}");
    }

    #[test]
    fn uuids_and_hashes_are_benign_for_generic_rules_only() {
        let t = r#"token = "3f2b8c4e-9d1a-4e6f-8b2c-7a9d0e1f2a3b""#;
        assert_eq!(
            guard(t, "3f2b8c4e-9d1a-4e6f-8b2c-7a9d0e1f2a3b", true),
            Some("a UUID")
        );
        assert_eq!(
            guard(t, "3f2b8c4e-9d1a-4e6f-8b2c-7a9d0e1f2a3b", false),
            None
        );
        let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert!(guard(&format!("secret: {sha}"), sha, true).is_some());
        assert_eq!(guard(&format!("key: {sha}"), sha, false), None);
    }

    #[test]
    fn labelled_digests_and_checksum_listings_are_benign_for_all_rules() {
        let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert!(guard(&format!("sha256={sha}"), sha, false).is_some());
        assert!(guard(&format!("commit {}", &sha[..40]), &sha[..40], false).is_some());
        assert!(guard(&format!("{sha}  dist/app.tar.gz"), sha, false).is_some());
        assert_eq!(guard(&format!("{sha} is the key"), sha, false), None);
    }

    #[test]
    fn data_uris_placeholders_identifiers_and_minified_code() {
        let t = "src=\"data:image/png;base64,iVBORw0KGgoAAAAsk_live_abcdefghijklmnop\"";
        assert!(guard(t, "sk_live_abcdefghijklmnop", false).is_some());
        assert!(guard("password=${DB_PASSWORD}", "${DB_PASSWORD}", true).is_some());
        assert!(guard("password: your_password_here", "your_password_here", true).is_some());
        assert!(guard("secret = process_env_secret", "process_env_secret", true).is_some());
        let line = format!(
            "{}token:e.session.token1{}",
            "a(b);c={d:1},".repeat(60),
            "x(y);".repeat(40)
        );
        assert!(guard(&line, "e.session.token1", true).is_some());
        assert_eq!(
            guard("token = Zx81kPq02LmNw7Ty", "Zx81kPq02LmNw7Ty", true),
            None
        );
    }

    #[test]
    fn variables_arns_selectors_and_counting_sequences_are_not_secrets() {
        for (text, value) in [
            (
                "export PGPASSWORD=\"$gdcapi_db_password\"",
                "$gdcapi_db_password",
            ),
            (
                "FORGOT_PASSWORD=$REACT_APP_BASE_URL/classroom/#/forgot",
                "$REACT_APP_BASE_URL/classroom/#/forgot",
            ),
            ("password = $(cat /run/secrets/pw)", "$(cat"),
            (
                "ChangePassword = \"arn:aws:iam::aws:policy/IAMUserChangePassword\"",
                "arn:aws:iam::aws:policy/IAMUserChangePassword",
            ),
            ("this.addPassword = '#add-password';", "#add-password"),
            (
                "secret_access_key = 'abcdefg12346+FJQCK'",
                "abcdefg12346+FJQCK",
            ),
            (
                "aws_secret_key: OOzkR1+hF+1ABCsIFDJMEUtqmtnZ1234567890",
                "OOzkR1+hF+1ABCsIFDJMEUtqmtnZ1234567890",
            ),
        ] {
            assert!(guard(text, value, true).is_some(), "{value}");
        }
        // A value that merely contains `$` or starts with `#` stays a secret.
        for (text, value) in [
            ("password = Tr0ub$4dor", "Tr0ub$4dor"),
            ("password = $uper$ecret9", "$uper$ecret9"),
            ("Password=#gets0m3", "#gets0m3"),
        ] {
            assert_eq!(guard(text, value, true), None, "{value}");
        }
    }
}
