//! The Kubernetes executor on a real one-node cluster (`scripts/services up k8s`: etcd,
//! the API server, scheduler, controller manager, containerd and the kubelet, built from
//! Debian's source of Kubernetes 1.20 the first time), stopped at the end. When the
//! cluster cannot start the test fails with the reason; it is never skipped.
//!
//! One cluster start serves every check, in order: the conformance kit (its declared
//! subset, cleanup included), a realistic skill with an artifact, the seccomp profile
//! enforced in a pod and a missing one refused, no way out of a pod (from its routing
//! tables), the node's process limit, a run's own NetworkPolicy for an allow-list, an
//! unschedulable pod ending as an error, one pod at a time under `max_concurrent = 1`, the
//! tenant's NetworkPolicy, the work directory's size, and the profile installer's objects.
#![cfg(all(feature = "kubernetes", feature = "conformance"))]
mod common;
use common::{Service, python_runtime, services, value_of};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::Api;
use skillgate_core::{
    Caller, ExecOutcome, ExecRequest, Language, SeccompAction, SeccompProfile, Skill, Status,
    SyscallRule,
};
use skillgate_executors::conformance::{Kit, Verdict};
use skillgate_executors::kubernetes::{
    KubernetesExecutor, KubernetesSettings, label_value, runtime_image,
};
use std::time::Duration;
use tower::ServiceExt;

fn settings(config: &str) -> KubernetesSettings {
    let mut s = KubernetesSettings::new(value_of(config, "namespace"));
    s.kubeconfig = Some(value_of(config, "kubeconfig").into());
    s.image_pull_policy = value_of(config, "image_pull_policy");
    s.node_seccomp_dir = Some(value_of(config, "node_seccomp_dir").into());
    s.egress_enforced = value_of(config, "egress_enforced") == "true";
    s.node_pids_limit = Some(value_of(config, "node_pids_limit").parse().unwrap());
    s
}

fn request(code: &str) -> ExecRequest {
    let (installed, _) = python_runtime();
    let skill = Skill::builder("k8s", Language::Python, code.as_bytes().to_vec())
        .runtime("python")
        .build();
    let mut req = ExecRequest::new(
        Caller::new("agent", "tenant-a"),
        skill,
        serde_json::json!({"n": 2}),
    );
    req.spec.interpreter = Some(installed.interpreter.clone());
    req.spec.limits.wall_timeout = Duration::from_secs(30);
    req
}

async fn run(exec: &KubernetesExecutor, req: ExecRequest) -> Result<ExecOutcome, String> {
    exec.clone().oneshot(req).await.map_err(|e| e.to_string())
}

fn deny(names: &[&str], action: SeccompAction) -> SeccompProfile {
    SeccompProfile {
        name: "deny".into(),
        default_action: SeccompAction::Allow,
        syscalls: vec![SyscallRule {
            names: names.iter().map(|n| n.to_string()).collect(),
            action,
            args: vec![],
        }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_on_a_real_cluster() {
    let config = services(&["up", "k8s"]);
    let _cluster = Service("k8s");
    let (installed, archive) = python_runtime();
    services(&[
        "load",
        "k8s",
        archive.to_str().unwrap(),
        &runtime_image("python"),
    ]);
    let settings = settings(&config);
    let exec = KubernetesExecutor::connect(settings.clone())
        .await
        .expect("connecting to the cluster");

    // The kit, on what a pod enforces by itself. Not claimed here: `pids` (the process
    // limit is the node's podPidsLimit, checked below) and `network_none` (a pod always
    // has an interface; "no way out" is checked below from its routes).
    let mut claims = exec.capabilities();
    claims.pids = false;
    claims.network_none = false;
    let mut kit = Kit::new(claims);
    kit.spec.interpreter = Some(installed.interpreter.clone());
    kit.runtime = Some("python".into());
    let probe = exec.clone();
    kit.leftovers = Some(Box::new(move |ids| {
        let probe = probe.clone();
        Box::pin(async move { probe.leftovers(&ids).await.map_err(|e| e.to_string()) })
    }));
    let report = kit.run(exec.clone()).await;
    println!("kubernetes:\n{report}");
    for check in &report.0 {
        match check.name {
            "pids" | "pids_reported" | "network_none" => {
                assert_eq!(check.verdict, Verdict::NotClaimed, "{report}")
            }
            _ => assert_eq!(check.verdict, Verdict::Pass, "{report}"),
        }
    }

    // A realistic skill: JSON in, JSON out, a file in the output directory.
    let o = run(
        &exec,
        request(
            "import json, os, sys\nd = json.load(sys.stdin)\n\
             open(os.environ['SKILLGATE_OUTPUT_DIR'] + '/r.txt', 'w').write('x' * d['n'])\n\
             print(json.dumps({'double': d['n'] * 2}))\n",
        ),
    )
    .await
    .unwrap();
    assert_eq!(o.status, Status::Ok, "{o:?}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        r#"{"double": 4}"#
    );
    assert_eq!(o.artifacts.len(), 1, "{o:?}");

    // Seccomp, enforced in the pod: a profile denying socket() with EPERM.
    let mut req = request(
        "import socket\ntry:\n    socket.socket()\n    print('allowed')\n\
         except OSError as e:\n    print(e.errno)\n",
    );
    req.spec.seccomp = Some(deny(&["socket"], SeccompAction::Errno(1)));
    let o = run(&exec, req).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "1", "{o:?}");

    // A profile missing on the node: the pod never runs (no fallback to Unconfined),
    // and the run is an error with the cluster's reason.
    let mut blind = settings.clone();
    blind.node_seccomp_dir = None;
    blind.profiles_installed = true;
    let blind = KubernetesExecutor::new(blind).unwrap();
    let mut req = request("print('ran')\n");
    req.spec.seccomp = Some(deny(&["socket", "bind"], SeccompAction::Errno(13)));
    let id = req.id.to_string();
    let err = run(&blind, req)
        .await
        .expect_err("a pod with a missing profile ran");
    assert!(
        err.contains("seccomp") || err.contains("CreateContainer"),
        "{err}"
    );
    assert!(exec.leftovers(&[id]).await.unwrap().is_empty());

    // No way out: inside the pod there is no default route, IPv4 or IPv6 (on any device
    // but loopback, where the kernel keeps its unreachable ones).
    let o = run(
        &exec,
        request(
            "import json\ndef lines(p):\n    try:\n        return open(p).read().splitlines()\n\
             \x20   except FileNotFoundError:\n        return []\n\
             r4 = [l.split()[1] for l in lines('/proc/net/route')[1:]]\n\
             r6 = [l.split()[0] + '/' + l.split()[1] for l in lines('/proc/net/ipv6_route')\n\
             \x20     if l.split()[-1] != 'lo']\n\
             print(json.dumps({'v4': r4, 'v6': r6}))\n",
        ),
    )
    .await
    .unwrap();
    let routes: serde_json::Value = serde_json::from_slice(&o.stdout).expect("routes");
    assert!(
        !routes["v4"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "00000000"),
        "a default route: {routes}"
    );
    assert!(
        !routes["v6"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "00000000000000000000000000000000/00"),
        "a default IPv6 route: {routes}"
    );

    // The node's process limit holds: forks stop short of it.
    let o = run(
        &exec,
        request(
            "import os, time\nn = 0\nfor _ in range(300):\n    try:\n        pid = os.fork()\n\
             \x20   except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n\
             \x20       os._exit(0)\n    n += 1\nprint(n)\n",
        ),
    )
    .await
    .unwrap();
    let forked: u32 = String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .expect("a count");
    assert!(forked < settings.node_pids_limit.unwrap(), "{forked} forks");

    // A run with an allow-list gets its own policy while it runs, owned by its pod (the
    // garbage collector removes it with the pod). 203.0.113.0/24 is a documentation range:
    // nothing is sent there (the pod has no route out anyway).
    let client = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(settings.kubeconfig.as_ref().unwrap()).unwrap(),
            &Default::default(),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    let policies: Api<NetworkPolicy> = Api::namespaced(client, &settings.namespace);
    let mut req = request("import time\ntime.sleep(4)\nprint('done')\n");
    req.spec.network =
        skillgate_core::NetworkPolicy::AllowList(vec![skillgate_core::NetworkDestination {
            cidr: "203.0.113.0/24".parse().unwrap(),
            ports: vec![skillgate_core::PortRange {
                start: 443,
                end: 443,
            }],
            host: None,
        }]);
    let name = format!(
        "skillgate-run-{}",
        label_value(&req.id.to_string()).to_ascii_lowercase()
    );
    let running = tokio::spawn({
        let exec = exec.clone();
        async move { run(&exec, req).await }
    });
    let mut seen = None;
    for _ in 0..200 {
        if let Ok(np) = policies.get(&name).await {
            seen = Some(np);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let np = seen.expect("the run's NetworkPolicy never appeared");
    let owner = &np.metadata.owner_references.unwrap()[0];
    assert_eq!(owner.kind, "Pod");
    let egress = serde_json::to_value(np.spec.unwrap().egress).unwrap();
    assert_eq!(
        egress[0]["to"][0]["ipBlock"]["cidr"], "203.0.113.0/24",
        "{egress}"
    );
    assert_eq!(egress[0]["ports"][0]["port"], 443, "{egress}");
    let o = running.await.unwrap().unwrap();
    assert_eq!(o.status, Status::Ok, "{o:?}");

    // A pod no node can hold ends the run as an error with the scheduler's reason, once
    // the bounded wait is over.
    let mut short = settings.clone();
    short.schedule_timeout = Duration::from_secs(5);
    let short = KubernetesExecutor::new(short).unwrap();
    let mut huge = request("print(1)\n");
    huge.spec.limits.memory_bytes = 4 << 40;
    let err = run(&short, huge).await.expect_err("a 4 TiB pod ran");
    assert!(
        err.contains("Unschedulable") || err.contains("Insufficient"),
        "{err}"
    );

    // At most `max_concurrent` pods at once; the other runs queue (and all end ok).
    let mut one = settings.clone();
    one.max_concurrent = 1;
    let one = KubernetesExecutor::new(one).unwrap();
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::namespaced(policies.clone().into_client(), &settings.namespace);
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let one = one.clone();
            tokio::spawn(async move { run(&one, request("import time\ntime.sleep(1)\n")).await })
        })
        .collect();
    let mut most = 0;
    while !runs.iter().all(|r| r.is_finished()) {
        let lp = kube::api::ListParams::default().labels("app.kubernetes.io/managed-by=skillgate");
        let live = pods
            .list(&lp)
            .await
            .unwrap()
            .items
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .count();
        most = most.max(live);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for r in runs {
        assert_eq!(r.await.unwrap().unwrap().status, Status::Ok);
    }
    assert_eq!(most, 1, "pods at once with max_concurrent = 1");

    // The tenant's NetworkPolicy is in the cluster: default-deny egress for its pods.
    let np = policies.get("skillgate-tenant-tenant-a").await.unwrap();
    let spec = np.spec.unwrap();
    assert_eq!(spec.policy_types.unwrap(), vec!["Egress".to_string()]);
    assert!(spec.egress.unwrap_or_default().is_empty());
    assert_eq!(
        spec.pod_selector.unwrap().match_labels.unwrap()["skillgate.io/tenant"],
        "tenant-a"
    );

    // The work directory is a tmpfs of its limit: writing past it fails with ENOSPC.
    let mut req = request(
        "import errno, os\ntry:\n    with open('/work/fill', 'wb') as f:\n\
         \x20       for _ in range(12):\n            f.write(b'x' * (1 << 20))\n\
         \x20   print('wrote 12 MiB')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])\n",
    );
    // (Under the 16 MiB file-size limit, so the tmpfs is what stops it.)
    req.spec.limits.workdir_bytes = 8 << 20;
    let o = run(&exec, req).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "ENOSPC", "{o:?}");

    // The profile installer's objects are valid for a real API server (created with a
    // server-side dry run, as the cluster's admin, in kube-system).
    let admin = std::path::Path::new(settings.kubeconfig.as_ref().unwrap())
        .with_file_name("admin.kubeconfig");
    let admin = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&admin).unwrap(),
            &Default::default(),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    let profile = skillgate_executors::kubernetes::profile::node_profile(&deny(
        &["socket"],
        SeccompAction::Errno(1),
    ))
    .unwrap();
    let (cm, ds) =
        skillgate_executors::kubernetes::installer::installer(&[profile], &Default::default());
    let dry = kube::api::PostParams {
        dry_run: true,
        ..Default::default()
    };
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(admin.clone(), "kube-system");
    cms.create(&dry, &cm)
        .await
        .expect("the installer's ConfigMap");
    let dss: Api<k8s_openapi::api::apps::v1::DaemonSet> = Api::namespaced(admin, "kube-system");
    dss.create(&dry, &ds)
        .await
        .expect("the installer's DaemonSet");
}
