//! The pod of one run: the hardened spec, built from the sandbox spec alone (no call to
//! the cluster), so what a run asks of the cluster can be read and tested.
//!
//! Two containers share the pod, both from the runtime's image, both as the spec's uid
//! with every capability dropped, no privilege escalation, a read-only root and the
//! run's seccomp profile (`Localhost`):
//! - `skill` runs the skill behind a short bootstrap ([`skill_command`]) that waits for
//!   one byte on stdin (so output is never written before the executor is attached),
//!   lowers the run's rlimits (CPU time, file size, open files) and `exec`s the
//!   interpreter on the skill, stdin left open for the input;
//! - `keeper` sleeps (a few MiB) until the executor has copied `/out` out of it (see
//!   [`collect_command`]), since a finished container cannot be read.
//!
//! The skill's files come from a Secret mounted read-only at `/skill`; `/work`, `/tmp`
//! and `/out` are `emptyDir`s in memory with size limits. No service-account token, no
//! host namespaces, no network of the host; the run's labels select the tenant's
//! NetworkPolicy.
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, KeyToPath, Pod, PodSecurityContext,
    PodSpec, ResourceRequirements, SeccompProfile, SecretVolumeSource, SecurityContext, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use skillgate_core::{Language, Limits};
use std::collections::BTreeMap;

/// The label naming the run (its request id) on every object of a run.
pub const RUN_LABEL: &str = "skillgate.io/run";
/// The label naming the run's tenant, which the tenant's NetworkPolicy selects.
pub const TENANT_LABEL: &str = "skillgate.io/tenant";
/// The container running the skill.
pub const SKILL_CONTAINER: &str = "skill";
/// The container holding `/out` until it is copied out.
pub const KEEPER_CONTAINER: &str = "keeper";
/// Where the skill's files are mounted (read-only).
pub const SKILL_DIR: &str = "/skill";
pub use crate::run_dir::{OUT_DIR, WORK_DIR};
/// The memory the keeper may use (it only sleeps, then runs a short copy).
const KEEPER_MEMORY: u64 = 64 << 20;

/// What a pod is made of, decided by the executor.
#[derive(Debug, Clone)]
pub struct PodPlan {
    /// The pod's name (also the Secret's).
    pub name: String,
    /// The run's request id ([`RUN_LABEL`]).
    pub run_id: String,
    /// The caller's tenant ([`TENANT_LABEL`]), as a label value.
    pub tenant: String,
    /// The runtime's image.
    pub image: String,
    /// `Always`, `IfNotPresent` or `Never`.
    pub image_pull_policy: String,
    /// The skill's language (its bootstrap).
    pub language: Language,
    /// The interpreter inside the image, and its arguments before the script.
    pub interpreter: Vec<String>,
    /// The entry script, relative to [`SKILL_DIR`].
    pub entry: String,
    /// The Secret's keys and the paths they are mounted at under [`SKILL_DIR`].
    pub files: Vec<(String, String)>,
    /// The environment (`NAME`, value).
    pub env: Vec<(String, String)>,
    /// The run's limits.
    pub limits: Limits,
    /// The uid and gid.
    pub uid: u32,
    /// The gid.
    pub gid: u32,
    /// The `Localhost` seccomp profile (relative to the node's profile root), if any.
    pub seccomp: Option<String>,
    /// The RuntimeClass, for a tier above plain containers.
    pub runtime_class: Option<String>,
    /// `activeDeadlineSeconds`: the cluster's own bound on the pod.
    pub active_deadline_secs: i64,
}

/// The bootstrap of the `skill` container: `interpreter -c|-e CODE ARGS`.
///
/// The executor attaches once and writes the input framed: its length in decimal and a
/// newline, then the bytes (an attach cannot close stdin alone). The bootstrap reads the
/// frame (nothing of the skill runs before the executor listens), puts the input in an
/// unnamed file in `/tmp` and makes it the skill's stdin, so the skill reads the input
/// and then the end of it.
///
/// Python then lowers `RLIMIT_CPU`, `RLIMIT_FSIZE` and `RLIMIT_NOFILE` to the run's (soft
/// and hard, never above a hard limit the node set lower: the skill cannot raise them
/// again, it has no capability) and `execv`s the interpreter on
/// the skill; nothing of the bootstrap stays. Node can neither `exec` nor set rlimits:
/// its bootstrap runs the entry as the main module in the same process, and the executor
/// refuses a JavaScript run unless the node's runtime enforces the rlimits.
pub fn skill_command(plan: &PodPlan) -> Vec<String> {
    let script = format!("{SKILL_DIR}/{}", plan.entry);
    let l = &plan.limits;
    match plan.language {
        Language::Python | Language::Shell => {
            let cpu = l
                .cpu_time
                .map(|d| d.as_secs().max(1).to_string())
                .unwrap_or_else(|| "resource.RLIM_INFINITY".into());
            let code = format!(
                "import os, resource, sys\n\
                 def take(n):\n    \
                 b = bytearray()\n    \
                 while len(b) < n:\n        \
                 c = os.read(0, min(n - len(b), 1 << 16))\n        \
                 if not c: sys.exit(125)\n        \
                 b += c\n    \
                 return bytes(b)\n\
                 head = bytearray()\n\
                 while not head.endswith(b'\\n'):\n    \
                 if len(head) > 20: sys.exit(125)\n    \
                 head += take(1)\n\
                 data = take(int(head))\n\
                 fd = os.open('/tmp', os.O_TMPFILE | os.O_RDWR, 0o600)\n\
                 view = memoryview(data)\n\
                 while view: view = view[os.write(fd, view):]\n\
                 os.lseek(fd, 0, 0)\n\
                 os.dup2(fd, 0)\n\
                 os.close(fd)\n\
                 for r, v in ((resource.RLIMIT_CPU, {cpu}), (resource.RLIMIT_FSIZE, {fsize}), (resource.RLIMIT_NOFILE, {nofile})):\n    \
                 hard = resource.getrlimit(r)[1]\n    \
                 v = v if hard == resource.RLIM_INFINITY else min(v, hard)\n    \
                 resource.setrlimit(r, (v, v))\n\
                 os.execv(sys.argv[1], sys.argv[1:])\n",
                fsize = l.file_size_bytes,
                nofile = l.open_files,
            );
            let program = plan.interpreter[0].clone();
            [program.clone(), "-I".into(), "-c".into(), code, program]
                .into_iter()
                .chain(plan.interpreter[1..].iter().cloned())
                .chain(std::iter::once(script))
                .collect()
        }
        Language::JavaScript => {
            let code = "const fs = require('fs');\n\
                 function take(n) { const b = Buffer.alloc(n); let got = 0;\n\
                   while (got < n) { let k; try { k = fs.readSync(0, b, got, n - got, null); }\n\
                     catch (e) { if (e.code === 'EAGAIN') continue; throw e; }\n\
                     if (k === 0) process.exit(125); got += k; } return b; }\n\
                 let head = '';\n\
                 while (!head.endsWith('\\n')) { if (head.length > 20) process.exit(125); head += take(1).toString(); }\n\
                 const data = take(parseInt(head, 10));\n\
                 const path = '/tmp/.skillgate-input-' + process.pid;\n\
                 fs.writeFileSync(path, data, { mode: 0o600 });\n\
                 fs.closeSync(0);\n\
                 if (fs.openSync(path, 'r') !== 0) process.exit(125);\n\
                 fs.unlinkSync(path);\n\
                 process.argv.splice(1, process.argv.length, process.argv[process.argv.length - 1]);\n\
                 require('module').runMain();\n";
            let program = plan.interpreter[0].clone();
            [program, "-e".into(), code.into(), script].into()
        }
    }
}

/// What the executor runs in the `keeper` container to copy `/out` out: a tar stream of
/// it on stdout (members named `out/…`; links kept as links, for the collector to
/// refuse).
pub fn collect_command(plan_language: Language, interpreter: &str) -> Vec<String> {
    match plan_language {
        Language::JavaScript => vec![interpreter.into(), "-e".into(), NODE_TAR.into()],
        _ => vec![
            interpreter.into(),
            "-I".into(),
            "-c".into(),
            "import sys, tarfile\n\
             with tarfile.open(fileobj=sys.stdout.buffer, mode='w|', format=tarfile.PAX_FORMAT) as t:\n    \
             t.add('/out', arcname='out')\n"
                .into(),
        ],
    }
}

/// A tar writer for Node's keeper (Node has no tar module): regular files, folders and
/// symbolic links (recorded as links, never followed), ustar headers, `out/…` names.
const NODE_TAR: &str = r#"const fs = require('fs'), path = require('path');
const out = [];
function hdr(name, size, mode, type, link) {
  const h = Buffer.alloc(512);
  if (Buffer.byteLength(name) > 100) { h.write(name.slice(-100), 0); } else { h.write(name, 0); }
  h.write((mode & 0o7777).toString(8).padStart(7, '0'), 100);
  h.write('0000000', 108); h.write('0000000', 116);
  h.write(size.toString(8).padStart(11, '0'), 124);
  h.write('00000000000', 136);
  h.write('        ', 148); h.write(type, 156); h.write(link || '', 157);
  h.write('ustar\x0000', 257);
  let sum = 0; for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\x00 ', 148);
  return h;
}
function walk(dir, name) {
  for (const e of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, e), n = name + '/' + e, st = fs.lstatSync(p);
    if (st.isSymbolicLink()) { out.push(hdr(n, 0, st.mode, '2', fs.readlinkSync(p))); }
    else if (st.isDirectory()) { out.push(hdr(n + '/', 0, st.mode, '5')); walk(p, n); }
    else if (st.isFile()) {
      const d = fs.readFileSync(p);
      out.push(hdr(n, d.length, st.mode, st.nlink > 1 ? '1' : '0'));
      out.push(d, Buffer.alloc((512 - d.length % 512) % 512));
    }
  }
}
out.push(hdr('out/', 0, 0o755, '5')); walk('/out', 'out');
out.push(Buffer.alloc(1024));
fs.writeSync(1, Buffer.concat(out));
"#;

fn quantity(bytes: u64) -> Quantity {
    Quantity(bytes.to_string())
}

fn memory_dir(name: &str, bytes: u64) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: Some("Memory".into()),
            size_limit: Some(quantity(bytes)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only: Some(read_only),
        ..Default::default()
    }
}

/// The hardened security context of both containers; `profile` is the skill's seccomp
/// profile, or the runtime's default for the keeper (which runs only the executor's own
/// code: the skill's profile may deny what sleeping and copying need, and then its
/// `pause()` returns at once).
fn hardened(plan: &PodPlan, profile: Option<&String>) -> SecurityContext {
    SecurityContext {
        run_as_user: Some(i64::from(plan.uid)),
        run_as_group: Some(i64::from(plan.gid)),
        run_as_non_root: Some(true),
        read_only_root_filesystem: Some(true),
        allow_privilege_escalation: Some(false),
        privileged: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            add: None,
        }),
        seccomp_profile: Some(match profile {
            Some(profile) => SeccompProfile {
                type_: "Localhost".into(),
                localhost_profile: Some(profile.clone()),
            },
            None => SeccompProfile {
                type_: "RuntimeDefault".into(),
                localhost_profile: None,
            },
        }),
        ..Default::default()
    }
}

fn resources(memory: u64) -> ResourceRequirements {
    let map = BTreeMap::from([("memory".to_string(), quantity(memory))]);
    ResourceRequirements {
        limits: Some(map.clone()),
        requests: Some(map),
        ..Default::default()
    }
}

/// The run's pod.
pub fn pod(plan: &PodPlan) -> Pod {
    let labels = BTreeMap::from([
        (RUN_LABEL.to_string(), plan.run_id.clone()),
        (TENANT_LABEL.to_string(), plan.tenant.clone()),
        (
            "app.kubernetes.io/managed-by".to_string(),
            "skillgate".to_string(),
        ),
    ]);
    let l = &plan.limits;
    let env: Vec<EnvVar> = plan
        .env
        .iter()
        .map(|(k, v)| EnvVar {
            name: k.clone(),
            value: Some(v.clone()),
            ..Default::default()
        })
        .collect();
    let skill = Container {
        name: SKILL_CONTAINER.into(),
        image: Some(plan.image.clone()),
        image_pull_policy: Some(plan.image_pull_policy.clone()),
        command: Some(skill_command(plan)),
        env: Some(env),
        working_dir: Some(WORK_DIR.into()),
        stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        security_context: Some(hardened(plan, plan.seccomp.as_ref())),
        resources: Some(resources(l.memory_bytes)),
        volume_mounts: Some(vec![
            mount("skill", SKILL_DIR, true),
            mount("work", WORK_DIR, false),
            mount("tmp", "/tmp", false),
            mount("out", OUT_DIR, false),
        ]),
        termination_message_policy: Some("File".into()),
        ..Default::default()
    };
    let keeper_cmd = match plan.language {
        Language::JavaScript => vec![
            plan.interpreter[0].clone(),
            "-e".into(),
            "setInterval(() => {}, 1 << 30)".into(),
        ],
        _ => vec![
            plan.interpreter[0].clone(),
            "-I".into(),
            "-c".into(),
            "import time\nwhile True: time.sleep(3600)\n".into(),
        ],
    };
    let keeper = Container {
        name: KEEPER_CONTAINER.into(),
        image: Some(plan.image.clone()),
        image_pull_policy: Some(plan.image_pull_policy.clone()),
        command: Some(keeper_cmd),
        working_dir: Some(OUT_DIR.into()),
        security_context: Some(hardened(plan, None)),
        resources: Some(resources(KEEPER_MEMORY)),
        volume_mounts: Some(vec![mount("out", OUT_DIR, true)]),
        ..Default::default()
    };
    let items = plan
        .files
        .iter()
        .map(|(key, path)| KeyToPath {
            key: key.clone(),
            path: path.clone(),
            mode: Some(0o444),
            ..Default::default()
        })
        .collect();
    Pod {
        metadata: ObjectMeta {
            name: Some(plan.name.clone()),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![skill, keeper],
            restart_policy: Some("Never".into()),
            active_deadline_seconds: Some(plan.active_deadline_secs),
            automount_service_account_token: Some(false),
            enable_service_links: Some(false),
            host_network: Some(false),
            host_pid: Some(false),
            host_ipc: Some(false),
            share_process_namespace: Some(false),
            termination_grace_period_seconds: Some(0),
            // The node's resolver configuration, not a cluster DNS the run cannot reach
            // anyway (its egress is denied).
            dns_policy: Some("Default".into()),
            runtime_class_name: plan.runtime_class.clone(),
            security_context: Some(PodSecurityContext {
                run_as_user: Some(i64::from(plan.uid)),
                run_as_group: Some(i64::from(plan.gid)),
                run_as_non_root: Some(true),
                fs_group: Some(i64::from(plan.gid)),
                ..Default::default()
            }),
            volumes: Some(vec![
                Volume {
                    name: "skill".into(),
                    secret: Some(SecretVolumeSource {
                        secret_name: Some(plan.name.clone()),
                        items: Some(items),
                        default_mode: Some(0o444),
                        optional: Some(false),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                memory_dir("work", l.workdir_bytes),
                memory_dir("tmp", l.workdir_bytes),
                memory_dir("out", l.artifact_total_cap),
            ]),
            ..Default::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> PodPlan {
        PodPlan {
            name: "sg-abc".into(),
            run_id: "abc".into(),
            tenant: "acme".into(),
            image: "skillgate-runtime-python:latest".into(),
            image_pull_policy: "Never".into(),
            language: Language::Python,
            interpreter: vec!["/runtime/bin/python3".into(), "-s".into()],
            entry: "main.py".into(),
            files: vec![("f0".into(), "main.py".into())],
            env: vec![("LANG".into(), "C.UTF-8".into())],
            limits: Limits::default(),
            uid: 1000,
            gid: 1000,
            seccomp: Some("skillgate/0123.json".into()),
            runtime_class: None,
            active_deadline_secs: 70,
        }
    }

    #[test]
    fn both_containers_are_hardened_and_the_profile_is_localhost() {
        let pod = serde_json::to_value(pod(&plan())).unwrap();
        let spec = &pod["spec"];
        assert_eq!(spec["automountServiceAccountToken"], false);
        assert_eq!(spec["hostNetwork"], false);
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(spec["activeDeadlineSeconds"], 70);
        let keeper = &spec["containers"][1]["securityContext"]["seccompProfile"];
        assert_eq!(keeper["type"], "RuntimeDefault");
        for c in spec["containers"].as_array().unwrap() {
            let sc = &c["securityContext"];
            assert_eq!(sc["runAsUser"], 1000, "{c}");
            assert_eq!(sc["runAsNonRoot"], true);
            assert_eq!(sc["readOnlyRootFilesystem"], true);
            assert_eq!(sc["allowPrivilegeEscalation"], false);
            assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));
        }
        let sc = &spec["containers"][0]["securityContext"];
        assert_eq!(sc["seccompProfile"]["type"], "Localhost");
        assert_eq!(
            sc["seccompProfile"]["localhostProfile"],
            "skillgate/0123.json"
        );
        let skill = &spec["containers"][0];
        assert_eq!(skill["resources"]["limits"]["memory"], "268435456");
        assert_eq!(skill["stdinOnce"], true);
        assert_eq!(pod["metadata"]["labels"][TENANT_LABEL], "acme");
        let vols = spec["volumes"].as_array().unwrap();
        let out = vols.iter().find(|v| v["name"] == "out").unwrap();
        assert_eq!(out["emptyDir"]["medium"], "Memory");
        assert_eq!(out["emptyDir"]["sizeLimit"], (32u64 << 20).to_string());
    }

    #[test]
    fn the_python_bootstrap_waits_lowers_the_rlimits_and_execs_the_skill() {
        let cmd = skill_command(&plan());
        assert_eq!(cmd[0], "/runtime/bin/python3");
        assert_eq!(&cmd[1..3], ["-I", "-c"]);
        assert!(cmd[3].contains("O_TMPFILE"), "{}", cmd[3]);
        assert!(cmd[3].contains("RLIMIT_FSIZE, 16777216"), "{}", cmd[3]);
        assert!(cmd[3].contains("RLIMIT_NOFILE, 256"), "{}", cmd[3]);
        assert!(cmd[3].contains("RLIMIT_CPU, 10)"), "{}", cmd[3]);
        assert_eq!(
            &cmd[4..],
            ["/runtime/bin/python3", "-s", "/skill/main.py"],
            "{cmd:?}"
        );
    }

    /// The bootstrap, run by the host's Python on a script of its own: the framed input
    /// is the skill's whole stdin, and the rlimits are lowered before the skill runs.
    #[test]
    fn the_python_bootstrap_hands_over_exactly_the_framed_input() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("main.py");
        std::fs::write(
            &script,
            "import resource, sys\nd = sys.stdin.read()\n\
             print(repr(d), resource.getrlimit(resource.RLIMIT_NOFILE))\n",
        )
        .unwrap();
        let mut p = plan();
        p.interpreter = vec!["/usr/bin/python3".into()];
        let mut cmd = skill_command(&p);
        *cmd.last_mut().unwrap() = script.display().to_string();
        let run = |input: &[u8]| {
            let mut child = std::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The attach stays open after the frame: stdin is not closed here either.
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input).unwrap();
            let out = child.wait_with_output().unwrap();
            drop(stdin);
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        let (code, out) = run(b"7\n{\"a\":1}trailing bytes never read");
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(out.trim(), "'{\"a\":1}' (256, 256)");
        // A broken frame never runs the skill.
        let (code, out) = run(b"x\n");
        assert_ne!(code, Some(0), "{out}");
    }

    #[test]
    fn without_a_profile_the_runtimes_default_applies_never_unconfined() {
        let mut p = plan();
        p.seccomp = None;
        let pod = serde_json::to_value(pod(&p)).unwrap();
        let sc = &pod["spec"]["containers"][0]["securityContext"];
        assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault");
    }
}
