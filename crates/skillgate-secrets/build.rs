//! Embeds every `rules/secrets/*.toml` file of the repository as the default rule pack, so
//! the scanner works anywhere. New rule files are picked up without code changes.
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dir = manifest.join("../../rules/secrets");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect(),
        Err(e) => panic!(
            "cannot read the default rule directory {}: {e}",
            dir.display()
        ),
    };
    files.sort();
    let mut out =
        String::from("/// The embedded default pack: (file name, contents), sorted by name.\n");
    out.push_str("pub(crate) static DEFAULT_PACK: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().expect("a file").to_string_lossy();
        let abs = f.canonicalize().expect("the rule file exists");
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            abs.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("default_pack.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
