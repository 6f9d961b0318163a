//! The input gate: the skill's input must satisfy its JSON Schema before anything runs.
use skillgate_core::{
    Decide, DecideService, ExecRequest, Finding, LayerName, Rejection, Severity, Status,
};
use std::sync::Arc;
use tower::Layer;

/// Most schema violations reported for one input.
pub const MAX_VIOLATIONS: usize = 20;

/// Validates the request's input against the skill's JSON Schema. A violation makes the
/// outcome `blocked`, with one finding per violation naming the failing path; a schema
/// that does not compile makes it `error` (a bad skill definition). A skill without a
/// schema passes.
///
/// ```
/// # tokio_test_block(async {
/// use skillgate::{Caller, ExecOutcome, ExecRequest, InputSchemaLayer, Language, Skill, Status};
/// use tower::{Layer, ServiceExt, service_fn};
/// let inner = service_fn(|_req: ExecRequest| async {
///     Ok::<_, skillgate::BoxError>(ExecOutcome { status: Status::Ok, ..Default::default() })
/// });
/// let svc = InputSchemaLayer::new().layer(inner);
/// let skill = Skill::builder("s", Language::Python, b"".to_vec())
///     .input_schema(serde_json::json!({"type": "object", "required": ["query"]}))
///     .build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = svc.oneshot(req).await.unwrap();
/// assert_eq!(out.status, Status::Blocked);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct InputSchemaLayer;

impl InputSchemaLayer {
    /// The layer.
    pub fn new() -> Self {
        InputSchemaLayer
    }
}

impl<S> Layer<S> for InputSchemaLayer {
    type Service = InputSchemaService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        DecideService::new(inner, Arc::new(InputSchemaLayer))
    }
}

/// The service of [`InputSchemaLayer`].
pub type InputSchemaService<S> = DecideService<S, InputSchemaLayer>;

impl Decide for InputSchemaLayer {
    const LAYER: LayerName = LayerName::Input;
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
        match &req.skill.input_schema {
            Some(schema) => check_input(schema, &req.input)
                .map(|()| Vec::new())
                .map_err(|(status, findings)| Rejection::new(status, findings)),
            None => Ok(Vec::new()),
        }
    }
}

/// The first reference in `schema` to another document (`$ref`, `$dynamicRef` or
/// `$recursiveRef` not starting with `#`), as a message; skillgate resolves no external
/// schemas (no network, no other files), so such a schema cannot be used.
///
/// ```
/// use serde_json::json;
/// assert!(skillgate::input::external_ref(&json!({"$ref": "#/$defs/a", "$defs": {"a": {}}})).is_none());
/// let msg = skillgate::input::external_ref(&json!({"properties": {"a": {"$ref": "other.json"}}})).unwrap();
/// assert!(msg.contains("other.json") && msg.contains("not supported"));
/// ```
pub fn external_ref(schema: &serde_json::Value) -> Option<String> {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef")
                        && let Some(target) = v.as_str()
                        && !target.starts_with('#')
                    {
                        return Some(format!(
                            "`{k}: {target}`: external references are not supported; put the referenced schema under `$defs` in the same file and refer to it as `#/$defs/NAME`"
                        ));
                    }
                    stack.push(v);
                }
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    None
}

/// Most characters of the input a schema finding repeats (its path, the value the
/// validator quotes).
pub const MAX_ECHO_CHARS: usize = 200;

/// `text` cut to its first `max` characters, saying how many were left out, so a message
/// never repeats unbounded input.
///
/// ```
/// use skillgate::input::elide;
/// assert_eq!(elide("short", 10), "short");
/// assert_eq!(elide("abcdefgh", 3), "abc… (5 more characters)");
/// ```
pub fn elide(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

/// Compiled validators kept by their schema's content, at most this many.
const COMPILED_KEPT: usize = 256;

/// `schema` compiled, from a process-wide cache keyed by the sha256 of its JSON text: a
/// long-running process (`serve`, MCP) checks every run of a skill against the same schema
/// (and a skill folder's schema, compiled when the folder is loaded, is compiled once),
/// and compiling it (which first validates it against the meta-schema) was about 0.5 ms of
/// each run. Only what compiles is kept, so a bad schema is reported every time. When the
/// cache is full it starts again empty (schemas are few; the bound is only against a
/// caller who sends a new schema with every script).
pub(crate) fn compiled(schema: &serde_json::Value) -> Result<Arc<jsonschema::Validator>, String> {
    use sha2::{Digest, Sha256};
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<[u8; 32], Arc<jsonschema::Validator>>>> = OnceLock::new();
    let key: [u8; 32] = Sha256::digest(schema.to_string().as_bytes()).into();
    let cache = CACHE.get_or_init(Default::default);
    let lock = || {
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    if let Some(v) = lock().get(&key) {
        return Ok(v.clone());
    }
    let v = Arc::new(jsonschema::validator_for(schema).map_err(|e| e.to_string())?);
    let mut map = lock();
    if map.len() >= COMPILED_KEPT {
        map.clear();
    }
    map.insert(key, v.clone());
    Ok(v)
}

/// Checks `input` against `schema`: `Ok(())`, or the findings and the status they imply.
pub fn check_input(
    schema: &serde_json::Value,
    input: &serde_json::Value,
) -> Result<(), (Status, Vec<Finding>)> {
    if let Some(message) = external_ref(schema) {
        return Err((
            Status::Error,
            vec![Finding::new(
                LayerName::Input,
                "input.schema_invalid",
                Severity::High,
                format!("the skill's input schema cannot be used: {message}"),
            )],
        ));
    }
    let validator = compiled(schema).map_err(|e| {
        (
            Status::Error,
            vec![Finding::new(
                LayerName::Input,
                "input.schema_invalid",
                Severity::High,
                format!("the skill's input schema is not a valid JSON Schema: {e}"),
            )],
        )
    })?;
    let findings: Vec<Finding> = validator
        .iter_errors(input)
        .take(MAX_VIOLATIONS)
        .map(|err| {
            let path = err.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_string()
            } else {
                elide(&path, MAX_ECHO_CHARS)
            };
            // The validator's message repeats the offending value, which may be megabytes.
            Finding::new(
                LayerName::Input,
                "input.schema",
                Severity::High,
                format!(
                    "input at `{path}` fails the schema: {}",
                    elide(&err.to_string(), MAX_ECHO_CHARS)
                ),
            )
            .with_snippet(path)
        })
        .collect();
    if findings.is_empty() {
        Ok(())
    } else {
        Err((Status::Blocked, findings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_violation_does_not_echo_a_huge_value() {
        let schema =
            serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let huge = "x".repeat(4 << 20);
        let input = serde_json::json!({ "n": huge });
        let (status, findings) = check_input(&schema, &input).unwrap_err();
        assert_eq!(status, Status::Blocked);
        let message = &findings[0].message;
        assert!(message.len() < 1000, "{} bytes", message.len());
        assert!(message.contains("more characters"), "{message}");
        assert!(message.contains("`/n`"), "{message}");
    }

    #[test]
    fn a_schema_is_compiled_once_and_a_bad_one_is_refused_every_time() {
        let schema = serde_json::json!({"type": "object", "required": ["compiled-once"]});
        let first = compiled(&schema).unwrap();
        let again = compiled(&schema.clone()).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let other = compiled(&serde_json::json!({"required": ["another"]})).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        // The cached validator still decides: a miss is blocked, a match passes.
        assert!(check_input(&schema, &serde_json::json!({})).is_err());
        assert!(check_input(&schema, &serde_json::json!({"compiled-once": 1})).is_ok());
        let bad = serde_json::json!({"type": 5});
        for _ in 0..2 {
            let (status, findings) = check_input(&bad, &serde_json::json!({})).unwrap_err();
            assert_eq!(status, Status::Error);
            assert_eq!(findings[0].rule_id, "input.schema_invalid");
        }
    }

    #[test]
    fn elide_cuts_on_characters_not_bytes() {
        assert_eq!(elide("ééé", 2), "éé… (1 more characters)");
        assert_eq!(elide("ééé", 3), "ééé");
    }
}
