//! `[runtimes]`: which named runtime a skill runs on, and where installed runtimes live.
//!
//! A skill names its runtime in `SKILL.md` (`skillgate.runtime: python-data`); one that
//! does not gets its language's default here (`[runtimes] python = "python"`), and with
//! no default it runs on the executor's interpreter, as before runtimes existed. The
//! isolation layer resolves the runtime for every run: one that is unknown, of another
//! language, not installed or changed since it was installed ends the run as `error`
//! with a finding that names the fix.
use crate::Config;
use serde::Deserialize;
use skillgate_core::{Language, Skill};
use skillgate_runtime::{Catalog, Installed, Store};
use std::path::{Path, PathBuf};

/// `[runtimes]` in `skillgate.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimesConfig {
    /// Where runtimes are installed (default: `<state dir>/runtimes`).
    pub dir: Option<PathBuf>,
    /// A folder of runtime definitions replacing the built-in ones (`rules/runtimes`).
    pub definitions: Option<PathBuf>,
    /// The runtime of Python skills that name none (default: none, the executor's
    /// interpreter).
    pub python: Option<String>,
    /// The runtime of JavaScript skills that name none.
    pub javascript: Option<String>,
}

impl RuntimesConfig {
    /// Makes relative paths relative to `base` (the config file's folder).
    pub fn resolve_relative_to(&mut self, base: &Path) {
        for p in [&mut self.dir, &mut self.definitions].into_iter().flatten() {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
    }
}

/// The runtimes a pipeline offers: their definitions, where they are installed, and the
/// defaults per language.
#[derive(Debug)]
pub struct Runtimes {
    catalog: Catalog,
    store: Result<Store, String>,
    python: Option<String>,
    javascript: Option<String>,
}

impl Runtimes {
    /// The runtimes `config` describes. A definitions folder that does not load, or a
    /// default naming an unknown runtime or one of another language, is an error.
    pub fn from_config(config: &Config) -> Result<Runtimes, String> {
        let cfg = &config.runtimes;
        let catalog = match &cfg.definitions {
            Some(dir) => Catalog::load_dir(dir),
            None => Catalog::builtin(),
        }
        .map_err(|e| e.to_string())?;
        for (language, name) in [
            (Language::Python, &cfg.python),
            (Language::JavaScript, &cfg.javascript),
        ] {
            if let Some(name) = name {
                let def = catalog
                    .get(name)
                    .map_err(|e| format!("[runtimes] {language}: {e}"))?;
                if def.language != language {
                    return Err(format!(
                        "[runtimes] {language} = \"{name}\": that runtime runs {}",
                        def.language
                    ));
                }
            }
        }
        let store = match &cfg.dir {
            Some(dir) => Ok(dir.clone()),
            None => skillgate_monitor::resolve_state_dir(&config.monitor, None)
                .map(|d| d.join("runtimes"))
                .map_err(|e| e.to_string()),
        }
        .map(Store::new);
        Ok(Runtimes {
            catalog,
            store,
            python: cfg.python.clone(),
            javascript: cfg.javascript.clone(),
        })
    }

    /// The definitions.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Where runtimes are installed.
    pub fn store(&self) -> Result<&Store, String> {
        self.store.as_ref().map_err(Clone::clone)
    }

    /// The installed runtime `skill` runs on (`None`: the executor's interpreter), or why
    /// it cannot run, naming the fix.
    pub fn for_skill(&self, skill: &Skill) -> Result<Option<Installed>, String> {
        let default = match skill.language {
            Language::Python => &self.python,
            Language::JavaScript => &self.javascript,
            // The host's dash, which the native sandbox shows read-only.
            Language::Shell => &None,
        };
        let Some(name) = skill.runtime.as_ref().or(default.as_ref()) else {
            return Ok(None);
        };
        let def = self.catalog.get(name).map_err(|e| e.to_string())?;
        if def.language != skill.language {
            let same: Vec<&str> = self
                .catalog
                .iter()
                .filter(|d| d.language == skill.language)
                .map(|d| d.name.as_str())
                .collect();
            return Err(format!(
                "runtime `{name}` runs {} but skill `{}` is {}: name a {} runtime ({}) in `skillgate.runtime`",
                def.language,
                skill.name,
                skill.language,
                skill.language,
                same.join(", ")
            ));
        }
        let store = self.store()?;
        store.resolve(def).map(Some).map_err(|e| e.to_string())
    }
}
