//! Dropping a native run's future before it is done kills its sandbox (a server whose
//! client cancelled the request must not leave the skill running to its wall clock). A
//! test binary of its own: it looks for the sandbox's init among this process's children.
use skillgate_sandbox::NativeSandbox;
use std::time::{Duration, Instant};
use tower::ServiceExt;

mod support;

fn alive(pid: i32) -> bool {
    // A zombie is dead: only the init's reaping parent removes it.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn dropping_the_runs_future_kills_the_sandbox() {
    let (drop_tx, drop_rx) = tokio::sync::oneshot::channel::<()>();
    let (dropped_tx, dropped_rx) = std::sync::mpsc::channel::<()>();
    let runner = std::thread::spawn(move || {
        // The runtime outlives the dropped future (its shutdown would wait for the blocking
        // run): only the drop may end the run.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let run = NativeSandbox::new().oneshot(support::sleeper_request());
            tokio::select! {
                out = run => panic!("the sleeper ended on its own: {out:?}"),
                _ = drop_rx => {}
            }
            // `run` is dropped here, with its skill still sleeping.
        });
        dropped_tx.send(()).unwrap();
        rt
    });
    let init = support::wait_for_init();
    drop_tx.send(()).unwrap();
    dropped_rx.recv().unwrap();
    // The skill sleeps a minute with two on its clock: only the cancel ends it sooner.
    let waiting = Instant::now();
    while alive(init) {
        assert!(
            waiting.elapsed() < Duration::from_secs(30),
            "the sandbox outlived its dropped run"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(runner.join().unwrap());
}
