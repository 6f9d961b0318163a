//! Helpers shared by the unit tests: the corpora and pseudo-random text.
use std::path::Path;

/// Every file of `corpora/secrets/benign` and `corpora/secrets/positive`.
pub(crate) fn corpus_texts() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/secrets");
    let mut texts = Vec::new();
    for dir in ["benign", "positive"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            texts.push(std::fs::read(e.unwrap().path()).unwrap());
        }
    }
    texts
}

/// A xorshift generator: deterministic, good enough to shuffle test text.
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.max(1);
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `count` texts of 1 to `max_pieces` pieces each, drawn from `pieces`.
pub(crate) fn soup(pieces: &[&[u8]], seed: u64, count: usize, max_pieces: usize) -> Vec<Vec<u8>> {
    let mut next = xorshift(seed);
    (0..count)
        .map(|_| {
            let len = 1 + next() as usize % max_pieces;
            (0..len)
                .flat_map(|_| pieces[next() as usize % pieces.len()].iter().copied())
                .collect()
        })
        .collect()
}

/// What the generic assignment rules match is made of, so that a [`soup`] of these
/// matches them often and in every shape.
pub(crate) const ASSIGNMENT_PIECES: [&[u8]; 30] = [
    b"token",
    b"Password",
    b"secret",
    b"api",
    b"KEY",
    b"pwd",
    b"_",
    b".",
    b"-",
    b"\"",
    b"'",
    b" ",
    b"\t",
    b"\n",
    b":",
    b"=",
    b">",
    b"x9Qz",
    b"value",
    b"str",
    b"ing",
    b"access",
    b"Zx81kPq02LmNw7Ty",
    b"&",
    b",",
    b"{",
    b"/",
    b"$",
    b"(",
    b"hunter2!",
];

/// Every keyword of the default pack, lowercase, sorted, without duplicates.
pub(crate) fn default_keywords() -> Vec<Vec<u8>> {
    let set = crate::RuleSet::default_pack().unwrap();
    let mut k: Vec<Vec<u8>> = set
        .rules()
        .iter()
        .flat_map(|r| &r.def().keywords)
        .map(|k| k.to_ascii_lowercase().into_bytes())
        .collect();
    k.sort();
    k.dedup();
    k
}
