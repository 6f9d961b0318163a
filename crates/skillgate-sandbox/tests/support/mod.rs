//! Finding a sleeping skill's sandbox among this process's children (for the test
//! binaries that end runs from outside).
#![allow(dead_code, unreachable_pub)]
use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill};
use skillgate_sandbox::NativeSandbox;
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// A sleeping skill's request: it sleeps for a minute, its wall clock is two.
pub fn sleeper_request() -> ExecRequest {
    let skill = Skill::builder(
        "t",
        Language::Python,
        b"import time\ntime.sleep(60)".to_vec(),
    )
    .build();
    let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    req.spec.limits.wall_timeout = Duration::from_secs(120);
    req
}

pub fn children(pid: &str) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .flat_map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .collect()
        })
        .unwrap_or_default()
}

/// Starts a skill that sleeps for a minute; returns the run and the init's pid once the
/// skill runs.
pub fn start_sleeper() -> (std::thread::JoinHandle<ExecOutcome>, i32) {
    let run = std::thread::spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(NativeSandbox::new().oneshot(sleeper_request()))
            .unwrap()
    });
    (run, wait_for_init())
}

/// The sandbox init's pid, once its skill runs (the init is this process's only one).
pub fn wait_for_init() -> i32 {
    let waiting = Instant::now();
    loop {
        // The sandbox's init by its name: the interpreter's resolution may run a probe
        // process (a pyenv shim, with children of its own) as another child meanwhile.
        let inits: Vec<String> = children("self")
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim() == "sandbox-init")
            })
            .collect();
        if let [init] = inits.as_slice()
            && !children(init).is_empty()
        {
            return init.parse().unwrap();
        }
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "the skill never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
