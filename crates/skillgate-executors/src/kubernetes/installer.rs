//! The seccomp profile installer for clusters with more than one node: a ConfigMap holding
//! every profile a config can give a run (named as the executor names them, by content)
//! and a DaemonSet that copies them into each node's profile root, then holds (so its
//! readiness says the node has them). `skillgate emit k8s-profile-installer` writes both;
//! the executor, told `profiles_installed` and `profile_configmap`, checks a run's profile
//! is in the ConfigMap before it creates the pod.
use super::profile::{NodeProfile, PROFILE_SUBDIR};
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, HostPathVolumeSource, PodSpec, PodTemplateSpec,
    SecurityContext, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Where the installer goes and what it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallerOptions {
    /// The namespace of the ConfigMap and the DaemonSet (default `kube-system`).
    pub namespace: String,
    /// The name of both (default `skillgate-seccomp-profiles`).
    pub name: String,
    /// The kubelet's seccomp profile root on the nodes (default
    /// `/var/lib/kubelet/seccomp`).
    pub node_dir: String,
    /// An image with `sh`, `mkdir` and `cp` (default `busybox:1.36`).
    pub copy_image: String,
    /// The image that holds the pod once the profiles are copied (default
    /// `registry.k8s.io/pause:3.9`).
    pub hold_image: String,
}

impl Default for InstallerOptions {
    fn default() -> Self {
        InstallerOptions {
            namespace: "kube-system".into(),
            name: "skillgate-seccomp-profiles".into(),
            node_dir: "/var/lib/kubelet/seccomp".into(),
            copy_image: "busybox:1.36".into(),
            hold_image: "registry.k8s.io/pause:3.9".into(),
        }
    }
}

/// The ConfigMap key of a profile: its file name under `skillgate/`.
pub fn configmap_key(profile: &NodeProfile) -> String {
    profile
        .localhost_name
        .trim_start_matches(&format!("{PROFILE_SUBDIR}/"))
        .to_string()
}

/// The ConfigMap and the DaemonSet installing `profiles` on every node.
pub fn installer(profiles: &[NodeProfile], o: &InstallerOptions) -> (ConfigMap, DaemonSet) {
    let data: BTreeMap<String, String> = profiles
        .iter()
        .map(|p| (configmap_key(p), p.json.clone()))
        .collect();
    let mut digest = Sha256::new();
    for (k, v) in &data {
        digest.update(k.as_bytes());
        digest.update([0]);
        digest.update(v.as_bytes());
        digest.update([0]);
    }
    let digest: String = digest.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let labels = BTreeMap::from([("app.kubernetes.io/name".to_string(), o.name.clone())]);
    let meta = ObjectMeta {
        name: Some(o.name.clone()),
        namespace: Some(o.namespace.clone()),
        labels: Some(labels.clone()),
        ..Default::default()
    };
    let config_map = ConfigMap {
        metadata: meta.clone(),
        data: Some(data),
        ..Default::default()
    };
    let locked = SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        capabilities: Some(k8s_openapi::api::core::v1::Capabilities {
            drop: Some(vec!["ALL".into()]),
            add: None,
        }),
        ..Default::default()
    };
    let copy = Container {
        name: "install".into(),
        image: Some(o.copy_image.clone()),
        command: Some(vec![
            "sh".into(),
            "-c".into(),
            format!(
                "mkdir -p /host/{PROFILE_SUBDIR} && for f in /profiles/*.json; do \
                 cp \"$f\" /host/{PROFILE_SUBDIR}/.tmp && mv /host/{PROFILE_SUBDIR}/.tmp \
                 \"/host/{PROFILE_SUBDIR}/$(basename \"$f\")\"; done"
            ),
        ]),
        // The node's profile root belongs to root.
        security_context: Some(SecurityContext {
            run_as_user: Some(0),
            ..locked.clone()
        }),
        volume_mounts: Some(vec![
            VolumeMount {
                name: "profiles".into(),
                mount_path: "/profiles".into(),
                read_only: Some(true),
                ..Default::default()
            },
            VolumeMount {
                name: "node".into(),
                mount_path: "/host".into(),
                ..Default::default()
            },
        ]),
        ..Default::default()
    };
    let hold = Container {
        name: "hold".into(),
        image: Some(o.hold_image.clone()),
        security_context: Some(SecurityContext {
            run_as_user: Some(65534),
            run_as_non_root: Some(true),
            ..locked
        }),
        ..Default::default()
    };
    let daemon_set = DaemonSet {
        metadata: meta,
        spec: DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    // A change of profiles rolls the pods.
                    annotations: Some(BTreeMap::from([(
                        "skillgate.io/profiles".to_string(),
                        digest,
                    )])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    init_containers: Some(vec![copy]),
                    containers: vec![hold],
                    automount_service_account_token: Some(false),
                    tolerations: Some(vec![Toleration {
                        operator: Some("Exists".into()),
                        ..Default::default()
                    }]),
                    volumes: Some(vec![
                        Volume {
                            name: "profiles".into(),
                            config_map: Some(ConfigMapVolumeSource {
                                name: o.name.clone(),
                                ..Default::default()
                            }),
                            ..Default::default()
                        },
                        Volume {
                            name: "node".into(),
                            host_path: Some(HostPathVolumeSource {
                                path: o.node_dir.clone(),
                                type_: Some("DirectoryOrCreate".into()),
                            }),
                            ..Default::default()
                        },
                    ]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    };
    (config_map, daemon_set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubernetes::profile::node_profile;
    use skillgate_core::{SeccompAction, SeccompProfile};

    #[test]
    fn the_configmap_holds_each_profile_under_the_name_pods_use() {
        let p = node_profile(&SeccompProfile {
            name: "p".into(),
            default_action: SeccompAction::Errno(1),
            syscalls: vec![],
        })
        .unwrap();
        let (cm, ds) = installer(std::slice::from_ref(&p), &InstallerOptions::default());
        let key = configmap_key(&p);
        assert_eq!(format!("skillgate/{key}"), p.localhost_name);
        assert_eq!(cm.data.unwrap()[&key], p.json);
        let ds = serde_json::to_value(ds).unwrap();
        let spec = &ds["spec"]["template"]["spec"];
        assert_eq!(
            spec["volumes"][1]["hostPath"]["path"],
            "/var/lib/kubelet/seccomp"
        );
        assert!(
            spec["initContainers"][0]["command"][2]
                .as_str()
                .unwrap()
                .contains("/host/skillgate/")
        );
        assert_eq!(ds["kind"], "DaemonSet");
    }
}
