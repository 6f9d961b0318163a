//! Shared by the tests that run programs under filters: the static probe and the
//! helper binary.
#![allow(dead_code, unreachable_pub)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `tests/oci/probe.c` statically (once per test binary) and returns its path.
pub fn probe() -> &'static Path {
    static PROBE: OnceLock<PathBuf> = OnceLock::new();
    PROBE.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("skillgate-confine-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("probe");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oci/probe.c");
        let status = Command::new("gcc")
            .args(["-static", "-O2", "-o"])
            .arg(&out)
            .arg(&src)
            .arg("-lpthread")
            .status()
            .unwrap_or_else(|e| panic!("cannot run gcc ({e}): apt-get install gcc libc6-dev"));
        assert!(status.success(), "gcc -static failed on {}", src.display());
        out
    })
}

/// Runs `program args` under `confine-exec` with `flags`, stdin from `input`.
pub fn confined(
    flags: &[&str],
    program: &Path,
    args: &[&str],
    input: Option<&Path>,
    cwd: Option<&Path>,
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_confine-exec"));
    cmd.args(flags).arg("--").arg(program).args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    match input {
        Some(path) => cmd.stdin(std::fs::File::open(path).unwrap()),
        None => cmd.stdin(std::process::Stdio::null()),
    };
    cmd.output().unwrap()
}

/// The probe's lines as (call, outcome) pairs, outcome `ret=N` or `errno=N`.
pub fn probe_results(out: &Output) -> Vec<(String, String)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}
