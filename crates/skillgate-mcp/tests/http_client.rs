//! The streamable HTTP transport with a real client: the official Python SDK (`mcp` on
//! PyPI, `scripts/mcp-test-client`) against [`skillgate_mcp::http::http_service`] mounted
//! on a small axum server on 127.0.0.1.
//!
//! The server's authentication here is a stand-in: a middleware that takes the agent
//! from an `x-test-agent` header and inserts its [`Caller`]. In `skillgate serve`, the
//! real key middleware replaces it (the key decides the agent).
use serde_json::{Value, json};
use skillgate::{Caller, Config, Engine};
use skillgate_mcp::http::{StreamableHttpServerConfig, http_service};
use skillgate_mcp::{FolderSource, Gateway, SkillSource};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test skills, and a catalogue recording each under the tenant its SKILL.md names.
fn engine(state: &Path) -> Engine {
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skills");
    let records: Vec<Value> = ["echo-acme", "echo-globex"]
        .iter()
        .map(|name| {
            let s = skillgate::skill_dir::load(&skills.join(name)).unwrap();
            json!({"name": s.name, "digest": s.digest, "tenant": s.tenant,
                   "owner": s.owner, "visibility": "public"})
        })
        .collect();
    let catalogue = state.join("catalogue.json");
    std::fs::write(&catalogue, serde_json::to_string(&records).unwrap()).unwrap();
    let mut config = Config::default();
    config.policy.entities = Some(repo().join("examples/entities.json"));
    config.policy.catalogue = Some(catalogue);
    config.monitor.state_dir = Some(state.join("state"));
    Engine::new(config, &[]).unwrap()
}

/// Stand-in authentication: `x-test-agent` names the agent, the engine its tenant; no
/// header, no caller.
async fn stand_in_auth(
    axum::extract::State(engine): axum::extract::State<Arc<Engine>>,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let agent = req
        .headers()
        .get("x-test-agent")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(agent) = agent {
        let tenant = engine.tenant_of(&agent, None).unwrap();
        req.extensions_mut().insert(Caller::new(agent, tenant));
    }
    next.run(req).await
}

/// Serves the test skills over streamable HTTP on 127.0.0.1; returns the endpoint's URL.
async fn start_server(state: &Path) -> String {
    let engine = Arc::new(engine(state));
    let sources: Vec<Arc<dyn SkillSource>> = vec![Arc::new(FolderSource::new(vec![
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skills"),
    ]))];
    let gateway = Arc::new(Gateway::new(engine.clone(), sources));
    let app = axum::Router::new()
        .nest_service(
            "/mcp",
            http_service(gateway, StreamableHttpServerConfig::default()),
        )
        .layer(axum::middleware::from_fn_with_state(engine, stand_in_auth));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/mcp")
}

/// Runs the Python client as `agent` (`-`: no agent header) through `steps`.
async fn client(url: &str, agent: &str, steps: Value) -> Vec<Value> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(repo().join("scripts/mcp-test-client"))
        .args(["http", url, agent])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(steps.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn names(answer: &Value) -> Vec<&str> {
    answer["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_agents_see_their_own_tools_and_calls_run_as_the_caller() {
    let state = tempfile::tempdir().unwrap();
    let url = start_server(state.path()).await;
    let steps = json!([
        {"op": "list"},
        {"op": "call", "name": "echo-acme", "arguments": {"n": 21}},
        {"op": "call", "name": "echo-globex", "arguments": {}},
    ]);
    let acme = client(&url, "analyst-1", steps.clone()).await;
    assert_eq!(names(&acme[0]), ["echo-acme"]);
    let result = &acme[1]["result"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(result["structuredContent"], json!({"n": 21, "double": 42}));
    // The other tenant's skill does not exist for this agent.
    assert_eq!(acme[2]["error"]["code"], -32602, "{:#}", acme[2]);

    let globex = client(&url, "globex-agent", steps).await;
    assert_eq!(names(&globex[0]), ["echo-globex"]);
    assert_eq!(globex[1]["error"]["code"], -32602, "{:#}", globex[1]);
    assert_eq!(globex[2]["result"]["isError"], false, "{:#}", globex[2]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_without_a_caller_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let url = start_server(state.path()).await;
    let answers = client(
        &url,
        "-",
        json!([{"op": "list"}, {"op": "call", "name": "echo-acme", "arguments": {"n": 1}}]),
    )
    .await;
    for answer in &answers {
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("not authenticated")),
            "{answer:#}"
        );
    }
}
