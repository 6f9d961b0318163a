//! The keyword prefilter's candidate test with AVX2: the one module of this crate allowed
//! `unsafe` (the intrinsics, and the gather's raw table read).
//!
//! It computes exactly what the portable loop of [`KeywordFilter::for_each`] computes, for
//! eight positions per vector: the folded three bytes starting at a position, hashed
//! ([`hash`]), index the filter table; the position is a candidate when that entry has the
//! bit of the position's fourth byte ([`fourth_byte_bit`]). Four unaligned loads at offsets
//! `i..i + 4` give the little-endian words starting at the 32 positions `i..i + 32`, so no
//! shuffle is needed. Only positions with a fourth byte inside the text are tested here
//! (every other one has the all-bits entry test of the text's end, left to the portable
//! tail).
//!
//! [`KeywordFilter::for_each`]: super::prefilter::KeywordFilter::for_each
//! [`hash`]: super::prefilter::hash
//! [`fourth_byte_bit`]: super::prefilter::fourth_byte_bit
#![allow(unsafe_code)]

use crate::prefilter::{FILTER_BITS, FOLD, HASH_MULTIPLIER, TABLE_LEN};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_castsi256_ps, _mm256_cmpeq_epi32, _mm256_i32gather_epi32,
    _mm256_loadu_si256, _mm256_movemask_ps, _mm256_mullo_epi32, _mm256_or_si256, _mm256_set1_epi32,
    _mm256_setzero_si256, _mm256_sllv_epi32, _mm256_srli_epi32,
};

/// Whether this CPU can run [`candidates`] (checked once per filter, at build time).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Calls `candidate(position)` for every candidate position `p` with `p + 3 < hay.len()`
/// in `0..end`, in increasing blocks of 32, and returns `end`: the first position it did
/// not test (the portable loop tests the rest). Tests nothing and returns 0 when
/// [`available`] is false.
///
/// `table` must be the filter table, [`TABLE_LEN`] bytes: the `1 << FILTER_BITS` entries
/// plus three bytes of padding that the gather's four-byte reads may touch.
pub(crate) fn candidates(
    table: &[u8; TABLE_LEN],
    hay: &[u8],
    candidate: &mut dyn FnMut(usize),
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if available() {
            // SAFETY: `available` has just checked that this CPU supports AVX2, the only
            // target feature `candidates_avx2` is compiled for.
            return unsafe { candidates_avx2(table, hay, candidate) };
        }
    }
    let _ = (table, hay, candidate);
    0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn candidates_avx2(table: &[u8; TABLE_LEN], hay: &[u8], candidate: &mut dyn FnMut(usize)) -> usize {
    let n = hay.len();
    let mut i = 0;
    // The load at `i + 3` reads bytes up to `i + 35`; the fourth byte of position
    // `i + 31` is `i + 34`.
    while i + 35 <= n {
        let mut found = [0u32; 4];
        for (shift, bits) in found.iter_mut().enumerate() {
            let p = hay[i + shift..i + shift + 32].as_ptr().cast::<__m256i>();
            // SAFETY: `p` points at 32 readable bytes of `hay` (the slice just taken);
            // `loadu` does not need alignment.
            let words = unsafe { _mm256_loadu_si256(p) };
            *bits = test(table, words);
        }
        if found != [0; 4] {
            for (shift, &bits) in found.iter().enumerate() {
                let mut bits = bits;
                while bits != 0 {
                    let lane = bits.trailing_zeros() as usize;
                    candidate(i + shift + 4 * lane);
                    bits &= bits - 1;
                }
            }
        }
        i += 32;
    }
    i
}

/// The candidate bits of the eight positions whose little-endian four bytes are the lanes
/// of `words` (bit `k` for lane `k`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn test(table: &[u8; TABLE_LEN], words: __m256i) -> u32 {
    const _: () = assert!(TABLE_LEN >= (1 << FILTER_BITS) + 3);
    let grams = _mm256_or_si256(words, _mm256_set1_epi32(FOLD as u32 as i32));
    // The hash of the low three (folded) bytes: bits 8 to 23 of the product.
    let product = _mm256_mullo_epi32(grams, _mm256_set1_epi32(HASH_MULTIPLIER as i32));
    let index = _mm256_and_si256(
        _mm256_srli_epi32::<8>(product),
        _mm256_set1_epi32((1 << FILTER_BITS) - 1),
    );
    // SAFETY: every index is below `1 << FILTER_BITS` (masked just above) and each lane
    // reads the four bytes at `table + index`, which `TABLE_LEN >= (1 << FILTER_BITS) + 3`
    // keeps inside the table; gathers with scale 1 may read unaligned.
    let entries = unsafe { _mm256_i32gather_epi32::<1>(table.as_ptr().cast::<i32>(), index) };
    let entries = _mm256_and_si256(entries, _mm256_set1_epi32(0xFF));
    // The bit of the fourth byte (the word's high byte): 1 << (byte & 7).
    let fourth = _mm256_and_si256(_mm256_srli_epi32::<24>(words), _mm256_set1_epi32(7));
    let bit = _mm256_sllv_epi32(_mm256_set1_epi32(1), fourth);
    let miss = _mm256_cmpeq_epi32(_mm256_and_si256(entries, bit), _mm256_setzero_si256());
    !(_mm256_movemask_ps(_mm256_castsi256_ps(miss)) as u32) & 0xFF
}
