//! Running an executor's blocking work on tokio's blocking pool, the one way both
//! executors of this crate answer a request.
use skillgate_core::{BoxError, ExecError, ExecOutcome, LayerName};
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

/// The future an executor of this crate returns.
pub(crate) type ExecFuture = Pin<Box<dyn Future<Output = Result<ExecOutcome, BoxError>> + Send>>;

/// Runs `work` on the blocking pool (a stuck pipe never stalls the runtime) and records the
/// executor's own time: the request's wall time less the skill's.
pub(crate) fn on_blocking_pool<F>(work: F) -> ExecFuture
where
    F: FnOnce() -> Result<ExecOutcome, ExecError> + Send + 'static,
{
    Box::pin(async move {
        let started = Instant::now();
        let mut outcome = tokio::task::spawn_blocking(work).await.map_err(|e| {
            Box::new(ExecError::Other(format!("executor task failed: {e}"))) as BoxError
        })??;
        let overhead = started.elapsed().saturating_sub(outcome.usage.wall);
        outcome.record_layer(LayerName::Executor, overhead, Vec::new());
        Ok(outcome)
    })
}
