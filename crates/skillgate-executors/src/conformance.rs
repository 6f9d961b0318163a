//! The conformance kit: checks that an executor keeps the executor contract, for every
//! capability it claims.
//!
//! [`Kit::run`] sends an executor a series of small Python skills and checks each
//! outcome; it returns one [`Check`] per item (printable, one line each). A check whose
//! capability the executor does not claim is reported as not claimed, never as passed.
//! The checks:
//! - `json`: JSON on stdin reaches the skill, its JSON on stdout comes back, status ok;
//! - `exit_code`: `sys.exit(3)` comes back as exit code 3 (still status ok);
//! - `streams`: stdout and stderr come back separately;
//! - `output_cap`: stdout past its cap is cut at the cap and flagged, the run ends as
//!   `resource_exhausted`;
//! - `timeout`: a skill that forks a busy child and spins itself ends as `timeout`, and
//!   the run returns (the whole tree is killed);
//! - `memory`: allocating past the memory limit ends as `resource_exhausted`;
//! - `pids`: forks past the process limit are refused;
//! - `pids_reported`: that run (whose skill exits 0 after the refused forks) ends as
//!   `resource_exhausted` with a `limit.pids` finding, as the memory limit's does (when
//!   the executor claims `pids_reported`);
//! - `network_none`: inside, no interface but loopback (asked of the kernel) and no
//!   route (from `/proc/net` where visible), never by connecting out;
//! - `read_only_root`: creating a file in `/etc` fails, and `/` is mounted read-only,
//!   while `/tmp` and `$HOME` take a new folder (the scratch space real skills need);
//! - `uid`: the skill runs as the spec's uid and gid;
//! - `seccomp_errno`, `seccomp_kill`: a profile denying `mkdir` with EPERM makes it fail
//!   with EPERM; one killing on it ends the run as `security_violation` (when the
//!   executor claims `seccomp_kill`);
//! - `artifacts`: a file written to the output directory comes back with its content;
//!   a symbolic link and a hard link there are refused (reported, not collected; only
//!   when [`Kit::returns_artifacts`] says the executor returns output files);
//! - `out_capped`: writing 8 MiB to the output directory of a run whose work directory
//!   and total artifact cap are 1 MiB fails with "no space left on device" (when the
//!   executor claims `workdir_size` and returns output files: the output directory is
//!   bounded by the kernel, so a skill cannot fill the host's disk or memory through it);
//! - `cleanup`: after a timeout and after a run whose future was dropped, the executor's
//!   [`Leftovers`] probe finds nothing of those runs (only when a probe is given).
use skillgate_core::{
    BoxError, Caller, Capabilities, ExecOutcome, ExecRequest, Language, SandboxSpec, SeccompAction,
    SeccompProfile, Skill, Status, SyscallRule,
};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tower::{Service, ServiceExt};

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The contract holds.
    Pass,
    /// It does not: why.
    Fail(String),
    /// The executor does not claim this capability (so nothing was checked).
    NotClaimed,
}

/// One check's name and verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The check's name (`json`, `timeout`, ...).
    pub name: &'static str,
    /// What it found.
    pub verdict: Verdict,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::Pass => write!(f, "ok          {}", self.name),
            Verdict::Fail(why) => write!(f, "FAIL        {}: {why}", self.name),
            Verdict::NotClaimed => write!(f, "not claimed {}", self.name),
        }
    }
}

/// The checks of one run of the kit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report(pub Vec<Check>);

impl Report {
    /// `true` when no check failed.
    pub fn passed(&self) -> bool {
        !self.0.iter().any(|c| matches!(c.verdict, Verdict::Fail(_)))
    }

    /// The verdict of the check `name`.
    pub fn verdict(&self, name: &str) -> Option<&Verdict> {
        self.0.iter().find(|c| c.name == name).map(|c| &c.verdict)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.0 {
            writeln!(f, "{c}")?;
        }
        Ok(())
    }
}

/// A probe for what runs left behind: the names of the executor's resources (containers,
/// processes, kernels) that still exist for the given request ids.
pub type Leftovers = Box<
    dyn Fn(Vec<String>) -> Pin<Box<dyn Future<Output = Result<Vec<String>, String>> + Send>>
        + Send
        + Sync,
>;

/// The kit, set up for one executor.
pub struct Kit {
    /// The executor's claims.
    pub capabilities: Capabilities,
    /// The spec every check starts from (a container executor's runtime goes in its
    /// `interpreter`); checks change its limits.
    pub spec: SandboxSpec,
    /// The runtime the skills name, if the spec's interpreter comes from one.
    pub runtime: Option<String>,
    /// The cleanup probe, when the executor has one.
    pub leftovers: Option<Leftovers>,
    /// The executor returns the files a skill writes to its output directory (`true`
    /// unless set otherwise: a Jupyter kernel gateway cannot, and says so).
    pub returns_artifacts: bool,
}

type Exec = tower::util::BoxCloneService<ExecRequest, ExecOutcome, BoxError>;

impl Kit {
    /// A kit for an executor claiming `capabilities`, from the default spec.
    pub fn new(capabilities: Capabilities) -> Self {
        Kit {
            capabilities,
            spec: SandboxSpec::default(),
            runtime: None,
            leftovers: None,
            returns_artifacts: true,
        }
    }

    fn request(&self, code: &str, input: serde_json::Value) -> ExecRequest {
        let mut skill = Skill::builder("conformance", Language::Python, code.as_bytes().to_vec());
        if let Some(r) = &self.runtime {
            skill = skill.runtime(r.clone());
        }
        let mut req = ExecRequest::new(
            Caller::new("conformance", "conformance"),
            skill.build(),
            input,
        );
        req.spec = self.spec.clone();
        req
    }

    /// Runs every check against `executor`.
    pub async fn run<S>(&self, executor: S) -> Report
    where
        S: Service<ExecRequest, Response = ExecOutcome, Error = BoxError> + Clone + Send + 'static,
        S::Future: Send + 'static,
    {
        let exec = Exec::new(executor);
        let caps = &self.capabilities;
        let mut checks = Vec::new();
        let mut push = |name, verdict| checks.push(Check { name, verdict });
        push("json", self.json(exec.clone()).await);
        push("exit_code", self.exit_code(exec.clone()).await);
        push("streams", self.streams(exec.clone()).await);
        push(
            "output_cap",
            self.gated(caps.output_caps, self.output_cap(exec.clone()))
                .await,
        );
        let (timeout, timed_out_id) = if caps.wall_timeout {
            self.timeout(exec.clone()).await
        } else {
            (Verdict::NotClaimed, None)
        };
        push("timeout", timeout);
        push(
            "memory",
            self.gated(caps.memory, self.memory(exec.clone())).await,
        );
        let (pids, pids_reported) = if caps.pids {
            let (pids, reported) = self.pids(exec.clone()).await;
            let reported = if caps.pids_reported {
                reported
            } else {
                Verdict::NotClaimed
            };
            (pids, reported)
        } else {
            (Verdict::NotClaimed, Verdict::NotClaimed)
        };
        push("pids", pids);
        push("pids_reported", pids_reported);
        push(
            "network_none",
            self.gated(caps.network_none, self.network(exec.clone()))
                .await,
        );
        push(
            "read_only_root",
            self.gated(
                caps.tier >= skillgate_core::RuntimeTier::Namespace,
                self.read_only(exec.clone()),
            )
            .await,
        );
        push("uid", self.gated(caps.user, self.uid(exec.clone())).await);
        push(
            "seccomp_errno",
            self.gated(
                caps.seccomp,
                self.seccomp(exec.clone(), SeccompAction::Errno(1)),
            )
            .await,
        );
        push(
            "seccomp_kill",
            self.gated(
                caps.seccomp && caps.seccomp_kill,
                self.seccomp(exec.clone(), SeccompAction::KillProcess),
            )
            .await,
        );
        push(
            "artifacts",
            self.gated(self.returns_artifacts, self.artifacts(exec.clone()))
                .await,
        );
        push(
            "out_capped",
            self.gated(
                caps.workdir_size && self.returns_artifacts,
                self.out_capped(exec.clone()),
            )
            .await,
        );
        let cleanup = match &self.leftovers {
            Some(probe) => self.cleanup(exec, probe, timed_out_id).await,
            None => Verdict::NotClaimed,
        };
        push("cleanup", cleanup);
        Report(checks)
    }

    async fn gated(&self, claimed: bool, check: impl Future<Output = Verdict>) -> Verdict {
        if claimed {
            check.await
        } else {
            Verdict::NotClaimed
        }
    }

    async fn outcome(&self, exec: Exec, req: ExecRequest) -> Result<ExecOutcome, String> {
        exec.oneshot(req)
            .await
            .map_err(|e| format!("the executor failed: {e}"))
    }

    async fn json(&self, exec: Exec) -> Verdict {
        let code = "import json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({'sum': sum(d['nums']), 'hi': d['name']}))\n";
        let req = self.request(code, serde_json::json!({"nums": [1, 2, 3], "name": "gate"}));
        match self.outcome(exec, req).await {
            Err(e) => Verdict::Fail(e),
            Ok(o) => {
                let got: Option<serde_json::Value> = serde_json::from_slice(&o.stdout).ok();
                if o.status == Status::Ok
                    && o.exit_code == Some(0)
                    && got == Some(serde_json::json!({"sum": 6, "hi": "gate"}))
                {
                    Verdict::Pass
                } else {
                    Verdict::Fail(describe(&o))
                }
            }
        }
    }

    async fn exit_code(&self, exec: Exec) -> Verdict {
        let req = self.request("import sys\nsys.exit(3)\n", serde_json::json!({}));
        match self.outcome(exec, req).await {
            Err(e) => Verdict::Fail(e),
            Ok(o) if o.status == Status::Ok && o.exit_code == Some(3) => Verdict::Pass,
            Ok(o) => Verdict::Fail(describe(&o)),
        }
    }

    async fn streams(&self, exec: Exec) -> Verdict {
        let code = "import sys\nsys.stdout.write('to-out')\nsys.stderr.write('to-err')\n";
        match self
            .outcome(exec, self.request(code, serde_json::json!({})))
            .await
        {
            Err(e) => Verdict::Fail(e),
            Ok(o) if o.stdout == b"to-out" && o.stderr == b"to-err" => Verdict::Pass,
            Ok(o) => Verdict::Fail(describe(&o)),
        }
    }

    async fn output_cap(&self, exec: Exec) -> Verdict {
        let code = "import sys\nsys.stdout.write('x' * 5000)\nsys.stderr.write('e')\n";
        let mut req = self.request(code, serde_json::json!({}));
        req.spec.limits.stdout_cap = 1000;
        match self.outcome(exec, req).await {
            Err(e) => Verdict::Fail(e),
            Ok(o)
                if o.status == Status::ResourceExhausted
                    && o.stdout_truncated
                    && o.stdout == vec![b'x'; 1000]
                    && !o.stderr_truncated
                    && o.stderr == b"e" =>
            {
                Verdict::Pass
            }
            Ok(o) => Verdict::Fail(format!(
                "{} bytes of stdout kept, truncated {}; {}",
                o.stdout.len(),
                o.stdout_truncated,
                describe(&o)
            )),
        }
    }

    async fn timeout(&self, exec: Exec) -> (Verdict, Option<String>) {
        let code = "import os\nif os.fork() == 0:\n    while True: pass\nwhile True: pass\n";
        let mut req = self.request(code, serde_json::json!({}));
        req.spec.limits.wall_timeout = Duration::from_secs(2);
        req.spec.limits.cpu_time = None;
        let id = req.id.to_string();
        let verdict = match self.outcome(exec, req).await {
            Err(e) => Verdict::Fail(e),
            Ok(o) if o.status == Status::Timeout => Verdict::Pass,
            Ok(o) => Verdict::Fail(describe(&o)),
        };
        (verdict, Some(id))
    }

    async fn memory(&self, exec: Exec) -> Verdict {
        // Eight times the limit, then a normal exit: an executor that does not enforce
        // the limit ends `ok` (and the host lends 512 MiB for a moment, not all it has).
        let code = "chunks = []\nfor _ in range(64):\n    chunks.append(bytearray(8 << 20))\n";
        let mut req = self.request(code, serde_json::json!({}));
        req.spec.limits.memory_bytes = 64 << 20;
        match self.outcome(exec, req).await {
            Err(e) => Verdict::Fail(e),
            Ok(o) if o.status == Status::ResourceExhausted => Verdict::Pass,
            Ok(o) => Verdict::Fail(describe(&o)),
        }
    }

    /// Whether forks past the limit were refused, and whether the run says so.
    async fn pids(&self, exec: Exec) -> (Verdict, Verdict) {
        // Forty sleeping children under a limit of sixteen: the forks past the limit are
        // refused (the children are killed and reaped before the skill exits).
        let code = r#"import os, signal, time
kids = []
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(len(kids))
"#;
        let mut req = self.request(code, serde_json::json!({}));
        req.spec.limits.pids = 16;
        match self.outcome(exec, req).await {
            Err(e) => (Verdict::Fail(e.clone()), Verdict::Fail(e)),
            Ok(o) => {
                let started: Option<u32> = std::str::from_utf8(&o.stdout)
                    .ok()
                    .and_then(|t| t.trim().parse().ok());
                let refused = match started {
                    Some(n) if n < 16 => Verdict::Pass,
                    _ => Verdict::Fail(describe(&o)),
                };
                let reported = o.status == Status::ResourceExhausted
                    && o.findings.iter().any(|f| f.rule_id == "limit.pids");
                let reported = if reported {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!(
                        "refused forks not reported as resource_exhausted/limit.pids: {}",
                        describe(&o)
                    ))
                };
                (refused, reported)
            }
        }
    }

    async fn network(&self, exec: Exec) -> Verdict {
        // The interfaces from the kernel (if_nameindex: a netlink query, nothing
        // connects anywhere): with none but loopback there is no device a route could
        // use. The IPv4 and IPv6 routes from /proc/net too, where /proc shows them (a
        // sandbox may mount /proc with only its processes).
        let code = r#"import json, socket
def lines(p):
    try:
        with open(p) as f: return f.read().splitlines()
    except FileNotFoundError: return []
ifaces = [name for _, name in socket.if_nameindex()]
routes = lines('/proc/net/route')[1:]
v6 = [l.split()[-1] for l in lines('/proc/net/ipv6_route') if l.strip()]
print(json.dumps({'ifaces': ifaces, 'routes': routes, 'v6': [d for d in v6 if d != 'lo']}))
"#;
        match self
            .outcome(exec, self.request(code, serde_json::json!({})))
            .await
        {
            Err(e) => Verdict::Fail(e),
            Ok(o) => {
                let Ok(v) = serde_json::from_slice::<serde_json::Value>(&o.stdout) else {
                    return Verdict::Fail(describe(&o));
                };
                let ifaces: Vec<&str> = v["ifaces"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str())
                    .collect();
                let no_ifaces = ifaces.iter().all(|i| *i == "lo");
                let no_routes = v["routes"].as_array().is_some_and(|r| r.is_empty())
                    && v["v6"].as_array().is_some_and(|r| r.is_empty());
                if o.status == Status::Ok && o.exit_code == Some(0) && no_ifaces && no_routes {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!("inside: {v}"))
                }
            }
        }
    }

    async fn read_only(&self, exec: Exec) -> Verdict {
        // Creating a file in /etc fails, and the mount at / is read-only (its options in
        // /proc/self/mountinfo: gVisor answers EACCES before EROFS for a file the uid may
        // not write anyway, so the error alone does not show it).
        let code = r#"import errno, json, os
try:
    open('/etc/skillgate-probe', 'w')
    made = 'writable'
except OSError as e:
    made = errno.errorcode.get(e.errno, str(e.errno))
root = [l.split()[5] for l in open('/proc/self/mountinfo') if l.split()[4] == '/']
scratch = []
for i, d in enumerate(['/tmp', os.environ.get('HOME', '/nonexistent')]):
    try:
        os.mkdir(os.path.join(d, 'skillgate-scratch-%d' % i))
        scratch.append('ok')
    except OSError as e:
        scratch.append(d + ': ' + errno.errorcode.get(e.errno, str(e.errno)))
print(json.dumps({'create': made, 'root_options': root[-1] if root else '', 'scratch': scratch}))
"#;
        match self
            .outcome(exec, self.request(code, serde_json::json!({})))
            .await
        {
            Err(e) => Verdict::Fail(e),
            Ok(o) => {
                let v: serde_json::Value =
                    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
                let refused = v["create"].as_str().is_some_and(|c| c != "writable");
                let ro = v["root_options"]
                    .as_str()
                    .is_some_and(|opts| opts.split(',').any(|x| x == "ro"));
                let scratch = v["scratch"]
                    .as_array()
                    .is_some_and(|m| m.len() == 2 && m.iter().all(|r| r == "ok"));
                if refused && ro && scratch {
                    Verdict::Pass
                } else {
                    Verdict::Fail(describe(&o))
                }
            }
        }
    }

    /// `mkdir` and `mkdirat` under `action`, everything else allowed: an errno rule makes
    /// `os.mkdir` fail with that errno (the run stays `ok`), a kill rule ends the run as
    /// `security_violation`.
    async fn seccomp(&self, exec: Exec, action: SeccompAction) -> Verdict {
        let code = "import os\ntry:\n    os.mkdir('/tmp/probe')\n    print('made')\nexcept OSError as e:\n    print(e.errno)\n";
        let mut req = self.request(code, serde_json::json!({}));
        req.spec.seccomp = Some(SeccompProfile {
            name: "conformance".into(),
            default_action: SeccompAction::Allow,
            syscalls: vec![SyscallRule {
                names: vec!["mkdir".into(), "mkdirat".into()],
                action,
                args: Vec::new(),
            }],
        });
        match (self.outcome(exec, req).await, action) {
            (Err(e), _) => Verdict::Fail(e),
            (Ok(o), SeccompAction::Errno(n))
                if o.status == Status::Ok && o.stdout == format!("{n}\n").as_bytes() =>
            {
                Verdict::Pass
            }
            (Ok(o), SeccompAction::KillProcess) if o.status == Status::SecurityViolation => {
                Verdict::Pass
            }
            (Ok(o), _) => Verdict::Fail(describe(&o)),
        }
    }

    async fn uid(&self, exec: Exec) -> Verdict {
        let code = "import os\nprint(os.getuid(), os.getgid())\n";
        let want = format!("{} {}\n", self.spec.uid, self.spec.gid);
        match self
            .outcome(exec, self.request(code, serde_json::json!({})))
            .await
        {
            Err(e) => Verdict::Fail(e),
            Ok(o) if o.stdout == want.as_bytes() => Verdict::Pass,
            Ok(o) => Verdict::Fail(format!("wanted {want:?}; {}", describe(&o))),
        }
    }

    async fn artifacts(&self, exec: Exec) -> Verdict {
        let code = r#"import os
out = os.environ['SKILLGATE_OUTPUT_DIR']
os.makedirs(os.path.join(out, 'sub'))
with open(os.path.join(out, 'sub', 'result.txt'), 'w') as f: f.write('sum=6')
with open(os.path.join(out, 'a.txt'), 'w') as f: f.write('a')
os.link(os.path.join(out, 'a.txt'), os.path.join(out, 'b.txt'))
os.symlink('/etc/passwd', os.path.join(out, 'passwd'))
"#;
        match self
            .outcome(exec, self.request(code, serde_json::json!({})))
            .await
        {
            Err(e) => Verdict::Fail(e),
            Ok(o) => {
                let names: Vec<_> = o
                    .artifacts
                    .iter()
                    .map(|a| (a.name.as_str(), a.content.as_slice()))
                    .collect();
                let rules: Vec<_> = o.findings.iter().map(|f| f.rule_id.as_str()).collect();
                if o.status == Status::Ok
                    && names == [("sub/result.txt", &b"sum=6"[..])]
                    && rules.contains(&"artifact.symlink")
                    && rules.contains(&"artifact.hardlink")
                {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!(
                        "artifacts {names:?}, findings {rules:?}; {}",
                        describe(&o)
                    ))
                }
            }
        }
    }

    async fn out_capped(&self, exec: Exec) -> Verdict {
        let code = r#"import errno, json, os
path = os.path.join(os.environ['SKILLGATE_OUTPUT_DIR'], 'fill.bin')
written, err = 0, None
try:
    with open(path, 'wb') as f:
        while written < 8 << 20:
            f.write(b'x' * 65536)
            f.flush()
            written += 65536
except OSError as e:
    err = e.errno
if os.path.exists(path):
    os.remove(path)
print(json.dumps({'enospc': err in (errno.ENOSPC, errno.EDQUOT), 'errno': err, 'written': written}))
"#;
        let mut req = self.request(code, serde_json::json!({}));
        req.spec.limits.workdir_bytes = 1 << 20;
        req.spec.limits.artifact_total_cap = 1 << 20;
        req.spec.limits.artifact_file_cap = req.spec.limits.artifact_file_cap.min(1 << 20);
        match self.outcome(exec, req).await {
            Err(e) => Verdict::Fail(e),
            Ok(o) => {
                let answer: Option<serde_json::Value> = serde_json::from_slice(&o.stdout).ok();
                let full = answer.as_ref().and_then(|a| a["enospc"].as_bool());
                let written = answer.as_ref().and_then(|a| a["written"].as_u64());
                if o.status == Status::Ok && full == Some(true) && written <= Some(1 << 20) {
                    Verdict::Pass
                } else {
                    Verdict::Fail(format!(
                        "8 MiB into the output directory of a run capped at 1 MiB: {}; {}",
                        answer.map_or_else(|| "no answer".to_string(), |a| a.to_string()),
                        describe(&o)
                    ))
                }
            }
        }
    }

    async fn cleanup(&self, exec: Exec, probe: &Leftovers, timed_out: Option<String>) -> Verdict {
        // A run whose future is dropped while it runs.
        let mut req = self.request("while True: pass\n", serde_json::json!({}));
        req.spec.limits.wall_timeout = Duration::from_secs(60);
        req.spec.limits.cpu_time = None;
        let dropped = req.id.to_string();
        let _ = tokio::time::timeout(Duration::from_secs(3), exec.oneshot(req)).await;
        let ids: Vec<String> = timed_out
            .into_iter()
            .chain(std::iter::once(dropped))
            .collect();
        // The removal of a dropped run is spawned: give it time, not forever.
        let mut last = Vec::new();
        for _ in 0..60 {
            match probe(ids.clone()).await {
                Err(e) => return Verdict::Fail(format!("the cleanup probe failed: {e}")),
                Ok(left) if left.is_empty() => return Verdict::Pass,
                Ok(left) => last = left,
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Verdict::Fail(format!("still there after 30 s: {last:?}"))
    }
}

fn describe(o: &ExecOutcome) -> String {
    format!(
        "status {}, exit {:?}, signal {:?}, stdout {:?}, stderr {:?}, findings {:?}",
        o.status,
        o.exit_code,
        o.signal,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        o.findings
            .iter()
            .map(|f| f.message.as_str())
            .collect::<Vec<_>>()
    )
}
