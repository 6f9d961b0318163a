//! Simulation: hundreds of normal executions across agents and skills, then injected
//! anomalies; every anomaly is detected and false alarms stay under a bound.
mod common;
use common::*;
use skillgate_core::{LayerName, Status};
use skillgate_monitor::Monitor;

const T0: i64 = 1_800_000_000_000;

struct Profile {
    skill: &'static str,
    wall: (u64, u64),
    rss_mib: (u64, u64),
    out: (u64, u64),
}

const PROFILES: [Profile; 3] = [
    Profile {
        skill: "analyze-rows",
        wall: (20, 45),
        rss_mib: (18, 26),
        out: (200, 900),
    },
    Profile {
        skill: "fetch-summary",
        wall: (80, 160),
        rss_mib: (30, 42),
        out: (2_000, 6_000),
    },
    Profile {
        skill: "tiny",
        wall: (1, 4),
        rss_mib: (8, 10),
        out: (0, 40),
    },
];

const AGENTS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];

fn normal(rng: &mut Rng, p: &Profile) -> skillgate_core::ExecOutcome {
    ran(
        rng.range(p.wall.0, p.wall.1),
        rng.range(p.rss_mib.0, p.rss_mib.1) * MIB,
        rng.range(p.out.0, p.out.1) as usize,
    )
}

#[test]
fn anomalies_are_detected_and_false_alarms_are_bounded() {
    let m: Monitor = memory_monitor();
    let mut rng = Rng(0x5eed);
    let mut now = T0;
    let mut normal_runs = 0;
    let mut false_alarms = Vec::new();
    // Warm-up and steady state: 600 normal executions, one every ~10 s, mixed agents and skills.
    for i in 0..600 {
        let agent = AGENTS[i % AGENTS.len()];
        let p = &PROFILES[(i / AGENTS.len()) % PROFILES.len()];
        now += rng.range(5_000, 15_000) as i64;
        let v = m
            .observe_at(&meta(agent, p.skill), &normal(&mut rng, p), now)
            .unwrap();
        normal_runs += 1;
        if !v.findings.is_empty() {
            false_alarms.push((i, ids(&v).join(",")));
        }
    }
    assert!(normal_runs >= 600);
    assert!(
        false_alarms.len() * 100 <= normal_runs,
        "more than 1% false alarms: {false_alarms:?}"
    );

    let expect =
        |now: &mut i64, agent: &str, skill: &str, out: skillgate_core::ExecOutcome, rule: &str| {
            *now += 7_000;
            let v = m.observe_at(&meta(agent, skill), &out, *now).unwrap();
            assert!(
                fired(&v, rule),
                "{rule} expected for {agent}/{skill}, got {:?}",
                ids(&v)
            );
            v
        };
    // Slow: 30× the skill's wall time (and CPU with it).
    let v = expect(
        &mut now,
        "alpha",
        "analyze-rows",
        ran(1_000, 22 * MIB, 500),
        "monitor.wall_above_baseline",
    );
    assert!(v.findings.iter().any(|f| f.message.contains("wall time") && f.message.contains("this skill's baseline")));
    // Memory-hungry: 12× the skill's peak memory.
    expect(
        &mut now,
        "beta",
        "fetch-summary",
        ran(120, 430 * MIB, 4_000),
        "monitor.memory_above_baseline",
    );
    // Output flood: at the cap and far above the baseline.
    let mut flood = ran(40, 22 * MIB, 1024 * 1024);
    flood.stdout_truncated = true;
    let v = expect(
        &mut now,
        "gamma",
        "analyze-rows",
        flood,
        "monitor.output_at_cap",
    );
    assert!(fired(&v, "monitor.output_above_baseline"), "{:?}", ids(&v));
    // Seccomp kill.
    let mut killed = ran(5, 9 * MIB, 0);
    killed.status = Status::SecurityViolation;
    killed.exit_code = None;
    killed.signal = Some(31);
    expect(
        &mut now,
        "delta",
        "tiny",
        killed,
        "monitor.security_violation",
    );
    // Denial burst.
    for _ in 0..4 {
        now += 1_000;
        m.observe_at(
            &meta("beta", "tiny"),
            &rejected(Status::Denied, LayerName::Policy, "tenant-isolation"),
            now,
        )
        .unwrap();
    }
    let v = expect(
        &mut now,
        "beta",
        "tiny",
        rejected(Status::Denied, LayerName::Policy, "tenant-isolation"),
        "monitor.denial_burst",
    );
    assert!(fired(&v, "monitor.throttle"));

    // After the anomalies, normal behaviour is normal again: the baselines were not dragged.
    let mut after = 0;
    for i in 0..120 {
        let agent = AGENTS[i % AGENTS.len()];
        let p = &PROFILES[(i / AGENTS.len()) % PROFILES.len()];
        now += 400_000;
        let v = m
            .observe_at(&meta(agent, p.skill), &normal(&mut rng, p), now)
            .unwrap();
        after += usize::from(!v.findings.is_empty());
    }
    assert!(after <= 2, "{after} false alarms after the anomalies");
}
