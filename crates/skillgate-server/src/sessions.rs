//! Sessions in `serve` (`/v1/sessions/...`) and as MCP tools ([`SessionTools`]): the
//! agents' workspaces kept as append-only logs (`skillgate-session`), driven exactly as
//! `skillgate session` drives them ([`Sessions::native`]), in the server's state
//! directory (SQLite) or its `[store] url` (PostgreSQL).
//!
//! Only agent keys use sessions (a builder or operator key gets 403). A session belongs to
//! the agent and tenant that created it: for anyone else it does not exist (404, the same
//! answer as an id never made). Every step runs through the pipeline on the engine the
//! server holds then, and holds a run slot of the server's admission control like a run
//! (so does a download, which may have to replay steps).
use crate::error::{ApiError, elide};
use crate::protect::{json_body, read_body};
use crate::{Principal, ServerState};
use arc_swap::ArcSwap;
use axum::Router;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Extension, Json};
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use skillgate::{Caller, Engine, Language, LimitOverrides, Report};
use skillgate_session::{
    DEFAULT_WORKSPACE_BYTES, ExecReport, LogStore, NativeBackend, Owner, SessionError, Sessions,
    Settings, StepSpec,
};
use skillgate_store::Role;
use std::sync::Arc;
use std::time::Instant;

/// The server's sessions: native workspaces, steps on the engine in use.
pub type NativeSessions = Sessions<NativeBackend>;

/// Sessions in `log` whose steps run on the engine `engine` holds at each step.
pub(crate) fn native(
    log: Arc<dyn LogStore>,
    engine: &Arc<ArcSwap<Engine>>,
    settings: Settings,
) -> Arc<NativeSessions> {
    let engine = engine.clone();
    Arc::new(Sessions::native(
        log,
        settings,
        Arc::new(move || engine.load_full()),
        DEFAULT_WORKSPACE_BYTES,
    ))
}

/// The `/v1/sessions` routes, for the authenticated router.
pub fn routes(state: Arc<ServerState>) -> Router<Arc<ServerState>> {
    let admitted = || middleware::from_fn_with_state(state.clone(), crate::admission::admit);
    Router::new()
        .route("/v1/sessions", post(create))
        .route("/v1/sessions/{id}", axum::routing::delete(remove))
        .route(
            "/v1/sessions/{id}/steps",
            post(exec).route_layer(admitted()),
        )
        .route(
            "/v1/sessions/{id}/files/{*path}",
            put(upload).merge(get(download).route_layer(admitted())),
        )
        .route("/v1/sessions/{id}/log", get(log))
}

/// The session owner a principal is: an agent, of its tenant; 403 for other keys.
pub fn owner(principal: &Principal) -> Result<Owner, ApiError> {
    match principal.role {
        Role::Agent => Ok(owner_of(&principal.caller)),
        other => Err(ApiError::forbidden(format!(
            "{} key cannot use sessions: a session belongs to an agent; use an agent key",
            other.with_article()
        ))),
    }
}

/// The session owner a caller is.
pub(crate) fn owner_of(caller: &Caller) -> Owner {
    Owner {
        tenant: caller.tenant.clone(),
        agent: caller.agent_id.clone(),
    }
}

/// A session operation's failure as an API error: 404 for a session that is not the
/// caller's, 409 for a busy one (with the lock's reason), 400 for bad input.
pub fn api_error(e: SessionError) -> ApiError {
    let message = elide(&e.to_string());
    match e {
        SessionError::NotFound(_) => ApiError::not_found("unknown_session", message),
        SessionError::Busy(_) => ApiError::new(StatusCode::CONFLICT, "session_busy", message),
        SessionError::Invalid(_) => ApiError::bad_request("bad_session_request", message),
        SessionError::LockLost(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "session_lock_lost",
            message,
        ),
        SessionError::Replay { .. } => {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "session_replay", message)
        }
        SessionError::Store(_) | SessionError::Backend(_) => ApiError::internal(message),
    }
}

/// Runs `f` on the sessions off the async threads (the store and the session lock block).
async fn blocking<T: Send + 'static>(
    state: &Arc<ServerState>,
    f: impl FnOnce(&NativeSessions) -> Result<T, SessionError> + Send + 'static,
) -> Result<T, ApiError> {
    let sessions = state.sessions().clone();
    crate::app::blocking(move || f(&sessions).map_err(api_error)).await
}

/// The body of a step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepBody {
    /// `python` or `javascript` (`lang` too), with `code`.
    #[serde(default, alias = "lang")]
    pub language: Option<String>,
    /// The script.
    #[serde(default)]
    pub code: Option<String>,
    /// A shell command line instead of `language` and `code`: a shell step, run by
    /// `dash` (`/bin/sh`), authorised with the Cedar action `run_command` (no default policy
    /// grants it) and pre-scanned against the shell command allow-list.
    #[serde(default)]
    pub sh: Option<String>,
    /// The input JSON (default `{}`).
    #[serde(default = "empty_object")]
    pub input: serde_json::Value,
    /// The working directory, relative to the workspace (default: the session's).
    #[serde(default)]
    pub cwd: String,
    /// `false` for a step whose outcome cannot be repeated (network, clock): a snapshot
    /// is taken right after it.
    #[serde(default = "yes")]
    pub replayable: bool,
    /// The named runtime the step runs on (`python-data`, say; default: the language's).
    #[serde(default)]
    pub runtime: Option<String>,
    /// Environment variables for the step, each on the session's allow-list (`TZ`,
    /// `LC_*`, ...); any other name is refused before the step runs.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
}

fn empty_object() -> serde_json::Value {
    serde_json::json!({})
}

fn yes() -> bool {
    true
}

impl StepBody {
    /// The step it asks for: 400 for an unknown language, code over the size limit, or
    /// neither (or both) of a script and `sh`.
    pub fn spec(self) -> Result<StepSpec, ApiError> {
        let (language, code) = match (self.sh, self.language, self.code) {
            (Some(cmd), None, None) if self.runtime.is_none() => (Language::Shell, cmd),
            (None, Some(language), Some(code)) => (crate::runs::language(&language)?, code),
            _ => {
                return Err(ApiError::bad_request(
                    "bad_step",
                    "a step is either `language` and `code` (a script, optionally with `runtime`) or `sh` (a shell command line)",
                ));
            }
        };
        crate::runs::check_code(&code)?;
        Ok(StepSpec {
            language,
            code,
            input: self.input,
            cwd: self.cwd,
            limits: LimitOverrides::default(),
            replayable: self.replayable,
            runtime: self.runtime,
            env: self.env,
        })
    }
}

/// Runs a step of `owner`'s session `id` (the store and the lock wait on a blocking
/// thread); the report and the pipeline's report of it.
pub async fn run_step(
    state: &Arc<ServerState>,
    owner: Owner,
    id: String,
    spec: StepSpec,
) -> Result<(ExecReport, Report), ApiError> {
    let sessions = state.sessions().clone();
    let handle = tokio::runtime::Handle::current();
    let (agent, tenant) = (owner.agent.clone(), owner.tenant.clone());
    let started = Instant::now();
    let r = crate::app::blocking(move || {
        handle
            .block_on(sessions.exec(&owner, &id, spec))
            .map_err(api_error)
    })
    .await?;
    let report = Report::new(&r.outcome, started.elapsed());
    tracing::info!(
        agent,
        tenant,
        status = %report.status,
        seq = r.event.as_ref().map(|e| e.seq),
        duration_ms = report.duration_ms,
        "session step"
    );
    Ok((r, report))
}

/// `owner`'s file `path` of session `id`, from its latest snapshot; 404 when absent.
pub async fn read_file(
    state: &Arc<ServerState>,
    owner: Owner,
    id: String,
    path: String,
) -> Result<Vec<u8>, ApiError> {
    let sessions = state.sessions().clone();
    let handle = tokio::runtime::Handle::current();
    crate::app::blocking(move || {
        handle
            .block_on(sessions.download(&owner, &id, &path))
            .map_err(api_error)?
            .ok_or_else(|| {
                ApiError::not_found(
                    "no_such_file",
                    format!("session {id} has no file `{}`", elide(&path)),
                )
            })
    })
    .await
}

fn path_error(e: PathRejection) -> ApiError {
    ApiError::bad_request("bad_path", elide(&e.body_text()))
}

async fn create(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
) -> Result<Response, ApiError> {
    let owner = owner(&principal)?;
    let session = blocking(&state, move |s| s.create(&owner)).await?;
    Ok((StatusCode::CREATED, Json(session)).into_response())
}

async fn exec(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    let owner = owner(&principal)?;
    let Path(id) = id.map_err(path_error)?;
    let body: StepBody = json_body(&headers, body, &state.limits).await?;
    let spec = body.spec()?;
    let (r, report) = run_step(&state, owner, id.clone(), spec).await?;
    Ok(Json(r.to_json(&id, &report)))
}

/// The permission bits an upload's `?mode=` gives (octal, default 644).
pub(crate) fn upload_mode(query: Option<&str>) -> Result<u32, ApiError> {
    let mut mode = 0o644;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let bad = || {
            ApiError::bad_request(
                "bad_mode",
                format!(
                    "`{}`: an upload takes only `mode=` with octal permission bits, at most 777",
                    elide(pair)
                ),
            )
        };
        let value = pair.strip_prefix("mode=").ok_or_else(bad)?;
        mode = u32::from_str_radix(value, 8)
            .ok()
            .filter(|m| *m <= 0o777)
            .ok_or_else(bad)?;
    }
    Ok(mode)
}

async fn upload(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    params: Result<Path<(String, String)>, PathRejection>,
    RawQuery(query): RawQuery,
    body: Body,
) -> Result<Response, ApiError> {
    let owner = owner(&principal)?;
    let Path((id, path)) = params.map_err(path_error)?;
    let mode = upload_mode(query.as_deref())?;
    let cap = usize::try_from(state.sessions().settings().max_upload_bytes).unwrap_or(usize::MAX);
    let bytes = read_body(body, cap).await?;
    let event = blocking(&state, move |s| s.upload(&owner, &id, &path, &bytes, mode)).await?;
    Ok((StatusCode::CREATED, Json(event)).into_response())
}

async fn download(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    params: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let owner = owner(&principal)?;
    let Path((id, path)) = params.map_err(path_error)?;
    let bytes = read_file(&state, owner, id, path).await?;
    Ok((
        [(http::header::CONTENT_TYPE, "application/octet-stream")],
        bytes,
    )
        .into_response())
}

async fn log(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let owner = owner(&principal)?;
    let Path(id) = id.map_err(path_error)?;
    let events = blocking(&state, {
        let id = id.clone();
        move |s| s.log(&owner, &id)
    })
    .await?;
    Ok(Json(serde_json::json!({"session": id, "events": events})))
}

async fn remove(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let owner = owner(&principal)?;
    let Path(id) = id.map_err(path_error)?;
    let removed = blocking(&state, {
        let id = id.clone();
        move |s| s.remove(&owner, &id)
    })
    .await?;
    if !removed {
        return Err(api_error(SessionError::NotFound(id)));
    }
    Ok(Json(serde_json::json!({"session": id, "removed": true})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(body: serde_json::Value) -> Result<StepSpec, ApiError> {
        serde_json::from_value::<StepBody>(body).unwrap().spec()
    }

    #[test]
    fn a_step_body_is_a_script_or_a_shell_command_line() {
        let sh = spec(serde_json::json!({"sh": "sort data.csv | head -n 3"})).unwrap();
        assert_eq!(sh.language, Language::Shell);
        assert_eq!(sh.code, "sort data.csv | head -n 3");
        let py = spec(serde_json::json!({"language": "python", "code": "print(1)"})).unwrap();
        assert_eq!(py.language, Language::Python);
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"code": "print(1)"}),
            serde_json::json!({"sh": "ls", "code": "print(1)"}),
            serde_json::json!({"sh": "ls", "language": "python"}),
            serde_json::json!({"sh": "ls", "runtime": "python-data"}),
            // Only `sh` makes a shell step: the language is not named.
            serde_json::json!({"language": "shell", "code": "ls"}),
        ] {
            let e = spec(bad.clone()).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{bad}");
        }
    }
}
