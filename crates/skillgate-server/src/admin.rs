//! The operator's routes (operator keys only: `skillgate keys create --operator NAME`):
//! reload the configuration, and see and lift what the behavioural monitor decided. The
//! monitor's routes act on the state the runs use (the state directory's SQLite, or the
//! PostgreSQL of `[store] url`, so a release through one replica holds for all), and each
//! release is audited with the operator's name, as `skillgate monitor release` is.
use crate::app::blocking;
use crate::error::ApiError;
use crate::protect::json_body;
use crate::{Principal, ServerState};
use axum::body::Body;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use http::{HeaderMap, StatusCode};
use skillgate_store::Role;
use std::sync::Arc;

/// `POST /v1/admin/reload`, `GET /v1/admin/monitor`, `POST /v1/admin/monitor/release`.
pub fn routes() -> Router<Arc<ServerState>> {
    Router::new()
        .route("/v1/admin/reload", post(reload))
        .route("/v1/admin/monitor", get(monitor_state))
        .route("/v1/admin/monitor/release", post(release))
}

/// 403 unless the key is an operator's.
fn require_operator(principal: &Principal, what: &str) -> Result<(), ApiError> {
    if principal.role == Role::Operator {
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "{what} needs an operator key, not {} key",
        principal.role.with_article()
    )))
}

/// Rebuilds the engine from the config file. A configuration that does not load is
/// refused with 422 naming the problem; the one in use stays.
async fn reload(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
) -> Result<Json<serde_json::Value>, ApiError> {
    require_operator(&principal, "reloading")?;
    match state.reload().await {
        Ok(notices) => {
            tracing::info!(by = %principal.caller.agent_id, "reloaded the configuration");
            Ok(Json(
                serde_json::json!({"reloaded": true, "notices": notices}),
            ))
        }
        Err(e) => {
            tracing::error!(error = %e, "reload: the new configuration is refused; the old one stays");
            Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "config_refused",
                format!("the new configuration is refused, the one in use stays: {e}"),
            ))
        }
    }
}

/// The quarantined agents and the flagged skills.
async fn monitor_state(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
) -> Result<Json<serde_json::Value>, ApiError> {
    require_operator(&principal, "reading the monitor's state")?;
    let monitor = state.monitor().clone();
    blocking(move || {
        let quarantined = monitor.quarantined().map_err(monitor_error)?;
        let flagged = monitor.flagged_skills().map_err(monitor_error)?;
        Ok(Json(serde_json::json!({
            "quarantined": quarantined,
            "flagged_skills": flagged,
        })))
    })
    .await
}

/// What to lift: an agent's quarantine or a skill's flag (by code digest), not both.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseBody {
    agent: Option<String>,
    skill: Option<String>,
}

/// Lifts a quarantine (and the agent's strikes) or clears a skill's flag; 404 when there
/// was nothing to lift.
async fn release(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    require_operator(&principal, "releasing")?;
    let body: ReleaseBody = json_body(&headers, body, &state.limits).await?;
    let by = principal.caller.agent_id.clone();
    let monitor = state.monitor().clone();
    let now = crate::now_ms();
    blocking(move || match (body.agent, body.skill) {
        (Some(agent), None) => match monitor.release(&agent, &by, now).map_err(monitor_error)? {
            Some(entry) => {
                tracing::info!(%agent, %by, "released a quarantine");
                Ok(Json(serde_json::json!({"released": entry})))
            }
            None => Err(ApiError::not_found(
                "not_quarantined",
                format!("agent {agent} is not quarantined; nothing to release"),
            )),
        },
        (None, Some(digest)) => {
            match monitor
                .unflag_skill(&digest, &by, now)
                .map_err(monitor_error)?
            {
                Some(flag) => {
                    tracing::info!(%digest, %by, "cleared a skill's flag");
                    Ok(Json(serde_json::json!({"cleared": flag})))
                }
                None => Err(ApiError::not_found(
                    "not_flagged",
                    format!("skill {digest} is not flagged; nothing to clear"),
                )),
            }
        }
        _ => Err(ApiError::bad_request(
            "bad_request",
            "give exactly one of \"agent\" (an agent id) or \"skill\" (a flagged skill's code digest)",
        )),
    })
    .await
}

/// The monitor's state cannot be read or written: 503 (the runs fail closed on it too).
fn monitor_error(e: skillgate_monitor::StoreError) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "monitor_unavailable",
        format!("the monitor's state: {e}"),
    )
}
