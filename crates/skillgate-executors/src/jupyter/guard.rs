//! Deleting the run's kernel on every path, including a dropped future, and again later
//! when the gateway could not delete it (it did not answer).
use super::gateway::Gateway;
use std::sync::{Arc, Mutex};

/// Kernels whose deletion failed: deleted again before the executor's next run.
pub(crate) type Pending = Arc<Mutex<Vec<String>>>;

/// Owns a started kernel: [`KernelGuard::delete`] deletes it; dropping the guard without
/// that (the caller dropped the run's future, or a step returned early) spawns the
/// deletion on the current tokio runtime. A deletion that fails leaves the id in
/// [`Pending`].
pub(crate) struct KernelGuard {
    gateway: Gateway,
    id: Option<String>,
    pending: Pending,
}

impl KernelGuard {
    pub(crate) fn new(gateway: Gateway, id: String, pending: Pending) -> Self {
        KernelGuard {
            gateway,
            id: Some(id),
            pending,
        }
    }

    /// The kernel's id.
    pub(crate) fn id(&self) -> &str {
        self.id.as_deref().unwrap_or_default()
    }

    /// Disarms the guard (the kernel was deleted).
    pub(crate) fn disarm(mut self) {
        self.id = None;
    }

    /// Deletes the kernel now and disarms the guard.
    pub(crate) async fn delete(mut self) -> Result<(), skillgate_core::ExecError> {
        match self.id.take() {
            Some(id) => delete_or_keep(&self.gateway, id, &self.pending).await,
            None => Ok(()),
        }
    }
}

impl Drop for KernelGuard {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let gateway = self.gateway.clone();
        let pending = self.pending.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    if let Err(e) = delete_or_keep(&gateway, id.clone(), &pending).await {
                        tracing::warn!(kernel = %id, error = %e, "deleting a dropped run's kernel");
                    }
                });
            }
            // No runtime to delete it on: the next run does.
            Err(_) => pending.lock().unwrap_or_else(|p| p.into_inner()).push(id),
        }
    }
}

async fn delete_or_keep(
    gateway: &Gateway,
    id: String,
    pending: &Pending,
) -> Result<(), skillgate_core::ExecError> {
    let res = gateway.delete(&id).await;
    if res.is_err() {
        pending.lock().unwrap_or_else(|p| p.into_inner()).push(id);
    }
    res
}

/// Deletes the kernels of `pending` (those the gateway still cannot delete stay).
pub(crate) async fn retry_pending(gateway: &Gateway, pending: &Pending) {
    let ids = std::mem::take(&mut *pending.lock().unwrap_or_else(|p| p.into_inner()));
    for id in ids {
        if let Err(e) = delete_or_keep(gateway, id.clone(), pending).await {
            tracing::warn!(kernel = %id, error = %e, "deleting a kernel left by an earlier run");
        }
    }
}
