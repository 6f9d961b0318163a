//! Sessions as MCP tools at `/mcp` ([`SessionTools`]): `session_new`, `session_exec`,
//! `session_upload`, `session_download`, `session_log` and `session_rm`, for the agent
//! the key names, with the rules of `/v1/sessions` ([`crate::sessions`]): a session is
//! its creator's alone (anyone else is told there is no such session), every step runs
//! through the pipeline and holds a run slot of the server's admission control.
use crate::ServerState;
use crate::error::ApiError;
use crate::sessions::{StepBody, api_error, read_file, run_step};
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use skillgate::Caller;
use skillgate_mcp::{ToolFuture, ToolSet};
use skillgate_session::{Owner, STEP_SKILL};
use std::sync::Arc;

/// The session tools over a server's sessions.
#[derive(Debug)]
pub struct SessionTools(pub Arc<ServerState>);

/// The names of the session tools, in the order they are listed.
pub const TOOLS: [&str; 6] = [
    "session_new",
    "session_exec",
    "session_upload",
    "session_download",
    "session_log",
    "session_rm",
];

fn schema(value: serde_json::Value) -> JsonObject {
    match value {
        serde_json::Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

fn session_arg() -> serde_json::Value {
    serde_json::json!({"type": "string", "description": "The session id session_new gave."})
}

fn tool(name: &'static str) -> Tool {
    // A step is a script (`language` and `code`) or a shell command line (`sh`), exactly one
    // of them: `StepBody::spec` decides, the schema says so.
    let mut one_of = None;
    let (description, properties, required): (&str, serde_json::Value, &[&str]) = match name {
        "session_new" => (
            "Create a session: a workspace kept between steps (files persist). Returns its id.",
            serde_json::json!({}),
            &[],
        ),
        "session_exec" => {
            one_of = Some(serde_json::json!([
                {"required": ["language", "code"], "not": {"required": ["sh"]}},
                {"required": ["sh"], "not": {"anyOf": [
                    {"required": ["language"]}, {"required": ["code"]}, {"required": ["runtime"]}
                ]}}
            ]));
            (
                "Run a step in the session's workspace, through skillgate's sandbox and checks; \
                 its file changes persist. A step is either a script (`language` and `code`, \
                 reading JSON on stdin) or a shell command line (`sh`, run by /bin/sh, only \
                 where the policy grants the `run_command` action), never both.",
                serde_json::json!({
                    "session": session_arg(),
                    "language": {"type": "string", "enum": ["python", "javascript"], "description": "The script's language (with `code`)."},
                    "code": {"type": "string", "description": "The script (with `language`)."},
                    "sh": {"type": "string", "description": "A shell command line instead of `language` and `code` (pipes and redirections allowed; pre-scanned against the shell command allow-list)."},
                    "input": {"description": "The JSON the step reads on stdin (default {})."},
                    "cwd": {"type": "string", "description": "The working directory, relative to the workspace."},
                    "replayable": {"type": "boolean", "description": "false when the step's outcome cannot be repeated (network, clock)."},
                    "runtime": {"type": "string", "description": "The named runtime a script runs on (python-data, say; not with `sh`)."},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Environment variables for the step, each on the server's allow-list."}
                }),
                &["session"],
            )
        }
        "session_upload" => (
            "Write a file into the session's workspace (text, or base64 for bytes).",
            serde_json::json!({
                "session": session_arg(),
                "path": {"type": "string", "description": "Relative to the workspace."},
                "text": {"type": "string"},
                "base64": {"type": "string"},
                "mode": {"type": "string", "description": "Octal permission bits (default 644)."}
            }),
            &["session", "path"],
        ),
        "session_download" => (
            "Read a file of the session's workspace.",
            serde_json::json!({
                "session": session_arg(),
                "path": {"type": "string", "description": "Relative to the workspace."}
            }),
            &["session", "path"],
        ),
        "session_log" => (
            "The session's log: its uploads and steps, in order.",
            serde_json::json!({"session": session_arg()}),
            &["session"],
        ),
        _ => (
            "Remove the session and its log.",
            serde_json::json!({"session": session_arg()}),
            &["session"],
        ),
    };
    let mut input = serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    if let Some(one_of) = one_of {
        input["oneOf"] = one_of;
    }
    Tool::new(name, description, schema(input))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionArgs {
    session: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadArgs {
    session: String,
    path: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    base64: Option<String>,
    #[serde(default)]
    mode: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileArgs {
    session: String,
    path: String,
}

fn args<T: DeserializeOwned>(tool: &str, arguments: JsonObject) -> Result<T, ApiError> {
    serde_json::from_value(serde_json::Value::Object(arguments)).map_err(|e| {
        ApiError::bad_request(
            "bad_arguments",
            format!(
                "bad arguments for `{tool}`: {}",
                crate::error::elide(&e.to_string())
            ),
        )
    })
}

/// A failure as a tool error: what is wrong, and for a busy session or a full server,
/// that a retry may succeed.
fn refused(e: ApiError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(e.message)])
}

fn structured(text: String, value: serde_json::Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(value);
    r
}

impl SessionTools {
    /// A run slot of the server's admission control, or why there is none.
    async fn slot(&self) -> Result<crate::admission::Admitted<'_>, ApiError> {
        self.0.admission.enter().await.map_err(|_| {
            ApiError::new(
                http::StatusCode::TOO_MANY_REQUESTS,
                "overloaded",
                "the server is at its concurrency limit; retry in a few seconds",
            )
        })
    }

    async fn answer(
        &self,
        owner: Owner,
        name: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ApiError> {
        let state = &self.0;
        match name {
            "session_new" => {
                let _: JsonObject = args(name, arguments)?;
                let sessions = state.sessions().clone();
                let s = crate::app::blocking(move || sessions.create(&owner).map_err(api_error))
                    .await?;
                Ok(structured(
                    s.id.clone(),
                    serde_json::to_value(&s).unwrap_or_default(),
                ))
            }
            "session_exec" => {
                let mut arguments = arguments;
                let a: SessionArgs = args(
                    name,
                    arguments
                        .remove("session")
                        .map(|s| JsonObject::from_iter([("session".to_string(), s)]))
                        .unwrap_or_default(),
                )?;
                let step: StepBody = args(name, arguments)?;
                let spec = step.spec()?;
                let shell = spec.language == skillgate::Language::Shell;
                let _slot = self.slot().await?;
                let (r, report) = run_step(state, owner, a.session.clone(), spec).await?;
                let run = format!(
                    "sessions/{}/{}",
                    a.session,
                    r.event.as_ref().map_or(0, |e| e.seq)
                );
                let mut result = skillgate_mcp::result::tool_result(
                    STEP_SKILL,
                    &run,
                    &r.outcome,
                    std::time::Duration::from_millis(report.duration_ms),
                );
                if shell && r.outcome.status == skillgate::Status::Denied {
                    // The report leaves out the policy's findings (they name policies);
                    // the action a shell step needs is no secret, and the model needs it.
                    result.content.push(ContentBlock::text(
                        "A shell step (`sh`) is authorised as the Cedar action `run_command`, \
                         which no default policy grants: an administrator must grant it to \
                         this agent, or run the step as a script (`language` and `code`).",
                    ));
                }
                result.content.push(ContentBlock::text(match &r.event {
                    Some(e) => format!("session {}: recorded as event {}", a.session, e.seq),
                    None => format!(
                        "session {}: the step did not run; nothing recorded",
                        a.session
                    ),
                }));
                Ok(result)
            }
            "session_upload" => {
                let a: UploadArgs = args(name, arguments)?;
                let bytes = match (a.text, a.base64) {
                    (Some(t), None) => t.into_bytes(),
                    (None, Some(b)) => base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .map_err(|e| {
                            ApiError::bad_request(
                                "bad_base64",
                                format!("`base64` is not base64: {e}"),
                            )
                        })?,
                    _ => {
                        return Err(ApiError::bad_request(
                            "bad_arguments",
                            "give the file's content as exactly one of `text` and `base64`",
                        ));
                    }
                };
                let query = a.mode.map(|m| format!("mode={m}"));
                let mode = crate::sessions::upload_mode(query.as_deref())?;
                let (id, path) = (a.session, a.path);
                let sessions = state.sessions().clone();
                let e = crate::app::blocking(move || {
                    sessions
                        .upload(&owner, &id, &path, &bytes, mode)
                        .map_err(api_error)
                })
                .await?;
                Ok(structured(
                    format!("recorded as event {}", e.seq),
                    serde_json::to_value(&e).unwrap_or_default(),
                ))
            }
            "session_download" => {
                let a: FileArgs = args(name, arguments)?;
                let _slot = self.slot().await?;
                let uri = format!("skillgate://sessions/{}/files/{}", a.session, a.path);
                let bytes = read_file(state, owner, a.session, a.path).await?;
                Ok(CallToolResult::success(vec![
                    skillgate_mcp::result::file_content(&uri, &bytes),
                ]))
            }
            "session_log" => {
                let a: SessionArgs = args(name, arguments)?;
                let sessions = state.sessions().clone();
                let id = a.session.clone();
                let events =
                    crate::app::blocking(move || sessions.log(&owner, &id).map_err(api_error))
                        .await?;
                let value = serde_json::json!({"session": a.session, "events": events});
                Ok(structured(value.to_string(), value))
            }
            _ => {
                let a: SessionArgs = args(name, arguments)?;
                let sessions = state.sessions().clone();
                let id = a.session.clone();
                crate::app::blocking(move || sessions.remove(&owner, &id).map_err(api_error))
                    .await?;
                Ok(structured(
                    format!("session {} removed", a.session),
                    serde_json::json!({"session": a.session, "removed": true}),
                ))
            }
        }
    }
}

impl ToolSet for SessionTools {
    fn tools(&self, _caller: &Caller) -> Vec<Tool> {
        TOOLS.into_iter().map(tool).collect()
    }

    fn call<'a>(
        &'a self,
        caller: Caller,
        name: &'a str,
        arguments: JsonObject,
    ) -> Option<ToolFuture<'a>> {
        if !TOOLS.contains(&name) {
            return None;
        }
        let owner = crate::sessions::owner_of(&caller);
        Some(Box::pin(async move {
            self.answer(owner, name, arguments)
                .await
                .unwrap_or_else(refused)
        }))
    }
}
