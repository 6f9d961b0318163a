//! The Jupyter Kernel Gateway executor against a real gateway (`scripts/services up
//! jupyter`; a gateway that cannot start fails the test with the reason, it is never
//! skipped): the conformance kit on its declared subset, the prelude's exits, and the
//! faults (no gateway, a bad token, a gateway that stops answering mid-run, one that
//! never answers).
#![cfg(all(feature = "jupyter", feature = "conformance"))]
use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill, Status};
use skillgate_executors::conformance::{Kit, Verdict};
use skillgate_executors::jupyter::{JupyterExecutor, JupyterSettings};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `scripts/services CMD jupyter`; its stdout.
fn services(cmd: &str) -> String {
    let out = Command::new(repo_root().join("scripts/services"))
        .args([cmd, "jupyter"])
        .output()
        .expect("running scripts/services");
    assert!(
        out.status.success(),
        "scripts/services {cmd} jupyter failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The gateway, started once for this test binary and stopped when its last user is done.
struct Gateway {
    url: String,
    token: String,
}

static USERS: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl Gateway {
    fn up() -> Gateway {
        let mut users = USERS.lock().unwrap_or_else(|p| p.into_inner());
        let config = services("up");
        *users += 1;
        let value = |key: &str| {
            config
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key} = ")))
                .map(|s| s.trim_matches('"').to_string())
                .unwrap_or_else(|| panic!("no {key} in the printed config: {config}"))
        };
        assert!(config.contains("kind = \"jupyter\""), "{config}");
        Gateway {
            url: value("url"),
            token: value("token"),
        }
    }

    fn executor(&self) -> JupyterExecutor {
        let mut settings = JupyterSettings::new(&self.url);
        settings.token = Some(self.token.clone());
        JupyterExecutor::new(settings).unwrap()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let mut users = USERS.lock().unwrap_or_else(|p| p.into_inner());
        *users -= 1;
        if *users == 0 {
            services("down");
        }
    }
}

fn request(code: &str, input: serde_json::Value) -> ExecRequest {
    let skill = Skill::builder("s", Language::Python, code.as_bytes().to_vec()).build();
    ExecRequest::new(Caller::new("a", "t"), skill, input)
}

async fn run(exec: &JupyterExecutor, req: ExecRequest) -> ExecOutcome {
    exec.clone().oneshot(req).await.expect("the run")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kernel_gateway_passes_the_kit_on_what_it_claims() {
    let gw = Gateway::up();
    let exec = gw.executor();
    let mut kit = Kit::new(exec.capabilities());
    kit.returns_artifacts = false;
    let probe = exec.clone();
    kit.leftovers = Some(Box::new(move |ids| {
        let probe = probe.clone();
        Box::pin(async move { probe.leftovers(&ids).await.map_err(|e| e.to_string()) })
    }));
    let report = kit.run(exec).await;
    println!("jupyter:\n{report}");
    for check in &report.0 {
        let claimed = matches!(
            check.name,
            "json" | "exit_code" | "streams" | "output_cap" | "timeout" | "cleanup"
        );
        let want = if claimed {
            Verdict::Pass
        } else {
            Verdict::NotClaimed
        };
        assert_eq!(check.verdict, want, "{}: {report}", check.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exits_exceptions_and_a_dying_kernel() {
    let gw = Gateway::up();
    let exec = gw.executor();
    // An uncaught exception: exit 1, its traceback on stderr, stdout kept.
    let o = run(
        &exec,
        request(
            "print('before')\nraise ValueError('bad input')\n",
            serde_json::json!({}),
        ),
    )
    .await;
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!((o.status, o.exit_code), (Status::Ok, Some(1)), "{o:?}");
    assert_eq!(o.stdout, b"before\n");
    assert!(stderr.contains("ValueError: bad input"), "{stderr}");
    // Input that reads as code stays data.
    let tricky = "\"\"\"); import os; os._exit(9) #\n'''";
    let o = run(
        &exec,
        request(
            "import json,sys\nprint(json.load(sys.stdin)['s'], end='')\n",
            serde_json::json!({ "s": tricky }),
        ),
    )
    .await;
    assert_eq!(
        (o.status, o.stdout.as_slice()),
        (Status::Ok, tricky.as_bytes())
    );
    // os._exit: the kernel restarts, no reply: an error, never an exit code.
    let o = run(
        &exec,
        request("import os\nos._exit(0)\n", serde_json::json!({})),
    )
    .await;
    assert_eq!((o.status, o.exit_code), (Status::Error, None), "{o:?}");
    assert!(
        o.findings
            .iter()
            .any(|f| f.rule_id == "executor.kernel_died"),
        "{o:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_kernel_cannot_run_is_refused() {
    let gw = Gateway::up();
    let exec = gw.executor();
    let js = Skill::builder("s", Language::JavaScript, b"console.log(1)".to_vec()).build();
    let err = exec
        .clone()
        .oneshot(ExecRequest::new(
            Caller::new("a", "t"),
            js,
            serde_json::json!({}),
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Python only"), "{err}");
    let with_runtime = Skill::builder("s", Language::Python, b"print(1)".to_vec())
        .runtime("python")
        .build();
    let err = exec
        .clone()
        .oneshot(ExecRequest::new(
            Caller::new("a", "t"),
            with_runtime,
            serde_json::json!({}),
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("runtime `python`"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_is_not_running_is_an_error_naming_its_url() {
    // A port that was free a moment ago: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let exec = JupyterExecutor::new(JupyterSettings::new(&url)).unwrap();
    let err = exec
        .oneshot(request("print(1)\n", serde_json::json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&url), "{err}");
    assert!(err.contains("scripts/services up jupyter"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_token_is_an_authentication_error() {
    let gw = Gateway::up();
    let mut settings = JupyterSettings::new(&gw.url);
    settings.token = Some(format!("{}-wrong", gw.token));
    let err = JupyterExecutor::new(settings)
        .unwrap()
        .oneshot(request("print(1)\n", serde_json::json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("authentication failed"), "{err}");
    assert!(err.contains(&gw.url), "{err}");
    assert!(!err.contains(&gw.token), "the token leaked into: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_never_answers_is_an_error_not_a_hang() {
    // Accepts connections and reads, never writes.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = listener.accept().await {
            held.push(conn);
        }
    });
    let mut settings = JupyterSettings::new(&url);
    settings.call_timeout = Duration::from_secs(2);
    let err = JupyterExecutor::new(settings)
        .unwrap()
        .oneshot(request("print(1)\n", serde_json::json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&url) && err.contains("no answer"), "{err}");
}

/// A proxy to `upstream` that stalls every websocket: the handshake's answer passes,
/// nothing the gateway sends after it does (REST calls pass untouched).
async fn stalling_proxy(upstream: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let server = TcpStream::connect(&upstream).await.unwrap();
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let (tx, rx) = tokio::sync::oneshot::channel::<bool>();
                let up = async move {
                    let mut buf = vec![0u8; 65536];
                    let mut first = Some(tx);
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        if let Some(tx) = first.take() {
                            let head = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
                            let _ = tx.send(head.contains("upgrade: websocket"));
                        }
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                };
                let down = async move {
                    let websocket = rx.await.unwrap_or(false);
                    let mut buf = vec![0u8; 65536];
                    let mut head = Vec::new();
                    let mut stalled = false;
                    loop {
                        let n = match sr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        if stalled {
                            continue;
                        }
                        let mut chunk = &buf[..n];
                        if websocket {
                            // Pass the handshake's answer up to its blank line only.
                            head.extend_from_slice(chunk);
                            if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                                let pass = end + 4 - (head.len() - n);
                                chunk = &chunk[..pass];
                                stalled = true;
                            }
                        }
                        if cw.write_all(chunk).await.is_err() {
                            break;
                        }
                    }
                };
                tokio::join!(up, down);
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_stalls_mid_run_still_meets_the_deadline() {
    let gw = Gateway::up();
    let upstream = gw.url.trim_start_matches("http://").to_string();
    let mut settings = JupyterSettings::new(stalling_proxy(upstream).await);
    settings.token = Some(gw.token.clone());
    let exec = JupyterExecutor::new(settings).unwrap();
    let mut req = request("print('never seen')\n", serde_json::json!({}));
    req.spec.limits.wall_timeout = Duration::from_secs(2);
    let id = req.id.to_string();
    let o = run(&exec, req).await;
    assert_eq!(o.status, Status::Timeout, "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
    // The kernel was interrupted and deleted through the REST API.
    assert_eq!(exec.leftovers(&[id]).await.unwrap(), Vec::<String>::new());
}
