//! The Test panel (`GET /panel`) in a real headless browser: Debian's `chromium`, driven
//! through the DevTools protocol. The real `skillgate serve` runs on 127.0.0.1 with a
//! fresh state directory; a builder key publishes a matplotlib chart skill from
//! `corpora/skills/`; the browser pastes an agent key, loads the skills (the input is
//! prefilled from the skill's sample), presses Run and gets the report: stdout, the exit
//! code, and the chart, rendered (its screenshot has more than one colour). A label with
//! markup in it comes back as text, never as elements. No network beyond 127.0.0.1.
mod common;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SKILL: &str = "chart-bar-artifact";
/// How long a run through the pipeline may take here (a cold python-data runtime).
const RUN_WAIT: Duration = Duration::from_secs(120);

fn skillgate() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillgate"));
    c.current_dir(common::repo());
    c
}

/// The running `skillgate serve`, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(config: &Path, state: &Path) -> Server {
        let mut child = skillgate()
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .arg("--state-dir")
            .arg(state)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("serve printed {line:?}"))
            .to_string();
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 exchange with the server (it listens on 127.0.0.1): the status line and
/// headers, lowercased, and the body.
fn http(addr: &str, head: &str, body: &[u8]) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{head}\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let headers = String::from_utf8_lossy(&answer[..split]).to_lowercase();
    (headers, answer[split + 4..].to_vec())
}

fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .expect("no `chromium` on PATH: run scripts/install-test-deps")
}

/// A string JS expression's value.
fn text(tab: &Tab, expr: &str) -> String {
    let v = tab.evaluate(expr, true).unwrap().value;
    match v {
        Some(serde_json::Value::String(s)) => s,
        other => panic!("{expr} gave {other:?}"),
    }
}

/// Waits until the JS expression is true (the page works asynchronously).
fn wait_until(tab: &Tab, expr: &str, limit: Duration) {
    let started = Instant::now();
    loop {
        if tab.evaluate(expr, false).unwrap().value == Some(serde_json::Value::Bool(true)) {
            return;
        }
        if started.elapsed() > limit {
            let message = text(tab, "document.getElementById('message').textContent");
            panic!("`{expr}` still false after {limit:?}; the page says {message:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The distinct RGBA colours of a PNG.
fn colours(png_bytes: &[u8]) -> std::collections::HashSet<Vec<u8>> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert!(info.width > 0 && info.height > 0);
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn the_panel_runs_a_chart_skill_in_a_real_browser_and_shows_the_chart() {
    let config = common::config_with_runtimes("panel-browser");
    common::install_runtime(&config, "python-data");
    let state = tempfile::tempdir().unwrap();
    let builder = common::create_key(
        &config,
        state.path(),
        &["--builder", "builder-alice", "--tenant", "acme"],
    );
    let agent = common::create_key(
        &config,
        state.path(),
        &["--agent", "analyst-1", "--tenant", "acme"],
    );
    let server = Server::start(&config, state.path());

    let (head, body) = http(
        &server.addr,
        &format!(
            "POST /v1/skills HTTP/1.1\r\nAuthorization: Bearer {builder}\r\nContent-Type: application/gzip"
        ),
        &common::tgz(&common::repo().join("corpora/skills").join(SKILL)),
    );
    assert!(
        head.starts_with("http/1.1 201"),
        "publish: {head}\n{}",
        String::from_utf8_lossy(&body)
    );

    // The page comes with a strict policy: no inline script, images only from data: URLs.
    let (head, _) = http(&server.addr, "GET /panel HTTP/1.1", b"");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'none'; script-src 'self';"),
        "{head}"
    );

    let profile = tempfile::tempdir().unwrap();
    let browser = Browser::new(
        LaunchOptions::default_builder()
            .path(Some(chromium()))
            .headless(true)
            .sandbox(false) // as root
            .user_data_dir(Some(profile.path().to_path_buf()))
            .window_size(Some((1200, 1600)))
            .idle_browser_timeout(RUN_WAIT * 2)
            .args(
                [
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                ]
                .map(OsStr::new)
                .to_vec(),
            )
            .build()
            .unwrap(),
    )
    .unwrap();
    let tab = browser.new_tab().unwrap();
    tab.navigate_to(&format!("http://{}/panel", server.addr))
        .unwrap()
        .wait_until_navigated()
        .unwrap();

    tab.wait_for_element("#key")
        .unwrap()
        .type_into(&agent)
        .unwrap();
    tab.wait_for_element("#load").unwrap().click().unwrap();
    wait_until(
        &tab,
        "document.getElementById('skill').value === 'chart-bar-artifact'",
        RUN_WAIT,
    );
    // Prefilled from the skill's sample-input.json.
    wait_until(
        &tab,
        "document.getElementById('input').value.includes('Sales by quarter')",
        RUN_WAIT,
    );

    // The input, edited: a label with markup in it, which the chart's stdout repeats.
    let input = serde_json::json!({
        "title": "Panel",
        "items": [
            {"label": "<b id=injected>x</b>", "value": 7},
            {"label": "b", "value": 3},
            {"label": "c", "value": 5},
        ]
    });
    tab.evaluate(
        &format!(
            "document.getElementById('input').value = {}",
            serde_json::to_string(&input.to_string()).unwrap()
        ),
        false,
    )
    .unwrap();
    tab.wait_for_element("#run").unwrap().click().unwrap();
    wait_until(
        &tab,
        "document.getElementById('result').dataset.state === 'done'",
        RUN_WAIT,
    );

    assert_eq!(
        text(&tab, "document.getElementById('status').textContent"),
        "ok"
    );
    assert_eq!(
        text(&tab, "document.getElementById('exit-code').textContent"),
        "0"
    );
    let duration = text(&tab, "document.getElementById('duration').textContent");
    assert!(
        duration.ends_with(" ms") && duration.trim_end_matches(" ms").parse::<u64>().is_ok(),
        "{duration}"
    );
    let stdout = text(&tab, "document.getElementById('stdout').textContent");
    let answer: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout {stdout:?}: {e}"));
    assert_eq!(answer["bars"], 3, "{stdout}");
    assert_eq!(answer["max_label"], "<b id=injected>x</b>", "{stdout}");
    // The markup is text on the page, never an element.
    assert_eq!(
        tab.evaluate("document.getElementById('injected') === null", false)
            .unwrap()
            .value,
        Some(serde_json::Value::Bool(true))
    );
    let findings = text(&tab, "document.getElementById('findings').textContent");
    assert!(findings.contains("sandbox.enforcement"), "{findings}");

    // The chart, decoded by the browser and drawn.
    let width = tab
        .evaluate(
            "(async () => { const i = document.querySelector('#artifacts img.artifact'); \
             await i.decode(); return i.naturalWidth; })()",
            true,
        )
        .unwrap()
        .value;
    assert!(
        width
            .as_ref()
            .and_then(serde_json::Value::as_u64)
            .is_some_and(|w| w > 0),
        "naturalWidth {width:?}"
    );
    let shot = tab
        .find_element("#artifacts img.artifact")
        .unwrap()
        .capture_screenshot(CaptureScreenshotFormatOption::Png)
        .unwrap();
    let seen = colours(&shot);
    assert!(
        seen.len() > 1,
        "the chart's screenshot is one colour: {seen:?}"
    );
    // The bars are steelblue (70, 130, 180).
    let steelblue = |c: &Vec<u8>| {
        c.iter()
            .zip([70u8, 130, 180])
            .all(|(a, b)| a.abs_diff(b) <= 12)
    };
    assert!(
        seen.iter().any(steelblue),
        "no steelblue bar in the chart's screenshot"
    );
    drop(server);
}
