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
    // The same files as JSON, parsed at build time: at every start serde_json reads these
    // faster than the TOML parser reads the TOML (the pack is ~200 KB, examples included).
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    out.push_str(
        "/// The embedded default pack as JSON (same order), converted from the TOML at build time.\n",
    );
    out.push_str("pub(crate) static DEFAULT_PACK_JSON: &[(&str, &str)] = &[\n");
    for f in &files {
        let name = f.file_name().expect("a file").to_string_lossy();
        let text = std::fs::read_to_string(f)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
        let value: toml::Value = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", f.display()));
        let json = out_dir.join(format!("{name}.json"));
        std::fs::write(
            &json,
            serde_json::to_string(&value).expect("TOML values convert to JSON"),
        )
        .expect("OUT_DIR is writable");
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            json.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("default_pack.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
