//! Helpers shared by the monitor's integration tests.
#![allow(dead_code, unreachable_pub)]
use skillgate_core::{
    Caller, ExecOutcome, ExecRequest, Finding, Language, LayerName, ResourceUsage, Severity, Skill,
    Status,
};
use skillgate_monitor::detections::Detections;
use skillgate_monitor::{Monitor, MonitorConfig, RequestMeta, Store, Verdict};
use std::sync::Arc;
use std::time::Duration;

pub const MIB: u64 = 1024 * 1024;

pub fn memory_monitor() -> Monitor {
    Monitor::new(
        Arc::new(Store::open_in_memory().unwrap()),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap()
}

pub fn meta(agent: &str, skill: &str) -> RequestMeta {
    let s = Skill::builder(skill, Language::Python, skill.as_bytes().to_vec()).build();
    RequestMeta::of(&ExecRequest::new(
        Caller::new(agent, "acme"),
        s,
        serde_json::json!({}),
    ))
}

/// A request for a published skill (one the operator recorded), not code the agent
/// submitted.
pub fn folder_meta(agent: &str, skill: &str) -> RequestMeta {
    meta(agent, skill).published(true)
}

/// A request blocked at `layer` (its decision recorded the way the pipeline's deciding
/// layers record it: the rejecting stage is the innermost timing).
pub fn skill_blocked(layer: LayerName, rule: &str) -> ExecOutcome {
    let mut out = ExecOutcome::rejected(Status::Blocked, Vec::new());
    out.record_layer(
        layer,
        Duration::from_micros(5),
        vec![Finding::new(layer, rule, Severity::High, "no")],
    );
    out.record_layer(LayerName::Policy, Duration::from_micros(5), Vec::new());
    out
}

/// A completed run.
pub fn ran(wall_ms: u64, rss: u64, out_bytes: usize) -> ExecOutcome {
    ExecOutcome {
        status: Status::Ok,
        exit_code: Some(0),
        stdout: vec![b'x'; out_bytes],
        usage: ResourceUsage {
            wall: Duration::from_millis(wall_ms),
            user_cpu: Duration::from_millis(wall_ms * 8 / 10),
            system_cpu: Duration::from_millis(wall_ms / 10),
            max_rss_bytes: rss,
        },
        ..Default::default()
    }
}

pub fn with_status(status: Status) -> ExecOutcome {
    let mut o = ran(12, 20 * MIB, 100);
    o.status = status;
    o
}

pub fn rejected(status: Status, layer: LayerName, rule: &str) -> ExecOutcome {
    ExecOutcome::rejected(
        status,
        vec![Finding::new(layer, rule, Severity::High, "no")],
    )
}

pub fn fired(v: &Verdict, id: &str) -> bool {
    v.findings.iter().any(|f| f.rule_id == id)
}

pub fn ids(v: &Verdict) -> Vec<&str> {
    v.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

/// A tiny deterministic generator (xorshift), for reproducible jitter.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
}
