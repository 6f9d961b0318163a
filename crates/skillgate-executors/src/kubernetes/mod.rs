//! The Kubernetes executor: one hardened pod per run (`[executor] kind = "kubernetes"`).
//!
//! A run:
//! 1. waits for a slot (at most [`KubernetesSettings::max_concurrent`] pods at once; the
//!    rest queue);
//! 2. decides what the cluster must enforce, and refuses (fails closed) what it cannot: a
//!    runtime tier with no RuntimeClass mapped, a network restriction on a cluster the
//!    operator has not said enforces egress, a seccomp profile with no way onto the node,
//!    a process limit stricter than the node's `podPidsLimit`;
//! 3. makes sure the tenant's NetworkPolicy (default-deny egress) is in place, and for a
//!    run with an allow-list adds the run's own (owned by its pod);
//! 4. creates a Secret with the skill's files and the pod ([`pod`]), then gives the Secret
//!    an owner reference to the pod, so the cluster's garbage collector removes it with
//!    the pod whatever happens to this process;
//! 5. waits until the `skill` container runs; an image that cannot be had, a seccomp
//!    profile the node lacks (the runtime refuses to create the container; Kubernetes
//!    never falls back to `Unconfined`) or a pod the scheduler cannot place within
//!    [`KubernetesSettings::schedule_timeout`] ends the run as an error with the
//!    cluster's reason;
//! 6. attaches to the container's stdout and stderr (kept apart), then, in a second
//!    attach, writes the go-ahead byte and the input to its stdin and closes it (the
//!    container has `stdinOnce`: closing that attach closes the skill's stdin). The
//!    bootstrap waits for the go-ahead, so no output is written before the executor
//!    listens;
//! 7. reads both streams until the skill exits, or deletes the pod at the wall-clock
//!    deadline (the pod's `activeDeadlineSeconds` bounds it on the cluster's side too);
//! 8. reads the exit code from the container's status (`OOMKilled` is
//!    `resource_exhausted`), copies `/out` out of the `keeper` container as a tar stream
//!    (collected under the same caps and checks as every container executor), and
//!    deletes the pod and the Secret, on every path: a guard deletes them when the run's
//!    future is dropped, and pods of crashed runs are swept (their
//!    `activeDeadlineSeconds` has ended them) before later runs.
//!
//! Input goes in through attach, not a projected Secret: the skill reads a real stdin
//! (a pipe, as everywhere else), nothing of the input is stored in the cluster's
//! database, and the same attach gives stdout and stderr apart (the log endpoint merges
//! them).
//!
//! Limits: memory is the container's limit; CPU time, file size and open files are rlimits
//! the Python bootstrap lowers before it `exec`s the interpreter (Node can do neither, so
//! a JavaScript run needs [`KubernetesSettings::node_rlimits`]); processes are
//! the kubelet's `podPidsLimit` ([`KubernetesSettings::node_pids_limit`]), a node setting;
//! `/work`, `/tmp` and `/out` are memory-backed `emptyDir`s with size limits.
pub mod installer;
mod lifecycle;
pub mod objects;
pub mod pod;
pub mod profile;
mod streams;

use crate::capture::Capture;
use crate::run_dir::{container_env, program_in_container};
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::api::networking::v1::NetworkPolicy as K8sNetworkPolicy;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, AttachParams, ListParams, Patch, PatchParams, PostParams};
pub use objects::{label_value, runtime_image, tenant_network_policy};
use pod::{PodPlan, RUN_LABEL, SKILL_CONTAINER};
use skillgate_core::{
    BoxError, Capabilities, ExecError, ExecOutcome, ExecRequest, Finding, Language, LayerName,
    NetworkPolicy, NodeRlimits, RuntimeTier, Severity, Status, units,
};
use skillgate_sandbox::supervisor::ProcessResult;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// How long one API call may take before the run fails naming the cluster.
pub const API_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Pods older than their deadline by this much are swept (a crashed run left them).
const SWEEP_GRACE: Duration = Duration::from_secs(60);

/// Where the cluster is and what it enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubernetesSettings {
    /// The kubeconfig; `None`: the usual inference (`KUBECONFIG`, `~/.kube/config`, or
    /// the in-cluster service account).
    pub kubeconfig: Option<PathBuf>,
    /// The namespace of the runs' pods (it must exist).
    pub namespace: String,
    /// The image of skills that name no runtime (it must hold `/usr/bin/python3` and,
    /// for JavaScript, `/usr/bin/node`); a runtime's skills use
    /// `skillgate-runtime-NAME:latest` (`skillgate runtime export`).
    pub image: Option<String>,
    /// `Always`, `IfNotPresent` (the default) or `Never`.
    pub image_pull_policy: String,
    /// The node's seccomp profile root, when this process can write it (a one-node
    /// cluster, or a folder every node mounts): profiles are installed there before a
    /// run. Without it, a run with a profile needs [`Self::profiles_installed`].
    pub node_seccomp_dir: Option<PathBuf>,
    /// The operator states that the profile installer DaemonSet
    /// (`skillgate emit k8s-profile-installer`) runs on every node.
    pub profiles_installed: bool,
    /// The installer's ConfigMap (`namespace/name`): with it, a run's profile is looked
    /// up there before the pod is created, and a missing one refused.
    pub profile_configmap: Option<String>,
    /// The operator states that the cluster enforces NetworkPolicy egress rules (a policy
    /// engine), or gives pods no way out at all. Without it, every run (each restricts
    /// the network) is refused.
    pub egress_enforced: bool,
    /// RuntimeClass per tier above `container` (`micro_vm` → `gvisor`, `kata`).
    pub runtime_classes: BTreeMap<RuntimeTier, String>,
    /// The kubelet's `podPidsLimit`, as the operator configured it on every node.
    pub node_pids_limit: Option<u32>,
    /// The rlimits the node's runtime sets on every container (its base OCI spec), as
    /// the operator configured them: JavaScript runs need them, and one whose limits are
    /// stricter than these is refused.
    pub node_rlimits: Option<NodeRlimits>,
    /// Pods at once; the rest wait.
    pub max_concurrent: usize,
    /// How long a pod may wait to be scheduled and started.
    pub schedule_timeout: Duration,
}

impl KubernetesSettings {
    /// Settings for `namespace`, with the usual kubeconfig and nothing stated.
    pub fn new(namespace: impl Into<String>) -> Self {
        KubernetesSettings {
            kubeconfig: None,
            namespace: namespace.into(),
            image: None,
            image_pull_policy: "IfNotPresent".into(),
            node_seccomp_dir: None,
            profiles_installed: false,
            profile_configmap: None,
            egress_enforced: false,
            runtime_classes: BTreeMap::new(),
            node_pids_limit: None,
            node_rlimits: None,
            max_concurrent: 16,
            schedule_timeout: Duration::from_secs(60),
        }
    }
}

/// The Kubernetes executor (see the [module](self) documentation).
#[derive(Clone)]
pub struct KubernetesExecutor {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for KubernetesExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesExecutor")
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

struct Inner {
    settings: KubernetesSettings,
    client: tokio::sync::OnceCell<kube::Client>,
    slots: tokio::sync::Semaphore,
    /// The tenants whose NetworkPolicy this process has put in place.
    policies: tokio::sync::Mutex<std::collections::HashSet<String>>,
    last_sweep: std::sync::Mutex<Option<Instant>>,
}

fn cluster_error(what: &str, e: impl std::fmt::Display) -> ExecError {
    ExecError::Other(format!("kubernetes: {what}: {e}"))
}

/// One API call under [`API_CALL_TIMEOUT`].
async fn call<T, E: std::fmt::Display>(
    what: &str,
    fut: impl Future<Output = Result<T, E>>,
) -> Result<T, ExecError> {
    tokio::time::timeout(API_CALL_TIMEOUT, fut)
        .await
        .map_err(|_| cluster_error(what, "timed out"))?
        .map_err(|e| cluster_error(what, e))
}

impl KubernetesExecutor {
    /// An executor for the cluster of `settings`; the cluster is first asked at the first
    /// run (or [`KubernetesExecutor::connect`]).
    pub fn new(settings: KubernetesSettings) -> Result<KubernetesExecutor, ExecError> {
        if settings.max_concurrent == 0 {
            return Err(ExecError::Other(
                "kubernetes: max_concurrent must be at least 1".into(),
            ));
        }
        if !matches!(
            settings.image_pull_policy.as_str(),
            "Always" | "IfNotPresent" | "Never"
        ) {
            return Err(ExecError::Other(format!(
                "kubernetes: image_pull_policy `{}` is not Always, IfNotPresent or Never",
                settings.image_pull_policy
            )));
        }
        Ok(KubernetesExecutor {
            inner: Arc::new(Inner {
                slots: tokio::sync::Semaphore::new(settings.max_concurrent),
                settings,
                client: tokio::sync::OnceCell::new(),
                policies: Default::default(),
                last_sweep: Default::default(),
            }),
        })
    }

    /// Connects, and checks the namespace exists.
    pub async fn connect(settings: KubernetesSettings) -> Result<KubernetesExecutor, ExecError> {
        let exec = KubernetesExecutor::new(settings)?;
        let pods: Api<Pod> = exec.pods().await?;
        call(
            "listing pods (is the cluster up, the namespace there?)",
            pods.list(&ListParams::default().limit(1)),
        )
        .await?;
        Ok(exec)
    }

    async fn client(&self) -> Result<kube::Client, ExecError> {
        let s = &self.inner.settings;
        self.inner
            .client
            .get_or_try_init(|| async {
                let config = match &s.kubeconfig {
                    Some(path) => {
                        let kc = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                            cluster_error(&format!("reading the kubeconfig {}", path.display()), e)
                        })?;
                        kube::Config::from_custom_kubeconfig(kc, &Default::default())
                            .await
                            .map_err(|e| {
                                cluster_error(&format!("the kubeconfig {}", path.display()), e)
                            })?
                    }
                    None => kube::Config::infer()
                        .await
                        .map_err(|e| cluster_error("finding a kubeconfig", e))?,
                };
                kube::Client::try_from(config).map_err(|e| cluster_error("building a client", e))
            })
            .await
            .cloned()
    }

    async fn pods(&self) -> Result<Api<Pod>, ExecError> {
        Ok(Api::namespaced(
            self.client().await?,
            &self.inner.settings.namespace,
        ))
    }

    /// What this executor enforces, given what the operator stated about the cluster.
    pub fn capabilities(&self) -> Capabilities {
        let s = &self.inner.settings;
        let tier = s
            .runtime_classes
            .keys()
            .copied()
            .max()
            .unwrap_or(RuntimeTier::Container)
            .max(RuntimeTier::Container);
        Capabilities {
            executor: "kubernetes".into(),
            tier,
            wall_timeout: true,
            cpu_time: true,
            memory: true,
            pids_reported: false,
            pids: s.node_pids_limit.is_some(),
            file_size: true,
            open_files: true,
            output_caps: true,
            workdir_size: true,
            user: true,
            seccomp: s.node_seccomp_dir.is_some() || s.profiles_installed,
            seccomp_kill: s.node_seccomp_dir.is_some() || s.profiles_installed,
            network_none: s.egress_enforced,
            network_allow_list: s.egress_enforced,
            clean_env: true,
            workspace: false,
        }
    }

    /// The pods and Secrets that still exist for the request ids `ids` (the conformance
    /// kit's cleanup probe).
    pub async fn leftovers(&self, ids: &[String]) -> Result<Vec<String>, ExecError> {
        let client = self.client().await?;
        let ns = &self.inner.settings.namespace;
        let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
        let secrets: Api<Secret> = Api::namespaced(client, ns);
        let mut left = Vec::new();
        for id in ids {
            let lp = ListParams::default().labels(&format!("{RUN_LABEL}={}", label_value(id)));
            for p in call("listing pods", pods.list(&lp)).await? {
                left.push(format!("pod/{}", p.metadata.name.unwrap_or_default()));
            }
            for s in call("listing secrets", secrets.list(&lp)).await? {
                left.push(format!("secret/{}", s.metadata.name.unwrap_or_default()));
            }
        }
        Ok(left)
    }

    /// Refuses what the cluster cannot enforce for `req`; `Ok` with the RuntimeClass.
    fn decide(&self, req: &ExecRequest) -> Result<Option<String>, ExecError> {
        let s = &self.inner.settings;
        let spec = &req.spec;
        let refuse = |why: String| Err(ExecError::HostUnsupported(format!("kubernetes: {why}")));
        let class = if spec.runtime <= RuntimeTier::Container {
            None
        } else {
            match s.runtime_classes.range(spec.runtime..).next() {
                Some((_, class)) => Some(class.clone()),
                None => {
                    return refuse(format!(
                        "the spec needs `{}` isolation and no RuntimeClass is mapped to it \
                         ([executor.runtime_classes])",
                        spec.runtime.as_str()
                    ));
                }
            }
        };
        if !s.egress_enforced {
            return refuse(
                "the run's network must be restricted, and the operator has not stated that \
                 the cluster enforces NetworkPolicy egress (set [executor] egress_enforced = \
                 true only where a policy engine, or a network with no way out, does)"
                    .into(),
            );
        }
        match s.node_pids_limit {
            None => {
                return refuse(
                    "the process limit is the kubelet's podPidsLimit: state it as \
                     [executor] node_pids_limit"
                        .into(),
                );
            }
            // The pod's pause and keeper processes count in it too.
            Some(node) if node.saturating_sub(2) > spec.limits.pids => {
                return refuse(format!(
                    "the spec allows {} processes, and the node's podPidsLimit of {node} \
                     lets a skill have {}: a pod cannot be held to fewer",
                    spec.limits.pids,
                    node.saturating_sub(2)
                ));
            }
            Some(_) => {}
        }
        if req.skill.language == Language::JavaScript {
            match &s.node_rlimits {
                None => {
                    return refuse(
                        "Node cannot lower its own rlimits (CPU time, file size, open \
                         files), so a JavaScript run needs the node's runtime to set them \
                         ([executor.node_rlimits])"
                            .into(),
                    );
                }
                Some(node) => {
                    if let Some(why) = node.looser_than(&spec.limits) {
                        return refuse(why);
                    }
                }
            }
        }
        if req.skill.language == Language::Shell {
            return refuse("shell steps do not run on this executor".into());
        }
        if spec.workspace.is_some() {
            return refuse("a session's workspace cannot be mounted into a pod".into());
        }
        if spec.seccomp.is_some() && s.node_seccomp_dir.is_none() && !s.profiles_installed {
            return refuse(
                "the run has a seccomp profile, and there is no way to put it on the node \
                 (set node_seccomp_dir, or run the profile installer and set \
                 profiles_installed)"
                    .into(),
            );
        }
        Ok(class)
    }

    /// The image and the interpreter (with its arguments) of a run.
    fn image_and_interpreter(&self, req: &ExecRequest) -> Result<(String, Vec<String>), ExecError> {
        let language = req.skill.language;
        let args = skillgate_sandbox::Interpreter::isolation_args_of(language)
            .iter()
            .map(|a| a.to_string());
        let (image, program) = match (&req.spec.interpreter, &req.skill.runtime) {
            (Some(r), _) => (runtime_image(&r.runtime), program_in_container(r)),
            (None, Some(name)) => {
                return Err(ExecError::Other(format!(
                    "the skill asks for runtime `{name}` but no runtime was resolved for this \
                     run (the isolation layer resolves it: is it disabled?)"
                )));
            }
            (None, None) => {
                let image = self.inner.settings.image.clone().ok_or_else(|| {
                    ExecError::Other(
                        "kubernetes: the skill names no runtime and [executor] sets no `image`"
                            .into(),
                    )
                })?;
                let program = match language {
                    Language::JavaScript => "/usr/bin/node",
                    _ => "/usr/bin/python3",
                };
                (image, program.to_string())
            }
        };
        Ok((image, std::iter::once(program).chain(args).collect()))
    }

    /// Puts the tenant's default-deny egress policy in place (once per process, then
    /// kept as it is).
    async fn tenant_policy(&self, client: &kube::Client, tenant: &str) -> Result<(), ExecError> {
        let mut done = self.inner.policies.lock().await;
        if done.contains(tenant) {
            return Ok(());
        }
        let ns = &self.inner.settings.namespace;
        let np = objects::tenant_network_policy(tenant, ns)?;
        let api: Api<K8sNetworkPolicy> = Api::namespaced(client.clone(), ns);
        let name = np.metadata.name.clone().unwrap_or_default();
        call(
            "applying the tenant's NetworkPolicy",
            api.patch(
                &name,
                &PatchParams::apply("skillgate").force(),
                &Patch::Apply(&np),
            ),
        )
        .await?;
        done.insert(tenant.to_string());
        Ok(())
    }

    /// Deletes pods a crashed run left (at most once a minute).
    async fn sweep(&self, pods: &Api<Pod>) {
        {
            let mut last = self
                .inner
                .last_sweep
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < SWEEP_GRACE) {
                return;
            }
            *last = Some(Instant::now());
        }
        let lp = ListParams::default().labels("app.kubernetes.io/managed-by=skillgate");
        let Ok(Ok(list)) = tokio::time::timeout(API_CALL_TIMEOUT, pods.list(&lp)).await else {
            return;
        };
        let now = k8s_openapi::jiff::Timestamp::now();
        for p in list {
            let ended = p
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|ph| ph == "Succeeded" || ph == "Failed");
            let deadline = p
                .spec
                .as_ref()
                .and_then(|s| s.active_deadline_seconds)
                .unwrap_or(0);
            let overdue = p.metadata.creation_timestamp.as_ref().is_some_and(|t| {
                now.as_second() - t.0.as_second() > deadline + SWEEP_GRACE.as_secs() as i64
            });
            if ended && overdue {
                if let Some(name) = p.metadata.name {
                    let _ = pods.delete(&name, &lifecycle::now_delete()).await;
                }
            }
        }
    }

    async fn run(&self, req: ExecRequest) -> Result<ExecOutcome, ExecError> {
        let _slot = self
            .inner
            .slots
            .acquire()
            .await
            .map_err(|_| ExecError::Other("kubernetes: the executor is closed".into()))?;
        let mut marks = crate::timing::Marks::start();
        let runtime_class = self.decide(&req)?;
        let s = &self.inner.settings;
        let client = self.client().await?;
        let pods: Api<Pod> = Api::namespaced(client.clone(), &s.namespace);
        self.sweep(&pods).await;
        let tenant = label_value(&req.caller.tenant);
        self.tenant_policy(&client, &req.caller.tenant).await?;
        let seccomp = match &req.spec.seccomp {
            None => None,
            Some(p) => {
                let profile = profile::node_profile(p)?;
                if let Some(root) = &s.node_seccomp_dir {
                    profile::install(root, &profile)?;
                } else if let Some(cm) = &s.profile_configmap {
                    self.check_installed(&client, cm, &profile).await?;
                }
                Some(profile.localhost_name)
            }
        };
        let (image, interpreter) = self.image_and_interpreter(&req)?;
        let name = format!(
            "skillgate-{}",
            label_value(&req.id.to_string()).to_ascii_lowercase()
        );
        let (files, data) = objects::skill_files(&req)?;
        let limits = req.spec.limits;
        let plan = PodPlan {
            name: name.clone(),
            run_id: label_value(&req.id.to_string()),
            tenant,
            image: image.clone(),
            image_pull_policy: s.image_pull_policy.clone(),
            language: req.skill.language,
            interpreter: interpreter.clone(),
            entry: files
                .iter()
                .find(|(k, _)| k == "entry")
                .map(|(_, p)| p.clone())
                .unwrap_or_default(),
            files,
            env: container_env(&req.spec)
                .into_iter()
                .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.into(), v.into())))
                .collect(),
            limits,
            uid: req.spec.uid,
            gid: req.spec.gid,
            seccomp,
            runtime_class,
            active_deadline_secs: i64::try_from(
                (limits.wall_timeout + s.schedule_timeout + SWEEP_GRACE).as_secs(),
            )
            .unwrap_or(i64::MAX),
        };
        let secrets: Api<Secret> = Api::namespaced(client.clone(), &s.namespace);
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(BTreeMap::from([
                    (RUN_LABEL.to_string(), plan.run_id.clone()),
                    (
                        "app.kubernetes.io/managed-by".to_string(),
                        "skillgate".to_string(),
                    ),
                ])),
                ..Default::default()
            },
            data: Some(data),
            immutable: Some(true),
            ..Default::default()
        };
        let guard = lifecycle::RunGuard {
            pods: pods.clone(),
            secrets: secrets.clone(),
            name: name.clone(),
            armed: true,
        };
        call(
            "creating the skill's Secret",
            secrets.create(&PostParams::default(), &secret),
        )
        .await?;
        let created = call(
            "creating the pod",
            pods.create(&PostParams::default(), &pod::pod(&plan)),
        )
        .await?;
        marks.at("create");
        let result = async {
            self.own_secret(&secrets, &name, &created).await?;
            if let NetworkPolicy::AllowList(_) = &req.spec.network {
                self.run_policy(&client, &req, &created).await?;
            }
            self.run_pod(&req, &pods, &name, &plan, &mut marks).await
        }
        .await;
        let cleaned = guard.delete_now().await;
        marks.at("delete");
        // The phases of one run, logged at debug level under
        // `skillgate_executors::kubernetes::timing` (`RUST_LOG=skillgate_executors::kubernetes::timing=debug`):
        // create (decide, policy, Secret, pod), start (until the skill runs), skill (input to the
        // end of its streams), end (the cluster's report of how it ended, with `/out` copied out
        // meanwhile), delete, each in milliseconds.
        tracing::debug!(target: "skillgate_executors::kubernetes::timing", pod = %name, phases_ms = %marks.summary());
        let outcome = result?;
        cleaned?;
        Ok(outcome)
    }

    /// Checks that the installer's ConfigMap `cm` (`namespace/name`) holds `profile`.
    async fn check_installed(
        &self,
        client: &kube::Client,
        cm: &str,
        profile: &profile::NodeProfile,
    ) -> Result<(), ExecError> {
        let (ns, name) = cm.split_once('/').ok_or_else(|| {
            ExecError::Other(format!(
                "kubernetes: profile_configmap `{cm}` is not namespace/name"
            ))
        })?;
        let api: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(client.clone(), ns);
        let held = call("reading the profile installer's ConfigMap", api.get(name)).await?;
        let key = installer::configmap_key(profile);
        match held.data.as_ref().and_then(|d| d.get(&key)) {
            Some(json) if *json == profile.json => Ok(()),
            _ => Err(ExecError::HostUnsupported(format!(
                "kubernetes: seccomp profile {} is not in the installer's ConfigMap {cm}, so \
                 the nodes may not have it: `skillgate emit k8s-profile-installer --config F \
                 | kubectl apply -f -`, then wait for the DaemonSet",
                profile.localhost_name
            ))),
        }
    }

    /// Gives the Secret an owner reference to its pod (the garbage collector's fallback).
    async fn own_secret(
        &self,
        secrets: &Api<Secret>,
        name: &str,
        pod: &Pod,
    ) -> Result<(), ExecError> {
        let owner = lifecycle::owner_of(pod)?;
        let patch = serde_json::json!({"metadata": {"ownerReferences": [owner]}});
        call(
            "giving the Secret its owner",
            secrets.patch(name, &PatchParams::default(), &Patch::Merge(&patch)),
        )
        .await?;
        Ok(())
    }

    /// The run's own egress policy for an allow-list (owned by its pod).
    async fn run_policy(
        &self,
        client: &kube::Client,
        req: &ExecRequest,
        pod: &Pod,
    ) -> Result<(), ExecError> {
        let ns = &self.inner.settings.namespace;
        let run = label_value(&req.id.to_string());
        let options = skillgate_confine::network::K8sOptions {
            name: Some(format!("skillgate-run-{}", run.to_ascii_lowercase())),
            namespace: Some(ns.clone()),
            pod_labels: BTreeMap::from([(RUN_LABEL.to_string(), run)]),
        };
        let mut np = skillgate_confine::network::k8s_network_policy(&req.spec.network, &options)
            .map_err(|e| ExecError::HostUnsupported(format!("kubernetes: {e}")))?;
        np.metadata.owner_references = Some(vec![lifecycle::owner_of(pod)?]);
        let api: Api<K8sNetworkPolicy> = Api::namespaced(client.clone(), ns);
        call(
            "creating the run's NetworkPolicy",
            api.create(&PostParams::default(), &np),
        )
        .await?;
        Ok(())
    }

    async fn run_pod(
        &self,
        req: &ExecRequest,
        pods: &Api<Pod>,
        name: &str,
        plan: &PodPlan,
        marks: &mut crate::timing::Marks,
    ) -> Result<ExecOutcome, ExecError> {
        let limits = req.spec.limits;
        lifecycle::wait_running(pods, name, self.inner.settings.schedule_timeout).await?;
        marks.at("start");
        // One attach for all three streams: stdout and stderr come back apart, and the
        // input goes in framed (`LEN\n` then the bytes), since this protocol cannot close
        // stdin alone; the bootstrap hands the skill a stdin that ends after the input.
        let mut attached = call(
            "attaching to the skill",
            pods.attach(
                name,
                &AttachParams {
                    container: Some(SKILL_CONTAINER.into()),
                    stdin: true,
                    stdout: true,
                    stderr: true,
                    max_stdin_buf_size: Some(64 << 10),
                    max_stdout_buf_size: Some(64 << 10),
                    max_stderr_buf_size: Some(64 << 10),
                    ..Default::default()
                },
            ),
        )
        .await?;
        let body = serde_json::to_vec(&req.input)
            .map_err(|e| ExecError::Other(format!("serializing the input: {e}")))?;
        let mut input = format!("{}\n", body.len()).into_bytes();
        input.extend_from_slice(&body);
        let mut stdin = attached
            .stdin()
            .ok_or_else(|| cluster_error("attaching to stdin", "no stdin stream"))?;
        let stdout = attached.stdout();
        let stderr = attached.stderr();
        let started = Instant::now();
        let mut out = Capture::new(limits.stdout_cap);
        let mut err = Capture::new(limits.stderr_cap);
        let run = async {
            let feed = async {
                // A skill that exits before it has its input: not an error.
                let _ = stdin.write_all(&input).await;
                let _ = stdin.flush().await;
            };
            tokio::join!(
                feed,
                streams::drain(stdout, &mut out),
                streams::drain(stderr, &mut err)
            );
            drop(stdin);
            let _ = attached.join().await;
        };
        let timed_out = tokio::time::timeout(limits.wall_timeout, run)
            .await
            .is_err();
        if timed_out {
            // The pod is the unit of killing: deleting it with no grace kills the skill.
            let _ = call(
                "deleting the pod at the deadline",
                pods.delete(name, &lifecycle::now_delete()),
            )
            .await;
            return Ok(self.outcome(
                ProcessResult {
                    exit_code: None,
                    signal: Some(9),
                    stdout: out.kept,
                    stderr: err.kept,
                    stdout_truncated: out.truncated,
                    stderr_truncated: err.truncated,
                    timed_out: true,
                    usage: skillgate_core::ResourceUsage {
                        wall: started.elapsed(),
                        ..Default::default()
                    },
                },
                false,
                &limits,
            ));
        }
        let wall = started.elapsed();
        marks.at("skill");
        // The kubelet reports the end at its next status pass (up to a second): `/out` is
        // copied out of the keeper meanwhile (the skill's processes are gone with its
        // container's first process, so `/out` is final).
        let (ended, collected) = tokio::join!(
            lifecycle::wait_terminated(pods, name),
            streams::artifacts(pods, name, plan)
        );
        marks.at("end");
        let (code, reason) = ended?;
        let oom = reason.as_deref() == Some("OOMKilled");
        let (exit_code, signal) = crate::capture::exit_or_signal(code);
        let mut outcome = self.outcome(
            ProcessResult {
                exit_code,
                signal,
                stdout: out.kept,
                stderr: err.kept,
                stdout_truncated: out.truncated,
                stderr_truncated: err.truncated,
                timed_out: false,
                usage: skillgate_core::ResourceUsage {
                    wall,
                    ..Default::default()
                },
            },
            oom,
            &limits,
        );
        let (artifacts, mut findings) = collected?;
        outcome.artifacts = artifacts;
        outcome.findings.append(&mut findings);
        Ok(outcome)
    }

    fn outcome(
        &self,
        res: ProcessResult,
        oom: bool,
        limits: &skillgate_core::Limits,
    ) -> ExecOutcome {
        let mut outcome = skillgate_sandbox::outcome_from(res, limits);
        if oom {
            outcome.status = Status::ResourceExhausted;
            outcome.findings = vec![Finding::new(
                LayerName::Executor,
                "limit.memory",
                Severity::High,
                format!(
                    "killed at the {} memory limit",
                    units::format_size(limits.memory_bytes)
                ),
            )];
        }
        outcome
    }
}

impl tower::Service<ExecRequest> for KubernetesExecutor {
    type Response = ExecOutcome;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ExecOutcome, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: ExecRequest) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let started = Instant::now();
            let mut outcome = this.run(req).await.map_err(|e| Box::new(e) as BoxError)?;
            let overhead = started.elapsed().saturating_sub(outcome.usage.wall);
            outcome.record_layer(LayerName::Executor, overhead, Vec::new());
            Ok(outcome)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(language: Language) -> ExecRequest {
        let skill = skillgate_core::Skill::builder("t", language, b"print(1)".to_vec()).build();
        ExecRequest::new(
            skillgate_core::Caller::new("a", "acme"),
            skill,
            serde_json::json!({}),
        )
    }

    fn stated() -> KubernetesSettings {
        let mut s = KubernetesSettings::new("skillgate");
        s.egress_enforced = true;
        s.node_pids_limit = Some(66);
        s.node_seccomp_dir = Some("/nonexistent".into());
        s
    }

    fn refusal(s: KubernetesSettings, req: &ExecRequest) -> String {
        match KubernetesExecutor::new(s).unwrap().decide(req) {
            Err(ExecError::HostUnsupported(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn what_the_cluster_cannot_enforce_is_refused() {
        let req = request(Language::Python);
        assert_eq!(
            KubernetesExecutor::new(stated())
                .unwrap()
                .decide(&req)
                .unwrap(),
            None
        );
        // Egress nobody enforces.
        let mut s = stated();
        s.egress_enforced = false;
        assert!(refusal(s, &req).contains("egress_enforced"));
        // A process limit stricter than the node's.
        let mut strict = request(Language::Python);
        strict.spec.limits.pids = 16;
        assert!(refusal(stated(), &strict).contains("podPidsLimit of 66"));
        let mut s = stated();
        s.node_pids_limit = None;
        assert!(refusal(s, &req).contains("node_pids_limit"));
        // A tier with no RuntimeClass; with one, its class.
        let mut vm = request(Language::Python);
        vm.spec.runtime = RuntimeTier::MicroVm;
        assert!(refusal(stated(), &vm).contains("RuntimeClass"));
        let mut s = stated();
        s.runtime_classes
            .insert(RuntimeTier::MicroVm, "gvisor".into());
        assert_eq!(
            KubernetesExecutor::new(s)
                .unwrap()
                .decide(&vm)
                .unwrap()
                .as_deref(),
            Some("gvisor")
        );
        // Node sets no rlimits of its own: JavaScript cannot lower them itself.
        assert!(refusal(stated(), &request(Language::JavaScript)).contains("node_rlimits"));
        // With the node's rlimits stated: as strict as the run's, it runs; looser, not.
        let mut s = stated();
        s.node_rlimits = Some(NodeRlimits {
            cpu_secs: 10,
            file_size: 16 << 20,
            open_files: 256,
        });
        let exec = KubernetesExecutor::new(s.clone()).unwrap();
        assert!(exec.decide(&request(Language::JavaScript)).is_ok());
        let mut strict = request(Language::JavaScript);
        strict.spec.limits.open_files = 64;
        assert!(refusal(s, &strict).contains("256 open files"));
        // A profile with no way onto the node.
        let mut s = stated();
        s.node_seccomp_dir = None;
        let mut sec = request(Language::Python);
        sec.spec.seccomp = Some(skillgate_core::SeccompProfile {
            name: "p".into(),
            default_action: skillgate_core::SeccompAction::Allow,
            syscalls: vec![],
        });
        assert!(refusal(s, &sec).contains("seccomp"));
    }
}
