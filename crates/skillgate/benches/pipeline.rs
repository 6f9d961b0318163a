//! The pipeline's own overhead: a request through the configured layers around a no-op
//! executor, so what is measured is the layers, not a process start.
use criterion::{Criterion, criterion_group, criterion_main};
use skillgate::{
    BoxError, Caller, ExecOutcome, ExecRequest, InputSchemaLayer, Language, LayerName,
    PipelineBuilder, Skill, Status,
};
use std::hint::black_box;
use tower::{ServiceExt, service_fn};

fn noop_executor() -> impl tower::Service<
    ExecRequest,
    Response = ExecOutcome,
    Error = BoxError,
    Future = impl Send + 'static,
> + Clone
+ Send
+ 'static {
    service_fn(|_req: ExecRequest| async {
        Ok::<_, BoxError>(ExecOutcome {
            status: Status::Ok,
            exit_code: Some(0),
            stdout: br#"{"answer":"ok"}"#.to_vec(),
            ..ExecOutcome::default()
        })
    })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let skill = std::sync::Arc::new(
        Skill::builder("bench", Language::Python, b"print('{}')".to_vec())
            .input_schema(serde_json::json!({
                "type": "object",
                "required": ["query", "data"],
                "properties": {"query": {"type": "string"}, "data": {"type": "array"}}
            }))
            .build(),
    );
    let input = serde_json::json!({"query": "sum", "data": [1, 2, 3, 4, 5]});
    let mut group = c.benchmark_group("pipeline_overhead");

    let bare = PipelineBuilder::new().build(noop_executor());
    group.bench_function("no_layers", |b| {
        b.iter(|| {
            let req = ExecRequest::new(Caller::new("a", "t"), skill.clone(), input.clone());
            black_box(rt.block_on(bare.clone().oneshot(req)).unwrap())
        })
    });

    let gated = PipelineBuilder::new()
        .layer_at(LayerName::Input, InputSchemaLayer::new())
        .build(noop_executor());
    group.bench_function("input_schema", |b| {
        b.iter(|| {
            let req = ExecRequest::new(Caller::new("a", "t"), skill.clone(), input.clone());
            black_box(rt.block_on(gated.clone().oneshot(req)).unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
