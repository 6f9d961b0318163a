//! Helpers shared by the CLI's integration tests.
use std::path::PathBuf;

/// A fresh monitor state directory for each run: runs of one test process must not build
/// baselines or strikes that change each other's outcome.
pub(crate) fn state_dir() -> PathBuf {
    static BASE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    BASE.get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .join(n.to_string())
}
