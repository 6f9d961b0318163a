//! The router: every route, built in one function ([`router`]), so other services (the
//! MCP endpoint, a test panel) are mounted beside them.
use crate::error::{ApiError, elide};
use crate::protect::{json_body, read_body, require_content_type};
use crate::runs::{self, RunAnswer, ScriptRunBody, SkillRunBody};
use crate::{Principal, ReqId, ServerState, registry};
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use http::{HeaderMap, HeaderValue, StatusCode};
use skillgate::{LimitOverrides, RequestId};
use std::sync::Arc;
use std::time::Instant;

/// The whole HTTP API over `state`. The authenticated routes sit behind
/// [`crate::auth::require_key`]; mount a service that needs the caller (MCP at `/mcp`)
/// into [`authenticated`] so it reads the [`Principal`] from the request's extensions.
pub fn router(state: Arc<ServerState>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(authenticated(
            state.clone(),
            crate::mcp::routes(state.clone()).merge(crate::panel::api()),
        ))
        .merge(crate::panel::pages())
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), request_scope))
        .with_state(state)
}

/// The authenticated API, with `extra` routes (another service) merged behind the same
/// authentication. The run routes decide admission first ([`crate::admission::admit`]),
/// before the key is looked up: shedding load must cost next to nothing.
pub fn authenticated(
    state: Arc<ServerState>,
    extra: Router<Arc<ServerState>>,
) -> Router<Arc<ServerState>> {
    let runs = behind_key(
        &state,
        Router::new()
            .route("/v1/skills/{name}/runs", post(run_skill))
            .route("/v1/runs", post(run_script))
            .route("/api/v2/execute", post(crate::piston::execute)),
    )
    .route_layer(middleware::from_fn_with_state(
        state.clone(),
        crate::admission::admit,
    ));
    let rest = Router::new()
        .route("/v1/skills", get(list_skills).post(publish))
        .route("/v1/skills/{name}", get(skill_versions))
        .route("/api/v2/runtimes", get(crate::piston::list_runtimes))
        .merge(crate::admin::routes())
        .merge(crate::sessions::routes(state.clone()))
        .merge(extra);
    behind_key(&state, rest).merge(runs)
}

/// `routes` behind the authentication, then the per-key rate limit.
fn behind_key(
    state: &Arc<ServerState>,
    routes: Router<Arc<ServerState>>,
) -> Router<Arc<ServerState>> {
    routes
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::ratelimit::limit,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::auth::require_key,
        ))
}

/// Gives the request an id (in its extensions, the `x-request-id` answer header, the
/// log line, the report and the audit record), bounds it with the per-request deadline,
/// and logs it as one JSON line (not a run shed by the admission control: those are
/// counted, see [`crate::admission`]).
async fn request_scope(
    State(state): State<Arc<ServerState>>,
    mut req: Request,
    next: Next,
) -> Response {
    let id = RequestId::generate();
    req.extensions_mut().insert(ReqId(id));
    let method = req.method().clone();
    let path = elide(req.uri().path());
    let started = Instant::now();
    let deadline = state.limits.request_timeout;
    let mut resp = match tokio::time::timeout(deadline, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "deadline",
            format!("the request took longer than {} s", deadline.as_secs()),
        )
        .into_response(),
    };
    if let Ok(v) = HeaderValue::from_str(&id.to_string()) {
        resp.headers_mut().insert("x-request-id", v);
    }
    if resp.extensions().get::<crate::admission::Shed>().is_some() {
        return resp;
    }
    tracing::info!(
        request_id = %id,
        method = %method,
        path,
        status = resp.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "request"
    );
    resp
}

async fn not_found(req: Request) -> ApiError {
    ApiError::not_found(
        "not_found",
        format!("no route {} {}", req.method(), elide(req.uri().path())),
    )
}

async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

async fn readyz(State(state): State<Arc<ServerState>>) -> Response {
    if state.draining() {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "draining",
            "the server is shutting down",
        )
        .into_response();
    }
    Json(serde_json::json!({"status": "ready"})).into_response()
}

async fn metrics(State(state): State<Arc<ServerState>>) -> Response {
    let st = state.clone();
    let text = tokio::task::spawn_blocking(move || {
        skillgate_monitor::metrics::render_state(st.monitor().as_ref(), crate::now_ms())
    })
    .await;
    match text {
        Ok(Ok(text)) => (
            [(
                http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text + &state.admission.metrics(),
        )
            .into_response(),
        Ok(Err(e)) => ApiError::internal(e.to_string()).into_response(),
        Err(e) => ApiError::internal(e.to_string()).into_response(),
    }
}

/// Runs blocking work (the store, the file system) off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
}

async fn publish(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    Extension(ReqId(id)): Extension<ReqId>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    registry::require_builder(&principal)?;
    require_content_type(
        &headers,
        &[
            "application/gzip",
            "application/x-gzip",
            "application/octet-stream",
        ],
    )?;
    let bytes = read_body(body, state.limits.upload_bytes).await?;
    let st = state.clone();
    let version =
        blocking(move || registry::publish(&st, &principal, &bytes, &id.to_string())).await?;
    if version.verdict != skillgate_store::PublishVerdict::Block {
        // The gate sees the new version as a catalogue record from now on.
        state.rebuild().await.map_err(|e| {
            ApiError::internal(format!(
                "published, but the policy gate could not take the new version: {e}"
            ))
        })?;
    }
    Ok((
        StatusCode::CREATED,
        Json(registry::VersionView::from(&version)),
    )
        .into_response())
}

async fn list_skills(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
) -> Result<Json<serde_json::Value>, ApiError> {
    refresh_registry(&state).await?;
    let skills = blocking(move || match principal.role {
        skillgate_store::Role::Agent => Ok(registry::runnable_skills(&state, &principal.caller)?
            .into_iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.version.name,
                    "version": r.version.version,
                    "description": r.skill.description,
                    "language": r.skill.language.as_str(),
                    "visibility": r.version.visibility,
                    "owner": r.version.owner,
                })
            })
            .collect::<Vec<_>>()),
        // A builder runs nothing: it sees what it published.
        skillgate_store::Role::Builder => Ok(state
            .store()
            .all_versions()?
            .iter()
            .filter(|v| v.tenant == principal.caller.tenant && v.owner == principal.caller.agent_id)
            .map(|v| serde_json::to_value(registry::VersionView::from(v)).unwrap_or_default())
            .collect()),
        skillgate_store::Role::Operator => Err(ApiError::forbidden(
            "an operator key runs and publishes nothing: list skills with an agent or builder key",
        )),
    })
    .await?;
    Ok(Json(serde_json::json!({ "skills": skills })))
}

async fn skill_versions(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    blocking(move || {
        let versions = state.store().versions(&principal.caller.tenant, &name)?;
        let visible = match principal.role {
            skillgate_store::Role::Builder => versions
                .first()
                .is_some_and(|v| v.owner == principal.caller.agent_id),
            skillgate_store::Role::Agent => registry::runnable_skills(&state, &principal.caller)?
                .iter()
                .any(|r| r.version.name == name),
            skillgate_store::Role::Operator => false,
        };
        if !visible {
            return Err(ApiError::not_found(
                "unknown_skill",
                format!("no skill `{}` you may see", elide(&name)),
            ));
        }
        let versions: Vec<_> = versions.iter().map(registry::VersionView::from).collect();
        Ok(Json(
            serde_json::json!({ "name": name, "versions": versions }),
        ))
    })
    .await
}

async fn run_skill(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    Extension(ReqId(id)): Extension<ReqId>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<RunAnswer, ApiError> {
    runs::require_agent(&principal)?;
    let body: SkillRunBody = json_body(&headers, body, &state.limits).await?;
    let st = state.clone();
    let tenant = principal.caller.tenant.clone();
    let skill = blocking(move || {
        let v = registry::resolve(&st, &tenant, &name, body.version.as_deref())?;
        registry::load_version(&st, &v)
    })
    .await?;
    // The gate must know the version as published (another replica may have published
    // it): else it would be judged as the caller's own code.
    let engine = state
        .engine_knowing(std::slice::from_ref(&skill.digest))
        .await;
    if !crate::state::knows(&engine, &skill.digest) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "registry_not_ready",
            "this version is not yet known to the policy gate; retry shortly",
        ));
    }
    runs::run(
        &state,
        &principal,
        skill,
        body.input,
        LimitOverrides::default(),
        id,
    )
    .await
}

/// Rebuilds the engine when the registry holds versions its gate does not record yet
/// (published through another replica).
async fn refresh_registry(state: &Arc<ServerState>) -> Result<(), ApiError> {
    let st = state.clone();
    let digests = blocking(move || Ok(st.registry_digests()?)).await?;
    state.engine_knowing(&digests).await;
    Ok(())
}

async fn run_script(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    Extension(ReqId(id)): Extension<ReqId>,
    headers: HeaderMap,
    body: Body,
) -> Result<RunAnswer, ApiError> {
    runs::require_agent(&principal)?;
    let body: ScriptRunBody = json_body(&headers, body, &state.limits).await?;
    let skill = runs::script(runs::language(&body.language)?, body.code)?;
    runs::run(
        &state,
        &principal,
        Arc::new(skill),
        body.input,
        LimitOverrides::default(),
        id,
    )
    .await
}
