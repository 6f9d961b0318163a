//! `skillgate mcp` with real clients over stdio: the official Python SDK (`mcp` on PyPI,
//! `scripts/mcp-test-client`), the MCP Inspector's CLI, and raw JSON-RPC lines for the protocol's conformance
//! (version negotiation, error codes). Every layer on, the example config, the native
//! sandbox; the chart skill on its `python-data` runtime.
mod common;
use base64::Engine as _;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The skills folder: the test skills of skillgate-mcp and the corpus's bar chart.
fn skills() -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let repo = common::repo();
        let from = [
            repo.join("crates/skillgate-mcp/tests/skills/echo-acme"),
            repo.join("crates/skillgate-mcp/tests/skills/echo-globex"),
            repo.join("corpora/skills/chart-bar-artifact"),
        ];
        for src in from {
            copy_dir(&src, &dir.path().join(src.file_name().unwrap()));
        }
        // A skill that sleeps for two minutes, with the clock for it.
        let sleeper = dir.path().join("sleep-acme");
        std::fs::create_dir_all(sleeper.join("scripts")).unwrap();
        std::fs::write(
            sleeper.join("SKILL.md"),
            "---\nname: sleep-acme\ndescription: Sleeps.\nmetadata:\n  skillgate.visibility: public\n  \
             skillgate.tenant: acme\n  skillgate.owner: builder-alice\n  skillgate.timeout: 150s\n---\n",
        )
        .unwrap();
        std::fs::write(
            sleeper.join("scripts/main.py"),
            "import time\ntime.sleep(120)\nprint('{}')\n",
        )
        .unwrap();
        dir
    });
    dir.path().to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}

/// The example config (runtimes in this target directory, `python-data` installed) and a
/// catalogue recording every test skill as its SKILL.md says.
fn config() -> (PathBuf, PathBuf) {
    static ONCE: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let config = common::config_with_runtimes("mcp");
        common::install_runtime(&config, "python-data");
        // Skills may ask for up to 150 s (the sleeper does).
        let text = std::fs::read_to_string(&config).unwrap();
        let raised = text.replace(
            "# wall_timeout = \"60s\"      # default: [limits] wall_timeout",
            "wall_timeout = \"150s\"",
        );
        assert_ne!(
            raised, text,
            "examples/skillgate.toml has an [isolation.max] wall_timeout"
        );
        std::fs::write(&config, raised).unwrap();
        let records: Vec<Value> = std::fs::read_dir(skills())
            .unwrap()
            .map(|e| {
                let s = skillgate::skill_dir::load(&e.unwrap().path()).unwrap();
                json!({"name": s.name, "digest": s.digest, "tenant": s.tenant,
                       "owner": s.owner, "visibility": "public"})
            })
            .collect();
        let catalogue = config.parent().unwrap().join("mcp-catalogue.json");
        std::fs::write(&catalogue, serde_json::to_string(&records).unwrap()).unwrap();
        (config, catalogue)
    })
    .clone()
}

/// `skillgate mcp` for `agent`, as arguments after the binary.
fn server_args(agent: &str) -> Vec<String> {
    let (config, catalogue) = config();
    [
        "mcp",
        "--agent",
        agent,
        "--config",
        config.to_str().unwrap(),
        "--catalogue",
        catalogue.to_str().unwrap(),
        "--skills",
        skills().to_str().unwrap(),
        "--state-dir",
        common::state_dir().to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The Python client, running `skillgate mcp` for `agent`, through `steps`.
fn client(agent: &str, steps: Value) -> Vec<Value> {
    client_with(server_args(agent), steps, false)
}

/// The Python client, running `skillgate ARGS`, through `steps`; `legacy`: with the
/// `initialize` handshake (a session) rather than the version the client prefers.
fn client_with(args: Vec<String>, steps: Value, legacy: bool) -> Vec<Value> {
    let bin = assert_cmd::cargo::cargo_bin("skillgate");
    let mut all: Vec<std::ffi::OsString> = Vec::new();
    if legacy {
        all.push("--legacy".into());
    }
    all.push("stdio".into());
    all.push(bin.into());
    all.extend(args.into_iter().map(Into::into));
    serde_json::from_value(common::mcp_client(all, &steps)).unwrap()
}

fn names(answer: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = answer["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    names
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn two_agents_see_two_tool_lists_with_schemas_and_hints() {
    let acme = client("analyst-1", json!([{"op": "list"}]));
    assert_eq!(
        names(&acme[0]),
        ["chart-bar-artifact", "echo-acme", "sleep-acme"]
    );
    let echo = acme[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo-acme")
        .unwrap();
    assert_eq!(echo["inputSchema"]["required"], json!(["n"]));
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["annotations"]["destructiveHint"], false);
    assert!(echo["description"].as_str().unwrap().starts_with("Doubles"));

    let globex = client("globex-agent", json!([{"op": "list"}]));
    assert_eq!(names(&globex[0]), ["echo-globex"]);
}

#[test]
fn a_chart_comes_back_as_a_png_image_and_the_answer_as_structured_content() {
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(skills().join("chart-bar-artifact/sample-input.json")).unwrap(),
    )
    .unwrap();
    let answers = client(
        "analyst-1",
        json!([{"op": "call", "name": "chart-bar-artifact", "arguments": input}]),
    );
    let result = &answers[0]["result"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(result["structuredContent"]["bars"], 4, "{result:#}");
    let image = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "image")
        .unwrap_or_else(|| panic!("no image: {result:#}"));
    assert_eq!(image["mimeType"], "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(image["data"].as_str().unwrap())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // A progress notification came, as the client asked for them.
    assert!(!answers[0]["progress"].as_array().unwrap().is_empty());
}

#[test]
fn a_call_the_policy_denies_is_a_tool_error_without_policy_internals() {
    // The catalogue bot may see the tenant's skills but not run code.
    let answers = client(
        "catalogue-bot",
        json!([{"op": "list"}, {"op": "call", "name": "echo-acme", "arguments": {"n": 1}}]),
    );
    assert_eq!(
        names(&answers[0]),
        ["chart-bar-artifact", "echo-acme", "sleep-acme"]
    );
    let result = &answers[1]["result"];
    assert_eq!(result["isError"], true, "{result:#}");
    assert!(text_of(result).starts_with("Not allowed"), "{result:#}");
    let all = result.to_string();
    for internal in ["policy0", "forbid", "permit", "can_execute_code"] {
        assert!(!all.contains(internal), "{internal} in {all}");
    }
}

#[test]
fn bad_arguments_name_the_failing_path_and_hidden_tools_do_not_exist() {
    let answers = client(
        "analyst-1",
        json!([
            {"op": "call", "name": "echo-acme", "arguments": {"n": "three"}},
            {"op": "call", "name": "echo-globex", "arguments": {}},
            {"op": "call", "name": "no-such-skill", "arguments": {}},
        ]),
    );
    let bad = &answers[0]["result"];
    assert_eq!(bad["isError"], true, "{bad:#}");
    assert!(text_of(bad).contains("`/n`"), "{bad:#}");
    assert!(text_of(bad).contains("nothing ran"), "{bad:#}");
    // A skill of another tenant and no skill at all: the same answer.
    let hidden = &answers[1]["error"];
    let missing = &answers[2]["error"];
    assert_eq!(hidden["code"], -32602, "{hidden:#}");
    assert_eq!(hidden["code"], missing["code"]);
    assert_eq!(
        hidden["message"]
            .as_str()
            .unwrap()
            .replace("echo-globex", "X"),
        missing["message"]
            .as_str()
            .unwrap()
            .replace("no-such-skill", "X")
    );
}

#[test]
fn the_client_is_told_when_its_tools_change() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&skills().join("echo-acme"), &dir.path().join("echo-acme"));
    let mut args = server_args("analyst-1");
    let at = args.iter().position(|a| a == "--skills").unwrap();
    args[at + 1] = dir.path().to_str().unwrap().to_owned();
    // A session (the `initialize` handshake) gets the notification.
    let answers = client_with(
        args,
        json!([
            {"op": "list"},
            {"op": "remove", "path": dir.path().join("echo-acme")},
            {"op": "wait_list_changed"},
        ]),
        true,
    );
    assert_eq!(names(&answers[0]), ["echo-acme"]);
    assert!(names(&answers[2]).is_empty(), "{:#}", answers[2]);
}

#[test]
fn a_2026_07_28_client_is_told_through_subscriptions_listen() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&skills().join("echo-acme"), &dir.path().join("echo-acme"));
    let mut args = server_args("analyst-1");
    let at = args.iter().position(|a| a == "--skills").unwrap();
    args[at + 1] = dir.path().to_str().unwrap().to_owned();
    // No session to notify: the client opens a `subscriptions/listen` stream.
    let answers = client_with(
        args,
        json!([
            {"op": "list"},
            {"op": "listen", "steps": [{"op": "remove", "path": dir.path().join("echo-acme")}]},
        ]),
        false,
    );
    assert_eq!(names(&answers[0]), ["echo-acme"]);
    assert!(names(&answers[1]).is_empty(), "{:#}", answers[1]);
}

/// Raw JSON-RPC lines to `skillgate mcp`, one answer read per line that expects one.
struct Raw {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn start() -> Raw {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
            .args(server_args("analyst-1"))
            .current_dir(common::repo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Raw { child, out }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn answer(&mut self, line: &str) -> Value {
        self.send(line);
        let mut text = String::new();
        self.out.read_line(&mut text).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize(version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "conformance", "version": "0"}}})
    .to_string()
}

#[test]
fn conformance_version_negotiation_and_json_rpc_error_codes() {
    // A version the server speaks is the one it answers with.
    let mut raw = Raw::start();
    let init = raw.answer(&initialize("2025-06-18"));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init:#}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init:#}"
    );
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let parse = raw.answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#);
    assert_eq!(parse["error"]["code"], -32700, "{parse:#}");
    let unknown = raw.answer(r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown:#}");
    assert_eq!(unknown["id"], 3);
    let params =
        raw.answer(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}"#);
    assert_eq!(params["error"]["code"], -32602, "{params:#}");
    let listed = raw.answer(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    assert!(listed["result"]["tools"].is_array(), "{listed:#}");
    drop(raw);

    // A version it does not know: it answers with one it supports, which the client may
    // accept or not.
    let mut raw = Raw::start();
    let init = raw.answer(&initialize("1999-01-01"));
    let offered = init["result"]["protocolVersion"]
        .as_str()
        .unwrap_or_else(|| panic!("{init:#}"));
    assert_ne!(offered, "1999-01-01");
    assert!(offered.starts_with("20"), "{offered}");
}

/// The sandbox inits among `pid`'s children.
fn sandbox_inits(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .flat_map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "sandbox-init")
                })
                .collect()
        })
        .unwrap_or_default()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "waited a minute for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_cancelled_call_kills_its_sandbox() {
    let mut raw = Raw::start();
    raw.answer(&initialize("2025-06-18"));
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sleep-acme","arguments":{}}}"#);
    let server = raw.child.id();
    wait_until("the sleeper to start", || !sandbox_inits(server).is_empty());
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#);
    // The skill sleeps two minutes on a clock of 150 s: only the cancel ends it sooner.
    wait_until("the sandbox to be killed", || {
        sandbox_inits(server).is_empty()
    });
}

/// The MCP Inspector's CLI as `scripts/install-test-deps` installs it.
fn inspector() -> PathBuf {
    let dir = std::env::var_os("SKILLGATE_MCP_INSPECTOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"));
            cache.join("skillgate/mcp-inspector")
        });
    let bin = dir.join("node_modules/.bin/mcp-inspector");
    assert!(
        bin.is_file(),
        "no MCP Inspector at {}: run scripts/install-test-deps",
        bin.display()
    );
    bin
}

/// The Inspector's CLI with `options`, on `skillgate mcp` for `agent`; its JSON answer.
fn inspect(options: &[&str], agent: &str) -> Value {
    let out = Command::new(inspector())
        .arg("--cli")
        .args(options)
        .arg("--")
        .arg(assert_cmd::cargo::cargo_bin("skillgate"))
        .args(server_args(agent))
        .current_dir(common::repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP Inspector failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_mcp_inspector_cli_lists_and_calls_the_tools() {
    let listed = inspect(&["--method", "tools/list"], "globex-agent");
    assert_eq!(names(&listed), ["echo-globex"]);
    let called = inspect(
        &[
            "--tool-arg",
            "n=4",
            "--method",
            "tools/call",
            "--tool-name",
            "echo-acme",
        ],
        "analyst-1",
    );
    assert_eq!(called["isError"], false, "{called:#}");
    assert_eq!(called["structuredContent"], json!({"n": 4, "double": 8}));
}
