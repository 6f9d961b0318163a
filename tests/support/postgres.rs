//! Test support shared by the crates' PostgreSQL tests (included with `#[path]`): a real
//! PostgreSQL started by `scripts/services up postgres`, and a fresh database per test.
//! A PostgreSQL that cannot start fails the test with the reason (never a skip).
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace's root: the first folder above the crate holding `scripts/services`.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|p| p.join("scripts/services").exists())
        .expect("the workspace holds scripts/services")
        .to_path_buf()
}

/// Starts PostgreSQL (idempotent) and returns the URL of a new, empty database named
/// after `test` and this process. Panics with the service's output when it cannot.
pub(crate) fn fresh_database(test: &str) -> String {
    let base = BASE.get_or_init(start);
    let name = format!(
        "t_{}_{}",
        test.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id()
    );
    // Databases of test processes that are gone: the cluster stays small (each one is
    // a copy of the template the server has to checkpoint).
    for stale in psql(
        base,
        "SELECT datname FROM pg_database WHERE datname LIKE 't\\_%'",
    )
    .lines()
    {
        let pid = stale.rsplit('_').next().unwrap_or("");
        if !pid.is_empty() && !Path::new("/proc").join(pid).exists() {
            psql(base, &format!("DROP DATABASE IF EXISTS {stale}"));
        }
    }
    psql(base, &format!("DROP DATABASE IF EXISTS {name}"));
    psql(base, &format!("CREATE DATABASE {name}"));
    let (prefix, _) = base.rsplit_once('/').expect("a database in the URL");
    format!("{prefix}/{name}")
}

/// The service's URL, started once per test process.
static BASE: OnceLock<String> = OnceLock::new();

/// `scripts/services up postgres`, under a file lock: test processes of several crates
/// may start it at once, and `up` is not safe against itself.
fn start() -> String {
    let lock = std::env::temp_dir().join("skillgate-services-postgres.lock");
    // `--close`: the server `up` starts must not inherit (and hold) the lock.
    let out = Command::new("flock")
        .arg("--close")
        .arg(&lock)
        .arg(workspace().join("scripts/services"))
        .args(["up", "postgres"])
        .output()
        .expect("cannot run flock scripts/services");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "PostgreSQL did not start (scripts/services up postgres): {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("url = \"")?.strip_suffix('"'))
        .unwrap_or_else(|| panic!("scripts/services printed no url: {stdout}"))
        .to_string()
}

/// Runs one SQL query through `psql` on `url` and returns its unaligned output.
pub(crate) fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-t",
            "-A",
            "-v",
            "ON_ERROR_STOP=1",
            url,
            "-c",
            sql,
        ])
        .output()
        .expect("cannot run psql");
    assert!(
        out.status.success(),
        "psql `{sql}`: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
