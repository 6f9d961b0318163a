//! Prometheus text exposition (format 0.0.4) of the monitor's counters and histograms,
//! read from the store so every process's executions are included. Labels are bounded:
//! status, layer, rule id and action; never an agent or a skill.
use crate::state::MonitorState;
use crate::store::{Store, StoreError};
use std::fmt::Write;

/// Upper bounds (seconds) of the latency histograms' buckets; `+Inf` follows.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0,
];

/// The bucket a value falls in (`LATENCY_BUCKETS.len()` is `+Inf`).
pub fn bucket_of(seconds: f64) -> usize {
    LATENCY_BUCKETS
        .iter()
        .position(|&le| seconds <= le)
        .unwrap_or(LATENCY_BUCKETS.len())
}

/// Renders one label pair with the value escaped as the format requires.
pub fn label(name: &str, value: &str) -> String {
    let mut v = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => v.push_str("\\\\"),
            '"' => v.push_str("\\\""),
            '\n' => v.push_str("\\n"),
            c => v.push(c),
        }
    }
    format!("{name}=\"{v}\"")
}

struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
}

const COUNTERS: [Family; 8] = [
    Family {
        name: "skillgate_executions_total",
        kind: "counter",
        help: "Requests the monitor saw, by final status.",
    },
    Family {
        name: "skillgate_findings_total",
        kind: "counter",
        help: "Findings reported by every layer, by layer and rule.",
    },
    Family {
        name: "skillgate_detections_total",
        kind: "counter",
        help: "Monitor detections that fired, by rule and action.",
    },
    Family {
        name: "skillgate_quarantines_total",
        kind: "counter",
        help: "Agents put in quarantine.",
    },
    Family {
        name: "skillgate_quarantine_releases_total",
        kind: "counter",
        help: "Quarantines lifted by an operator.",
    },
    Family {
        name: "skillgate_skill_flags_total",
        kind: "counter",
        help: "Skills flagged because their own schema or code kept blocking their callers.",
    },
    Family {
        name: "skillgate_skill_unflags_total",
        kind: "counter",
        help: "Skill flags cleared by an operator.",
    },
    Family {
        name: "skillgate_auth_failures_total",
        kind: "counter",
        help: "Credentials a service refused, by reason (missing, malformed, unknown, revoked).",
    },
];

const HISTOGRAMS: [Family; 2] = [
    Family {
        name: "skillgate_layer_duration_seconds",
        kind: "histogram",
        help: "Each layer's own time per request, by layer.",
    },
    Family {
        name: "skillgate_execution_duration_seconds",
        kind: "histogram",
        help: "Wall-clock time of the runs that reached the executor.",
    },
];

fn braces(labels: &str) -> String {
    if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    }
}

fn join(labels: &str, extra: &str) -> String {
    if labels.is_empty() {
        format!("{{{extra}}}")
    } else {
        format!("{{{labels},{extra}}}")
    }
}

/// Renders the exposition text.
///
/// ```
/// let store = skillgate_monitor::Store::open_in_memory().unwrap();
/// let text = skillgate_monitor::metrics::render(&store, 0).unwrap();
/// assert!(text.contains("# TYPE skillgate_quarantined_agents gauge"));
/// assert!(text.contains("skillgate_quarantined_agents 0"));
/// ```
pub fn render(store: &Store, now_ms: i64) -> Result<String, StoreError> {
    render_state(store, now_ms)
}

/// Renders the exposition text of any [`MonitorState`] (the PostgreSQL one of
/// `[store] url`: the counts of every replica).
pub fn render_state(store: &dyn MonitorState, now_ms: i64) -> Result<String, StoreError> {
    let counters = store.counters()?;
    let hists = store.histograms()?;
    let quarantined = store.quarantined()?.len();
    let flagged = store.flagged_skills()?.len();
    let mut out = String::new();
    for fam in &COUNTERS {
        let _ = writeln!(out, "# HELP {} {}", fam.name, fam.help);
        let _ = writeln!(out, "# TYPE {} {}", fam.name, fam.kind);
        let mut any = false;
        for (_, labels, v) in counters.iter().filter(|(n, _, _)| n == fam.name) {
            any = true;
            let _ = writeln!(out, "{}{} {}", fam.name, braces(labels), v);
        }
        if !any
            && !fam.name.contains("executions")
            && !fam.name.contains("findings")
            && !fam.name.contains("detections")
            && !fam.name.contains("auth_failures")
        {
            let _ = writeln!(out, "{} 0", fam.name);
        }
    }
    for fam in &HISTOGRAMS {
        let _ = writeln!(out, "# HELP {} {}", fam.name, fam.help);
        let _ = writeln!(out, "# TYPE {} {}", fam.name, fam.kind);
        let mut series: Vec<&str> = hists
            .iter()
            .filter(|(n, ..)| n == fam.name)
            .map(|(_, l, ..)| l.as_str())
            .collect();
        series.dedup();
        for labels in series {
            let mut counts = vec![0u64; LATENCY_BUCKETS.len() + 1];
            for (_, _, b, c) in hists
                .iter()
                .filter(|(n, l, ..)| n == fam.name && l == labels)
            {
                if let Some(slot) = counts.get_mut(*b) {
                    *slot += c;
                }
            }
            let mut cum = 0;
            for (i, c) in counts.iter().enumerate() {
                cum += c;
                let le = LATENCY_BUCKETS
                    .get(i)
                    .map_or("+Inf".to_string(), |b| b.to_string());
                let _ = writeln!(
                    out,
                    "{}_bucket{} {cum}",
                    fam.name,
                    join(labels, &label("le", &le))
                );
            }
            let sum_name = format!("{}_sum", fam.name);
            let sum = counters
                .iter()
                .find(|(n, l, _)| *n == sum_name && l == labels)
                .map_or(0.0, |(_, _, v)| *v);
            let _ = writeln!(out, "{}_sum{} {sum}", fam.name, braces(labels));
            let _ = writeln!(out, "{}_count{} {cum}", fam.name, braces(labels));
        }
    }
    let _ = writeln!(
        out,
        "# HELP skillgate_quarantined_agents Agents in quarantine now."
    );
    let _ = writeln!(out, "# TYPE skillgate_quarantined_agents gauge");
    let _ = writeln!(out, "skillgate_quarantined_agents {quarantined}");
    let _ = writeln!(
        out,
        "# HELP skillgate_flagged_skills Skills flagged now (see `skillgate monitor skills`)."
    );
    let _ = writeln!(out, "# TYPE skillgate_flagged_skills gauge");
    let _ = writeln!(out, "skillgate_flagged_skills {flagged}");
    let throttled = store
        .agents()?
        .iter()
        .map(|(t, a)| store.throttled_until(t, a, now_ms))
        .collect::<Result<Vec<_>, _>>()?
        .iter()
        .filter(|t| t.is_some())
        .count();
    let _ = writeln!(
        out,
        "# HELP skillgate_throttled_agents Agents under a rate limit now."
    );
    let _ = writeln!(out, "# TYPE skillgate_throttled_agents gauge");
    let _ = writeln!(out, "skillgate_throttled_agents {throttled}");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_escaping() {
        assert_eq!(bucket_of(0.000001), 0);
        assert_eq!(bucket_of(0.002), 5);
        assert_eq!(bucket_of(1e9), LATENCY_BUCKETS.len());
        assert_eq!(label("rule", "a\"b\\c\nd"), r#"rule="a\"b\\c\nd""#);
    }
}
