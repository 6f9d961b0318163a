//! The builder stacks layers in the architecture's order whatever order they are added in,
//! rejections are outcomes, and timings read outermost first.
use skillgate::{
    BoxError, Caller, ExecOutcome, ExecRequest, Finding, LayerName, PipelineBuilder, Severity,
    Skill, Status,
};
use std::sync::{Arc, Mutex};
use tower::{Layer, ServiceExt, service_fn};

/// A layer that records when a request passes it and, optionally, rejects.
#[derive(Clone)]
struct Probe {
    name: LayerName,
    log: Arc<Mutex<Vec<LayerName>>>,
    reject: bool,
}

impl<S> Layer<S> for Probe {
    type Service = ProbeService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        ProbeService {
            probe: self.clone(),
            inner,
        }
    }
}

#[derive(Clone)]
struct ProbeService<S> {
    probe: Probe,
    inner: S,
}

impl<S> tower::Service<ExecRequest> for ProbeService<S>
where
    S: tower::Service<ExecRequest, Response = ExecOutcome, Error = BoxError>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = ExecOutcome;
    type Error = BoxError;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<ExecOutcome, BoxError>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: ExecRequest) -> Self::Future {
        self.probe.log.lock().unwrap().push(self.probe.name);
        let name = self.probe.name;
        if self.probe.reject {
            return Box::pin(async move {
                let mut out = ExecOutcome::rejected(Status::Denied, vec![]);
                out.record_layer(
                    name,
                    std::time::Duration::ZERO,
                    vec![Finding::new(name, "no", Severity::High, "no")],
                );
                Ok(out)
            });
        }
        let fut = self.inner.call(req);
        Box::pin(async move {
            let mut out = fut.await?;
            out.record_layer(name, std::time::Duration::ZERO, vec![]);
            Ok(out)
        })
    }
}

fn request() -> ExecRequest {
    let skill = Skill::builder("s", skillgate::Language::Python, b"".to_vec()).build();
    ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}))
}

#[tokio::test]
async fn layers_run_in_architecture_order_whatever_the_insertion_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let probe = |name| Probe {
        name,
        log: log.clone(),
        reject: false,
    };
    let mut builder = PipelineBuilder::new();
    // Deliberately scrambled.
    for name in [
        LayerName::Secrets,
        LayerName::Policy,
        LayerName::Network,
        LayerName::Monitor,
        LayerName::Isolation,
        LayerName::Prescan,
        LayerName::Seccomp,
        LayerName::Input,
    ] {
        builder = builder.layer_at(name, probe(name));
    }
    let executed = Arc::new(Mutex::new(false));
    let flag = executed.clone();
    let svc = builder.build(service_fn(move |_req: ExecRequest| {
        *flag.lock().unwrap() = true;
        async {
            Ok::<_, BoxError>(ExecOutcome {
                status: Status::Ok,
                ..Default::default()
            })
        }
    }));
    let out = svc.oneshot(request()).await.unwrap();
    let expected = vec![
        LayerName::Monitor,
        LayerName::Policy,
        LayerName::Input,
        LayerName::Prescan,
        LayerName::Isolation,
        LayerName::Seccomp,
        LayerName::Network,
        LayerName::Secrets,
    ];
    assert_eq!(*log.lock().unwrap(), expected);
    assert!(*executed.lock().unwrap());
    let timings: Vec<LayerName> = out.layers.iter().map(|t| t.name).collect();
    assert_eq!(timings, expected, "timings read outermost first");
}

#[tokio::test]
async fn a_rejection_stops_the_request_and_is_an_outcome() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let svc = PipelineBuilder::new()
        .layer_at(
            LayerName::Prescan,
            Probe {
                name: LayerName::Prescan,
                log: log.clone(),
                reject: false,
            },
        )
        .layer_at(
            LayerName::Policy,
            Probe {
                name: LayerName::Policy,
                log: log.clone(),
                reject: true,
            },
        )
        .layer_at(
            LayerName::Monitor,
            Probe {
                name: LayerName::Monitor,
                log: log.clone(),
                reject: false,
            },
        )
        .build(service_fn(|_req: ExecRequest| async {
            Err::<ExecOutcome, BoxError>("the executor must not be reached".into())
        }));
    let out = svc
        .oneshot(request())
        .await
        .expect("a rejection is not an error");
    assert_eq!(out.status, Status::Denied);
    assert_eq!(
        *log.lock().unwrap(),
        vec![LayerName::Monitor, LayerName::Policy]
    );
    assert_eq!(out.findings.len(), 1);
    assert_eq!(out.findings[0].layer, LayerName::Policy);
}

#[tokio::test]
async fn infrastructure_failures_are_errors() {
    let svc = PipelineBuilder::new().build(service_fn(|_req: ExecRequest| async {
        Err::<ExecOutcome, BoxError>("disk on fire".into())
    }));
    let err = svc.oneshot(request()).await.unwrap_err();
    assert_eq!(err.to_string(), "disk on fire");
}

/// The executor's end of the pipeline records the spec the executor gets, after every
/// layer changed it, for the monitor's audit record (issue 20, item 8).
#[tokio::test]
async fn the_executor_spec_is_recorded_after_the_layers() {
    let clamp = tower::layer::layer_fn(|inner: skillgate::BoxExecService| {
        tower::ServiceExt::map_request(inner, |mut req: ExecRequest| {
            req.spec.limits.wall_timeout = std::time::Duration::from_secs(2);
            req
        })
    });
    let pipeline = PipelineBuilder::new()
        .layer_at(LayerName::Isolation, clamp)
        .build(service_fn(|_r: ExecRequest| async {
            Ok::<_, BoxError>(ExecOutcome::default())
        }));
    let slot = skillgate::ExecutorSpec::default();
    let mut req = request();
    req.extensions.insert(slot.clone());
    pipeline.oneshot(req).await.unwrap();
    let spec = slot.get().expect("recorded");
    assert_eq!(spec.limits.wall_timeout, std::time::Duration::from_secs(2));
}
