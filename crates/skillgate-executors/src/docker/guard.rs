//! Removing the run's container on every path, including a dropped future.
use bollard::Docker;
use bollard::query_parameters::RemoveContainerOptions;

/// Owns a created container: [`ContainerGuard::remove`] removes it (force, with its
/// anonymous volumes); dropping the guard without that (the caller dropped the run's
/// future, or a step returned early) spawns the removal on the current tokio runtime.
pub(crate) struct ContainerGuard {
    docker: Docker,
    id: Option<String>,
}

impl ContainerGuard {
    pub(crate) fn new(docker: Docker, id: String) -> Self {
        ContainerGuard {
            docker,
            id: Some(id),
        }
    }

    /// The container's id.
    pub(crate) fn id(&self) -> &str {
        self.id.as_deref().unwrap_or_default()
    }

    /// Removes the container now and disarms the guard.
    pub(crate) async fn remove(mut self) -> Result<(), bollard::errors::Error> {
        match self.id.take() {
            Some(id) => remove(&self.docker, &id).await,
            None => Ok(()),
        }
    }
}

async fn remove(docker: &Docker, id: &str) -> Result<(), bollard::errors::Error> {
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
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    if let Err(e) = remove(&docker, &id).await {
                        tracing::warn!(container = %id, error = %e, "removing an abandoned container");
                    }
                });
            }
            Err(_) => tracing::warn!(
                container = %id,
                "no tokio runtime to remove an abandoned container; remove it with `docker rm -f`"
            ),
        }
    }
}
