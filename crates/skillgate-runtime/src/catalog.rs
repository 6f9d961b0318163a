//! The runtime definitions a deployment offers: the built-in ones (from
//! `rules/runtimes/`, embedded in the binary) or a folder replacing them.
use crate::{Definition, RuntimeError};
use std::collections::BTreeMap;
use std::path::Path;

/// The built-in definitions: (name, TOML).
const BUILTIN: [(&str, &str); 3] = [
    (
        "python",
        include_str!("../../../rules/runtimes/python.toml"),
    ),
    (
        "python-data",
        include_str!("../../../rules/runtimes/python-data.toml"),
    ),
    ("node", include_str!("../../../rules/runtimes/node.toml")),
];

/// Runtime definitions by name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    defs: BTreeMap<String, Definition>,
}

impl Catalog {
    /// The built-in definitions (`python`, `python-data`, `node`).
    pub fn builtin() -> Result<Catalog, RuntimeError> {
        let mut defs = BTreeMap::new();
        for (name, text) in BUILTIN {
            let def = Definition::parse(name, text, &format!("built-in {name}"))?;
            defs.insert(name.to_string(), def);
        }
        Ok(Catalog { defs })
    }

    /// Every `*.toml` in `dir`, each named by its stem. A file that does not load fails
    /// the whole catalog (fail closed).
    pub fn load_dir(dir: &Path) -> Result<Catalog, RuntimeError> {
        let rd = std::fs::read_dir(dir).map_err(|e| {
            RuntimeError::io(format!("reading runtime definitions {}", dir.display()), e)
        })?;
        let mut defs = BTreeMap::new();
        for entry in rd {
            let path = entry
                .map_err(|e| RuntimeError::io(format!("reading {}", dir.display()), e))?
                .path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path)
                .map_err(|e| RuntimeError::io(format!("reading {}", path.display()), e))?;
            let def = Definition::parse(&name, &text, &path.display().to_string())?;
            defs.insert(name, def);
        }
        Ok(Catalog { defs })
    }

    /// The definition called `name`.
    pub fn get(&self, name: &str) -> Result<&Definition, RuntimeError> {
        self.defs.get(name).ok_or_else(|| RuntimeError::Unknown {
            name: name.to_string(),
            known: self.defs.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }

    /// Every definition, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Definition> {
        self.defs.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_runtimes_load_and_pin_every_package() {
        let c = Catalog::builtin().unwrap();
        let names: Vec<_> = c.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["node", "python", "python-data"]);
        let data = c.get("python-data").unwrap();
        for want in ["numpy", "pandas", "scipy", "matplotlib"] {
            assert!(data.packages.iter().any(|p| p.name == want), "{want}");
        }
        assert_eq!(data.env["MPLBACKEND"], "Agg");
        assert!(c.get("python").unwrap().packages.is_empty());
        let e = c.get("pyhton").unwrap_err().to_string();
        assert!(e.contains("pyhton") && e.contains("python-data"), "{e}");
    }

    #[test]
    fn a_folder_replaces_them_and_a_bad_file_fails_it() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("mine.toml"),
            "language = \"javascript\"\ninterpreter = \"node\"\n",
        )
        .unwrap();
        let c = Catalog::load_dir(t.path()).unwrap();
        assert!(c.get("mine").is_ok() && c.get("python").is_err());
        std::fs::write(t.path().join("bad.toml"), "language = \"cobol\"\n").unwrap();
        let e = Catalog::load_dir(t.path()).unwrap_err().to_string();
        assert!(e.contains("bad.toml"), "{e}");
    }
}
