//! Named runtimes: an interpreter plus a package set pinned by version and sha256, and
//! what the sandbox must make visible for it to work.
//!
//! - [`Definition`]: a runtime as data (`rules/runtimes/<name>.toml`); unknown keys are
//!   errors naming the key.
//! - [`Catalog`]: the built-in definitions, or a folder of them.
//! - [`Store`]: installs a definition into `<dir>/<name>-<digest>` (built in a temporary
//!   directory and renamed, so a failure leaves nothing half-installed), lists, verifies,
//!   and resolves an installed runtime for a run with a cheap check that it was not
//!   changed since.
//!
//! Python runtimes are virtualenvs over a real base interpreter (Debian's
//! `/usr/bin/python3`), filled by `pip install --require-hashes --no-deps
//! --only-binary=:all:` from a pinned requirements list: wheels are checked against the
//! definition's hashes, nothing is built from source, and no dependency is chosen by pip.
//! Node runtimes are the interpreter alone.
//!
//! ```no_run
//! use skillgate_runtime::{Catalog, InstallOptions, Store};
//! let catalog = Catalog::builtin().unwrap();
//! let store = Store::new("/var/lib/skillgate/runtimes");
//! let def = catalog.get("python").unwrap();
//! let installed = store.install(def, &InstallOptions::default(), &mut |_| {}).unwrap();
//! println!("{}", installed.dir.display());
//! ```
mod catalog;
mod definition;
mod error;
mod export;

mod install;
mod manifest;
mod store;

pub use catalog::Catalog;
pub use definition::{Definition, Package};
pub use error::RuntimeError;
pub use export::export_oci_archive;

pub use install::{InstallOptions, Progress};
pub use manifest::{Manifest, Stamp};
pub use store::{Installed, Store, VerifyReport};
