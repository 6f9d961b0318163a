//! What the benches share: the benign corpus as one buffer.
use std::path::Path;

/// The benign corpus (`corpora/secrets/benign/*`, files in name order) cycled to
/// `target` bytes.
pub(crate) fn benign(target: usize) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/secrets/benign");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the benign corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let one: Vec<u8> = files
        .iter()
        .flat_map(|p| std::fs::read(p).expect("readable"))
        .collect();
    one.iter().copied().cycle().take(target).collect()
}
