//! Helpers shared by the CLI's integration tests.
use std::path::PathBuf;

/// A fresh monitor state directory for each run: runs of one test process must not build
/// baselines or strikes that change each other's outcome.
#[allow(dead_code)]
pub(crate) fn state_dir() -> PathBuf {
    static BASE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    BASE.get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .join(n.to_string())
}

/// The repository's root.
#[allow(dead_code)]
pub(crate) fn repo() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes `examples/skillgate.toml`, changed by `edit`, into `dir`, with the example's
/// files it names (entities, grants, catalogue) copied beside it, so its relative paths
/// keep working. Returns the config's path.
#[allow(dead_code)]
pub(crate) fn example_config(
    dir: &std::path::Path,
    edit: impl FnOnce(String) -> String,
) -> PathBuf {
    let examples = repo().join("examples");
    for file in ["entities.json", "grants.json", "catalogue.json"] {
        std::fs::copy(examples.join(file), dir.join(file)).unwrap();
    }
    let text = std::fs::read_to_string(examples.join("skillgate.toml")).unwrap();
    let path = dir.join("skillgate.toml");
    std::fs::write(&path, edit(text)).unwrap();
    path
}

/// [`example_config`] in `dir` with the default policies plus one that grants
/// `run_command` (shell steps) to the analysts, for their own steps. Returns the config's
/// path.
#[allow(dead_code)]
pub(crate) fn example_config_with_shell_grant(dir: &std::path::Path) -> PathBuf {
    let config = example_config(dir, |text| {
        let edited = text.replacen("[policy]\n", "[policy]\npolicies = \"policies\"\n", 1);
        assert_ne!(
            edited, text,
            "examples/skillgate.toml has a [policy] section"
        );
        edited
    });
    let policies = dir.join("policies");
    std::fs::create_dir(&policies).unwrap();
    std::fs::copy(
        repo().join("rules/policies/visibility.cedar"),
        policies.join("visibility.cedar"),
    )
    .unwrap();
    std::fs::write(
        policies.join("shell.cedar"),
        "@id(\"analysts-shell-steps\")\n\
         permit (principal in AgentGroup::\"analysts\", action == Action::\"run_command\", resource)\n\
         when { resource has agent && resource.agent == principal };\n",
    )
    .unwrap();
    config
}

/// The example config, in a folder `name` of this target directory, with its runtimes in
/// one folder of the target directory that every test binary shares, so each runtime is
/// installed once per target directory (about 400 MB for python-data), not once per
/// test binary or run. Installs of one definition are safe to race (the store renames a
/// finished tree into place). Returns the config's path.
#[allow(dead_code)]
pub(crate) fn config_with_runtimes(name: &str) -> PathBuf {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let runtimes = tmp.join("runtimes");
    example_config(&dir, |example| {
        let text = example.replace(
            "[runtimes]\n",
            &format!("[runtimes]\ndir = \"{}\"\n", runtimes.display()),
        );
        assert_ne!(
            text, example,
            "examples/skillgate.toml has a [runtimes] section"
        );
        text
    })
}

/// Installs the runtime `name` with `skillgate runtime install --offline` (a no-op when
/// it is installed), from the wheel cache `scripts/install-test-deps` fills.
#[allow(dead_code)]
pub(crate) fn install_runtime(config: &std::path::Path, name: &str) {
    let out = assert_cmd::Command::cargo_bin("skillgate")
        .unwrap()
        .current_dir(repo())
        .args(["runtime", "install", name, "--offline", "--config"])
        .arg(config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "installing runtime {name} failed (run scripts/install-test-deps to fill the wheel cache): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The MCP test client (the official Python SDK, `scripts/mcp-test-client`) with `args`
/// (its transport and server), fed `steps` on stdin; its JSON answer.
#[allow(dead_code)]
pub(crate) fn mcp_client<I, S>(args: I, steps: &serde_json::Value) -> serde_json::Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    use std::io::Write;
    let mut child = std::process::Command::new(repo().join("scripts/mcp-test-client"))
        .args(args)
        .current_dir(repo())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(steps.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `skillgate keys create ARGS --config CONFIG --state-dir STATE`: the key, alone on the
/// last line of stdout.
#[allow(dead_code)]
pub(crate) fn create_key(
    config: &std::path::Path,
    state: &std::path::Path,
    args: &[&str],
) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_skillgate"))
        .args(["keys", "create"])
        .args(args)
        .arg("--config")
        .arg(config)
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines().last().unwrap().to_string()
}

/// Skill folder `dir` as the `.tar.gz` a publish sends: the folder, under its own name, at
/// the top.
#[allow(dead_code)]
pub(crate) fn tgz(dir: &std::path::Path) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all(dir.file_name().unwrap(), dir).unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

/// `skillgate run --format json` of the skill folder as `agent` of tenant `acme`, with the
/// state directory `state`; asserts it exits 0 or 1 (a report, not a usage error) and
/// returns the JSON report.
#[allow(dead_code)]
pub(crate) fn run_report(
    state: &std::path::Path,
    config: &std::path::Path,
    skill: &std::path::Path,
    agent: &str,
) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_skillgate"))
        .args([
            "run", "--format", "json", "--agent", agent, "--tenant", "acme",
        ])
        .arg(skill)
        .arg("--state-dir")
        .arg(state)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `skillgate ARGS`, which must succeed; its stdout.
#[allow(dead_code)]
pub(crate) fn succeeds(args: &mut assert_cmd::Command) -> String {
    let out = args.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The example config (`native`, with its policy files beside it) with `section` in
/// place of its `[executor]`, written to a folder of the target directory named after
/// `name`; the new config's path.
#[allow(dead_code)]
pub(crate) fn with_executor(native: &std::path::Path, name: &str, section: &str) -> PathBuf {
    let text = std::fs::read_to_string(native).unwrap();
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("with-executor-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let changed = text.replacen("[executor]\nkind = \"native\"", section.trim_end(), 1);
    assert_ne!(
        changed, text,
        "the example config has [executor] kind = \"native\""
    );
    for file in ["entities.json", "grants.json", "catalogue.json"] {
        std::fs::copy(native.with_file_name(file), dir.join(file)).unwrap();
    }
    let config = dir.join("skillgate.toml");
    std::fs::write(&config, changed).unwrap();
    config
}

/// `scripts/services ARGS`; its stdout (a service that cannot start fails the test).
#[allow(dead_code)]
pub(crate) fn services(args: &[&str]) -> String {
    let out = std::process::Command::new(repo().join("scripts/services"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/services {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A service `scripts/services up NAME` started, stopped when dropped.
#[allow(dead_code)]
pub(crate) struct Service(&'static str);

#[allow(dead_code)]
impl Service {
    /// Starts service `name`; with the `[executor]` section it printed.
    pub(crate) fn up(name: &'static str) -> (Service, String) {
        (Service(name), services(&["up", name]))
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        services(&["down", self.0]);
    }
}

/// A monitor rule folder in `dir/name` whose one detection makes a non-zero exit a
/// quarantine strike (three, with the default `quarantine_strikes`, quarantine the agent).
#[allow(dead_code)]
pub(crate) fn strict_exit_rules(dir: &std::path::Path, name: &str) -> PathBuf {
    let rules = dir.join(name);
    std::fs::create_dir(&rules).unwrap();
    std::fs::write(
        rules.join("strict.toml"),
        "[[detection]]\nid = \"strict.exit\"\nseverity = \"high\"\naction = \"quarantine\"\nmessage = \"failed\"\nwhen = { kind = \"nonzero_exit\" }\n",
    )
    .unwrap();
    rules
}
