//! A run's outcome as an MCP tool result.
//!
//! - A run that ended `ok` with exit code 0: the skill's JSON stdout as
//!   `structuredContent` (an object as MCP requires: a value that is not one comes as
//!   `{"result": value}`) and as text.
//! - Every other end (`denied`, `blocked`, `timeout`, any status but `ok`, and a non-zero
//!   exit): a tool error (`isError: true`) whose first text tells the model what happened
//!   and what it may do next. No policy id, rule or decision detail is in it.
//! - PNG, JPEG, GIF and WebP artifacts (charts) as `image` content, base64 with their MIME
//!   type; every other artifact as an embedded resource (text when it is UTF-8, else a
//!   base64 blob) at `skillgate://runs/<run id>/artifacts/<name>`.
//! - The run report as an embedded JSON resource at `skillgate://runs/<run id>/report.json`:
//!   status, exit code, stderr and the findings, without the policy layer's (they name
//!   policies).
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use skillgate::{ExecOutcome, LayerName, Report, Status};
use std::time::Duration;

/// The MIME type of the report resource.
pub const REPORT_MIME: &str = "application/json";

/// The tool result of `skill`'s run `run_id`, which ended as `outcome` after `elapsed`.
pub fn tool_result(
    skill: &str,
    run_id: &str,
    outcome: &ExecOutcome,
    elapsed: Duration,
) -> CallToolResult {
    let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
    let succeeded = outcome.status.is_ok() && outcome.exit_code == Some(0);
    let mut result = if succeeded {
        match serde_json::from_slice::<serde_json::Value>(&outcome.stdout) {
            Ok(value) => {
                let structured = match value {
                    serde_json::Value::Object(_) => value,
                    other => serde_json::json!({ "result": other }),
                };
                let mut r = CallToolResult::success(vec![ContentBlock::text(stdout)]);
                r.structured_content = Some(structured);
                r
            }
            Err(_) => CallToolResult::success(vec![ContentBlock::text(stdout)]),
        }
    } else {
        let mut content = vec![ContentBlock::text(failure_message(skill, outcome))];
        if outcome.status.is_ok() && !stdout.is_empty() {
            content.push(ContentBlock::text(stdout));
        }
        CallToolResult::error(content)
    };
    for artifact in &outcome.artifacts {
        result.content.push(artifact_content(run_id, artifact));
    }
    result
        .content
        .push(report_content(run_id, outcome, elapsed));
    result
}

/// What happened and what the model may do next, for a run that did not succeed.
pub fn failure_message(skill: &str, outcome: &ExecOutcome) -> String {
    let from = |layer: LayerName| outcome.findings.iter().any(|f| f.layer == layer);
    let cancelled = outcome
        .findings
        .iter()
        .any(|f| f.rule_id == "sandbox.cancelled");
    match outcome.status {
        Status::Ok => match (outcome.exit_code, outcome.signal) {
            (Some(code), _) => format!(
                "`{skill}` ran but failed (exit code {code}). Its stderr is in the run \
                 report; correct the arguments and call it again if the error says how."
            ),
            (None, Some(signal)) => {
                format!("`{skill}` was ended by signal {signal}. Its stderr is in the run report.")
            }
            (None, None) => format!("`{skill}` ended without an exit code."),
        },
        Status::Denied => format!(
            "Not allowed: this agent may not run `{skill}` now. Do not retry it; ask the \
             user or an administrator if it should be allowed."
        ),
        Status::Blocked if from(LayerName::Input) => format!(
            "Blocked: the arguments do not match `{skill}`'s input schema (see the run \
             report). Correct them and call it again."
        ),
        Status::Blocked if from(LayerName::Secrets) => format!(
            "Blocked: `{skill}`'s output contained something that looks like a secret, so it \
             was withheld. Do not retry with the same input."
        ),
        Status::Blocked => format!(
            "Blocked: skillgate's checks refused to run `{skill}`. Do not retry; tell the \
             user the skill needs to be reviewed."
        ),
        Status::Timeout => format!(
            "Timed out: `{skill}` ran past its time limit and was stopped. You may retry \
             with a smaller input or split the work."
        ),
        Status::ResourceExhausted => format!(
            "Stopped: `{skill}` hit a resource limit (memory, processes, file size or \
             output size). You may retry with a smaller input."
        ),
        Status::SecurityViolation => format!(
            "Stopped: the sandbox stopped `{skill}` doing something it may not do. Do not \
             retry; tell the user."
        ),
        Status::Error if cancelled => format!("Cancelled: the run of `{skill}` was stopped."),
        Status::Error => format!(
            "Failed: skillgate could not run `{skill}` (a bad skill definition or an \
             internal error). Do not retry now; tell the user."
        ),
    }
}

/// Why a call's arguments were refused before anything ran: the schema's violations,
/// each naming its path (`status` [`Status::Blocked`]), or a schema that cannot be used
/// (any other status: the skill is broken, not the arguments).
pub fn arguments_refused(skill: &str, status: Status, findings: &[skillgate::Finding]) -> String {
    if status != Status::Blocked {
        return format!(
            "Failed: `{skill}` cannot be called now: its input schema cannot be used. Nothing \
             ran. Do not retry; tell the user the skill needs to be fixed."
        );
    }
    let mut text =
        format!("Invalid arguments for `{skill}`; nothing ran. Correct them and call it again:");
    for f in findings {
        text.push_str("\n- ");
        text.push_str(&f.message);
    }
    text
}

/// The run report: status, exit, stderr and the findings outside the policy layer.
fn report_content(run_id: &str, outcome: &ExecOutcome, elapsed: Duration) -> ContentBlock {
    let mut report = Report::new(outcome, elapsed);
    report
        .findings
        .retain(|f| f.layer != LayerName::Policy.as_str());
    let value = serde_json::json!({
        "status": report.status,
        "exit_code": report.exit_code,
        "signal": report.signal,
        "stderr": report.stderr,
        "stderr_truncated": report.stderr_truncated,
        "stdout_truncated": report.stdout_truncated,
        "duration_ms": report.duration_ms,
        "findings": report.findings,
    });
    ContentBlock::resource(
        ResourceContents::text(
            value.to_string(),
            format!("skillgate://runs/{run_id}/report.json"),
        )
        .with_mime_type(REPORT_MIME),
    )
}

/// An artifact as `image` content when it is an image, else as an embedded resource.
fn artifact_content(run_id: &str, artifact: &skillgate::Artifact) -> ContentBlock {
    let uri = format!(
        "skillgate://runs/{run_id}/artifacts/{}",
        artifact.name.replace(' ', "%20")
    );
    file_content(&uri, &artifact.content)
}

/// A file's bytes as MCP content: an `image` for PNG, JPEG, GIF and WebP, else an
/// embedded resource at `uri` (text when the bytes are UTF-8, else a base64 blob).
pub fn file_content(uri: &str, bytes: &[u8]) -> ContentBlock {
    let b64 = || base64::engine::general_purpose::STANDARD.encode(bytes);
    if let Some(mime) = image_mime(bytes) {
        return ContentBlock::image(b64(), mime);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => ContentBlock::resource(ResourceContents::text(text, uri.to_string())),
        Err(_) => ContentBlock::resource(
            ResourceContents::blob(b64(), uri.to_string())
                .with_mime_type("application/octet-stream"),
        ),
    }
}

/// The MIME type of an image, by its leading bytes (never by its name, which the skill
/// chose).
pub fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate::{Artifact, Finding, Severity};

    fn ok(stdout: &str) -> ExecOutcome {
        ExecOutcome {
            status: Status::Ok,
            exit_code: Some(0),
            stdout: stdout.as_bytes().to_vec(),
            stderr: b"warn: x".to_vec(),
            ..ExecOutcome::default()
        }
    }

    fn json(r: &CallToolResult) -> serde_json::Value {
        serde_json::to_value(r).unwrap()
    }

    fn report(r: &CallToolResult) -> serde_json::Value {
        let v = json(r);
        let last = v["content"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["type"], "resource");
        assert_eq!(last["resource"]["mimeType"], REPORT_MIME);
        serde_json::from_str(last["resource"]["text"].as_str().unwrap()).unwrap()
    }

    #[test]
    fn json_stdout_is_structured_content_and_text_with_the_report() {
        let r = tool_result("s", "1", &ok(r#"{"n": 3}"#), Duration::ZERO);
        let v = json(&r);
        assert_eq!(v["isError"], false);
        assert_eq!(v["structuredContent"], serde_json::json!({"n": 3}));
        assert_eq!(v["content"][0]["text"], r#"{"n": 3}"#);
        assert_eq!(report(&r)["stderr"], "warn: x");
        let scalar = tool_result("s", "1", &ok("[1, 2]"), Duration::ZERO);
        assert_eq!(
            json(&scalar)["structuredContent"],
            serde_json::json!({"result": [1, 2]})
        );
    }

    #[test]
    fn a_png_artifact_is_an_image_and_others_are_resources() {
        let mut out = ok("{}");
        let png = b"\x89PNG\r\n\x1a\nrest".to_vec();
        for (name, content) in [("chart.png", png.clone()), ("notes.txt", b"hi".to_vec())] {
            out.artifacts.push(Artifact {
                name: name.into(),
                raw_name: None,
                size: content.len() as u64,
                sha256: String::new(),
                content,
            });
        }
        let v = json(&tool_result("s", "7", &out, Duration::ZERO));
        let image = &v["content"][1];
        assert_eq!(image["type"], "image");
        assert_eq!(image["mimeType"], "image/png");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(image["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(decoded, png);
        assert_eq!(v["content"][2]["type"], "resource");
        assert_eq!(
            v["content"][2]["resource"]["uri"],
            "skillgate://runs/7/artifacts/notes.txt"
        );
        assert_eq!(v["content"][2]["resource"]["text"], "hi");
    }

    #[test]
    fn every_status_but_ok_is_a_tool_error_without_policy_internals() {
        let policy_finding = Finding::new(
            LayerName::Policy,
            "policy0-secret-rule",
            Severity::High,
            "forbid policy `tenant-wall` matched",
        );
        for status in Status::ALL.into_iter().filter(|s| !s.is_ok()) {
            let out = ExecOutcome::rejected(status, vec![policy_finding.clone()]);
            let r = tool_result("s", "1", &out, Duration::ZERO);
            let text = json(&r).to_string();
            assert_eq!(r.is_error, Some(true), "{status}");
            assert!(!text.contains("policy0-secret-rule"), "{status}: {text}");
            assert!(!text.contains("tenant-wall"), "{status}: {text}");
            assert_eq!(report(&r)["status"], status.as_str());
        }
        let denied = failure_message("s", &ExecOutcome::rejected(Status::Denied, vec![]));
        assert!(denied.contains("Not allowed"), "{denied}");
    }

    #[test]
    fn refused_arguments_name_the_failing_path_and_a_broken_schema_says_so() {
        let schema = serde_json::json!({"type": "object", "required": ["n"],
            "properties": {"n": {"type": "integer"}}});
        let (status, findings) =
            skillgate::check_input(&schema, &serde_json::json!({"n": "x"})).unwrap_err();
        let text = arguments_refused("s", status, &findings);
        assert!(
            text.contains("`/n`") && text.contains("nothing ran"),
            "{text}"
        );
        let broken = serde_json::json!({"$ref": "https://example.invalid/schema.json"});
        let (status, findings) =
            skillgate::check_input(&broken, &serde_json::json!({})).unwrap_err();
        let text = arguments_refused("s", status, &findings);
        assert!(text.contains("cannot be used"), "{text}");
        assert!(!text.contains("Invalid arguments"), "{text}");
    }

    #[test]
    fn a_non_zero_exit_is_a_tool_error_with_its_stdout() {
        let mut out = ok("partial");
        out.exit_code = Some(2);
        let r = tool_result("s", "1", &out, Duration::ZERO);
        assert_eq!(r.is_error, Some(true));
        let v = json(&r);
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("exit code 2")
        );
        assert_eq!(v["content"][1]["text"], "partial");
        assert!(v.get("structuredContent").is_none());
    }
}
