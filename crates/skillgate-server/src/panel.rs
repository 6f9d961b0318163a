//! The Test panel: a small page (`GET /panel`) to pick a skill, edit a sample input, run
//! it with an API key and see the report (stdout, stderr, exit code, time, findings, PNG
//! artifacts as images). Plain HTML, CSS and JS embedded in the binary, no build step.
//!
//! The page holds the key in memory only and sends it as `Authorization: Bearer`. Its
//! assets are served with a strict Content-Security-Policy (scripts and styles from this
//! origin only, images from `data:` URLs, no inline script, no framing), and the script
//! sets every report value as text: a report is shaped by the code that ran.
//!
//! [`api`] adds `GET /v1/skills/{name}/sample-input` to the authenticated API, for the
//! panel to prefill the input.
use crate::error::{ApiError, elide};
use crate::{Principal, ServerState, registry};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use http::header;
use skillgate_core::FileKind;
use std::sync::Arc;

/// The page's Content-Security-Policy: nothing but this origin's script and style, images
/// from `data:` URLs (the artifacts), requests to this origin only.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// The file of a skill folder the panel offers as its sample input.
pub const SAMPLE_INPUT: &str = "sample-input.json";

const INDEX_HTML: &str = include_str!("panel/index.html");
const PANEL_JS: &str = include_str!("panel/panel.js");
const PANEL_CSS: &str = include_str!("panel/panel.css");

/// The panel's page and assets (no authentication: they hold no data; every API call the
/// page makes carries the key the user pastes).
pub fn pages() -> Router<Arc<ServerState>> {
    Router::new()
        .route(
            "/panel",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/panel/panel.js",
            get(|| async { asset("text/javascript; charset=utf-8", PANEL_JS) }),
        )
        .route(
            "/panel/panel.css",
            get(|| async { asset("text/css; charset=utf-8", PANEL_CSS) }),
        )
}

/// The API the panel adds, to be mounted behind authentication:
/// `GET /v1/skills/{name}/sample-input` answers `{"input": ...}`, the skill's
/// `sample-input.json` (`null` when it has none, or none that parses).
pub fn api() -> Router<Arc<ServerState>> {
    Router::new().route("/v1/skills/{name}/sample-input", get(sample_input))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

async fn sample_input(
    State(state): State<Arc<ServerState>>,
    Extension(principal): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    crate::runs::require_agent(&principal)?;
    crate::app::blocking(move || {
        let skill = registry::runnable_skills(&state, &principal.caller)?
            .into_iter()
            .find(|r| r.version.name == name)
            .ok_or_else(|| {
                ApiError::not_found(
                    "unknown_skill",
                    format!("no skill `{}` you may run", elide(&name)),
                )
            })?
            .skill;
        Ok(Json(serde_json::json!({ "input": sample_of(&skill) })))
    })
    .await
}

/// The skill's sample input: its `sample-input.json` data file, parsed; `None` when it
/// has none or it is not JSON.
pub fn sample_of(skill: &skillgate_core::Skill) -> Option<serde_json::Value> {
    skill
        .files
        .iter()
        .find(|f| f.path == SAMPLE_INPUT && f.kind == FileKind::Data)
        .and_then(|f| serde_json::from_slice(&f.bytes).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate_core::{Language, Skill};

    fn skill_with(files: &[(&str, FileKind, &[u8])]) -> Skill {
        files
            .iter()
            .fold(
                Skill::builder("s", Language::Python, b"print(1)".to_vec()),
                |b, (path, kind, bytes)| b.file(*path, *kind, bytes.to_vec()),
            )
            .build()
    }

    #[test]
    fn sample_is_the_parsed_data_file() {
        let s = skill_with(&[(SAMPLE_INPUT, FileKind::Data, br#"{"a": [1, 2]}"#)]);
        assert_eq!(sample_of(&s), Some(serde_json::json!({"a": [1, 2]})));
    }

    #[test]
    fn no_sample_when_missing_not_json_or_code() {
        assert_eq!(sample_of(&skill_with(&[])), None);
        let bad = skill_with(&[(SAMPLE_INPUT, FileKind::Data, b"{not json")]);
        assert_eq!(sample_of(&bad), None);
        let nested = skill_with(&[("x/sample-input.json", FileKind::Data, b"{}")]);
        assert_eq!(sample_of(&nested), None);
    }

    #[test]
    fn script_never_writes_report_data_as_html() {
        // The report is attacker-influenced: the panel sets it as text only.
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!PANEL_JS.contains(sink), "panel.js uses {sink}");
        }
        assert!(
            !INDEX_HTML.contains("<script>"),
            "inline script in index.html"
        );
    }
}
