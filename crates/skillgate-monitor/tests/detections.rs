//! Every built-in detection, shown firing and not firing through the whole monitor
//! (store history, baselines, explanations).
mod common;
use common::*;
use skillgate_core::{LayerName, Status};
use skillgate_monitor::detections::Detections;
use std::collections::BTreeSet;

const T0: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;

/// The ids this file tests; the suite fails when a rule is added without a test here.
const TESTED: [&str; 14] = [
    "monitor.nonzero_exit",
    "monitor.security_violation",
    "monitor.resource_exhausted",
    "monitor.denial_burst",
    "monitor.block_burst",
    "monitor.skill_block_burst",
    "monitor.secrets_in_output",
    "monitor.timeout_streak",
    "monitor.output_at_cap",
    "monitor.rate_spike",
    "monitor.wall_above_baseline",
    "monitor.cpu_above_baseline",
    "monitor.memory_above_baseline",
    "monitor.output_above_baseline",
];

#[test]
fn every_builtin_detection_has_a_test() {
    let builtin = Detections::builtin();
    let shipped: BTreeSet<&str> = builtin.rules().iter().map(|r| r.id.as_str()).collect();
    let tested: BTreeSet<&str> = TESTED.into_iter().collect();
    assert_eq!(shipped, tested);
}

#[test]
fn the_rules_directory_loads_like_the_builtin_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/monitor");
    let loaded = Detections::load_dir(&dir).unwrap();
    assert_eq!(loaded.rules(), Detections::builtin().rules());
}

#[test]
fn nonzero_exit() {
    let m = memory_monitor();
    let mut o = ran(10, MIB, 10);
    o.exit_code = Some(3);
    let v = m.observe_at(&meta("a", "s"), &o, T0).unwrap();
    assert!(fired(&v, "monitor.nonzero_exit"), "{:?}", ids(&v));
    assert!(v.findings[0].message.contains("exit code 3"));
    let v = m
        .observe_at(&meta("a", "s"), &ran(10, MIB, 10), T0 + 1)
        .unwrap();
    assert!(!fired(&v, "monitor.nonzero_exit"));
}

#[test]
fn security_violation() {
    let m = memory_monitor();
    let v = m
        .observe_at(&meta("a", "s"), &with_status(Status::SecurityViolation), T0)
        .unwrap();
    assert!(fired(&v, "monitor.security_violation"));
    let v = m
        .observe_at(&meta("a", "s"), &with_status(Status::Timeout), T0 + 1)
        .unwrap();
    assert!(!fired(&v, "monitor.security_violation"));
}

#[test]
fn resource_exhausted() {
    let m = memory_monitor();
    let v = m
        .observe_at(&meta("a", "s"), &with_status(Status::ResourceExhausted), T0)
        .unwrap();
    assert!(fired(&v, "monitor.resource_exhausted"));
    let v = m
        .observe_at(&meta("a", "s"), &with_status(Status::Ok), T0 + 1)
        .unwrap();
    assert!(!fired(&v, "monitor.resource_exhausted"));
}

#[test]
fn denial_burst_counts_within_the_window_per_agent() {
    let m = memory_monitor();
    let denied = rejected(Status::Denied, LayerName::Policy, "tenant-isolation");
    for i in 0..4 {
        let v = m
            .observe_at(&meta("a", "s"), &denied, T0 + i * MIN)
            .unwrap();
        assert!(!fired(&v, "monitor.denial_burst"), "request {i}");
        // Another agent's denials do not count for `a`.
        m.observe_at(&meta("b", "s"), &denied, T0 + i * MIN + 1)
            .unwrap();
    }
    let v = m
        .observe_at(&meta("a", "s"), &denied, T0 + 4 * MIN)
        .unwrap();
    assert!(fired(&v, "monitor.denial_burst"), "{:?}", ids(&v));
    assert!(
        v.findings
            .iter()
            .any(|f| f.message.contains("5 denied requests for this agent in 5m"))
    );
    // Spread out, the same number is no burst.
    let m = memory_monitor();
    for i in 0..5 {
        let v = m
            .observe_at(&meta("a", "s"), &denied, T0 + i * 2 * MIN)
            .unwrap();
        assert!(!fired(&v, "monitor.denial_burst"));
    }
}

#[test]
fn block_burst() {
    let m = memory_monitor();
    let blocked = rejected(Status::Blocked, LayerName::Prescan, "py.subprocess");
    let mut last = None;
    for i in 0..5 {
        last = Some(
            m.observe_at(&meta("a", "s"), &blocked, T0 + i * 1000)
                .unwrap(),
        );
        if i < 4 {
            assert!(!fired(last.as_ref().unwrap(), "monitor.block_burst"));
        }
    }
    assert!(fired(&last.unwrap(), "monitor.block_burst"));
}

#[test]
fn skill_block_burst_counts_the_skills_blocks_whoever_calls_it() {
    let m = memory_monitor();
    let blocked = skill_blocked(LayerName::Input, "input.schema");
    let mut v = None;
    for i in 0..5 {
        let agent = format!("agent-{}", i % 3);
        let r = m
            .observe_at(&folder_meta(&agent, "bad-schema"), &blocked, T0 + i * 1000)
            .unwrap();
        assert!(!fired(&r, "monitor.block_burst"), "{:?}", ids(&r));
        assert_eq!(
            fired(&r, "monitor.skill_block_burst"),
            i == 4,
            "{i}: {:?}",
            ids(&r)
        );
        v = Some(r);
    }
    let v = v.unwrap();
    assert!(
        v.skill_flagged && fired(&v, "monitor.flag_skill"),
        "{:?}",
        ids(&v)
    );
    // Another skill's blocks are not counted with them.
    let other = m
        .observe_at(&folder_meta("agent-0", "other"), &blocked, T0 + 6000)
        .unwrap();
    assert!(!fired(&other, "monitor.skill_block_burst"));
    // Blocks of code the agent submitted itself are the agent's.
    let bare = rejected(Status::Blocked, LayerName::Prescan, "py.subprocess");
    for i in 0..5 {
        let r = m
            .observe_at(&meta("agent-0", "own"), &bare, T0 + 7000 + i)
            .unwrap();
        assert!(!fired(&r, "monitor.skill_block_burst"));
        assert_eq!(
            fired(&r, "monitor.block_burst"),
            i == 4,
            "{i}: {:?}",
            ids(&r)
        );
    }
}

#[test]
fn secrets_in_output() {
    let m = memory_monitor();
    let mut o = ran(10, MIB, 10);
    o.findings.push(skillgate_core::Finding::new(
        LayerName::Secrets,
        "aws-access-key",
        skillgate_core::Severity::High,
        "redacted",
    ));
    let v = m.observe_at(&meta("a", "s"), &o, T0).unwrap();
    assert!(fired(&v, "monitor.secrets_in_output"));
    let mut o = ran(10, MIB, 10);
    o.findings.push(skillgate_core::Finding::new(
        LayerName::Prescan,
        "py.eval",
        skillgate_core::Severity::Low,
        "x",
    ));
    let v = m.observe_at(&meta("a", "s"), &o, T0 + 1).unwrap();
    assert!(!fired(&v, "monitor.secrets_in_output"));
}

#[test]
fn timeout_streak_is_per_skill_and_broken_by_success() {
    let m = memory_monitor();
    let to = with_status(Status::Timeout);
    m.observe_at(&meta("a", "s"), &to, T0).unwrap();
    m.observe_at(&meta("a", "other"), &to, T0 + 1).unwrap();
    m.observe_at(&meta("a", "s"), &to, T0 + 2).unwrap();
    m.observe_at(&meta("a", "s"), &ran(10, MIB, 1), T0 + 3)
        .unwrap();
    let v = m.observe_at(&meta("a", "s"), &to, T0 + 4).unwrap();
    assert!(
        !fired(&v, "monitor.timeout_streak"),
        "a success broke the streak"
    );
    m.observe_at(&meta("a", "s"), &to, T0 + 5).unwrap();
    let v = m.observe_at(&meta("a", "s"), &to, T0 + 6).unwrap();
    assert!(fired(&v, "monitor.timeout_streak"), "{:?}", ids(&v));
    assert!(
        fired(&v, "monitor.throttle"),
        "the streak throttles: {:?}",
        ids(&v)
    );
}

#[test]
fn output_at_cap() {
    let m = memory_monitor();
    let mut o = ran(10, MIB, 10);
    o.stderr_truncated = true;
    let v = m.observe_at(&meta("a", "s"), &o, T0).unwrap();
    assert!(fired(&v, "monitor.output_at_cap"));
    assert!(
        v.findings
            .iter()
            .any(|f| f.message.contains("stderr reached its cap"))
    );
    let v = m
        .observe_at(&meta("a", "s"), &ran(10, MIB, 10), T0 + 1)
        .unwrap();
    assert!(!fired(&v, "monitor.output_at_cap"));
}

#[test]
fn rate_spike_against_the_agents_own_average() {
    let m = memory_monitor();
    // An hour of one request every two minutes.
    for i in 0..30 {
        let v = m
            .observe_at(&meta("a", "s"), &ran(10, MIB, 10), T0 + i * 2 * MIN)
            .unwrap();
        assert!(!fired(&v, "monitor.rate_spike"));
    }
    // A new agent starting busy has no average to spike above.
    for i in 0..40 {
        let v = m
            .observe_at(&meta("new", "s"), &ran(10, MIB, 10), T0 + i * 1000)
            .unwrap();
        assert!(!fired(&v, "monitor.rate_spike"));
    }
    // Then 40 in one minute.
    let start = T0 + 60 * MIN;
    let mut hits = 0;
    for i in 0..40 {
        let v = m
            .observe_at(&meta("a", "s"), &ran(10, MIB, 10), start + i * 1000)
            .unwrap();
        if fired(&v, "monitor.rate_spike") {
            hits += 1;
        }
    }
    assert!(hits > 0, "the spike was detected");
    assert!(
        hits <= 11,
        "only once the minute holds 30+ requests: {hits}"
    );
}

fn warm(m: &skillgate_monitor::Monitor, agent: &str) -> i64 {
    let mut rng = Rng(7);
    for i in 0..30 {
        let o = ran(
            rng.range(8, 14),
            rng.range(18, 22) * MIB,
            rng.range(80, 120) as usize,
        );
        let v = m
            .observe_at(&meta(agent, "s"), &o, T0 + i * 2 * MIN)
            .unwrap();
        assert!(v.findings.is_empty(), "normal run {i}: {:?}", ids(&v));
    }
    T0 + 61 * MIN
}

#[test]
fn wall_above_baseline_explains_the_ratio() {
    let m = memory_monitor();
    let t = warm(&m, "a");
    let v = m
        .observe_at(&meta("a", "s"), &ran(450, 20 * MIB, 100), t)
        .unwrap();
    assert!(fired(&v, "monitor.wall_above_baseline"), "{:?}", ids(&v));
    let f = v
        .findings
        .iter()
        .find(|f| f.rule_id == "monitor.wall_above_baseline")
        .unwrap();
    assert!(
        f.message.contains("wall time")
            && f.message.contains("× this skill's baseline")
            && f.message.contains("over 30 runs"),
        "{}",
        f.message
    );
    let v = m
        .observe_at(&meta("a", "s"), &ran(20, 20 * MIB, 100), t + 1)
        .unwrap();
    assert!(!fired(&v, "monitor.wall_above_baseline"));
}

#[test]
fn baselines_need_min_samples() {
    let m = memory_monitor();
    for i in 0..5 {
        m.observe_at(&meta("a", "s"), &ran(10, 20 * MIB, 100), T0 + i)
            .unwrap();
    }
    let v = m
        .observe_at(&meta("a", "s"), &ran(5000, 20 * MIB, 100), T0 + 10)
        .unwrap();
    assert!(
        !fired(&v, "monitor.wall_above_baseline"),
        "5 samples are not a baseline"
    );
}

/// After a warm baseline, `anomalous` fires `rule` and `normal` does not.
fn fires_above_baseline(
    rule: &str,
    anomalous: skillgate_core::ExecOutcome,
    normal: skillgate_core::ExecOutcome,
) {
    let m = memory_monitor();
    let t = warm(&m, "a");
    let v = m.observe_at(&meta("a", "s"), &anomalous, t).unwrap();
    assert!(fired(&v, rule), "{rule}: {:?}", ids(&v));
    let v = m.observe_at(&meta("a", "s"), &normal, t + 1).unwrap();
    assert!(!fired(&v, rule), "{rule} on a normal run");
}

#[test]
fn cpu_above_baseline() {
    let mut o = ran(12, 20 * MIB, 100);
    o.usage.user_cpu = std::time::Duration::from_millis(900);
    fires_above_baseline("monitor.cpu_above_baseline", o, ran(12, 20 * MIB, 100));
}

#[test]
fn memory_above_baseline() {
    fires_above_baseline(
        "monitor.memory_above_baseline",
        ran(12, 200 * MIB, 100),
        ran(12, 30 * MIB, 100),
    );
}

#[test]
fn output_above_baseline() {
    fires_above_baseline(
        "monitor.output_above_baseline",
        ran(12, 20 * MIB, 500_000),
        ran(12, 20 * MIB, 900),
    );
}

#[test]
fn bad_rule_files_name_what_is_wrong() {
    let cases = [
        (
            "[[detection]]\nid = \"x\"\nseverity = \"high\"\naction = \"alert\"\nmessage = \"m\"\nwhen = { kind = \"teleport\" }\n",
            "teleport",
        ),
        (
            "[[detection]]\nid = \"x\"\nseverity = \"high\"\naction = \"alert\"\nmessage = \"m\"\nwhen = { kind = \"burst\", statuses = [\"denied\"], count = 1, window = \"1m\" }\n",
            "count",
        ),
        (
            "[[detection]]\nid = \"x\"\nseverity = \"high\"\naction = \"nuke\"\nmessage = \"m\"\nwhen = { kind = \"nonzero_exit\" }\n",
            "nuke",
        ),
        (
            "[[detection]]\nid = \"x\"\nseverity = \"high\"\naction = \"alert\"\nmessage = \"m\"\nwhen = { kind = \"above_baseline\", metric = \"wall\", factor = 0.5 }\n",
            "factor",
        ),
        (
            "[[detection]]\nid = \"x y\"\nseverity = \"high\"\naction = \"alert\"\nmessage = \"m\"\nwhen = { kind = \"nonzero_exit\" }\n",
            "x y",
        ),
        (
            "[[detection]]\nid = \"x\"\nseverity = \"high\"\naction = \"quarantine\"\nmessage = \"m\"\nwhen = { kind = \"burst\", statuses = [\"blocked\"], count = 2, window = \"1m\", against = \"skill\" }\n",
            "cannot throttle or quarantine the agent",
        ),
    ];
    for (text, needle) in cases {
        let err = Detections::from_toml(text, "r.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("r.toml") && err.contains(needle), "{err}");
    }
    let one = "[[detection]]\nid = \"x\"\nseverity = \"high\"\naction = \"alert\"\nmessage = \"m\"\nwhen = { kind = \"nonzero_exit\" }\n";
    let err = Detections::from_toml(&format!("{one}{one}"), "r.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("duplicate"), "{err}");
}

// Issue 20, item 15: a custom folder adds to the built-in detections when its pack.toml
// says so, and replaces them otherwise.
#[test]
fn a_custom_folder_extends_or_replaces_the_built_in_detections() {
    let rule = |id: &str| {
        format!(
            "[[detection]]\nid = \"{id}\"\ndescription = \"d\"\nseverity = \"low\"\naction = \"alert\"\nmessage = \"m\"\nwhen = {{ kind = \"nonzero_exit\" }}\n"
        )
    };
    let builtin = Detections::builtin().rules().len();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("site.toml"), rule("site.exit")).unwrap();
    assert_eq!(Detections::load_dir(dir.path()).unwrap().rules().len(), 1);
    std::fs::write(dir.path().join("pack.toml"), "extends = \"builtin\"\n").unwrap();
    let extended = Detections::load_dir(dir.path()).unwrap();
    assert_eq!(extended.rules().len(), builtin + 1);
    assert!(extended.rules().iter().any(|r| r.id == "site.exit"));
    assert!(
        extended
            .rules()
            .iter()
            .any(|r| r.id == "monitor.security_violation")
    );
    // Re-using a built-in id is an error, and so is a pack.toml that says something else.
    std::fs::write(dir.path().join("site.toml"), rule("monitor.nonzero_exit")).unwrap();
    let err = Detections::load_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("duplicate detection id"), "{err}");
    std::fs::write(dir.path().join("pack.toml"), "extends = \"everything\"\n").unwrap();
    let err = Detections::load_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("pack.toml"), "{err}");
}
