//! Embeds the default rule packs (`rules/prescan/{python,javascript,shell}/*.toml`) so the
//! scanner works anywhere without the repository.
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs, not when it was compiled: a build script binary can be
    // reused for a checkout at another path.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("../../rules/prescan");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut out = String::from(
        "/// The default packs: (language directory, file name, contents).\npub(crate) const EMBEDDED: &[(&str, &str, &str)] = &[\n",
    );
    for lang in ["python", "javascript", "shell"] {
        let dir = root.join(lang);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            println!("cargo:rerun-if-changed={}", f.display());
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let abs = f.canonicalize().unwrap_or(f.clone());
            let _ = writeln!(
                out,
                "    ({lang:?}, {name:?}, include_str!({:?})),",
                abs.display().to_string()
            );
        }
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "/// A digest of the scanner's own source and the locked dependencies (the grammars):\n/// a cached verdict is only valid for the scanner that made it.\npub(crate) const SCANNER_DIGEST: &str = {:?};",
        source_digest(Path::new(&manifest))
    );
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
}

/// FNV-1a over the crate's `src/` files (sorted by path) and the workspace's `Cargo.lock`:
/// changes whenever the scanner's code or a dependency's version does. Not a security
/// boundary (the cache key's sha256 is), only the identity of this build of the scanner.
fn source_digest(manifest: &Path) -> String {
    let mut files = Vec::new();
    let mut dirs = vec![manifest.join("src")];
    while let Some(dir) = dirs.pop() {
        println!("cargo:rerun-if-changed={}", dir.display());
        for e in
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        {
            let p = e
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
                .path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    files.push(manifest.join("../../Cargo.lock"));
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f
            .strip_prefix(manifest)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(f).unwrap_or_default();
        for b in name.bytes().chain([0]).chain(bytes) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}
