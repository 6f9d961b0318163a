//! Runs that end without the skill ending: an init killed from outside, and runs
//! cancelled by `cancel_runs` (the CLI's SIGTERM). Both still end in an outcome (that the
//! layers above report and audit), never an error. A test binary of its own: it looks for
//! the sandbox's init among this process's children, and cancelling is for the whole
//! process.
use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill, Status};
use skillgate_sandbox::NativeSandbox;

use tower::ServiceExt;

mod support;
use support::start_sleeper;

fn rules(o: &ExecOutcome) -> Vec<&str> {
    o.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

/// One test, in order: each part finds its init as this process's only child, and
/// cancelling ends every later run of the process.
#[test]
fn runs_ended_from_outside_are_outcomes() {
    an_init_killed_from_outside_is_an_outcome_naming_it();
    cancelled_runs_end_as_cancelled_and_later_runs_do_not_start();
}

fn an_init_killed_from_outside_is_an_outcome_naming_it() {
    let (run, init) = start_sleeper();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(init).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let o = run.join().expect("the run returned an outcome");
    assert_eq!(o.status, Status::Error, "{:?}", o.findings);
    let died = o
        .findings
        .iter()
        .find(|f| f.rule_id == "sandbox.init_died")
        .unwrap_or_else(|| panic!("{:?}", rules(&o)));
    assert!(died.message.contains("signal 9"), "{}", died.message);
}

fn cancelled_runs_end_as_cancelled_and_later_runs_do_not_start() {
    let (run, _) = start_sleeper();
    skillgate_sandbox::cancel_runs();
    let o = run.join().expect("the run returned an outcome");
    assert_eq!(o.status, Status::Error, "{:?}", o.findings);
    assert!(rules(&o).contains(&"sandbox.cancelled"), "{:?}", rules(&o));
    assert_eq!(o.signal, Some(libc::SIGKILL));
    // The process is shutting down: a run asked for now is cancelled before it starts.
    let skill = Skill::builder("t", Language::Python, b"print(1)".to_vec()).build();
    let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    let o = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(NativeSandbox::new().oneshot(req))
        .unwrap();
    assert_eq!(o.status, Status::Error);
    assert!(rules(&o).contains(&"sandbox.cancelled"), "{:?}", rules(&o));
    assert!(o.stdout.is_empty());
}
