//! `skillgate serve` end to end: the real binary on an ephemeral 127.0.0.1 port, keys made
//! with `skillgate keys`, skills published as `.tar.gz` and run over HTTP.
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("skillgate")
}

/// A running server, stopped with SIGTERM when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(config: &Path, state: &Path) -> Server {
        Server::start_with(config, state, &[])
    }

    fn start_with(config: &Path, state: &Path, extra: &[&str]) -> Server {
        Server::start_logging(config, state, extra, Stdio::null())
    }

    /// Starts it with its JSON log (stderr) going to `log`.
    fn start_logging(config: &Path, state: &Path, extra: &[&str], log: Stdio) -> Server {
        let mut child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .args(extra)
            .arg("--state-dir")
            .arg(state)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server { child, addr }
    }

    /// Sends one request; returns the status and the body.
    fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        content_type: &str,
        body: &[u8],
    ) -> (u16, Vec<u8>) {
        let (status, _, body) = self.exchange(method, path, key, content_type, body);
        (status, body)
    }

    /// Sends one request; returns the status, the head (lowercased) and the body.
    fn exchange(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        content_type: &str,
        body: &[u8],
    ) -> (u16, String, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        let auth = key.map_or(String::new(), |k| format!("Authorization: Bearer {k}\r\n"));
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{auth}Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&raw[..split]).to_string();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        let mut body = raw[split + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = dechunk(&body);
        }
        (status, head.to_ascii_lowercase(), body)
    }

    fn json(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let (status, body) = self.call(
            method,
            path,
            key,
            "application/json",
            &serde_json::to_vec(&body).unwrap(),
        );
        (status, serde_json::from_slice(&body).unwrap())
    }

    fn get(&self, path: &str, key: Option<&str>) -> (u16, serde_json::Value) {
        let (status, body) = self.call("GET", path, key, "application/json", b"");
        (status, serde_json::from_slice(&body).unwrap())
    }

    fn publish(&self, key: &str, tgz: &[u8]) -> (u16, serde_json::Value) {
        let (status, body) = self.call("POST", "/v1/skills", Some(key), "application/gzip", tgz);
        (status, serde_json::from_slice(&body).unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..end]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[end + 2..end + 2 + n]);
        b = &b[end + 2 + n + 2..];
    }
}

use common::{create_key, tgz};

/// A JavaScript skill folder `name` in `parent`, with extra SKILL.md metadata lines.
fn js_skill(parent: &Path, name: &str, metadata: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Answers hello. Use for tests.\nmetadata:\n  skillgate.language: javascript\n  skillgate.entry: scripts/main.js\n{metadata}---\n\n# {name}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts/main.js"),
        "process.stdout.write(JSON.stringify({hello: 'world'}));\n",
    )
    .unwrap();
    dir
}

fn names(listing: &serde_json::Value) -> Vec<String> {
    listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn publish_run_list_and_refuse_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let builder = create_key(
        &config,
        &state,
        &["--builder", "builder-alice", "--tenant", "acme"],
    );
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let assistant = create_key(
        &config,
        &state,
        &["--agent", "alice-assistant", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);

    // Publish a public skill and a private one of builder-alice.
    let public = tgz(&common::repo().join("examples/skills/count-items"));
    let (status, published) = server.publish(&builder, &public);
    assert_eq!(status, 201, "{published}");
    assert_eq!(published["verdict"], "pass");
    assert_eq!(published["owner"], "builder-alice");
    let private = tgz(&js_skill(
        tmp.path(),
        "alice-private",
        "  skillgate.visibility: private\n",
    ));
    assert_eq!(server.publish(&builder, &private).0, 201);
    // Versions are immutable.
    assert_eq!(server.publish(&builder, &private).0, 409);

    // Run with a key; refused without one.
    let input = serde_json::json!({"input": {"items": [1, 2, 3]}});
    let (status, report) = server.json(
        "POST",
        "/v1/skills/count-items/runs",
        Some(&analyst),
        input.clone(),
    );
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["status"], "ok", "{report}");
    assert!(
        report["stdout"]
            .as_str()
            .unwrap()
            .contains("Processed 3 items"),
        "{report}"
    );
    let request_id = report["request_id"].as_str().unwrap().to_string();
    // Where the time went, in the standard Server-Timing header, to the microsecond: the
    // pipeline's time (the report's duration_ms is its whole milliseconds) and the
    // skill's own run within it.
    let (status, head, body) = server.exchange(
        "POST",
        "/v1/skills/count-items/runs",
        Some(&analyst),
        "application/json",
        &serde_json::to_vec(&input).unwrap(),
    );
    assert_eq!(status, 200);
    let timed: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let timing = head
        .lines()
        .find_map(|l| l.strip_prefix("server-timing: "))
        .unwrap_or_else(|| panic!("no server-timing header in {head}"));
    let dur = |name: &str| -> f64 {
        timing
            .split(", ")
            .find_map(|m| m.strip_prefix(&format!("{name};dur=")))
            .unwrap_or_else(|| panic!("no {name} in {timing}"))
            .parse()
            .unwrap()
    };
    let (pipeline, skill) = (dur("pipeline"), dur("skill"));
    assert!(skill > 0.0 && skill < pipeline, "{timing}");
    let whole = timed["duration_ms"].as_u64().unwrap() as f64;
    assert!(
        pipeline >= whole && pipeline < whole + 1.001,
        "{timing} against duration_ms {whole}"
    );
    let (status, refused) = server.json("POST", "/v1/skills/count-items/runs", None, input.clone());
    assert_eq!(status, 401, "{refused}");
    assert_eq!(refused["error"]["code"], "unauthorized");

    // Two agents see different sets: the private skill only for its builder's agent.
    let (_, listed) = server.get("/v1/skills", Some(&analyst));
    assert_eq!(names(&listed), ["count-items"]);
    let (_, listed) = server.get("/v1/skills", Some(&assistant));
    assert_eq!(names(&listed), ["alice-private", "count-items"]);
    let (status, versions) = server.get("/v1/skills/count-items", Some(&analyst));
    assert_eq!(status, 200);
    assert_eq!(versions["versions"][0]["verdict"], "pass");

    // The same request id in the report and the audit trail; the refusal audited too.
    let audit = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    assert!(
        audit.contains(&format!("\"request_id\":\"{request_id}\"")),
        "{audit}"
    );
    assert!(audit.contains("\"kind\":\"auth_failure\""), "{audit}");
    // The monitor's metrics, with the refusal counted.
    let text = metrics(&server);
    assert!(
        text.contains("skillgate_executions_total{status=\"ok\"}"),
        "{text}"
    );
    assert!(
        text.contains("skillgate_auth_failures_total{reason=\"missing\"} 1"),
        "{text}"
    );
}

/// Issue 15: publishing is a Cedar action, decided by the publish policies (the base ones
/// and an operator folder); a deny is a 403 whose deciding policy ids are in the log only.
#[test]
fn publishing_is_decided_by_the_publish_policies() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("publish-policies");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("names.cedar"),
        "@id(\"no-internal-names\")\nforbid (principal, action == Action::\"publish\", resource)\nwhen { resource.name like \"internal-*\" };\n",
    )
    .unwrap();
    let config = common::example_config(tmp.path(), |t| {
        t.replace(
            "[policy]\n",
            "[policy]\npublish_policies = \"publish-policies\"\n",
        )
    });
    // A second builder of acme.
    let entities = tmp.path().join("entities.json");
    let text = std::fs::read_to_string(&entities).unwrap().replacen(
        "[\n",
        "[\n  {\"uid\": {\"type\": \"Builder\", \"id\": \"builder-bob\"}, \"attrs\": {\"tenant\": {\"__entity\": {\"type\": \"Tenant\", \"id\": \"acme\"}}}, \"parents\": []},\n",
        1,
    );
    std::fs::write(&entities, text).unwrap();
    let state = tmp.path().join("state");
    let key = |args: &[&str]| create_key(&config, &state, args);
    let alice = key(&["--builder", "builder-alice", "--tenant", "acme"]);
    let bob = key(&["--builder", "builder-bob", "--tenant", "acme"]);
    // A builder the entities file does not declare: its key authenticates, Cedar denies.
    let ghost = key(&["--builder", "ghost", "--tenant", "acme"]);
    let log_path = tmp.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let server = Server::start_logging(&config, &state, &[], log.into());
    let log = || std::fs::read_to_string(&log_path).unwrap();
    let publish = |key: &str, name: &str, metadata: &str| {
        server.publish(key, &tgz(&js_skill(tmp.path(), name, metadata)))
    };
    // Denied: 403, the message names no policy, the log names the deciding one.
    let denied = |(status, e): (u16, serde_json::Value), policy: &str| {
        assert_eq!(status, 403, "{e}");
        let message = e["error"]["message"].as_str().unwrap().to_string();
        assert!(!message.contains(policy), "{message}");
        let line = log()
            .lines()
            .rfind(|l| l.contains("publish denied"))
            .map(String::from)
            .unwrap_or_else(|| panic!("no publish denial in the log: {}", log()));
        assert!(line.contains(policy), "{line}");
        message
    };

    // A builder publishes its own skill in its tenant.
    let (status, v) = publish(&alice, "tool", "");
    assert_eq!(status, 201, "{v}");
    // A skill claiming another tenant: Cedar's cross-tenant forbid decides; the answer
    // still names the field.
    let message = denied(
        publish(&alice, "elsewhere", "  skillgate.tenant: globex\n"),
        "publish-cross-tenant",
    );
    assert!(message.contains("skillgate.tenant"), "{message}");
    // Another builder's skill name: the other-owner forbid.
    denied(publish(&bob, "tool", ""), "publish-other-owner");
    // The operator's policy.
    let message = denied(publish(&alice, "internal-tool", ""), "no-internal-names");
    assert!(message.contains("publish policies"), "{message}");
    // An undeclared builder publishes nothing (nothing permits it).
    let (status, e) = publish(&ghost, "ghostly", "");
    assert_eq!(status, 403, "{e}");
    assert!(log().contains("not in the entities file"), "{}", log());
    let (_, listed) = server.get("/v1/skills", Some(&alice));
    assert_eq!(names(&listed), ["tool"]);
}

#[test]
fn roles_claims_and_bad_input_get_4xx_json_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let builder = create_key(
        &config,
        &state,
        &["--builder", "builder-alice", "--tenant", "acme"],
    );
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);
    let skill = tgz(&js_skill(
        tmp.path(),
        "hello",
        "  skillgate.visibility: public\n",
    ));

    // An agent key cannot publish; a builder key cannot run.
    let (status, e) = server.publish(&analyst, &skill);
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "{e}"
    );
    assert_eq!(server.publish(&builder, &skill).0, 201);
    let (status, e) = server.json(
        "POST",
        "/v1/skills/hello/runs",
        Some(&builder),
        serde_json::json!({}),
    );
    assert_eq!(status, 403, "{e}");

    // A skill the pre-scan blocks is kept, as blocked, and never runs.
    let bad = tmp.path().join("shell-out");
    std::fs::create_dir_all(bad.join("scripts")).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: shell-out\ndescription: Runs a shell. Use never.\nmetadata:\n  skillgate.language: python\n  skillgate.entry: scripts/main.py\n  skillgate.visibility: public\n---\n",
    )
    .unwrap();
    std::fs::write(bad.join("scripts/main.py"), "import os\nos.system('id')\n").unwrap();
    let (status, v) = server.publish(&builder, &tgz(&bad));
    assert_eq!((status, v["verdict"].as_str()), (201, Some("block")), "{v}");
    assert!(!v["findings"].as_array().unwrap().is_empty(), "{v}");
    let (status, e) = server.json(
        "POST",
        "/v1/skills/shell-out/runs",
        Some(&analyst),
        serde_json::json!({}),
    );
    assert_eq!(status, 403, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("blocked"),
        "{e}"
    );
    let (_, listed) = server.get("/v1/skills", Some(&analyst));
    assert_eq!(names(&listed), ["hello"]);

    // A SKILL.md claiming another owner is refused, naming the field.
    let other = tgz(&js_skill(
        tmp.path(),
        "claims",
        "  skillgate.owner: builder-bob\n",
    ));
    let (status, e) = server.publish(&builder, &other);
    assert_eq!(status, 403, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skillgate.owner"),
        "{e}"
    );

    // A SKILL.md that does not parse, and a tar with `..`.
    let broken = tmp.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("SKILL.md"), "---\nname: [\n---\n").unwrap();
    let (status, e) = server.publish(&builder, &tgz(&broken));
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("bad_skill")),
        "{e}"
    );
    let evil = Command::new("tar")
        .args(["czf", "-", "-P", "--transform", "s,^,../,", "-C"])
        .arg(tmp.path())
        .arg("hello")
        .output()
        .unwrap()
        .stdout;
    let (status, e) = server.publish(&builder, &evil);
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("bad_archive")),
        "{e}"
    );
    assert!(
        e["error"]["message"].as_str().unwrap().contains("`..`"),
        "{e}"
    );

    // An oversized upload.
    let (status, body) = server.call(
        "POST",
        "/v1/skills",
        Some(&builder),
        "application/gzip",
        &vec![0u8; (8 << 20) + 1],
    );
    let e: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (413, Some("body_too_large")),
        "{e}"
    );

    // Malformed JSON, a wrong content type, deep nesting, an unknown skill or version.
    let (status, body) = server.call(
        "POST",
        "/v1/skills/hello/runs",
        Some(&analyst),
        "application/json",
        b"{nope",
    );
    let e: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("bad_json")),
        "{e}"
    );
    let (status, _) = server.call(
        "POST",
        "/v1/skills/hello/runs",
        Some(&analyst),
        "text/plain",
        b"{}",
    );
    assert_eq!(status, 415);
    let deep = format!("{{\"input\": {}1{}}}", "[".repeat(100), "]".repeat(100));
    let (status, body) = server.call(
        "POST",
        "/v1/skills/hello/runs",
        Some(&analyst),
        "application/json",
        deep.as_bytes(),
    );
    let e: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("too_deep")),
        "{e}"
    );
    let (status, e) = server.json(
        "POST",
        "/v1/skills/nope/runs",
        Some(&analyst),
        serde_json::json!({}),
    );
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (404, Some("unknown_skill")),
        "{e}"
    );
    let (status, e) = server.json(
        "POST",
        "/v1/skills/hello/runs",
        Some(&analyst),
        serde_json::json!({"version": "0".repeat(5000)}),
    );
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (404, Some("unknown_version")),
        "{e}"
    );
    assert!(e["error"]["message"].as_str().unwrap().len() < 400, "{e}");
    let (status, e) = server.json(
        "POST",
        "/v1/runs",
        Some(&analyst),
        serde_json::json!({"language": "cobol", "code": ""}),
    );
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("unknown_language")),
        "{e}"
    );

    // A bare script of the caller's own runs.
    let (status, report) = server.json(
        "POST",
        "/v1/runs",
        Some(&analyst),
        serde_json::json!({"language": "python", "code": "print('hi')", "input": {}}),
    );
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["status"], "ok", "{report}");

    // A key whose builder the entities file puts in another tenant is refused when made.
    let out = Command::new(bin())
        .args([
            "keys",
            "create",
            "--builder",
            "builder-alice",
            "--tenant",
            "globex",
            "--config",
        ])
        .arg(&config)
        .arg("--state-dir")
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("belongs to tenant `acme`"));

    // A revoked key is refused.
    let listed = Command::new(bin())
        .args(["keys", "list", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(&state)
        .output()
        .unwrap();
    let text = String::from_utf8(listed.stdout).unwrap();
    let id = text
        .lines()
        .find(|l| l.contains("analyst-1"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let revoked = Command::new(bin())
        .args(["keys", "revoke", &id, "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(&state)
        .status()
        .unwrap();
    assert!(revoked.success());
    let (status, e) = server.get("/v1/skills", Some(&analyst));
    assert_eq!(status, 401, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("revoked"),
        "{e}"
    );
}

/// The venv `scripts/install-test-deps` fills with the Piston client `piston-rspy`.
fn piston_python() -> PathBuf {
    let venv = std::env::var_os("SKILLGATE_PISTON_VENV").map_or_else(
        || PathBuf::from("/var/cache/skillgate/piston-venv"),
        PathBuf::from,
    );
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "no Piston client at {}: run scripts/install-test-deps",
        python.display()
    );
    python
}

const PISTON_CLIENT: &str = r#"
import asyncio, json, sys, piston_rspy as p
async def main(url, key):
    c = p.Client.with_url_and_key(url, key)
    out = {"runtimes": [r.language for r in await c.fetch_runtimes()]}
    ok = await c.execute(p.Executor().set_language("python").set_version("*")
        .add_file(p.File(name="main.py", content="import sys, json\nprint(json.load(sys.stdin)['n'] * 2)"))
        .set_stdin('{"n": 21}'))
    out["ok"] = [ok.status, ok.language, ok.run.stdout, ok.run.code]
    failed = await c.execute(p.Executor().set_language("javascript")
        .add_file(p.File(content="process.exit(3)")))
    out["failed"] = [failed.status, failed.run.code]
    blocked = await c.execute(p.Executor().set_language("python")
        .add_file(p.File(content="import os\nos.system('id')")))
    out["blocked"] = [blocked.status, blocked.is_err()]
    unknown = await c.execute(p.Executor().set_language("cobol").add_file(p.File(content="x")))
    out["unknown"] = [unknown.status, unknown.is_err()]
    print(json.dumps(out), flush=True)
asyncio.run(main(sys.argv[1], sys.argv[2]))
# piston-rspy's runtime threads can crash the interpreter's finalization (a GIL state
# error after the work is done): leave without it.
import os
os._exit(0)
"#;

#[test]
fn a_real_piston_client_runs_code_through_the_pipeline() {
    let python = piston_python();
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);
    let out = Command::new(python)
        .arg("-c")
        .arg(PISTON_CLIENT)
        .arg(format!("http://{}/api/v2", server.addr))
        .arg(&analyst)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runtimes"], serde_json::json!(["python", "javascript"]));
    assert_eq!(
        v["ok"],
        serde_json::json!([200, "python", "42\n", 0]),
        "{v}"
    );
    assert_eq!(v["failed"], serde_json::json!([200, 3]), "{v}");
    // The pre-scan's block is an error the client sees.
    assert_eq!(v["blocked"], serde_json::json!([403, true]), "{v}");
    assert_eq!(v["unknown"], serde_json::json!([400, true]), "{v}");
    // Without the key, refused.
    let (status, _) = server.call("GET", "/api/v2/runtimes", None, "application/json", b"");
    assert_eq!(status, 401);
}

fn metrics(server: &Server) -> String {
    let (status, body) = server.call("GET", "/metrics", None, "text/plain", b"");
    assert_eq!(status, 200);
    String::from_utf8(body).unwrap()
}

/// Polls `/metrics` until it has the line `line` (a gauge reaching a value); panics
/// naming it if that takes more than two minutes, rather than hanging the suite.
fn wait_for_metric(server: &Server, line: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let now = metrics(server);
        if now.lines().any(|l| l == line) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "`{line}` never showed in /metrics: {now}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn signal(server: &Server, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn a_bad_new_config_is_refused_and_the_old_one_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let good = std::fs::read_to_string(&config).unwrap();
    let state = tmp.path().join("state");
    let operator = create_key(
        &config,
        &state,
        &["--operator", "oncall", "--tenant", "acme"],
    );
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);
    let script = serde_json::json!({"language": "python", "code": "print(1)"});
    let status_of_run = |server: &Server| {
        let (code, report) = server.json("POST", "/v1/runs", Some(&analyst), script.clone());
        assert_eq!(code, 200, "{report}");
        report["status"].as_str().unwrap().to_string()
    };
    assert_eq!(status_of_run(&server), "ok");

    std::fs::write(&config, "[limits\nnot toml").unwrap();
    let (code, e) = server.json(
        "POST",
        "/v1/admin/reload",
        Some(&operator),
        serde_json::json!({}),
    );
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (422, Some("config_refused")),
        "{e}"
    );
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skillgate.toml"),
        "{e}"
    );
    let (code, _) = server.json(
        "POST",
        "/v1/admin/reload",
        Some(&analyst),
        serde_json::json!({}),
    );
    assert_eq!(code, 403);
    signal(&server, "HUP");
    // The old engine serves on, after both refusals.
    assert_eq!(status_of_run(&server), "ok");

    // A good new config takes effect: analyst-1 loses the right to run code.
    let entities = tmp.path().join("entities.json");
    let text = std::fs::read_to_string(&entities).unwrap();
    std::fs::write(
        &entities,
        text.replacen(
            "\"can_execute_code\": true",
            "\"can_execute_code\": false",
            1,
        ),
    )
    .unwrap();
    std::fs::write(&config, good).unwrap();
    let (code, answer) = server.json(
        "POST",
        "/v1/admin/reload",
        Some(&operator),
        serde_json::json!({}),
    );
    assert_eq!(code, 200, "{answer}");
    assert_eq!(status_of_run(&server), "denied");
}

/// An operator key sees the monitor's quarantines over HTTP and lifts one (audited with
/// its name); agent keys cannot; a body naming neither or both is refused.
#[test]
fn an_operator_sees_and_lifts_a_quarantine_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = common::strict_exit_rules(tmp.path(), "strict-rules");
    let config = common::example_config(tmp.path(), |t| {
        t.replacen(
            "[monitor]\n",
            &format!("[monitor]\nrules = {:?}\n", rules.display().to_string()),
            1,
        )
    });
    let state = tmp.path().join("state");
    let operator = create_key(
        &config,
        &state,
        &["--operator", "oncall", "--tenant", "acme"],
    );
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);
    let failing = serde_json::json!({
        "language": "python",
        "code": "import sys\nprint('{}')\nsys.exit(3)\n",
    });
    let run = || {
        let (code, report) = server.json("POST", "/v1/runs", Some(&analyst), failing.clone());
        assert_eq!(code, 200, "{report}");
        report
    };
    for _ in 0..3 {
        let r = run();
        assert_eq!(r["exit_code"], 3, "{r}");
    }
    let denied = run();
    assert_eq!(denied["status"], "denied", "{denied}");

    let release = |key: &str, body: serde_json::Value| {
        server.json("POST", "/v1/admin/monitor/release", Some(key), body)
    };
    let agent = serde_json::json!({"agent": "analyst-1"});
    assert_eq!(server.get("/v1/admin/monitor", Some(&analyst)).0, 403);
    assert_eq!(release(&analyst, agent.clone()).0, 403);
    let (code, seen) = server.get("/v1/admin/monitor", Some(&operator));
    assert_eq!(code, 200, "{seen}");
    assert_eq!(seen["quarantined"][0]["agent"], "analyst-1", "{seen}");
    assert_eq!(seen["quarantined"][0]["tenant"], "acme", "{seen}");
    for bad in [
        serde_json::json!({}),
        serde_json::json!({"agent": "analyst-1", "skill": "00"}),
        serde_json::json!({"agnet": "analyst-1"}),
    ] {
        let (code, e) = release(&operator, bad.clone());
        assert_eq!(code, 400, "{bad}: {e}");
    }
    let (code, lifted) = release(&operator, agent.clone());
    assert_eq!(code, 200, "{lifted}");
    assert_eq!(lifted["released"]["agent"], "analyst-1", "{lifted}");
    let (code, e) = release(&operator, agent);
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (404, Some("not_quarantined")),
        "{e}"
    );
    let (_, seen) = server.get("/v1/admin/monitor", Some(&operator));
    assert_eq!(seen["quarantined"], serde_json::json!([]), "{seen}");
    // Lifted: the agent's next run runs.
    let r = run();
    assert_eq!(
        (r["status"].as_str(), r["exit_code"].as_i64()),
        (Some("ok"), Some(3)),
        "{r}"
    );
    let released = audit_records(&state, "release");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0]["by"], "oncall", "{released:?}");
}

/// An identity provider's RSA key pair, made by `openssl` in `dir`: (private, public) PEM.
fn rsa_key_pair(dir: &Path) -> (Vec<u8>, PathBuf) {
    let (private, public) = (dir.join("idp.pem"), dir.join("idp.pub.pem"));
    for args in [
        vec![
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ],
        vec!["pkey", "-pubout", "-in", private.to_str().unwrap(), "-out"],
    ] {
        let target = if args[0] == "genpkey" {
            &private
        } else {
            &public
        };
        let out = Command::new("openssl")
            .args(&args)
            .arg(target)
            .output()
            .expect("openssl (scripts/install-test-deps installs it)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (std::fs::read(&private).unwrap(), public)
}

/// A server accepting JWTs of issuer `https://idp.test` for audience `skillgate`, signed
/// with `alg` and verified with the key (or JWK set) in `key`.
fn jwt_server(config: &Path, state: &Path, key: &Path, alg: &str) -> Server {
    let key = key.to_str().unwrap();
    Server::start_with(
        config,
        state,
        &[
            "--jwt-key",
            key,
            "--jwt-alg",
            alg,
            "--jwt-issuer",
            "https://idp.test",
            "--jwt-audience",
            "skillgate",
        ],
    )
}

/// Seconds since the Unix epoch (a token's `exp`).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `serve --jwt-*`: a token the identity provider signed decides the caller as a key
/// does (runs, roles, the entities' tenant); an expired, forged or mis-signed one is
/// 401 and audited with its reason; a server started without a verifier refuses tokens.
#[test]
fn jwts_signed_by_the_configured_issuer_authenticate_callers() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let (private, public) = rsa_key_pair(tmp.path());
    let server = jwt_server(&config, &state, &public, "RS256");
    let now = unix_now();
    let claims = |sub: &str, tenant: &str, extra: serde_json::Value| {
        let mut c = serde_json::json!({
            "sub": sub, "tenant": tenant, "iss": "https://idp.test", "aud": "skillgate",
            "exp": now + 300,
        });
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    let key = EncodingKey::from_rsa_pem(&private).unwrap();
    let sign = |c: serde_json::Value| encode(&Header::new(Algorithm::RS256), &c, &key).unwrap();
    let script = serde_json::json!({"language": "python", "code": "print('{\"n\": 1}')"});

    let analyst = sign(claims("analyst-1", "acme", serde_json::json!({})));
    let (code, report) = server.json("POST", "/v1/runs", Some(&analyst), script.clone());
    assert_eq!(code, 200, "{report}");
    assert_eq!(report["status"], "ok", "{report}");
    let operator = sign(claims(
        "oncall",
        "acme",
        serde_json::json!({"role": "operator"}),
    ));
    assert_eq!(server.get("/v1/admin/monitor", Some(&operator)).0, 200);
    assert_eq!(server.get("/v1/admin/monitor", Some(&analyst)).0, 403);
    let (code, _) = server.json("POST", "/v1/runs", Some(&operator), script.clone());
    assert_eq!(code, 403);

    let refused = [
        (
            sign(claims(
                "analyst-1",
                "acme",
                serde_json::json!({"exp": now - 3600}),
            )),
            "expired",
        ),
        // analyst-1 is acme's in the entities file.
        (
            sign(claims("analyst-1", "globex", serde_json::json!({}))),
            "tenant_mismatch",
        ),
        (
            sign(claims(
                "analyst-1",
                "acme",
                serde_json::json!({"iss": "https://elsewhere"}),
            )),
            "bad_token",
        ),
        // The public key used as an HMAC secret: the algorithm is never the token's.
        (
            encode(
                &Header::new(Algorithm::HS256),
                &claims("analyst-1", "acme", serde_json::json!({})),
                &EncodingKey::from_secret(&std::fs::read(&public).unwrap()),
            )
            .unwrap(),
            "bad_token",
        ),
    ];
    for (token, reason) in &refused {
        let (code, e) = server.json("POST", "/v1/runs", Some(token), script.clone());
        assert_eq!(code, 401, "{reason}: {e}");
        assert_eq!(e["error"]["code"], "unauthorized", "{e}");
    }
    let reasons: Vec<String> = audit_records(&state, "auth_failure")
        .iter()
        .map(|r| r["reason"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        reasons,
        refused
            .iter()
            .map(|(_, r)| r.to_string())
            .collect::<Vec<_>>()
    );
    drop(server);

    let keys_only = Server::start(&config, &state);
    let (code, e) = keys_only.json("POST", "/v1/runs", Some(&analyst), script);
    assert_eq!(code, 401, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--jwt-key"),
        "{e}"
    );
}

/// `--jwt-key` naming a JWK set: tokens are verified by their `kid`, and a reload (the
/// admin call; SIGHUP does the same) reads the rotated set, after which a retired key's
/// tokens are refused; a set that no longer loads is refused and the keys in use stay.
#[test]
fn a_reload_reads_the_identity_providers_rotated_keys() {
    use base64::Engine as _;
    use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let jwks = tmp.path().join("jwks.json");
    let (old, new) = (
        &b"the retiring secret, thirty-two bytes long"[..],
        &b"the new secret, also thirty-two bytes long"[..],
    );
    let oct = |kid: &str, secret: &[u8]| {
        serde_json::json!({"kty": "oct", "kid": kid, "alg": "HS256",
            "k": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret)})
    };
    let publish = |keys: Vec<serde_json::Value>| {
        std::fs::write(&jwks, serde_json::json!({ "keys": keys }).to_string()).unwrap()
    };
    publish(vec![oct("2026-11", old), oct("2026-12", new)]);
    let server = jwt_server(&config, &state, &jwks, "HS256");
    let now = unix_now();
    let token = |kid: &str, secret: &[u8], role: &str, sub: &str| {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(kid.into());
        let claims = serde_json::json!({"sub": sub, "tenant": "acme", "role": role,
            "iss": "https://idp.test", "aud": "skillgate", "exp": now + 300});
        encode(&header, &claims, &EncodingKey::from_secret(secret)).unwrap()
    };
    let (old_agent, new_agent) = (
        token("2026-11", old, "agent", "analyst-1"),
        token("2026-12", new, "agent", "analyst-1"),
    );
    let operator = token("2026-12", new, "operator", "oncall");
    let script = serde_json::json!({"language": "python", "code": "print(1)"});
    let status = |key: &str| server.json("POST", "/v1/runs", Some(key), script.clone()).0;
    assert_eq!((status(&old_agent), status(&new_agent)), (200, 200));

    publish(vec![oct("2026-12", new)]);
    let reload = || {
        server.json(
            "POST",
            "/v1/admin/reload",
            Some(&operator),
            serde_json::json!({}),
        )
    };
    assert_eq!(reload().0, 200);
    assert_eq!((status(&old_agent), status(&new_agent)), (401, 200));

    std::fs::write(&jwks, "{broken").unwrap();
    let (code, e) = reload();
    assert_eq!(code, 422, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("JWT"),
        "{e}"
    );
    assert_eq!(status(&new_agent), 200, "the keys in use stay");
}

/// A test CA, a server certificate for 127.0.0.1 and a client certificate it issued, and a
/// client certificate another CA issued (`rogue`), made by `openssl` in `dir`.
fn tls_material(dir: &Path) {
    let script = r#"set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -subj /CN=test-ca -days 1
openssl req -x509 $ec -keyout rogue-ca.key -out rogue-ca.pem -subj /CN=rogue-ca -days 1
openssl req -x509 $ec -keyout ca2.key -out ca2.pem -subj /CN=renewed-ca -days 1
leaf() {
  openssl req -new $ec -keyout $1.key -out $1.csr -subj "/CN=$2"
  printf "$3\nbasicConstraints=CA:FALSE\n" > $1.ext
  openssl x509 -req -in $1.csr -CA $4.pem -CAkey $4.key -CAcreateserial -out $1.pem -days 1 -extfile $1.ext
}
leaf server 127.0.0.1 "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth" ca
leaf client platform "extendedKeyUsage=clientAuth" ca
leaf rogue platform "extendedKeyUsage=clientAuth" rogue-ca
leaf renewed 127.0.0.1 "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth" ca2
"#;
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .expect("sh and openssl (scripts/install-test-deps installs openssl)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `curl` over HTTPS trusting the test CA, with `extra` arguments; (exit code, body).
fn curl_tls(dir: &Path, url: &str, extra: &[&str]) -> (i32, String) {
    curl_trusting(dir, "ca.pem", url, extra)
}

/// `curl` over HTTPS trusting the CA certificate `ca` of `dir`.
fn curl_trusting(dir: &Path, ca: &str, url: &str, extra: &[&str]) -> (i32, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "--cacert"])
        .arg(dir.join(ca))
        .args(extra)
        .arg(url)
        .current_dir(dir)
        .output()
        .expect("curl (scripts/install-test-deps installs it)");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `serve --tls-*`: HTTPS with the server's certificate, and with a client CA only the
/// clients it certified get through the handshake; the key still decides the caller.
#[test]
fn over_mutual_tls_only_certified_clients_reach_the_api() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tls_material(dir);
    let config = common::example_config(dir, |t| t);
    let state = dir.join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (cert, key, ca) = (file("server.pem"), file("server.key"), file("ca.pem"));
    let server = Server::start_with(
        &config,
        &state,
        &[
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--tls-client-ca",
            &ca,
        ],
    );
    let url = |path: &str| format!("https://{}{path}", server.addr);
    let client = ["--cert", "client.pem", "--key", "client.key"];
    let (code, body) = curl_tls(dir, &url("/healthz"), &client);
    assert_eq!((code, body.as_str()), (0, "{\"status\":\"ok\"}"));
    let bearer = format!("Authorization: Bearer {analyst}");
    let run = [
        &client[..],
        &[
            "-H",
            &bearer,
            "-H",
            "Content-Type: application/json",
            "-d",
            r#"{"language": "python", "code": "print('{\"n\": 1}')"}"#,
        ],
    ]
    .concat();
    let (code, body) = curl_tls(dir, &url("/v1/runs"), &run);
    assert_eq!(code, 0, "{body}");
    let report: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["status"], "ok", "{report}");
    // A certificate alone runs nothing.
    let (_, body) = curl_tls(dir, &url("/v1/runs"), &[&client[..], &run[6..]].concat());
    assert!(body.contains("unauthorized"), "{body}");
    // No certificate, or one another CA issued: refused in the handshake (curl exit 35 or
    // 56), no HTTP at all.
    for extra in [&[][..], &["--cert", "rogue.pem", "--key", "rogue.key"][..]] {
        let (code, body) = curl_tls(dir, &url("/healthz"), extra);
        assert!(code != 0 && body.is_empty(), "{extra:?}: {code} {body}");
    }
    // Plain HTTP to the TLS port gets no HTTP answer.
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10"])
        .arg(format!("http://{}/healthz", server.addr))
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("ok"),
        "{out:?}"
    );
    drop(server);

    // Without a client CA: HTTPS for any client; the server's key must fit its certificate.
    let server = Server::start_with(&config, &state, &["--tls-cert", &cert, "--tls-key", &key]);
    let health = format!("https://{}/healthz", server.addr);
    let (code, body) = curl_tls(dir, &health, &[]);
    assert_eq!((code, body.as_str()), (0, "{\"status\":\"ok\"}"));
    // A renewed certificate (another CA's) is taken on SIGHUP, without a restart.
    for ext in ["pem", "key"] {
        std::fs::copy(
            dir.join(format!("renewed.{ext}")),
            dir.join(format!("server.{ext}")),
        )
        .unwrap();
    }
    signal(&server, "HUP");
    let renewed = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        curl_trusting(dir, "ca2.pem", &health, &[]).0 == 0
    });
    assert!(
        renewed,
        "the renewed certificate is not served after SIGHUP"
    );
    assert_ne!(
        curl_tls(dir, &health, &[]).0,
        0,
        "the old CA still verifies"
    );
    let out = Command::new(bin())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
        ])
        .arg(dir.join("client.key"))
        .arg("--config")
        .arg(&config)
        .arg("--state-dir")
        .arg(&state)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("does not fit the certificate"),
        "{err}"
    );
}

#[test]
fn sigterm_drains_then_cancels_the_runs_left_and_audits_them() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let mut server = Server::start_with(&config, &state, &["--drain", "500ms"]);
    let long = std::thread::scope(|scope| {
        let long = scope.spawn(|| {
            server.json(
                "POST",
                "/v1/runs",
                Some(&analyst),
                serde_json::json!({"language": "python", "code": "import time\ntime.sleep(8)"}),
            )
        });
        // Once the server serves the run, stop it: the run outlasts the drain.
        wait_for_metric(&server, "skillgate_server_runs_in_flight 1");
        signal(&server, "TERM");
        long.join().unwrap()
    });
    let (code, report) = long;
    assert_eq!(code, 200, "{report}");
    assert_eq!(report["status"], "error", "{report}");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == "sandbox.cancelled"),
        "{report}"
    );
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let audit = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    assert!(audit.contains("\"cancelled\":true"), "{audit}");
}

#[test]
fn a_key_over_its_rate_gets_429() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let other = create_key(
        &config,
        &state,
        &["--agent", "analyst-2", "--tenant", "acme"],
    );
    let server = Server::start_with(&config, &state, &["--rate-limit", "2"]);
    assert_eq!(server.get("/v1/skills", Some(&analyst)).0, 200);
    assert_eq!(server.get("/v1/skills", Some(&analyst)).0, 200);
    let (status, e) = server.get("/v1/skills", Some(&analyst));
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (429, Some("rate_limited")),
        "{e}"
    );
    // Another key has its own rate.
    assert_eq!(server.get("/v1/skills", Some(&other)).0, 200);
}

#[test]
fn beyond_max_runs_and_max_queued_runs_are_shed_with_429() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start_with(&config, &state, &["--max-runs", "1", "--max-queued", "0"]);
    let sleep = serde_json::json!({"language": "python", "code": "import time\ntime.sleep(3)"});
    std::thread::scope(|scope| {
        let long = scope.spawn(|| server.json("POST", "/v1/runs", Some(&analyst), sleep.clone()));
        wait_for_metric(&server, "skillgate_server_runs_in_flight 1");
        // The one slot is taken and no run may wait: the next is shed at once.
        let (status, body) = server.call(
            "POST",
            "/v1/runs",
            Some(&analyst),
            "application/json",
            br#"{"language": "python", "code": "print(1)"}"#,
        );
        let e: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (status, e["error"]["code"].as_str()),
            (429, Some("overloaded")),
            "{e}"
        );
        let (code, report) = long.join().unwrap();
        assert_eq!(
            (code, report["status"].as_str()),
            (200, Some("ok")),
            "{report}"
        );
    });
    // The slot is free again.
    let (code, report) = server.json(
        "POST",
        "/v1/runs",
        Some(&analyst),
        serde_json::json!({"language": "python", "code": "print(1)"}),
    );
    assert_eq!(
        (code, report["status"].as_str()),
        (200, Some("ok")),
        "{report}"
    );
}

/// The audit trail's records of `kind`.
fn audit_records(state: &Path, kind: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(state.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["kind"] == kind)
        .collect()
}

#[test]
fn a_run_is_shed_before_its_key_is_looked_up() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let log_path = tmp.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let server = Server::start_logging(
        &config,
        &state,
        &["--max-runs", "1", "--max-queued", "0"],
        log.into(),
    );
    let sleep = serde_json::json!({"language": "python", "code": "import time\ntime.sleep(3)"});
    let mut shed_ids = Vec::new();
    std::thread::scope(|scope| {
        let long = scope.spawn(|| server.json("POST", "/v1/runs", Some(&analyst), sleep.clone()));
        wait_for_metric(&server, "skillgate_server_runs_in_flight 1");
        // No slot: a bad key, and no key at all, are told to come back (429 with
        // Retry-After), not 401: admission is decided before the key is looked up.
        for key in [Some("sgk_not-a-key"), None] {
            let (status, head, body) = server.exchange(
                "POST",
                "/v1/skills/analyze-rows/runs",
                key,
                "application/json",
                b"{}",
            );
            let e: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(
                (status, e["error"]["code"].as_str()),
                (429, Some("overloaded")),
                "{e}"
            );
            assert!(head.contains("\r\nretry-after: 1"), "{head}");
            let id = head.split("x-request-id: ").nth(1).unwrap();
            shed_ids.push(id.lines().next().unwrap().to_string());
        }
        // Neither left an audit record (nor a refused credential's), and both are counted.
        assert!(audit_records(&state, "auth_failure").is_empty());
        assert!(
            metrics(&server).contains("skillgate_server_runs_shed_total 2"),
            "{}",
            metrics(&server)
        );
        let (code, report) = long.join().unwrap();
        assert_eq!(
            (code, report["status"].as_str()),
            (200, Some("ok")),
            "{report}"
        );
    });
    assert_eq!(audit_records(&state, "execution").len(), 1);
    // No log line of their own either (the counter and a line a second at most say it).
    let log = std::fs::read_to_string(&log_path).unwrap();
    for id in &shed_ids {
        assert!(!log.contains(id.as_str()), "{id} in {log}");
    }
    // A slot is free: the bad key is refused (401, audited) and the good key runs.
    let (status, e) = server.json(
        "POST",
        "/v1/runs",
        Some("sgk_not-a-key"),
        serde_json::json!({"language": "python", "code": "print(1)"}),
    );
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (401, Some("unauthorized")),
        "{e}"
    );
    assert_eq!(audit_records(&state, "auth_failure").len(), 1);
    let (code, report) = server.json(
        "POST",
        "/v1/runs",
        Some(&analyst),
        serde_json::json!({"language": "python", "code": "print(1)"}),
    );
    assert_eq!(
        (code, report["status"].as_str()),
        (200, Some("ok")),
        "{report}"
    );
    assert_eq!(audit_records(&state, "execution").len(), 2);
}

/// A request that finds every slot taken but room in the queue is authenticated before it
/// may wait: a bad key is refused at once (401, audited) and takes no queue place, while a
/// keyed caller waits for the slot and runs. (Before, the bad key waited in the queue like
/// any request, and an unauthenticated flood could push keyed callers out of it.)
#[test]
fn only_a_caller_whose_key_holds_waits_in_the_queue() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start_with(
        &config,
        &state,
        &[
            "--max-runs",
            "1",
            "--max-queued",
            "4",
            "--max-queue-wait",
            "60s",
        ],
    );
    let sleep = serde_json::json!({"language": "python", "code": "import time\ntime.sleep(3)"});
    let quick = serde_json::json!({"language": "python", "code": "print(1)"});
    std::thread::scope(|scope| {
        let long = scope.spawn(|| server.json("POST", "/v1/runs", Some(&analyst), sleep.clone()));
        wait_for_metric(&server, "skillgate_server_runs_in_flight 1");
        let (status, e) = server.json("POST", "/v1/runs", Some("sgk_not-a-key"), quick.clone());
        assert_eq!(
            (status, e["error"]["code"].as_str()),
            (401, Some("unauthorized")),
            "{e}"
        );
        // Refused without waiting for the slot: the long run still holds it, and nothing
        // waits in the queue.
        let now = metrics(&server);
        assert!(now.contains("skillgate_server_runs_in_flight 1"), "{now}");
        assert!(now.contains("skillgate_server_runs_queued 0"), "{now}");
        assert_eq!(audit_records(&state, "auth_failure").len(), 1);
        // The keyed caller waits in the queue, then runs.
        let waiting =
            scope.spawn(|| server.json("POST", "/v1/runs", Some(&analyst), quick.clone()));
        while !metrics(&server).contains("skillgate_server_runs_queued 1") {
            assert!(
                !waiting.is_finished(),
                "the keyed run did not wait for the slot"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for run in [long.join().unwrap(), waiting.join().unwrap()] {
            assert_eq!(
                (run.0, run.1["status"].as_str()),
                (200, Some("ok")),
                "{}",
                run.1
            );
        }
    });
    assert_eq!(audit_records(&state, "execution").len(), 2);
}

#[test]
fn max_runs_of_zero_is_refused_naming_the_flag() {
    let out = Command::new(bin())
        .args(["serve", "--max-runs", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-runs"), "{err}");
}

#[test]
fn it_serves_on_a_unix_socket() {
    use std::os::unix::net::UnixStream;
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let socket = tmp.path().join("sg.sock");
    let mut child = Command::new(bin())
        .arg("serve")
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--config")
        .arg(&config)
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line.trim(),
        format!("listening on unix:{}", socket.display())
    );
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("{\"status\":\"ok\"}"), "{answer}");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!socket.exists(), "the socket is removed at exit");
}

/// The official MCP Python SDK over streamable HTTP to the server's `/mcp` with `key`.
fn mcp_client(server: &Server, key: &str, steps: serde_json::Value) -> serde_json::Value {
    common::mcp_client(
        ["bearer", &format!("http://{}/mcp", server.addr), key],
        &steps,
    )
}

/// The official MCP Python SDK over stdio to `skillgate mcp` (no `--skills`: the
/// registry only) as `agent`.
fn mcp_stdio(
    config: &Path,
    state: &Path,
    agent: &str,
    steps: serde_json::Value,
) -> serde_json::Value {
    let args: Vec<std::ffi::OsString> = vec![
        "stdio".into(),
        bin().into(),
        "mcp".into(),
        "--agent".into(),
        agent.into(),
        "--config".into(),
        config.into(),
        "--state-dir".into(),
        state.into(),
    ];
    common::mcp_client(args, &steps)
}

#[test]
fn skillgate_mcp_over_stdio_serves_the_registry_too() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let builder = create_key(
        &config,
        &state,
        &["--builder", "builder-alice", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);
    let public = tgz(&common::repo().join("examples/skills/count-items"));
    assert_eq!(server.publish(&builder, &public).0, 201);
    let private = tgz(&js_skill(
        tmp.path(),
        "alice-private",
        "  skillgate.visibility: private\n",
    ));
    assert_eq!(server.publish(&builder, &private).0, 201);
    drop(server);

    let steps = serde_json::json!([
        {"op": "list"},
        {"op": "call", "name": "count-items", "arguments": {"items": [1, 2]}},
    ]);
    let analyst = mcp_stdio(&config, &state, "analyst-1", steps.clone());
    assert_eq!(tool_names(&analyst[0]), ["count-items"]);
    let result = &analyst[1]["result"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert!(
        result.to_string().contains("Processed 2 items"),
        "{result:#}"
    );
    let assistant = mcp_stdio(&config, &state, "alice-assistant", steps);
    assert_eq!(tool_names(&assistant[0]), ["alice-private", "count-items"]);
}

fn tool_names(answer: &serde_json::Value) -> Vec<String> {
    answer["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn mcp_at_slash_mcp_serves_the_registry_to_the_keys_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::example_config(tmp.path(), |t| t);
    let state = tmp.path().join("state");
    let builder = create_key(
        &config,
        &state,
        &["--builder", "builder-alice", "--tenant", "acme"],
    );
    let analyst = create_key(
        &config,
        &state,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let assistant = create_key(
        &config,
        &state,
        &["--agent", "alice-assistant", "--tenant", "acme"],
    );
    let server = Server::start(&config, &state);
    let public = tgz(&common::repo().join("examples/skills/count-items"));
    assert_eq!(server.publish(&builder, &public).0, 201);
    let private = tgz(&js_skill(
        tmp.path(),
        "alice-private",
        "  skillgate.visibility: private\n",
    ));
    assert_eq!(server.publish(&builder, &private).0, 201);

    let steps = serde_json::json!([
        {"op": "list"},
        {"op": "call", "name": "count-items", "arguments": {"items": [1, 2, 3]}},
        {"op": "call", "name": "alice-private", "arguments": {}},
    ]);
    // The key decides the agent: two agents, two tool lists.
    let analyst_answers = mcp_client(&server, &analyst, steps.clone());
    // `serve` lists the session tools first, then the skills.
    let sessions = [
        "session_new",
        "session_exec",
        "session_upload",
        "session_download",
        "session_log",
        "session_rm",
    ];
    assert_eq!(
        tool_names(&analyst_answers[0]),
        [&sessions[..], &["count-items"]].concat()
    );
    let result = &analyst_answers[1]["result"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert!(
        result.to_string().contains("Processed 3 items"),
        "{result:#}"
    );
    // A skill this agent may not see is an unknown tool.
    assert_eq!(
        analyst_answers[2]["error"]["code"], -32602,
        "{:#}",
        analyst_answers[2]
    );
    let assistant_answers = mcp_client(&server, &assistant, steps);
    assert_eq!(
        tool_names(&assistant_answers[0]),
        [&sessions[..], &["alice-private", "count-items"]].concat()
    );
    assert_eq!(
        assistant_answers[2]["result"]["isError"], false,
        "{:#}",
        assistant_answers[2]
    );

    // Every call that ran went through the pipeline and is audited once: the analyst's
    // count-items, the assistant's count-items and alice-private (the unknown tool ran
    // nothing).
    let audit = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    assert_eq!(
        audit
            .lines()
            .filter(|l| l.contains("\"kind\":\"execution\""))
            .count(),
        3,
        "{audit}"
    );

    // No key: 401; a builder key: 403 (tools are for agents).
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let (status, _) = server.json("POST", "/mcp", None, init.clone());
    assert_eq!(status, 401);
    let (status, refused) = server.json("POST", "/mcp", Some(&builder), init);
    assert_eq!(status, 403, "{refused}");
}

#[path = "../../../tests/support/postgres.rs"]
mod postgres;

/// The example config in `dir` with `[store] url` set to a fresh database `name` on the
/// test PostgreSQL (`scripts/services up postgres`): the database's URL and the config.
fn postgres_config(dir: &Path, name: &str) -> (String, PathBuf) {
    let url = postgres::fresh_database(name);
    let config = common::example_config(dir, |t| {
        t.replace(
            "# url = \"postgres://skillgate:PASSWORD@127.0.0.1:25432/skillgate\"",
            &format!("url = {url:?}"),
        )
    });
    (url, config)
}

/// Issue 15, "Several replicas": two `serve` replicas with separate state directories on
/// one real PostgreSQL (`[store] url`, `scripts/services up postgres`) share the keys,
/// the registry and the audit trail: a key made through one authenticates on the other,
/// a version published through one exists on the other, and each run and refusal has
/// exactly one audit record in the database, whichever replica served it.
#[test]
fn two_replicas_on_one_postgres_share_keys_registry_and_audit() {
    let tmp = tempfile::tempdir().unwrap();
    let (url, config) = postgres_config(tmp.path(), "serve_replicas");
    let (state_a, state_b) = (tmp.path().join("a"), tmp.path().join("b"));
    // Keys made beside replica A's state directory.
    let builder = create_key(
        &config,
        &state_a,
        &["--builder", "builder-alice", "--tenant", "acme"],
    );
    let analyst = create_key(
        &config,
        &state_a,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let a = Server::start(&config, &state_a);
    let count_items = tgz(&common::repo().join("examples/skills/count-items"));
    assert_eq!(a.publish(&builder, &count_items).0, 201);
    let b = Server::start(&config, &state_b);
    // B authenticates A's key and knows the version A published.
    assert_eq!(b.publish(&builder, &count_items).0, 409);
    let input = serde_json::json!({"input": {"items": [1, 2, 3]}});
    let mut ids = Vec::new();
    for server in [&b, &a, &b] {
        let (status, report) = server.json(
            "POST",
            "/v1/skills/count-items/runs",
            Some(&analyst),
            input.clone(),
        );
        assert_eq!(status, 200, "{report}");
        assert_eq!(report["status"], "ok", "{report}");
        ids.push(report["request_id"].as_str().unwrap().to_string());
    }
    assert_eq!(
        b.json("POST", "/v1/skills/count-items/runs", None, input).0,
        401
    );

    // One record per run, by request id, in the database; none in the state directories.
    for id in &ids {
        assert_eq!(
            postgres::psql(
                &url,
                &format!("SELECT count(*) FROM monitor_audit WHERE request_id = '{id}'")
            ),
            "1"
        );
    }
    assert_eq!(
        postgres::psql(
            &url,
            "SELECT kind, count(*) FROM monitor_audit GROUP BY 1 ORDER BY 1"
        ),
        "auth_failure|1\nexecution|3"
    );
    assert!(!state_a.join("audit.jsonl").exists());
    assert!(!state_b.join("audit.jsonl").exists());
    // Either replica's metrics count every replica's runs.
    let text = metrics(&a);
    assert!(
        text.contains("skillgate_executions_total{status=\"ok\"} 3"),
        "{text}"
    );
    assert!(
        text.contains("skillgate_auth_failures_total{reason=\"missing\"} 1"),
        "{text}"
    );

    // A private skill published through A after B started: B's gate must judge it as
    // published (private to builder-alice's agents), never as the caller's own code.
    let assistant = create_key(
        &config,
        &state_a,
        &["--agent", "alice-assistant", "--tenant", "acme"],
    );
    let private = tgz(&js_skill(
        tmp.path(),
        "alice-private",
        "  skillgate.visibility: private\n",
    ));
    assert_eq!(a.publish(&builder, &private).0, 201);
    let (_, listed) = b.get("/v1/skills", Some(&analyst));
    assert_eq!(names(&listed), ["count-items"]);
    let (status, report) = b.json(
        "POST",
        "/v1/skills/alice-private/runs",
        Some(&analyst),
        serde_json::json!({"input": {}}),
    );
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["status"], "denied", "{report}");
    let (_, listed) = b.get("/v1/skills", Some(&assistant));
    assert_eq!(names(&listed), ["alice-private", "count-items"]);
    let (status, report) = b.json(
        "POST",
        "/v1/skills/alice-private/runs",
        Some(&assistant),
        serde_json::json!({"input": {}}),
    );
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["status"], "ok", "{report}");
}

// Sessions over `serve` (issue 17): `/v1/sessions/...` and the MCP `session_*` tools.

/// A server on the example config with agent keys for analyst-1, analyst-2 and
/// catalogue-bot (no right to run code) and a builder key; `extra` server flags.
struct SessionServer {
    server: Server,
    analyst: String,
    other: String,
    no_code: String,
    builder: String,
    _tmp: tempfile::TempDir,
}

impl SessionServer {
    fn start(extra: &[&str]) -> SessionServer {
        SessionServer::on(|dir| common::example_config(dir, |t| t), extra)
    }

    /// On the example config plus a policy granting `run_command` (shell steps) to the
    /// analysts.
    fn with_shell_grant(extra: &[&str]) -> SessionServer {
        SessionServer::on(common::example_config_with_shell_grant, extra)
    }

    /// On the config `config` writes into a folder of its own.
    fn on(config: impl FnOnce(&Path) -> PathBuf, extra: &[&str]) -> SessionServer {
        let tmp = tempfile::tempdir().unwrap();
        let config = config(tmp.path());
        let state = tmp.path().join("state");
        let agent = |id: &str| create_key(&config, &state, &["--agent", id, "--tenant", "acme"]);
        let (analyst, other, no_code) = (
            agent("analyst-1"),
            agent("analyst-2"),
            agent("catalogue-bot"),
        );
        let builder = create_key(
            &config,
            &state,
            &["--builder", "builder-alice", "--tenant", "acme"],
        );
        SessionServer {
            server: Server::start_with(&config, &state, extra),
            analyst,
            other,
            no_code,
            builder,
            _tmp: tmp,
        }
    }

    fn new_session(&self, key: &str) -> String {
        let (status, s) =
            self.server
                .json("POST", "/v1/sessions", Some(key), serde_json::json!({}));
        assert_eq!(status, 201, "{s}");
        s["id"].as_str().unwrap().to_string()
    }

    fn step(&self, key: &str, id: &str, code: &str) -> (u16, serde_json::Value) {
        self.step_body(
            key,
            id,
            serde_json::json!({"language": "python", "code": code}),
        )
    }

    fn step_body(&self, key: &str, id: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
        self.server
            .json("POST", &format!("/v1/sessions/{id}/steps"), Some(key), body)
    }

    fn log_len(&self, key: &str, id: &str) -> usize {
        let (status, log) = self
            .server
            .get(&format!("/v1/sessions/{id}/log"), Some(key));
        assert_eq!(status, 200, "{log}");
        log["events"].as_array().unwrap().len()
    }

    fn upload(&self, key: &str, id: &str, path: &str, bytes: &[u8]) -> (u16, serde_json::Value) {
        let (status, body) = self.server.call(
            "PUT",
            &format!("/v1/sessions/{id}/files/{path}"),
            Some(key),
            "application/octet-stream",
            bytes,
        );
        (status, serde_json::from_slice(&body).unwrap())
    }
}

#[test]
fn a_session_over_http_uploads_runs_steps_and_downloads_what_they_wrote() {
    let s = SessionServer::start(&["--session-upload-limit", "1KiB"]);
    let srv = &s.server;
    // No key: 401; a builder key: 403; an agent key makes one (an unguessable id).
    let (status, _) = srv.json("POST", "/v1/sessions", None, serde_json::json!({}));
    assert_eq!(status, 401);
    let (status, refused) = srv.json(
        "POST",
        "/v1/sessions",
        Some(&s.builder),
        serde_json::json!({}),
    );
    assert_eq!(status, 403, "{refused}");
    let id = s.new_session(&s.analyst);
    assert_eq!(id.len(), 32, "{id}");
    assert_ne!(id, s.new_session(&s.analyst));

    let (status, e) = s.upload(&s.analyst, &id, "data/in.csv", b"n\n1\n2\n3\n");
    assert_eq!((status, e["seq"].as_u64()), (201, Some(1)), "{e}");
    let (status, r) = s.step(
        &s.analyst,
        &id,
        "total = sum(int(l) for l in open('data/in.csv').read().split()[1:])\n\
         import os\nos.makedirs('out', exist_ok=True)\nopen('out/total.txt', 'w').write(str(total))\nprint(total)\n",
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["report"]["status"], "ok", "{r}");
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6", "{r}");
    assert_eq!(r["seq"], 2, "{r}");
    // A second step sees the first one's file (the workspace persists between steps).
    let (_, r) = s.step(&s.analyst, &id, "print(open('out/total.txt').read() + '!')");
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6!", "{r}");

    let (status, bytes) = srv.call(
        "GET",
        &format!("/v1/sessions/{id}/files/out/total.txt"),
        Some(&s.analyst),
        "application/json",
        b"",
    );
    assert_eq!((status, bytes.as_slice()), (200, b"6".as_slice()));
    let (status, missing) = srv.get(
        &format!("/v1/sessions/{id}/files/out/none.txt"),
        Some(&s.analyst),
    );
    assert_eq!(
        (status, missing["error"]["code"].as_str()),
        (404, Some("no_such_file")),
        "{missing}"
    );
    let (status, log) = srv.get(&format!("/v1/sessions/{id}/log"), Some(&s.analyst));
    assert_eq!(status, 200, "{log}");
    let kinds: Vec<&str> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["upload", "step", "step"]);

    // Another agent of the same tenant is told there is no such session, exactly as for an
    // id never made; a builder key is refused outright.
    let never = "0".repeat(32);
    for sid in [&id, &never] {
        let (status, e) = srv.get(&format!("/v1/sessions/{sid}/log"), Some(&s.other));
        assert_eq!(
            (status, e["error"]["code"].as_str()),
            (404, Some("unknown_session")),
            "{e}"
        );
        let (status, e) = s.step(&s.other, sid, "print(1)");
        assert_eq!(
            (status, e["error"]["code"].as_str()),
            (404, Some("unknown_session")),
            "{e}"
        );
        let (status, _) = s.upload(&s.other, sid, "x.txt", b"x");
        assert_eq!(status, 404);
        let (status, _) = srv.call(
            "GET",
            &format!("/v1/sessions/{sid}/files/out/total.txt"),
            Some(&s.other),
            "application/json",
            b"",
        );
        assert_eq!(status, 404);
        let (status, _) = srv.call(
            "DELETE",
            &format!("/v1/sessions/{sid}"),
            Some(&s.other),
            "application/json",
            b"",
        );
        assert_eq!(status, 404);
    }
    let (status, e) = srv.get(&format!("/v1/sessions/{id}/log"), Some(&s.builder));
    assert_eq!(status, 403, "{e}");

    // Bad input: a path out of the workspace, an upload over the cap, a malformed id, a
    // bad mode, an unknown language; each a 4xx naming the problem, nothing recorded.
    let (status, e) = s.upload(&s.analyst, &id, "../escape.txt", b"x");
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains(".."),
        "{e}"
    );
    let (status, e) = s.upload(&s.analyst, &id, "big.bin", &[0u8; 2048]);
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (413, Some("body_too_large")),
        "{e}"
    );
    let (status, e) = s.upload(&s.analyst, "not-an-id", "x.txt", b"x");
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a session id"),
        "{e}"
    );
    let (status, e) = s.upload(&s.analyst, &id, "x.txt?mode=999", b"x");
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("bad_mode")),
        "{e}"
    );
    let (status, e) = srv.json(
        "POST",
        &format!("/v1/sessions/{id}/steps"),
        Some(&s.analyst),
        serde_json::json!({"language": "cobol", "code": "x"}),
    );
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("unknown_language")),
        "{e}"
    );
    let (_, log) = srv.get(&format!("/v1/sessions/{id}/log"), Some(&s.analyst));
    assert_eq!(log["events"].as_array().unwrap().len(), 3, "{log}");

    // A step the pre-scan blocks comes back as a report with its status, recorded nowhere.
    let (status, r) = s.step(
        &s.analyst,
        &id,
        "import subprocess\nsubprocess.run(['sh', '-c', 'echo hi > f'])",
    );
    assert_eq!(
        (status, r["report"]["status"].as_str()),
        (200, Some("blocked")),
        "{r}"
    );
    assert!(r["seq"].is_null(), "{r}");
    // So does one the policy denies (catalogue-bot may not run code).
    let bot = s.new_session(&s.no_code);
    let (status, r) = s.step(&s.no_code, &bot, "print(1)");
    assert_eq!(
        (status, r["report"]["status"].as_str()),
        (200, Some("denied")),
        "{r}"
    );
    assert!(r["seq"].is_null(), "{r}");
    let (_, log) = srv.get(&format!("/v1/sessions/{bot}/log"), Some(&s.no_code));
    assert_eq!(log["events"], serde_json::json!([]), "{log}");

    // Removed: gone for its owner too.
    let (status, e) = srv.call(
        "DELETE",
        &format!("/v1/sessions/{id}"),
        Some(&s.analyst),
        "application/json",
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&e));
    let (status, _) = srv.get(&format!("/v1/sessions/{id}/log"), Some(&s.analyst));
    assert_eq!(status, 404);
}

#[test]
fn a_step_on_a_busy_session_is_409_with_the_locks_reason() {
    let s = SessionServer::start(&["--session-lock-wait", "100ms"]);
    let id = s.new_session(&s.analyst);
    std::thread::scope(|scope| {
        let slow =
            scope.spawn(|| s.step(&s.analyst, &id, "import time\ntime.sleep(4)\nprint('done')"));
        // While one step holds the lock, another step of the session is refused: a probe
        // sent while the slow step runs, or the slow step itself when a probe got there first.
        let mut busy = None;
        while busy.is_none() && !slow.is_finished() {
            let (status, e) = s.step(&s.analyst, &id, "print(1)");
            if status == 409 {
                busy = Some(e);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let (status, r) = slow.join().unwrap();
        if status == 409 {
            busy = busy.or(Some(r));
        } else {
            assert_eq!(
                (status, r["report"]["status"].as_str()),
                (200, Some("ok")),
                "{r}"
            );
        }
        let busy = busy.expect("no step was refused while another one ran");
        assert_eq!(busy["error"]["code"], "session_busy", "{busy}");
        assert!(
            busy["error"]["message"].as_str().unwrap().contains("busy"),
            "{busy}"
        );
    });
}

#[test]
fn sessions_are_mcp_tools_with_the_same_owner() {
    let s = SessionServer::start(&[]);
    // Made over HTTP, used over MCP by the same agent: one session store.
    let id = s.new_session(&s.analyst);
    let steps = serde_json::json!([
        {"op": "list"},
        {"op": "call", "name": "session_new", "arguments": {}},
        {"op": "call", "name": "session_upload", "arguments": {"session": id, "path": "in.txt", "text": "21"}},
        {"op": "call", "name": "session_exec", "arguments": {"session": id, "language": "python",
            "code": "import json\nn = int(open('in.txt').read())\nopen('out.txt', 'w').write(str(2 * n))\nprint(json.dumps({'n': 2 * n}))"}},
        {"op": "call", "name": "session_download", "arguments": {"session": id, "path": "out.txt"}},
        {"op": "call", "name": "session_log", "arguments": {"session": id}},
        {"op": "call", "name": "session_exec", "arguments": {"session": id, "language": "python",
            "code": "import subprocess\nsubprocess.run(['true'])"}},
        {"op": "call", "name": "session_upload", "arguments": {"session": id, "path": "../x", "text": "x"}},
    ]);
    let a = mcp_client(&s.server, &s.analyst, steps.clone());
    let names = tool_names(&a[0]);
    for t in [
        "session_new",
        "session_exec",
        "session_upload",
        "session_download",
        "session_log",
        "session_rm",
    ] {
        assert!(names.iter().any(|n| n == t), "{names:?}");
    }
    let new = &a[1]["result"];
    assert_eq!(new["isError"], false, "{new:#}");
    assert_eq!(
        new["structuredContent"]["id"].as_str().unwrap().len(),
        32,
        "{new:#}"
    );
    assert_eq!(a[2]["result"]["isError"], false, "{:#}", a[2]);
    let exec = &a[3]["result"];
    assert_eq!(exec["isError"], false, "{exec:#}");
    assert_eq!(exec["structuredContent"]["n"], 42, "{exec:#}");
    let download = a[4]["result"].to_string();
    assert!(download.contains("\"text\":\"42\""), "{download}");
    let log = &a[5]["result"]["structuredContent"]["events"];
    assert_eq!(log.as_array().map(Vec::len), Some(2), "{log:#}");
    // The pre-scan blocks a step: a tool error, nothing recorded.
    let blocked = &a[6]["result"];
    assert_eq!(blocked["isError"], true, "{blocked:#}");
    assert!(
        blocked.to_string().contains("nothing recorded"),
        "{blocked:#}"
    );
    let bad = &a[7]["result"];
    assert_eq!(bad["isError"], true, "{bad:#}");
    assert!(bad.to_string().contains(".."), "{bad:#}");

    // Another agent is told there is no such session, for every tool.
    let b = mcp_client(&s.server, &s.other, steps);
    for answer in &b.as_array().unwrap()[2..6] {
        let r = &answer["result"];
        assert_eq!(r["isError"], true, "{r:#}");
        assert!(r.to_string().contains("no session"), "{r:#}");
    }
    let (_, log) = s
        .server
        .get(&format!("/v1/sessions/{id}/log"), Some(&s.analyst));
    assert_eq!(log["events"].as_array().unwrap().len(), 2, "{log}");
}

/// The rule ids of a step report's findings.
fn rule_ids(r: &serde_json::Value) -> Vec<&str> {
    r["report"]["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings: {r}"))
        .iter()
        .filter_map(|f| f["rule_id"].as_str())
        .collect()
}

#[test]
fn a_shell_step_over_http_writes_a_file_the_session_downloads() {
    let s = SessionServer::with_shell_grant(&[]);
    let id = s.new_session(&s.analyst);
    let (status, e) = s.upload(&s.analyst, &id, "data.csv", b"d,4\nb,2\ne,5\na,1\nc,3\n");
    assert_eq!(status, 201, "{e}");
    let sort = serde_json::json!({"sh": "sort data.csv | head -n 2 > top.csv"});
    let (status, r) = s.step_body(&s.analyst, &id, sort.clone());
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["report"]["status"], "ok", "{r}");
    assert_eq!(r["report"]["exit_code"], 0, "{r}");
    assert_eq!(r["seq"], 2, "{r}");
    let (status, bytes) = s.server.call(
        "GET",
        &format!("/v1/sessions/{id}/files/top.csv"),
        Some(&s.analyst),
        "application/json",
        b"",
    );
    assert_eq!((status, bytes.as_slice()), (200, b"a,1\nb,2\n".as_slice()));

    // A command off the shell allow-list is blocked before it runs, with a finding
    // naming the rule; nothing is recorded and the workspace is untouched.
    for (cmd, rule) in [
        (
            "curl -s http://127.0.0.1:9/ > top.csv",
            "sh.command.network",
        ),
        ("eval 'rm top.csv'", "sh.command.eval"),
    ] {
        let (status, r) = s.step_body(&s.analyst, &id, serde_json::json!({"sh": cmd}));
        assert_eq!(status, 200, "{cmd}: {r}");
        assert_eq!(r["report"]["status"], "blocked", "{cmd}: {r}");
        assert!(rule_ids(&r).contains(&rule), "{cmd}: wanted {rule}: {r}");
        assert!(r["seq"].is_null(), "{cmd}: {r}");
    }
    assert_eq!(s.log_len(&s.analyst, &id), 2);
    let (_, bytes) = s.server.call(
        "GET",
        &format!("/v1/sessions/{id}/files/top.csv"),
        Some(&s.analyst),
        "application/json",
        b"",
    );
    assert_eq!(bytes, b"a,1\nb,2\n");

    // `sh` with a script is a 400 naming both forms.
    let (status, e) = s.step_body(
        &s.analyst,
        &id,
        serde_json::json!({"sh": "ls", "language": "python", "code": "print(1)"}),
    );
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (400, Some("bad_step")),
        "{e}"
    );
}

#[test]
fn a_shell_step_over_http_is_denied_under_the_default_policy() {
    let s = SessionServer::start(&[]);
    let id = s.new_session(&s.analyst);
    let (status, e) = s.upload(&s.analyst, &id, "data.csv", b"b,2\na,1\n");
    assert_eq!(status, 201, "{e}");
    let (status, r) = s.step_body(
        &s.analyst,
        &id,
        serde_json::json!({"sh": "sort data.csv | head -n 2 > top.csv"}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["report"]["status"], "denied", "{r}");
    assert!(r.to_string().contains("run_command"), "{r}");
    assert!(r["seq"].is_null(), "{r}");
    assert_eq!(s.log_len(&s.analyst, &id), 1, "only the upload is recorded");
    let (status, _) = s.server.get(
        &format!("/v1/sessions/{id}/files/top.csv"),
        Some(&s.analyst),
    );
    assert_eq!(status, 404);
}

/// The example config with `[sessions] env_allow` set to `list` (TOML), in `dir`.
fn env_allow_config(dir: &Path, list: &str) -> PathBuf {
    common::example_config(dir, |text| {
        let start = text
            .find("env_allow = [")
            .expect("the example sets env_allow");
        let end = start + text[start..].find(']').unwrap() + 1;
        format!("{}env_allow = {list}{}", &text[..start], &text[end..])
    })
}

#[test]
fn the_configured_step_allow_list_holds_over_http_and_a_bad_one_stops_serve() {
    let s = SessionServer::on(|dir| env_allow_config(dir, r#"["REPORT_TITLE"]"#), &[]);
    let id = s.new_session(&s.analyst);
    let code = "import os\nprint(os.environ.get('REPORT_TITLE'))";
    let (status, r) = s.step_body(
        &s.analyst,
        &id,
        serde_json::json!({"language": "python", "code": code, "env": {"REPORT_TITLE": "Q3"}}),
    );
    assert_eq!(
        (status, r["report"]["status"].as_str()),
        (200, Some("ok")),
        "{r}"
    );
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "Q3", "{r}");
    let (status, e) = s.step_body(
        &s.analyst,
        &id,
        serde_json::json!({"language": "python", "code": code, "env": {"TZ": "UTC"}}),
    );
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`TZ` is not on the step allow-list"),
        "{e}"
    );
    assert_eq!(s.log_len(&s.analyst, &id), 1);

    let tmp = tempfile::tempdir().unwrap();
    let config = env_allow_config(tmp.path(), r#"["LD_PRELOAD"]"#);
    let out = Command::new(bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("`[sessions] env_allow`") && stderr.contains("`LD_PRELOAD`"),
        "{stderr}"
    );
}

/// The MCP text content of a tool result, joined.
fn texts(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result:#}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn session_exec_over_mcp_takes_a_shell_step_where_run_command_is_granted() {
    let s = SessionServer::with_shell_grant(&[]);
    let id = s.new_session(&s.analyst);
    let steps = serde_json::json!([
        {"op": "list"},
        {"op": "call", "name": "session_upload", "arguments": {"session": id, "path": "data.csv", "text": "b,2\nc,3\na,1\n"}},
        {"op": "call", "name": "session_exec", "arguments": {"session": id, "sh": "sort data.csv | head -n 2"}},
        {"op": "call", "name": "session_exec", "arguments": {"session": id, "sh": "ls", "code": "print(1)", "language": "python"}},
        {"op": "call", "name": "session_exec", "arguments": {"session": id, "sh": "ls", "code": "print(1)"}},
        {"op": "call", "name": "session_exec", "arguments": {"session": id}},
    ]);
    let a = mcp_client(&s.server, &s.analyst, steps);
    // tools/list says a step is a script or a shell command line, exactly one of them.
    let exec = a[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "session_exec")
        .unwrap();
    let schema = &exec["inputSchema"];
    assert_eq!(schema["properties"]["sh"]["type"], "string", "{schema:#}");
    assert_eq!(
        schema["required"],
        serde_json::json!(["session"]),
        "{schema:#}"
    );
    let one_of = schema["oneOf"].as_array().unwrap();
    assert_eq!(
        one_of[0]["required"],
        serde_json::json!(["language", "code"])
    );
    assert_eq!(one_of[1]["required"], serde_json::json!(["sh"]));
    assert!(
        exec["description"]
            .as_str()
            .unwrap()
            .contains("run_command")
    );

    assert_eq!(a[1]["result"]["isError"], false, "{:#}", a[1]);
    let ran = &a[2]["result"];
    assert_eq!(ran["isError"], false, "{ran:#}");
    assert!(texts(ran).starts_with("a,1\nb,2\n"), "{ran:#}");
    assert!(texts(ran).contains("recorded as event 2"), "{ran:#}");
    // `sh` with a script: a clear error, nothing recorded.
    for bad in &a.as_array().unwrap()[3..6] {
        let r = &bad["result"];
        assert_eq!(r["isError"], true, "{r:#}");
        assert!(
            texts(r).contains("either `language` and `code`") && texts(r).contains("`sh`"),
            "{r:#}"
        );
    }
    assert_eq!(s.log_len(&s.analyst, &id), 2);
    let log = s
        .server
        .get(&format!("/v1/sessions/{id}/log"), Some(&s.analyst))
        .1;
    assert_eq!(log["events"][1]["kind"]["language"], "shell", "{log}");
}

#[test]
fn session_exec_over_mcp_denies_a_shell_step_under_the_default_policy() {
    let s = SessionServer::start(&[]);
    let id = s.new_session(&s.analyst);
    let steps = serde_json::json!([
        {"op": "call", "name": "session_exec", "arguments": {"session": id, "sh": "ls"}},
    ]);
    let a = mcp_client(&s.server, &s.analyst, steps);
    let r = &a[0]["result"];
    assert_eq!(r["isError"], true, "{r:#}");
    let report = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|c| c["resource"]["text"].as_str())
        .unwrap_or_else(|| panic!("no report: {r:#}"));
    let report: serde_json::Value = serde_json::from_str(report).unwrap();
    assert_eq!(report["status"], "denied", "{report}");
    assert!(texts(r).contains("`run_command`"), "{r:#}");
    assert!(texts(r).contains("nothing recorded"), "{r:#}");
    assert_eq!(s.log_len(&s.analyst, &id), 0);
}

/// With `[store] url`, sessions live in PostgreSQL: two replicas serve one session (made
/// and uploaded to through A, a step through B restoring it from the log, the file that
/// step wrote downloaded through A).
#[test]
fn two_replicas_on_one_postgres_share_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let (url, config) = postgres_config(tmp.path(), "serve_sessions");
    let (state_a, state_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let analyst = create_key(
        &config,
        &state_a,
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let a = Server::start(&config, &state_a);
    let b = Server::start(&config, &state_b);
    let (status, s) = a.json(
        "POST",
        "/v1/sessions",
        Some(&analyst),
        serde_json::json!({}),
    );
    assert_eq!(status, 201, "{s}");
    let id = s["id"].as_str().unwrap();
    let (status, _) = a.call(
        "PUT",
        &format!("/v1/sessions/{id}/files/in.txt"),
        Some(&analyst),
        "application/octet-stream",
        b"21",
    );
    assert_eq!(status, 201);
    let (status, r) = b.json(
        "POST",
        &format!("/v1/sessions/{id}/steps"),
        Some(&analyst),
        serde_json::json!({"language": "python",
            "code": "open('out.txt', 'w').write(str(2 * int(open('in.txt').read())))"}),
    );
    assert_eq!(
        (status, r["report"]["status"].as_str()),
        (200, Some("ok")),
        "{r}"
    );
    let (status, bytes) = a.call(
        "GET",
        &format!("/v1/sessions/{id}/files/out.txt"),
        Some(&analyst),
        "application/json",
        b"",
    );
    assert_eq!((status, bytes.as_slice()), (200, b"42".as_slice()));
    assert_eq!(
        postgres::psql(
            &url,
            &format!("SELECT count(*) FROM session_events WHERE session_id = '{id}'")
        ),
        "2"
    );
}
