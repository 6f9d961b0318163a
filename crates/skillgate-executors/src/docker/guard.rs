//! Removing the run's container on every path, including a dropped future, and again
//! later when the engine could not remove it (it was down).
use bollard::Docker;
use bollard::query_parameters::RemoveContainerOptions;
use std::sync::{Arc, Mutex};

/// Containers whose removal failed (the engine did not answer): removed again before the
/// executor's next run.
pub(crate) type Pending = Arc<Mutex<Vec<String>>>;

/// Owns a created container: [`ContainerGuard::remove`] removes it (force, with its
/// anonymous volumes); dropping the guard without that (the caller dropped the run's
/// future, or a step returned early) spawns the removal on the current tokio runtime.
/// A removal that fails leaves the id in [`Pending`].
pub(crate) struct ContainerGuard {
    docker: Docker,
    id: Option<String>,
    pending: Pending,
}

impl ContainerGuard {
    pub(crate) fn new(docker: Docker, id: String, pending: Pending) -> Self {
        ContainerGuard {
            docker,
            id: Some(id),
            pending,
        }
    }

    /// The container's id.
    pub(crate) fn id(&self) -> &str {
        self.id.as_deref().unwrap_or_default()
    }

    /// Removes the container now and disarms the guard.
    pub(crate) async fn remove(mut self) -> Result<(), bollard::errors::Error> {
        match self.id.take() {
            Some(id) => remove_or_keep(&self.docker, id, &self.pending).await,
            None => Ok(()),
        }
    }
}

/// Removes the container `id`; an engine that does not answer keeps it in `pending`.
async fn remove_or_keep(
    docker: &Docker,
    id: String,
    pending: &Pending,
) -> Result<(), bollard::errors::Error> {
    let res = remove(docker, &id).await;
    if res.is_err() {
        pending.lock().unwrap_or_else(|p| p.into_inner()).push(id);
    }
    res
}

/// Removes the containers of `pending` (those the engine still cannot remove stay).
pub(crate) async fn retry_pending(docker: &Docker, pending: &Pending) {
    let ids = std::mem::take(&mut *pending.lock().unwrap_or_else(|p| p.into_inner()));
    for id in ids {
        if let Err(e) = remove_or_keep(docker, id.clone(), pending).await {
            tracing::warn!(container = %id, error = %e, "removing a container left by an earlier run");
        }
    }
}

pub(crate) async fn remove(docker: &Docker, id: &str) -> Result<(), bollard::errors::Error> {
    let opts = RemoveContainerOptions {
        force: true,
        v: true,
        ..Default::default()
    };
    match docker.remove_container(id, Some(opts)).await {
        // Already gone (removed by someone else, or the engine lost it): nothing to do.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(()),
        other => other,
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let docker = self.docker.clone();
        let pending = self.pending.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    if let Err(e) = remove_or_keep(&docker, id.clone(), &pending).await {
                        tracing::warn!(container = %id, error = %e, "removing an abandoned container");
                    }
                });
            }
            Err(_) => {
                tracing::warn!(container = %id, "no tokio runtime to remove an abandoned container now");
                pending.lock().unwrap_or_else(|p| p.into_inner()).push(id);
            }
        }
    }
}
