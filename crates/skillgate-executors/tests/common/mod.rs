//! What the integration tests of the services share: `scripts/services`, and the
//! `python` runtime installed once into a scratch store with its OCI archive.
#![allow(dead_code)]
use skillgate_runtime::{Catalog, InstallOptions, Installed, Store};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `scripts/services ARGS...`; its stdout.
pub(crate) fn services(args: &[&str]) -> String {
    let out = Command::new(repo_root().join("scripts/services"))
        .args(args)
        .output()
        .expect("running scripts/services");
    assert!(
        out.status.success(),
        "scripts/services {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Stops the service when the test ends, passed or not.
pub(crate) struct Service(pub(crate) &'static str);
impl Drop for Service {
    fn drop(&mut self) {
        services(&["down", self.0]);
    }
}

/// The value of `key = value` in a printed `[executor]` section, unquoted.
pub(crate) fn value_of(config: &str, key: &str) -> String {
    config
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .map(|s| s.trim_matches('"').to_string())
        .unwrap_or_else(|| panic!("no `{key}` in the printed config: {config}"))
}

/// The `python` runtime, installed once into a scratch store, and its OCI archive.
pub(crate) fn python_runtime() -> &'static (Installed, PathBuf) {
    static RT: OnceLock<(Installed, PathBuf)> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap();
    RT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let catalog = Catalog::builtin().unwrap();
        let installed = Store::new(dir.join("store"))
            .install(
                catalog.get("python").unwrap(),
                &InstallOptions {
                    offline: true,
                    ..InstallOptions::default()
                },
                &mut |_| {},
            )
            .expect("installing the python runtime");
        let archive = dir.join("python.oci.tar");
        skillgate_runtime::export_oci_archive(&installed, &archive).expect("exporting it");
        (installed, archive)
    })
}
