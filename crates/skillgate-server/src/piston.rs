//! The Piston v2 API (`GET /api/v2/runtimes`, `POST /api/v2/execute`), so an existing
//! Piston client works unchanged, with every run going through the pipeline.
//!
//! - The key comes in `Authorization` (Piston clients send it bare; `Bearer` works too).
//! - `files[0]` is the program; further files are put beside it. `encoding` is `utf8`
//!   (default), `base64` or `hex`.
//! - `stdin` must be JSON (skillgate skills read a JSON object on stdin; empty means `{}`);
//!   `args` must be empty (skills take none).
//! - `run_timeout` (ms) and `run_memory_limit` (bytes, `-1`: none) are requests, clamped
//!   by the isolation layer like any.
//! - Statuses: `ok` answers the exit code (`status` `RE` for a non-zero code, `SG` for a
//!   signal); `timeout` is `TO` with `SIGKILL`; `resource_exhausted` is `OL`/`EL` (output
//!   cap) or `SG`; `security_violation` is `SG`; `error` is `XX`; the first finding is
//!   the `message`. A `denied` or `blocked` run is an HTTP 403 with Piston's
//!   `{"message": ...}`, as is every other error of these routes, so a client sees why.
use crate::error::{ApiError, elide};
use crate::protect::json_body;
use crate::{Principal, ReqId, ServerState};
use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use base64::Engine as _;
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use skillgate::{Language, LimitOverrides, Report, Skill, Status};
use skillgate_core::FileKind;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A Piston error answer: `{"message": ...}` with the status.
fn piston_error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(serde_json::json!({"message": message.into()}))).into_response()
}

impl ApiError {
    /// This error as Piston answers errors.
    fn into_piston(self) -> Response {
        piston_error(self.status, self.message)
    }
}

/// One runtime: Piston's names for it, and the interpreter's version.
struct Runtime {
    language: Language,
    name: &'static str,
    aliases: &'static [&'static str],
    version: String,
}

/// The interpreter's version (`python3 --version`, `node --version`), `0.0.0` when it
/// cannot be asked.
fn version_of(program: &str) -> String {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .ok()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            text.split_whitespace()
                .find(|w| {
                    w.trim_start_matches('v')
                        .starts_with(|c: char| c.is_ascii_digit())
                })
                .map(|w| w.trim_start_matches('v').to_string())
                .unwrap_or_default()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "0.0.0".into())
}

fn runtimes() -> &'static [Runtime] {
    static RUNTIMES: OnceLock<Vec<Runtime>> = OnceLock::new();
    RUNTIMES.get_or_init(|| {
        vec![
            Runtime {
                language: Language::Python,
                name: "python",
                aliases: &["py", "py3", "python3"],
                version: version_of("python3"),
            },
            Runtime {
                language: Language::JavaScript,
                name: "javascript",
                aliases: &["js", "node", "node-javascript", "node-js"],
                version: version_of("node"),
            },
        ]
    })
}

fn runtime(name: &str) -> Option<&'static Runtime> {
    let name = name.to_ascii_lowercase();
    runtimes()
        .iter()
        .find(|r| r.name == name || r.aliases.contains(&name.as_str()))
}

/// `GET /api/v2/runtimes`.
pub async fn list_runtimes() -> Json<serde_json::Value> {
    Json(serde_json::Value::Array(
        runtimes()
            .iter()
            .map(|r| {
                serde_json::json!({
                    "language": r.name,
                    "version": r.version,
                    "aliases": r.aliases,
                    "runtime": if r.language == Language::JavaScript { Some("node") } else { None },
                })
            })
            .collect(),
    ))
}

/// One file of an execute request.
#[derive(Debug, Deserialize)]
pub struct PistonFile {
    /// Its name (the first file's default: `main.py` or `main.js`).
    #[serde(default)]
    pub name: Option<String>,
    /// Its content, in `encoding`.
    pub content: String,
    /// `utf8` (default), `base64` or `hex`.
    #[serde(default)]
    pub encoding: Option<String>,
}

/// `POST /api/v2/execute`'s body.
#[derive(Debug, Deserialize)]
pub struct ExecuteBody {
    /// The language or an alias.
    pub language: String,
    /// The version asked for (`*` or the runtime's; answered with the runtime's).
    #[serde(default)]
    pub version: Option<String>,
    /// The program and its files.
    pub files: Vec<PistonFile>,
    /// The input: JSON text.
    #[serde(default)]
    pub stdin: Option<String>,
    /// Must be empty.
    #[serde(default)]
    pub args: Vec<String>,
    /// Wall-clock limit asked for, in milliseconds.
    #[serde(default)]
    pub run_timeout: Option<i64>,
    /// Memory asked for, in bytes (`-1`: no wish).
    #[serde(default)]
    pub run_memory_limit: Option<i64>,
    /// Ignored (nothing is compiled).
    #[serde(default)]
    pub compile_timeout: Option<i64>,
    /// Ignored (nothing is compiled).
    #[serde(default)]
    pub compile_memory_limit: Option<i64>,
}

fn decode(file: &PistonFile) -> Result<Vec<u8>, ApiError> {
    let name = file.name.as_deref().unwrap_or("");
    match file.encoding.as_deref().unwrap_or("utf8") {
        "utf8" | "utf-8" => Ok(file.content.clone().into_bytes()),
        "base64" => base64::engine::general_purpose::STANDARD
            .decode(&file.content)
            .map_err(|e| {
                ApiError::bad_request(
                    "bad_file",
                    format!("file `{}`: not base64: {e}", elide(name)),
                )
            }),
        "hex" => hex::decode(&file.content).map_err(|e| {
            ApiError::bad_request("bad_file", format!("file `{}`: not hex: {e}", elide(name)))
        }),
        other => Err(ApiError::bad_request(
            "bad_file",
            format!(
                "file `{}`: unknown encoding `{}` (utf8, base64 or hex)",
                elide(name),
                elide(other)
            ),
        )),
    }
}

fn file_name(name: &str) -> Result<String, ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('/')
        && name
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..");
    if ok {
        Ok(name.to_string())
    } else {
        Err(ApiError::bad_request(
            "bad_file",
            format!(
                "file name `{}` must be a relative path without `..`",
                elide(name)
            ),
        ))
    }
}

/// The skill an execute request describes.
fn skill_of(rt: &Runtime, files: &[PistonFile]) -> Result<Skill, ApiError> {
    let (first, rest) = files.split_first().ok_or_else(|| {
        ApiError::bad_request("no_files", "`files` is empty: send the program as files[0]")
    })?;
    let default = match rt.language {
        Language::Python => "main.py",
        Language::JavaScript => "main.js",
        Language::Shell => "main.sh",
    };
    let entry = match first.name.as_deref() {
        None | Some("") => default.to_string(),
        Some(n) => file_name(n)?,
    };
    let code = decode(first)?;
    if code.len() as u64 > skillgate::skill_dir::MAX_CODE_BYTES {
        return Err(ApiError::bad_request(
            "code_too_large",
            "the program is over the code size limit",
        ));
    }
    let mut b = Skill::builder("piston", rt.language, code).entry(entry);
    for f in rest {
        let name = file_name(f.name.as_deref().unwrap_or(""))?;
        let kind = match name
            .rsplit_once('.')
            .and_then(|(_, ext)| Language::from_extension(ext))
        {
            Some(l) => FileKind::Code(l),
            None => FileKind::Data,
        };
        b = b.file(name, kind, decode(f)?);
    }
    Ok(b.build())
}

fn signal_name(n: i32) -> String {
    const NAMES: [(i32, &str); 16] = [
        (1, "SIGHUP"),
        (2, "SIGINT"),
        (3, "SIGQUIT"),
        (4, "SIGILL"),
        (6, "SIGABRT"),
        (7, "SIGBUS"),
        (8, "SIGFPE"),
        (9, "SIGKILL"),
        (10, "SIGUSR1"),
        (11, "SIGSEGV"),
        (12, "SIGUSR2"),
        (13, "SIGPIPE"),
        (14, "SIGALRM"),
        (15, "SIGTERM"),
        (24, "SIGXCPU"),
        (31, "SIGSYS"),
    ];
    NAMES
        .iter()
        .find(|(k, _)| *k == n)
        .map_or_else(|| format!("SIG{n}"), |(_, name)| name.to_string())
}

/// Piston's `run` object for a report.
pub fn run_object(report: &Report) -> serde_json::Value {
    let first = report
        .findings
        .iter()
        .find(|f| f.severity != "info")
        .map(|f| f.message.clone());
    let signal = report.signal.map(signal_name);
    let (status, signal) = match report.status {
        Status::Ok if report.signal.is_some() => (Some("SG"), signal),
        Status::Ok if report.exit_code.is_some_and(|c| c != 0) => (Some("RE"), signal),
        Status::Ok => (None, signal),
        Status::Timeout => (Some("TO"), Some("SIGKILL".to_string())),
        Status::ResourceExhausted if report.stdout_truncated => (Some("OL"), signal),
        Status::ResourceExhausted if report.stderr_truncated => (Some("EL"), signal),
        Status::ResourceExhausted | Status::SecurityViolation => {
            (Some("SG"), signal.or(Some("SIGKILL".to_string())))
        }
        Status::Denied | Status::Blocked | Status::Error => (Some("XX"), signal),
    };
    serde_json::json!({
        "stdout": report.stdout,
        "stderr": report.stderr,
        "output": format!("{}{}", report.stdout, report.stderr),
        "code": report.exit_code,
        "signal": signal,
        "status": status,
        "message": if report.status == Status::Ok { None } else { first.or(Some(report.status.to_string())) },
        "wall_time": report.duration_ms,
    })
}

/// `POST /api/v2/execute`.
pub async fn execute(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    Extension(ReqId(id)): Extension<ReqId>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match execute_inner(state, principal, id, headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_piston(),
    }
}

async fn execute_inner(
    state: Arc<ServerState>,
    principal: Principal,
    id: skillgate::RequestId,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    crate::runs::require_agent(&principal)?;
    let body: ExecuteBody = json_body(&headers, body, &state.limits).await?;
    let rt = runtime(&body.language).ok_or_else(|| {
        ApiError::bad_request(
            "unknown_language",
            format!(
                "{}-{} runtime is unknown",
                elide(&body.language),
                elide(body.version.as_deref().unwrap_or("*"))
            ),
        )
    })?;
    if !body.args.is_empty() {
        return Err(ApiError::bad_request(
            "args",
            "`args` must be empty: skills take their input as JSON on stdin",
        ));
    }
    let input = match body.stdin.as_deref().map(str::trim) {
        None | Some("") => serde_json::json!({}),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            ApiError::bad_request(
                "stdin",
                format!("`stdin` must be JSON (skills read JSON on stdin): {e}"),
            )
        })?,
    };
    if crate::protect::depth(&input) > state.limits.json_depth {
        return Err(ApiError::bad_request(
            "too_deep",
            "`stdin` is nested too deeply",
        ));
    }
    let skill = skill_of(rt, &body.files)?;
    let requested = LimitOverrides {
        wall_timeout: body
            .run_timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_millis(t as u64)),
        memory_bytes: body.run_memory_limit.filter(|m| *m > 0).map(|m| m as u64),
        ..Default::default()
    };
    let answer =
        crate::runs::run(&state, &principal, Arc::new(skill), input, requested, id).await?;
    let report = &answer.report;
    if matches!(report.status, Status::Denied | Status::Blocked) {
        let why = report
            .findings
            .iter()
            .find(|f| f.severity != "info")
            .map_or(String::new(), |f| format!(": {}", f.message));
        return Ok(piston_error(
            StatusCode::FORBIDDEN,
            format!("{}{why}", report.status),
        ));
    }
    Ok(Json(serde_json::json!({
        "language": rt.name,
        "version": rt.version,
        "run": run_object(report),
        "request_id": answer.request_id,
    }))
    .into_response())
}
