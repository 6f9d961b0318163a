//! Embeds the default rule packs (`rules/prescan/{python,javascript}/*.toml`) so the
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
    for lang in ["python", "javascript"] {
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
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
}
