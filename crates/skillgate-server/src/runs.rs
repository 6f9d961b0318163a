//! Runs: a registry skill (`POST /v1/skills/{name}/runs`) or a bare script of the caller's
//! own (`POST /v1/runs`), answered with the report `skillgate run --format json` prints,
//! plus the request id (the same id is in the log and the audit record).
use crate::error::{ApiError, elide};
use crate::{Principal, ServerState};
use serde::{Deserialize, Serialize};
use skillgate::{Language, LimitOverrides, Report, RequestId, Skill};
use skillgate_store::Role;
use std::sync::Arc;
use std::time::Instant;

/// The body of a skill run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillRunBody {
    /// The input JSON (default `{}`).
    #[serde(default = "empty_object")]
    pub input: serde_json::Value,
    /// A version; default the latest runnable one.
    #[serde(default)]
    pub version: Option<String>,
}

/// The body of a bare-script run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptRunBody {
    /// `python` or `javascript`.
    pub language: String,
    /// The script.
    pub code: String,
    /// The input JSON (default `{}`).
    #[serde(default = "empty_object")]
    pub input: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::json!({})
}

/// The answer of a run: the report, with the request id. As a response it is the JSON
/// body with a `Server-Timing` header (see [`RunTiming`]).
#[derive(Debug, Serialize)]
pub struct RunAnswer {
    /// The request id (in the log, the `x-request-id` header and the audit record too).
    pub request_id: String,
    /// The report, as `skillgate run --format json` prints it.
    #[serde(flatten)]
    pub report: Report,
    /// Where the time went, for the `Server-Timing` header (not in the body).
    #[serde(skip)]
    pub timing: RunTiming,
}

/// Where a run's time went, to the microsecond (the report's `duration_ms` is whole
/// milliseconds), sent as the standard `Server-Timing` header:
/// `pipeline;dur=58.214, skill;dur=54.907` (milliseconds). `pipeline` is the request
/// through every layer and the executor; `skill` the skill's own run in the executor
/// (its process tree's wall time). What a client measures beyond `pipeline` is the
/// server's own part: HTTP, authentication, admission, the registry.
///
/// ```
/// use std::time::Duration;
/// let t = skillgate_server::runs::RunTiming {
///     pipeline: Duration::from_micros(58_214),
///     skill: Duration::from_micros(54_907),
/// };
/// assert_eq!(t.header(), "pipeline;dur=58.214, skill;dur=54.907");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunTiming {
    /// The request through the pipeline.
    pub pipeline: std::time::Duration,
    /// The skill's own wall time in the executor.
    pub skill: std::time::Duration,
}

impl RunTiming {
    /// The `Server-Timing` header's value.
    pub fn header(&self) -> String {
        let ms = |d: std::time::Duration| d.as_micros() as f64 / 1000.0;
        format!(
            "pipeline;dur={:.3}, skill;dur={:.3}",
            ms(self.pipeline),
            ms(self.skill)
        )
    }
}

impl axum::response::IntoResponse for RunAnswer {
    fn into_response(self) -> axum::response::Response {
        let timing = self.timing.header();
        let mut response = axum::Json(self).into_response();
        if let Ok(value) = http::HeaderValue::from_str(&timing) {
            response.headers_mut().insert("server-timing", value);
        }
        response
    }
}

/// Only an agent key runs.
pub fn require_agent(principal: &Principal) -> Result<(), ApiError> {
    match principal.role {
        Role::Agent => Ok(()),
        Role::Builder | Role::Operator => Err(ApiError::forbidden(format!(
            "{} key cannot run skills as an agent; run with an agent key",
            principal.role.with_article()
        ))),
    }
}

/// Parses a language name: 400 naming it when unknown.
pub fn language(name: &str) -> Result<Language, ApiError> {
    name.parse().map_err(|_| {
        ApiError::bad_request(
            "unknown_language",
            format!(
                "unknown language `{}` (expected python or javascript)",
                elide(name)
            ),
        )
    })
}

/// 400 for code over the size limit of a skill's code.
pub fn check_code(code: &str) -> Result<(), ApiError> {
    if code.len() as u64 > skillgate::skill_dir::MAX_CODE_BYTES {
        return Err(ApiError::bad_request(
            "code_too_large",
            format!(
                "the code is over the {} byte limit",
                skillgate::skill_dir::MAX_CODE_BYTES
            ),
        ));
    }
    Ok(())
}

/// A bare script owned by the caller, as `skillgate run --code` builds it.
pub fn script(language: Language, code: String) -> Result<Skill, ApiError> {
    check_code(&code)?;
    let entry = match language {
        Language::Python => "main.py",
        Language::JavaScript => "main.js",
        Language::Shell => "main.sh",
    };
    Ok(Skill::builder("script", language, code.into_bytes())
        .entry(entry)
        .build())
}

/// Runs `skill` for `principal` through the engine in use, with request id `id`.
pub async fn run(
    state: &Arc<ServerState>,
    principal: &Principal,
    skill: Arc<Skill>,
    input: serde_json::Value,
    requested: LimitOverrides,
    id: RequestId,
) -> Result<RunAnswer, ApiError> {
    let engine = state.engine();
    let mut req = engine.request(principal.caller.clone(), skill, input, requested);
    req.id = id;
    let started = Instant::now();
    let outcome = engine
        .run(req)
        .await
        .map_err(|e| ApiError::internal(format!("execution failed: {e}")))?;
    let pipeline = started.elapsed();
    let report = Report::new(&outcome, pipeline);
    tracing::info!(
        request_id = %id,
        agent = %principal.caller.agent_id,
        tenant = %principal.caller.tenant,
        status = %report.status,
        duration_ms = report.duration_ms,
        "run"
    );
    Ok(RunAnswer {
        request_id: id.to_string(),
        report,
        timing: RunTiming {
            pipeline,
            skill: outcome.usage.wall,
        },
    })
}
