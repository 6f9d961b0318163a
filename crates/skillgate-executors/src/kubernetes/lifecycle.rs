//! A run's pod from creation to deletion: waiting until its skill runs (or the cluster
//! says why it cannot), reading how it ended, and deleting it and its Secret on every
//! path.
use super::pod::SKILL_CONTAINER;
use super::{API_CALL_TIMEOUT, call, cluster_error};
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, WatchEvent, WatchParams};
use skillgate_core::ExecError;
use std::time::Duration;

/// How far the `skill` container has come.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Start {
    Running,
    Pending(String),
    Failed(String),
}

/// The reasons a container waits that no waiting cures.
const FATAL_WAITING: &[&str] = &[
    "CreateContainerError",
    "CreateContainerConfigError",
    "ErrImageNeverPull",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "RunContainerError",
    "CrashLoopBackOff",
];

pub(super) fn container_status<'a>(
    pod: &'a Pod,
    container: &str,
) -> Option<&'a k8s_openapi::api::core::v1::ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == container)
}

pub(super) fn start_state(pod: &Pod) -> Start {
    let status = pod.status.clone().unwrap_or_default();
    if let Some(phase @ ("Failed" | "Succeeded")) = status.phase.as_deref() {
        let why = status
            .message
            .clone()
            .or(status.reason.clone())
            .unwrap_or_default();
        return Start::Failed(format!("ended ({phase}) before it ran: {why}"));
    }
    let unschedulable = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False");
    if let Some(c) = unschedulable {
        return Start::Pending(format!(
            "not scheduled: {} {}",
            c.reason.clone().unwrap_or_default(),
            c.message.clone().unwrap_or_default()
        ));
    }
    match container_status(pod, SKILL_CONTAINER).and_then(|c| c.state.clone()) {
        Some(state) if state.running.is_some() => Start::Running,
        Some(state) if state.terminated.is_some() => {
            let t = state.terminated.unwrap_or_default();
            Start::Failed(format!(
                "the skill's container ended before it was attached: {} {}",
                t.reason.unwrap_or_default(),
                t.message.unwrap_or_default()
            ))
        }
        Some(state) => {
            let w = state.waiting.unwrap_or_default();
            let reason = w.reason.unwrap_or_default();
            let why = format!("{reason}: {}", w.message.unwrap_or_default());
            if FATAL_WAITING.contains(&reason.as_str()) {
                Start::Failed(why)
            } else {
                Start::Pending(why)
            }
        }
        None => Start::Pending(status.phase.unwrap_or_else(|| "Pending".into())),
    }
}

/// Deletion with no grace period (the pod is the unit of killing).
pub(super) fn now_delete() -> DeleteParams {
    DeleteParams {
        grace_period_seconds: Some(0),
        propagation_policy: Some(kube::api::PropagationPolicy::Background),
        ..Default::default()
    }
}

pub(super) fn owner_of(pod: &Pod) -> Result<OwnerReference, ExecError> {
    Ok(OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod
            .metadata
            .uid
            .clone()
            .ok_or_else(|| cluster_error("creating the pod", "the answer has no uid"))?,
        block_owner_deletion: None,
        controller: None,
    })
}

/// Watches pod `name` (no polling: the API server sends each change) until `decide`
/// says how it came out, for at most `limit`; `Err` with `on_timeout`'s words after that.
/// A watch the server ends is opened again where it stopped.
async fn watch_until<T>(
    pods: &Api<Pod>,
    name: &str,
    limit: Duration,
    mut decide: impl FnMut(&Pod) -> Option<Result<T, ExecError>>,
    on_timeout: impl FnOnce() -> ExecError,
) -> Result<T, ExecError> {
    let watch = async {
        let mut version = "0".to_string();
        loop {
            let wp = WatchParams::default()
                .fields(&format!("metadata.name={name}"))
                .timeout(290);
            let mut events = call("watching the pod", pods.watch(&wp, &version))
                .await?
                .boxed();
            while let Some(event) = events.next().await {
                match event.map_err(|e| cluster_error("watching the pod", e))? {
                    WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                        if let Some(v) = &pod.metadata.resource_version {
                            version.clone_from(v);
                        }
                        if let Some(done) = decide(&pod) {
                            return done;
                        }
                    }
                    WatchEvent::Deleted(_) => {
                        return Err(cluster_error(
                            &format!("pod {name}"),
                            "deleted while the run waited for it",
                        ));
                    }
                    WatchEvent::Bookmark(b) => version = b.metadata.resource_version,
                    // An expired version: start again from the current state.
                    WatchEvent::Error(e) if e.code == 410 => version = "0".into(),
                    WatchEvent::Error(e) => return Err(cluster_error("watching the pod", e)),
                }
            }
        }
    };
    match tokio::time::timeout(limit, watch).await {
        Ok(done) => done,
        Err(_) => Err(on_timeout()),
    }
}

/// Waits until the `skill` container runs; the cluster's reason when it cannot.
pub(super) async fn wait_running(
    pods: &Api<Pod>,
    name: &str,
    limit: Duration,
) -> Result<(), ExecError> {
    let last = std::sync::Mutex::new(String::from("not scheduled yet"));
    watch_until(
        pods,
        name,
        limit,
        |pod| match start_state(pod) {
            Start::Running => Some(Ok(())),
            Start::Failed(why) => Some(Err(ExecError::Other(format!(
                "kubernetes: pod {name}: {why}"
            )))),
            Start::Pending(why) => {
                *last.lock().unwrap_or_else(|e| e.into_inner()) = why;
                None
            }
        },
        || {
            ExecError::Other(format!(
                "kubernetes: pod {name} did not start within {}s: {}",
                limit.as_secs(),
                last.lock().unwrap_or_else(|e| e.into_inner())
            ))
        },
    )
    .await
}

/// Waits until the cluster reports how the `skill` container ended.
pub(super) async fn wait_terminated(
    pods: &Api<Pod>,
    name: &str,
) -> Result<(i32, Option<String>), ExecError> {
    watch_until(
        pods,
        name,
        API_CALL_TIMEOUT,
        |pod| {
            container_status(pod, SKILL_CONTAINER)
                .and_then(|c| c.state.as_ref())
                .and_then(|s| s.terminated.as_ref())
                .map(|t| Ok((t.exit_code, t.reason.clone())))
        },
        || {
            cluster_error(
                "reading how the skill ended",
                "its stream closed and the container is still running",
            )
        },
    )
    .await
}

/// Deletes a run's pod and Secret: now ([`RunGuard::delete_now`]), or from a spawned
/// task when the run's future is dropped.
pub(super) struct RunGuard {
    pub(super) pods: Api<Pod>,
    pub(super) secrets: Api<Secret>,
    pub(super) name: String,
    pub(super) armed: bool,
}

impl RunGuard {
    pub(super) async fn delete_now(mut self) -> Result<(), ExecError> {
        self.armed = false;
        delete_run(&self.pods, &self.secrets, &self.name).await
    }
}

async fn delete_run(pods: &Api<Pod>, secrets: &Api<Secret>, name: &str) -> Result<(), ExecError> {
    let gone = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 404);
    for result in [
        tokio::time::timeout(API_CALL_TIMEOUT, pods.delete(name, &now_delete()))
            .await
            .map(|r| r.map(|_| ())),
        tokio::time::timeout(API_CALL_TIMEOUT, secrets.delete(name, &now_delete()))
            .await
            .map(|r| r.map(|_| ())),
    ] {
        match result {
            Err(_) => return Err(cluster_error(&format!("deleting {name}"), "timed out")),
            Ok(Err(e)) if !gone(&e) => return Err(cluster_error(&format!("deleting {name}"), e)),
            Ok(_) => {}
        }
    }
    Ok(())
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (pods, secrets, name) = (self.pods.clone(), self.secrets.clone(), self.name.clone());
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Err(e) = delete_run(&pods, &secrets, &name).await {
                    tracing::warn!("kubernetes: {name} left behind: {e}");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateWaiting, ContainerStatus, PodStatus,
    };

    fn waiting(reason: &str) -> Pod {
        Pod {
            status: Some(PodStatus {
                phase: Some("Pending".into()),
                container_statuses: Some(vec![ContainerStatus {
                    name: SKILL_CONTAINER.into(),
                    state: Some(ContainerState {
                        waiting: Some(ContainerStateWaiting {
                            reason: Some(reason.into()),
                            message: Some("cannot load seccomp profile".into()),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_container_the_runtime_refuses_fails_the_run_and_creating_waits() {
        assert!(
            matches!(start_state(&waiting("CreateContainerError")), Start::Failed(w) if w.contains("seccomp"))
        );
        assert!(matches!(
            start_state(&waiting("ContainerCreating")),
            Start::Pending(_)
        ));
        assert!(matches!(
            start_state(&waiting("ErrImageNeverPull")),
            Start::Failed(_)
        ));
    }
}
