//! The keyword prefilter: every (overlapping, ASCII-case-insensitive) occurrence of every
//! rule keyword in a buffer.
//!
//! A byte-at-a-time automaton over hundreds of keywords runs at a few hundred MB/s: each
//! step waits for the previous table lookup. This filter instead tests every position
//! independently: the case-folded three bytes starting there are hashed into a table of
//! the keywords' first three bytes (64 KiB, one byte per entry; the entries text touches
//! stay in L1), six positions per 64-bit load, their entries or-ed together.
//! Only positions whose entry is set (a keyword prefix, or a rare hash collision) are
//! verified against the few keywords of their bucket. Keywords shorter than three bytes
//! (possible in imported gitleaks rules) go through an Aho-Corasick automaton instead.
//!
//! The result is exactly the set of `(keyword, start)` pairs an overlapping
//! case-insensitive Aho-Corasick search reports (a test checks this against
//! `aho-corasick` on the corpora and on random text).
use crate::prefilter_avx2;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// Bits of the filter hash (the table has `1 << FILTER_BITS` entries).
pub(crate) const FILTER_BITS: u32 = 16;
/// The table's length: its entries plus three bytes of padding, so that the AVX2 path's
/// four-byte gathers at any entry stay inside it.
pub(crate) const TABLE_LEN: usize = (1 << FILTER_BITS) + 3;
/// The multiplier of [`hash`].
pub(crate) const HASH_MULTIPLIER: u32 = 0x9E37_79B1;
/// Bits of the bucket hash (a prefix of the filter hash).
const BUCKET_BITS: u32 = 12;
/// ASCII case folding that is cheap on whole words: sets bit 5 of every byte. Letters fold
/// to lowercase; other bytes may collide with each other, which only adds candidates
/// that verification then rejects.
pub(crate) const FOLD: u64 = 0x2020_2020_2020_2020;

/// A `FILTER_BITS`-bit hash of the low three bytes of `gram`: bits 8 to 23 of a product,
/// which (a product's bit `j` depends only on bits `0..=j` of its factors) ignore the
/// fourth byte, so a position's hash needs no masking.
#[inline(always)]
pub(crate) fn hash(gram: u32) -> u32 {
    const _: () = assert!(FILTER_BITS == 16);
    (gram.wrapping_mul(HASH_MULTIPLIER) >> 8) & 0xFFFF
}

/// Finds keyword occurrences; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct KeywordFilter {
    /// The keywords, lowercase (ASCII), as given to [`new`](Self::new).
    keywords: Vec<Vec<u8>>,
    /// Entry `hash(first three folded bytes)` of every keyword of 3+ bytes has the
    /// keyword's [`fourth_byte_bit`] set. A byte per hash rather than a bit: testing a
    /// position is then one load, the loads of a word's six positions are simply or-ed
    /// together, and only positions whose fourth byte fits are verified.
    table: Box<[u8; TABLE_LEN]>,
    /// `bucket_start[b]..bucket_start[b + 1]` indexes `bucket_keywords` for bucket `b`.
    bucket_start: Vec<u32>,
    /// Keywords of 3+ bytes grouped by bucket: their folded first (up to) eight bytes
    /// as a little-endian word, the mask of those bytes, and the keyword index.
    bucket_keywords: Vec<(u64, u64, u32)>,
    /// The automaton over the keywords shorter than three bytes, with their indexes.
    short: Option<(AhoCorasick, Vec<u32>)>,
    /// Whether this CPU runs the AVX2 candidate test ([`prefilter_avx2`]).
    simd: bool,
}

/// The folded first three bytes of `b` (at least three long), as [`KeywordFilter::for_each`]
/// reads them out of a 64-bit word.
fn gram(b: &[u8]) -> u32 {
    (u32::from(b[0]) | (u32::from(b[1]) << 8) | (u32::from(b[2]) << 16))
        | (FOLD as u32 & 0x00FF_FFFF)
}

/// The table bit of a keyword's (or a position's) fourth byte: its low three bits, which
/// ASCII case does not change; every bit when there is none (a keyword of three bytes
/// matches whatever follows, and at the end of the text only such keywords fit).
#[inline(always)]
pub(crate) fn fourth_byte_bit(b: Option<u8>) -> u8 {
    b.map_or(0xFF, |b| 1 << (b & 7))
}

impl KeywordFilter {
    /// A filter over non-empty, lowercase keywords.
    pub(crate) fn new(keywords: Vec<Vec<u8>>) -> Result<Self, String> {
        let mut table = Box::new([0u8; TABLE_LEN]);
        let mut buckets: Vec<Vec<(u64, u64, u32)>> = vec![Vec::new(); 1 << BUCKET_BITS];
        let mut short = Vec::new();
        for (i, k) in keywords.iter().enumerate() {
            if k.len() < 3 {
                short.push(i as u32);
                continue;
            }
            let h = hash(gram(k));
            table[h as usize] |= fourth_byte_bit(k.get(3).copied());
            let mut head = [0u8; 8];
            let m = k.len().min(8);
            head[..m].copy_from_slice(&k[..m]);
            let mask = u64::MAX >> (8 * (8 - m));
            let head = (u64::from_le_bytes(head) | FOLD) & mask;
            buckets[(h >> (FILTER_BITS - BUCKET_BITS)) as usize].push((head, mask, i as u32));
        }
        let mut bucket_start = Vec::with_capacity(buckets.len() + 1);
        let mut bucket_keywords = Vec::new();
        for b in &buckets {
            bucket_start.push(bucket_keywords.len() as u32);
            bucket_keywords.extend_from_slice(b);
        }
        bucket_start.push(bucket_keywords.len() as u32);
        let short = if short.is_empty() {
            None
        } else {
            let pats: Vec<&[u8]> = short.iter().map(|&i| &keywords[i as usize][..]).collect();
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(true)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&pats)
                .or_else(|_| {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::Standard)
                        .ascii_case_insensitive(true)
                        .build(&pats)
                })
                .map_err(|e| e.to_string())?;
            Some((ac, short))
        };
        Ok(KeywordFilter {
            keywords,
            table,
            bucket_start,
            bucket_keywords,
            short,
            simd: prefilter_avx2::available(),
        })
    }

    /// Calls `hit(keyword index, start, end)` for every occurrence of every keyword in
    /// `hay` (ASCII case-insensitively, overlapping), in no particular order.
    pub(crate) fn for_each(&self, hay: &[u8], hit: impl FnMut(usize, usize, usize)) {
        self.for_each_with(self.simd, hay, hit);
    }

    /// [`for_each`](Self::for_each) with the AVX2 candidate test (when `simd` and the CPU
    /// has it) or with the portable one only: both report the same hits.
    pub(crate) fn for_each_with(
        &self,
        simd: bool,
        hay: &[u8],
        mut hit: impl FnMut(usize, usize, usize),
    ) {
        let n = hay.len();
        let table: &[u8; TABLE_LEN] = &self.table;
        let test = |g: u32| table[hash(g) as usize & ((1 << FILTER_BITS) - 1)];
        let mut i = 0;
        if simd {
            i = prefilter_avx2::candidates(table, hay, &mut |at| self.verify(hay, at, &mut hit));
        }
        // Eight bytes per load give the grams of six positions; their table entries are
        // or-ed together and looked at one by one only when one is set.
        while i + 8 <= n {
            let w = u64::from_le_bytes(hay[i..i + 8].try_into().expect("eight bytes")) | FOLD;
            let gram = |k: usize| (w >> (8 * k)) as u32;
            let any = (0..6).fold(0u8, |any, k| any | test(gram(k)));
            if any != 0 {
                for k in 0..6 {
                    let fourth = fourth_byte_bit(hay.get(i + k + 3).copied());
                    if test(gram(k)) & fourth != 0 {
                        self.verify(hay, i + k, &mut hit);
                    }
                }
            }
            i += 6;
        }
        while i + 3 <= n {
            if test(gram(&hay[i..])) & fourth_byte_bit(hay.get(i + 3).copied()) != 0 {
                self.verify(hay, i, &mut hit);
            }
            i += 1;
        }
        if let Some((ac, index)) = &self.short {
            for m in ac.find_overlapping_iter(hay) {
                hit(index[m.pattern().as_usize()] as usize, m.start(), m.end());
            }
        }
    }

    #[inline]
    fn verify(&self, hay: &[u8], at: usize, hit: &mut impl FnMut(usize, usize, usize)) {
        let b = (hash(gram(&hay[at..])) >> (FILTER_BITS - BUCKET_BITS)) as usize;
        let rest = &hay[at..];
        let word = match rest.get(..8) {
            Some(w) => u64::from_le_bytes(w.try_into().expect("eight bytes")) | FOLD,
            None => {
                let mut w = [0u8; 8];
                w[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(w) | FOLD
            }
        };
        let bucket =
            &self.bucket_keywords[self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize];
        for &(head, mask, k) in bucket {
            // The folded comparison of the first eight bytes rejects most candidates;
            // the exact one decides.
            if word & mask != head {
                continue;
            }
            let kw = &self.keywords[k as usize];
            if rest.len() >= kw.len() && rest[..kw.len()].eq_ignore_ascii_case(kw) {
                hit(k as usize, at, at + kw.len());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn reference(keywords: &[Vec<u8>], hay: &[u8]) -> BTreeSet<(usize, usize, usize)> {
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(keywords)
            .unwrap();
        ac.find_overlapping_iter(&hay.to_ascii_lowercase())
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
            .collect()
    }

    fn ours(f: &KeywordFilter, hay: &[u8]) -> BTreeSet<(usize, usize, usize)> {
        with(f, f.simd, hay)
    }

    fn with(f: &KeywordFilter, simd: bool, hay: &[u8]) -> BTreeSet<(usize, usize, usize)> {
        let mut out = BTreeSet::new();
        f.for_each_with(simd, hay, |k, s, e| {
            assert!(out.insert((k, s, e)), "reported twice: {k} at {s}");
        });
        out
    }

    /// Text over an alphabet of keyword pieces, so that keyword heads, hash collisions
    /// and fourth bytes that do and do not fit are all common.
    fn keyword_soup() -> impl Strategy<Value = Vec<u8>> {
        let pieces: Vec<&'static [u8]> = vec![
            b"tok",
            b"TOKEN",
            b"en",
            b"secr",
            b"et",
            b"pass",
            b"WORD",
            b"akia",
            b"ghp_",
            b"sk_",
            b"live_",
            b"xoxb-",
            b"eyJ",
            b"://",
            b"=",
            b"\"",
            b" ",
            b"\n",
            b"\xc3\xa9",
            b"a",
            b"Z",
            b"0",
            b"_",
            b"-",
            b"$2b$",
            b"pwd",
            b"q_",
            b"x",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..120).prop_map(|ps| ps.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// The AVX2 candidate test and the portable one report the same hits, and the
        /// filter uses AVX2 wherever the CPU has it.
        #[test]
        fn the_avx2_path_equals_the_portable_path(text in keyword_soup(), cut in 0usize..40) {
            let f = filter();
            proptest::prop_assert_eq!(f.simd, crate::prefilter_avx2::available());
            let text = &text[text.len().min(cut)..];
            proptest::prop_assert_eq!(with(f, true, text), with(f, false, text));
        }
    }

    fn filter() -> &'static KeywordFilter {
        static F: std::sync::OnceLock<KeywordFilter> = std::sync::OnceLock::new();
        F.get_or_init(|| {
            let mut keywords = crate::testing::default_keywords();
            keywords.extend([b"x".to_vec(), b"q_".to_vec(), b"\xc3\xa9t\xc3".to_vec()]);
            KeywordFilter::new(keywords).unwrap()
        })
    }

    #[test]
    fn the_avx2_path_equals_the_portable_path_on_the_corpora_at_every_alignment() {
        let f = filter();
        let mut hits = 0;
        for text in crate::testing::corpus_texts() {
            for shift in [0, 1, 2, 3, 5, 31, 33] {
                let t = &text[text.len().min(shift)..];
                let portable = with(f, false, t);
                hits += portable.len();
                assert_eq!(with(f, true, t), portable, "shift {shift}");
            }
        }
        assert!(hits > 1000, "only {hits} hits");
    }

    #[test]
    fn finds_exactly_what_an_overlapping_case_insensitive_automaton_finds() {
        let mut keywords = crate::testing::default_keywords();
        keywords.extend([b"x".to_vec(), b"q_".to_vec(), b"\xc3\xa9t\xc3".to_vec()]);
        let f = KeywordFilter::new(keywords.clone()).unwrap();
        let mut texts = crate::testing::corpus_texts();
        // Keywords glued together, in mixed case, at every alignment and at the very end.
        let glued: Vec<u8> = keywords.iter().flatten().copied().collect();
        for shift in 0..8 {
            let mut t = vec![b'.'; shift];
            t.extend(glued.iter().enumerate().map(|(i, b)| {
                if i % 3 == 0 {
                    b.to_ascii_uppercase()
                } else {
                    *b
                }
            }));
            texts.push(t);
        }
        for k in &keywords {
            texts.push(k.to_ascii_uppercase());
        }
        // Pseudo-random bytes over a small alphabet that makes keyword prefixes likely.
        let alphabet = b"tokenTOKENsecrtpaswd_-:$.AKIAghp0123456789 \n\"=";
        let mut next = crate::testing::xorshift(0x1234_5678);
        for len in [0, 1, 2, 3, 7, 8, 9, 100, 5000] {
            let t: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            texts.push(t);
        }
        let mut total = 0;
        for t in &texts {
            let want = reference(&keywords, t);
            total += want.len();
            assert_eq!(ours(&f, t), want, "{:?}", String::from_utf8_lossy(t));
        }
        assert!(
            total > 1000,
            "the test texts hold only {total} keyword hits"
        );
    }
}
