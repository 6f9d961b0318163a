//! Streaming: feed chunks of any size; each secret is reported exactly once, also when a
//! chunk boundary splits it.
use crate::scanner::{MAX_SECRET, Positions, SecretFinding, SecretScanner};

/// The largest scan batch of a long stream, in overlaps (see `StreamScanner::batch`).
const MAX_BATCH_OVERLAPS: usize = 8;

/// A scanner fed chunk by chunk.
///
/// It keeps an overlap of the text already seen (twice the largest rule window plus the
/// longest secret), reports a finding once its end is far enough from the end of the
/// text seen so far that more input cannot change it, and reports the rest on
/// [`finish`](Self::finish). Offsets, lines and columns are those of the whole stream.
///
/// Encoded segments (a base64 blob) longer than the overlap are decoded only as far as
/// they are inside the buffer; scan a complete output with [`SecretScanner::scan`] to see
/// through them entirely.
///
/// ```
/// let scanner = skillgate_secrets::SecretScanner::default_pack().unwrap();
/// let mut stream = scanner.stream();
/// let mut found = stream.feed(b"key: AKIAZ3MSJV4");
/// found.extend(stream.feed(b"WXQ7LTN2H\n"));
/// found.extend(stream.finish());
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].start, 5);
/// ```
#[derive(Debug, Clone)]
pub struct StreamScanner {
    scanner: SecretScanner,
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    base: usize,
    /// Stream offset up to which findings (by their end) have been reported.
    reported: usize,
    /// Bytes fed since the last scan.
    pending: usize,
    overlap: usize,
    lines_before: u32,
    chars_before: u32,
}

impl StreamScanner {
    pub(crate) fn new(scanner: SecretScanner) -> Self {
        let overlap = 2 * scanner.rules().max_window() + MAX_SECRET + 256;
        StreamScanner {
            scanner,
            buf: Vec::new(),
            base: 0,
            reported: 0,
            pending: 0,
            overlap,
            lines_before: 0,
            chars_before: 0,
        }
    }

    /// The bytes of context kept between scans.
    pub fn overlap(&self) -> usize {
        self.overlap
    }

    /// Feeds a chunk; returns the findings that are now final.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SecretFinding> {
        self.buf.extend_from_slice(chunk);
        self.pending += chunk.len();
        if self.pending < self.batch() {
            return Vec::new();
        }
        self.scan(false)
    }

    /// How many new bytes to collect before scanning: twice the overlap at first, then
    /// as much as has been dropped so far, up to [`MAX_BATCH_OVERLAPS`] overlaps. Each
    /// scan reads the kept context again, so larger batches read less twice; the batch
    /// grows only with the stream, so a short output is scanned as early as before.
    fn batch(&self) -> usize {
        (2 * self.overlap).max(self.base.min(MAX_BATCH_OVERLAPS * self.overlap))
    }

    /// Ends the stream; returns the remaining findings.
    pub fn finish(mut self) -> Vec<SecretFinding> {
        self.scan(true)
    }

    fn scan(&mut self, last: bool) -> Vec<SecretFinding> {
        self.pending = 0;
        let safe = if last {
            self.buf.len()
        } else {
            self.buf.len().saturating_sub(self.overlap)
        };
        let mut pos = Positions::new(self.lines_before, self.chars_before);
        pos.base = self.base;
        let found: Vec<SecretFinding> = self
            .scanner
            .candidates(&self.buf)
            .into_iter()
            .filter(|c| self.base + c.end > self.reported && c.end <= safe)
            .map(|c| self.scanner.finding(c, &self.buf, &mut pos))
            .collect();
        self.reported = self.base + safe;
        let keep_from = safe.saturating_sub(self.overlap);
        let dropped = &self.buf[..keep_from];
        self.lines_before += memchr::memchr_iter(b'\n', dropped).count() as u32;
        let chars = |s: &[u8]| s.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u32;
        match memchr::memrchr(b'\n', dropped) {
            Some(p) => self.chars_before = chars(&dropped[p + 1..]),
            None => self.chars_before += chars(dropped),
        }
        self.buf.drain(..keep_from);
        self.base += keep_from;
        found
    }
}

impl SecretScanner {
    /// A streaming scanner with these rules.
    pub fn stream(&self) -> StreamScanner {
        StreamScanner::new(self.clone())
    }
}
