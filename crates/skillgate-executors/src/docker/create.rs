//! The container one run gets: the create request built from the [`SandboxSpec`].
use bollard::models::{ContainerCreateBody, HostConfig, ResourcesUlimits};
use skillgate_core::SandboxSpec;
use std::collections::HashMap;

use super::sweep::{DIR_LABEL, OWNER_LABEL};

/// Where the skill's code is mounted (read-only) inside the container.
pub const SKILL_DIR: &str = "/skill";
pub use crate::run_dir::{OUT_DIR, WORK_DIR};
/// The `nproc` ulimit of every container but gVisor's. `nproc` counts every process of
/// the uid on the host, across containers, so the per-run process limit is the cgroup's
/// `pids` limit; this value only has to be set (a host without CAP_SYS_RESOURCE cannot
/// raise it). Under gVisor `nproc` is the skill's limit, counted by gVisor's kernel.
pub const NPROC_ULIMIT: i64 = 4096;
/// The label every container of skillgate carries (its value is the request id).
pub const RUN_LABEL: &str = "io.skillgate.run";

/// How the seccomp profile reaches the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeccompOpt {
    /// The OCI profile JSON itself (Docker Engine).
    Inline(String),
    /// A host path to the OCI profile (Podman reads the file; inline JSON fails there with
    /// "file name too long").
    Path(String),
}

impl SeccompOpt {
    fn security_opt(&self) -> String {
        match self {
            SeccompOpt::Inline(json) | SeccompOpt::Path(json) => format!("seccomp={json}"),
        }
    }
}

/// Everything of one container that is not in the spec.
#[derive(Debug, Clone)]
pub struct ContainerPlan<'a> {
    /// The image.
    pub image: &'a str,
    /// The command: the interpreter, its arguments and the entry script inside the container.
    pub cmd: Vec<String>,
    /// The host directory holding the skill's code, bound read-only at [`SKILL_DIR`].
    pub skill_dir: &'a str,
    /// The host's size-capped tmpfs for the skill's output, bound read-write at
    /// [`OUT_DIR`] (an engine's volumes have no size limit).
    pub out_dir: &'a str,
    /// The seccomp profile, when the spec has one.
    pub seccomp: Option<SeccompOpt>,
    /// The OCI runtime the engine should use (`runsc`), when not its default.
    pub runtime: Option<&'a str>,
    /// The request id, for the [`RUN_LABEL`].
    pub run_id: String,
    /// The process creating the container, for the [`OWNER_LABEL`] (see
    /// [`super::sweep`]).
    pub owner: &'a str,
    /// The run's folder on the host, for the [`DIR_LABEL`].
    pub run_dir: &'a str,
}

fn ulimit(name: &str, value: i64) -> ResourcesUlimits {
    ResourcesUlimits {
        name: Some(name.into()),
        soft: Some(value),
        hard: Some(value),
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The create request of the run's container: network none; the memory (no swap), pids
/// and CPU-time limits; read-only root; tmpfs `/work` and `/tmp` of the work directory's
/// size; `/out` the host's size-capped tmpfs ([`ContainerPlan::out_dir`]) bound
/// read-write; the skill's code and the spec's extra read-only paths bound read-only; the spec's uid and gid; every capability dropped;
/// no-new-privileges; the seccomp profile; the file-size, open-files and `nproc`
/// ulimits; stdin open once, no tty.
pub fn container_body(spec: &SandboxSpec, plan: &ContainerPlan<'_>) -> ContainerCreateBody {
    let limits = &spec.limits;
    let tmpfs_opts = format!(
        "rw,nosuid,nodev,size={},mode=1777",
        limits.workdir_bytes.max(4096)
    );
    let tmpfs = HashMap::from([
        (WORK_DIR.to_string(), tmpfs_opts.clone()),
        ("/tmp".to_string(), tmpfs_opts),
    ]);
    let env = crate::run_dir::container_env(spec);
    // Under gVisor the sandbox's own host tasks count in the pids cgroup, and the skill's
    // limit is `RLIMIT_NPROC` in gVisor's kernel (per sandbox, not per host uid).
    let gvisor = plan.runtime == Some("runsc");
    let (pids, nproc) = if gvisor {
        (
            crate::limits::runsc_host_pids(limits.pids),
            i64::from(limits.pids),
        )
    } else {
        (limits.pids, NPROC_ULIMIT)
    };
    let mut ulimits = vec![
        ulimit("nofile", i64::from(limits.open_files)),
        ulimit("nproc", nproc),
        ulimit("fsize", clamp(limits.file_size_bytes)),
    ];
    if let Some(cpu) = limits.cpu_time {
        // RLIMIT_CPU counts whole seconds; round up so a limit is never tighter.
        let secs = cpu.as_secs() + u64::from(cpu.subsec_nanos() > 0);
        ulimits.push(ulimit("cpu", clamp(secs.max(1))));
    }
    let mut security_opt = vec!["no-new-privileges".to_string()];
    if let Some(s) = &plan.seccomp {
        security_opt.push(s.security_opt());
    }
    let host = HostConfig {
        network_mode: Some("none".into()),
        memory: Some(clamp(limits.memory_bytes)),
        memory_swap: Some(clamp(limits.memory_bytes)),
        pids_limit: Some(i64::from(pids)),
        readonly_rootfs: Some(true),
        cap_drop: Some(vec!["ALL".into()]),
        security_opt: Some(security_opt),
        tmpfs: Some(tmpfs),
        binds: Some(
            [
                format!("{}:{SKILL_DIR}:ro", plan.skill_dir),
                format!("{}:{OUT_DIR}:rw", plan.out_dir),
            ]
            .into_iter()
            .chain(
                spec.read_only_paths
                    .iter()
                    .map(|p| format!("{0}:{0}:ro", p.display())),
            )
            .collect(),
        ),
        ulimits: Some(ulimits),
        runtime: plan.runtime.map(str::to_owned),
        ..Default::default()
    };
    ContainerCreateBody {
        image: Some(plan.image.to_owned()),
        cmd: Some(plan.cmd.clone()),
        user: Some(format!("{}:{}", spec.uid, spec.gid)),
        env: Some(env),
        working_dir: Some(WORK_DIR.into()),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        network_disabled: Some(true),
        labels: Some(HashMap::from([
            (RUN_LABEL.to_string(), plan.run_id.clone()),
            (OWNER_LABEL.to_string(), plan.owner.to_owned()),
            (DIR_LABEL.to_string(), plan.run_dir.to_owned()),
        ])),
        host_config: Some(host),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan(seccomp: Option<SeccompOpt>) -> ContainerPlan<'static> {
        ContainerPlan {
            image: "img",
            cmd: vec!["/usr/bin/python3".into(), "/skill/main.py".into()],
            skill_dir: "/tmp/run/work",
            out_dir: "/tmp/run/out",
            seccomp,
            runtime: None,
            run_id: "r1".into(),
            owner: "boot/1/2",
            run_dir: "/tmp/run",
        }
    }

    #[test]
    fn the_spec_becomes_the_containers_limits_and_containment() {
        let mut spec = SandboxSpec::default();
        spec.limits.memory_bytes = 64 << 20;
        spec.limits.pids = 32;
        spec.limits.open_files = 100;
        spec.limits.cpu_time = Some(Duration::from_millis(1500));
        spec.uid = 1234;
        spec.gid = 1235;
        spec.env.insert("HOME".into(), "/elsewhere".into());
        spec.read_only_paths.push("/opt/data".into());
        let body = container_body(&spec, &plan(Some(SeccompOpt::Inline("{}".into()))));
        let host = body.host_config.as_ref().unwrap();
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.memory, Some(64 << 20));
        assert_eq!(host.memory_swap, Some(64 << 20), "no swap beyond the limit");
        assert_eq!(host.pids_limit, Some(32));
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.cap_drop.as_deref(), Some(&["ALL".to_string()][..]));
        let sec = host.security_opt.as_ref().unwrap();
        assert!(sec.contains(&"no-new-privileges".to_string()));
        assert!(sec.contains(&"seccomp={}".to_string()));
        let ul: HashMap<_, _> = host
            .ulimits
            .as_ref()
            .unwrap()
            .iter()
            .map(|u| (u.name.clone().unwrap(), u.hard.unwrap()))
            .collect();
        assert_eq!(ul["nofile"], 100);
        assert_eq!(ul["nproc"], NPROC_ULIMIT);
        assert_eq!(ul["cpu"], 2, "CPU seconds round up");
        assert_eq!(ul["fsize"], 16 << 20);
        assert_eq!(body.user.as_deref(), Some("1234:1235"));
        let env = body.env.unwrap();
        assert!(env.contains(&"HOME=/work".to_string()), "{env:?}");
        assert!(!env.iter().any(|e| e == "HOME=/elsewhere"));
        assert!(env.contains(&"SKILLGATE_OUTPUT_DIR=/out".to_string()));
        assert_eq!(
            host.binds.as_deref().unwrap(),
            [
                "/tmp/run/work:/skill:ro",
                "/tmp/run/out:/out:rw",
                "/opt/data:/opt/data:ro"
            ]
        );
        assert!(host.tmpfs.as_ref().unwrap()["/work"].contains("size=67108864"));
        let labels = body.labels.as_ref().unwrap();
        assert_eq!(labels[RUN_LABEL], "r1");
        assert_eq!(labels[OWNER_LABEL], "boot/1/2");
        assert_eq!(labels[DIR_LABEL], "/tmp/run");
    }

    #[test]
    fn under_gvisor_the_skills_process_limit_is_its_kernels_nproc() {
        let mut spec = SandboxSpec::default();
        spec.limits.pids = 16;
        let mut p = plan(None);
        p.runtime = Some("runsc");
        let host = container_body(&spec, &p).host_config.unwrap();
        assert_eq!(
            host.pids_limit,
            Some(i64::from(crate::limits::runsc_host_pids(16)))
        );
        let nproc = host
            .ulimits
            .unwrap()
            .into_iter()
            .find(|u| u.name.as_deref() == Some("nproc"));
        assert_eq!(nproc.unwrap().hard, Some(16));
    }

    #[test]
    fn podman_gets_the_profile_as_a_path() {
        let body = container_body(
            &SandboxSpec::default(),
            &plan(Some(SeccompOpt::Path("/run/p.json".into()))),
        );
        let sec = body.host_config.unwrap().security_opt.unwrap();
        assert!(sec.contains(&"seccomp=/run/p.json".to_string()), "{sec:?}");
    }
}
