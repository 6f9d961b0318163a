//! The pipeline builder: whichever layers are configured, stacked in the architecture's
//! order around an executor.
use skillgate_core::{BoxError, BoxExecService, ExecOutcome, ExecRequest, LayerName};
use std::collections::BTreeMap;
use tower::util::BoxCloneServiceLayer;
use tower::{Layer, Service};

type BoxLayer = BoxCloneServiceLayer<BoxExecService, ExecRequest, ExecOutcome, BoxError>;

/// Stacks layers around an executor in a fixed order, whatever order they were added in.
///
/// The order (outermost first) is the order of [`LayerName`]:
///
/// 1. **monitor**: outermost, so it sees every request and every outcome, denials and
///    blocks included, and can quarantine;
/// 2. **policy**: nothing else is spent on a caller that may not run the skill;
/// 3. **input**: the input JSON Schema, before the code is even looked at;
/// 4. **prescan**: the code is refused before a sandbox is prepared for it;
/// 5. **isolation**, 6. **seccomp**, 7. **network**: decide the [sandbox
///    spec](skillgate_core::SandboxSpec) the executor enforces (isolation first, so it can
///    refuse what the executor cannot enforce);
/// 8. **secrets**: innermost, so no layer outside ever sees unredacted output;
/// 9. the **executor**, whose spec is recorded in the request's
///    [`ExecutorSpec`](skillgate_core::ExecutorSpec) slot, if it carries one.
///
/// ```
/// use skillgate::{LayerName, PipelineBuilder, InputSchemaLayer};
/// use skillgate_sandbox::ProcessExecutor;
/// let b = PipelineBuilder::new().layer_at(LayerName::Input, InputSchemaLayer::new());
/// assert_eq!(b.stages(), vec![LayerName::Input]);
/// let svc = b.build(ProcessExecutor::new());
/// # drop(svc);
/// ```
#[derive(Clone, Default)]
pub struct PipelineBuilder {
    layers: BTreeMap<LayerName, BoxLayer>,
}

impl std::fmt::Debug for PipelineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineBuilder")
            .field("stages", &self.stages())
            .finish()
    }
}

impl PipelineBuilder {
    /// An empty pipeline: the executor alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts `layer` at `stage`, replacing what was there.
    ///
    /// # Panics
    ///
    /// When `stage` is [`LayerName::Executor`], which is not a layer: pass the executor to
    /// [`build`](Self::build).
    pub fn layer_at<L>(mut self, stage: LayerName, layer: L) -> Self
    where
        L: Layer<BoxExecService> + Clone + Send + Sync + 'static,
        L::Service:
            Service<ExecRequest, Response = ExecOutcome, Error = BoxError> + Clone + Send + 'static,
        <L::Service as Service<ExecRequest>>::Future: Send + 'static,
    {
        assert!(
            stage != LayerName::Executor,
            "the executor is passed to build(), not added as a layer"
        );
        self.layers.insert(stage, BoxCloneServiceLayer::new(layer));
        self
    }

    /// Removes the layer at `stage`, if any.
    pub fn without(mut self, stage: LayerName) -> Self {
        self.layers.remove(&stage);
        self
    }

    /// The stages configured, outermost first.
    pub fn stages(&self) -> Vec<LayerName> {
        self.layers.keys().copied().collect()
    }

    /// Stacks the layers around `executor` and returns the cloneable boxed service.
    pub fn build<E>(self, executor: E) -> BoxExecService
    where
        E: Service<ExecRequest, Response = ExecOutcome> + Clone + Send + 'static,
        E::Error: Into<BoxError>,
        E::Future: Send + 'static,
    {
        // The executor's spec is recorded for the layers outside (the audit trail).
        let executor = tower::ServiceExt::map_request(executor, |req: ExecRequest| {
            skillgate_core::ExecutorSpec::record(&req);
            req
        });
        let mut svc = BoxExecService::new(tower::ServiceExt::map_err(executor, Into::into));
        for layer in self.layers.values().rev() {
            svc = layer.layer(svc);
        }
        svc
    }
}
