//! The input gate: the skill's input must satisfy its JSON Schema before anything runs.
use skillgate_core::{ExecOutcome, ExecRequest, Finding, LayerName, Severity, Status};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};

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
        InputSchemaService { inner }
    }
}

/// The service of [`InputSchemaLayer`].
#[derive(Debug, Clone)]
pub struct InputSchemaService<S> {
    inner: S,
}

/// Checks `input` against `schema`: `Ok(())`, or the findings and the status they imply.
pub fn check_input(
    schema: &serde_json::Value,
    input: &serde_json::Value,
) -> Result<(), (Status, Vec<Finding>)> {
    let validator = jsonschema::validator_for(schema).map_err(|e| {
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
                path
            };
            Finding::new(
                LayerName::Input,
                "input.schema",
                Severity::High,
                format!("input at `{path}` fails the schema: {err}"),
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

impl<S> Service<ExecRequest> for InputSchemaService<S>
where
    S: Service<ExecRequest, Response = ExecOutcome> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = ExecOutcome;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<ExecOutcome, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: ExecRequest) -> Self::Future {
        let started = Instant::now();
        let checked = match &req.skill.input_schema {
            Some(schema) => check_input(schema, &req.input),
            None => Ok(()),
        };
        let spent = started.elapsed();
        match checked {
            Err((status, findings)) => Box::pin(async move {
                let mut out = ExecOutcome::rejected(status, Vec::new());
                out.record_layer(LayerName::Input, spent, findings);
                Ok(out)
            }),
            Ok(()) => {
                let fut = self.inner.call(req);
                Box::pin(async move {
                    let mut out = fut.await?;
                    out.record_layer(LayerName::Input, spent, Vec::new());
                    Ok(out)
                })
            }
        }
    }
}
