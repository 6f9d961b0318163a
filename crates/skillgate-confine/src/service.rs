//! The one service shape both layers share: decide on the request, then either answer
//! with a rejection or pass the request on, recording the layer's time and findings.
use skillgate_core::{ExecOutcome, ExecRequest, Finding, LayerName, Status};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::Service;

/// A decision a layer makes on a request before the executor runs it.
pub(crate) trait Decide: Send + Sync + 'static {
    /// The layer's name in reports.
    const LAYER: LayerName;
    /// Amends the request (its spec), or rejects it with a status and findings.
    fn decide(&self, req: &mut ExecRequest) -> Result<(), (Status, Vec<Finding>)>;
}

/// The service of [`crate::SeccompLayer`] and [`crate::NetworkLayer`].
#[derive(Debug)]
pub struct ConfineService<S, D> {
    pub(crate) inner: S,
    pub(crate) decider: Arc<D>,
}

impl<S: Clone, D> Clone for ConfineService<S, D> {
    fn clone(&self) -> Self {
        ConfineService {
            inner: self.inner.clone(),
            decider: Arc::clone(&self.decider),
        }
    }
}

#[allow(private_bounds)]
impl<S, D> Service<ExecRequest> for ConfineService<S, D>
where
    S: Service<ExecRequest, Response = ExecOutcome> + Send + 'static,
    S::Future: Send + 'static,
    D: Decide,
{
    type Response = ExecOutcome;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<ExecOutcome, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: ExecRequest) -> Self::Future {
        let started = Instant::now();
        let decided = self.decider.decide(&mut req);
        let spent = started.elapsed();
        match decided {
            Err((status, findings)) => Box::pin(async move {
                let mut out = ExecOutcome::rejected(status, Vec::new());
                out.record_layer(D::LAYER, spent, findings);
                Ok(out)
            }),
            Ok(()) => {
                let fut = self.inner.call(req);
                Box::pin(async move {
                    let mut out = fut.await?;
                    out.record_layer(D::LAYER, spent, Vec::new());
                    Ok(out)
                })
            }
        }
    }
}
