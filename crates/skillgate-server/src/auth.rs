//! The authentication middleware: every request under it carries an API key, which alone
//! decides the caller. The authenticated [`Principal`] is put in the request's
//! extensions, where every handler (and a service mounted behind it, such as MCP at
//! `/mcp`) reads it.
use crate::error::ApiError;
use crate::keys::{self, AuthFailure, Credential};
use crate::{Principal, RequestIdExt, ServerState};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use std::sync::Arc;

/// Authenticates the request, or answers 401 (503 when the key store cannot answer) and
/// records the refusal in the monitor's audit trail. A request the admission control
/// authenticated already (to let it wait in the queue) passes through.
pub async fn require_key(
    State(state): State<Arc<ServerState>>,
    mut req: Request,
    next: Next,
) -> Response {
    if req.extensions().get::<Principal>().is_none()
        && let Err(refused) = authenticate(&state, &mut req).await
    {
        return refused;
    }
    next.run(req).await
}

/// Looks the request's key up and puts its [`Principal`] in the request's extensions; or
/// records the refusal and returns the 401 (503 when the key store cannot answer).
pub(crate) async fn authenticate(
    state: &Arc<ServerState>,
    req: &mut Request,
) -> Result<(), Response> {
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes().to_vec());
    let result = match keys::bearer(header.as_deref()) {
        Ok(Credential::Key(key)) => {
            let key = key.to_string();
            let st = state.clone();
            tokio::task::spawn_blocking(move || {
                let engine = st.engine();
                keys::authenticate(st.store().as_ref(), &key, |role, who, tenant| {
                    keys::check_tenant(engine.policy().map(|p| &**p), role, who, tenant)
                })
            })
            .await
            .unwrap_or_else(|e| Err(AuthFailure::Store(e.to_string())))
        }
        // A signature check and a lookup in the entities: no I/O, so on this thread.
        Ok(Credential::Token(token)) => match state.jwt().as_deref() {
            Some(verifier) => {
                let engine = state.engine();
                verifier.authenticate(token, |role, who, tenant| {
                    keys::check_tenant(engine.policy().map(|p| &**p), role, who, tenant)
                })
            }
            None => Err(AuthFailure::NoVerifier),
        },
        Err(e) => Err(e),
    };
    let failure = match result {
        Ok(principal) => {
            req.extensions_mut().insert(principal);
            return Ok(());
        }
        Err(failure) => failure,
    };
    let request_id = req.request_id();
    let target = crate::error::elide(&format!("{} {}", req.method(), req.uri().path()));
    record_failure(state, &failure, request_id, target).await;
    let status = match failure {
        AuthFailure::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::UNAUTHORIZED,
    };
    let mut resp = ApiError::new(status, "unauthorized", failure.to_string()).into_response();
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer"),
        );
    }
    Err(resp)
}

async fn record_failure(
    state: &Arc<ServerState>,
    failure: &AuthFailure,
    request_id: String,
    target: String,
) {
    let now = crate::now_ms();
    let key_id = match failure {
        AuthFailure::Revoked(id) | AuthFailure::TenantMismatch(id, _) => Some(id.clone()),
        _ => None,
    };
    let record = skillgate_monitor::audit::AuthFailureRecord {
        v: skillgate_monitor::audit::FORMAT_VERSION,
        ts_ms: now,
        time: skillgate_monitor::audit::rfc3339(now),
        request_id: request_id.clone(),
        reason: failure.reason().into(),
        key_id,
        target,
    };
    let monitor = state.monitor().clone();
    let written = tokio::task::spawn_blocking(move || monitor.record_auth_failure(record)).await;
    tracing::warn!(request_id, reason = failure.reason(), "credential refused");
    let error = match written {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    tracing::error!(request_id, error, "cannot audit a refused credential");
}

/// The principal of an authenticated request, or 401 (a route outside the middleware).
pub fn principal(req_ext: &http::Extensions) -> Result<Principal, ApiError> {
    req_ext.get::<Principal>().cloned().ok_or_else(|| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "not authenticated",
        )
    })
}
