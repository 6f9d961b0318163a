//! What can go wrong with a runtime.
use std::path::PathBuf;

/// A runtime that cannot be defined, installed, found or trusted.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A definition that does not parse or is not valid.
    #[error("runtime definition {origin}: {message}")]
    Definition {
        /// The file (or `built-in <name>`).
        origin: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// No definition of that name.
    #[error("unknown runtime `{name}` (known: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// The runtime is defined but not installed.
    #[error("runtime `{name}` is not installed: run `skillgate runtime install {name}`")]
    NotInstalled {
        /// The runtime.
        name: String,
    },
    /// The installed runtime's files differ from what was installed.
    #[error(
        "runtime `{name}` at {} was changed after it was installed ({what}); \
         reinstall it with `skillgate runtime install {name} --force`", dir.display()
    )]
    Modified {
        /// The runtime.
        name: String,
        /// Its directory.
        dir: PathBuf,
        /// What differs.
        what: String,
    },
    /// The installation failed; nothing was left behind.
    #[error("installing runtime `{name}` failed: {message}")]
    Install {
        /// The runtime.
        name: String,
        /// What failed, with the installer's own words.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, naming the path.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl RuntimeError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        RuntimeError::Io {
            what: what.into(),
            source,
        }
    }
}
