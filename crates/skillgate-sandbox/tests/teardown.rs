//! A run's outcome is returned before its teardown (killing and reaping the sandbox's
//! init, removing its cgroup) finishes; dropping the sandbox waits for every teardown.
//! A test binary of its own: it counts this process's children and cgroups.
use skillgate_core::{Caller, ExecRequest, Language, Skill, Status};
use skillgate_sandbox::{CgroupMode, NativeSandbox};
use std::path::PathBuf;
use tower::ServiceExt;

/// Processes whose parent is this process (the children of each of its threads): a quick
/// read, so a teardown still running when the sandbox is dropped would be seen.
fn children() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// This process's run cgroups (`run-<pid>-<n>`) under the sandbox's parents.
fn run_cgroups(mode: &CgroupMode) -> Vec<PathBuf> {
    let parents = match mode {
        CgroupMode::V2 { parent } => vec![parent.clone()],
        CgroupMode::V1 { memory, pids } => vec![memory.clone(), pids.clone()],
        CgroupMode::Unavailable(why) => panic!("no cgroups: {why}"),
    };
    let prefix = format!("run-{}-", std::process::id());
    parents
        .iter()
        .flat_map(|p| std::fs::read_dir(p).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

#[test]
fn dropping_the_sandbox_waits_for_every_teardown() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sandbox = NativeSandbox::new();
    let mode = sandbox.host().cgroups.clone();
    assert!(children().is_empty(), "{:?}", children());
    for i in 0..4 {
        let skill = Skill::builder("t", Language::Python, b"print(7)".to_vec()).build();
        let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        let o = rt.block_on(sandbox.clone().oneshot(req)).unwrap();
        assert_eq!(
            (o.status, o.stdout.as_slice()),
            (Status::Ok, &b"7\n"[..]),
            "run {i}"
        );
    }
    drop(sandbox);
    assert_eq!(
        children(),
        Vec::<String>::new(),
        "an init outlived the sandbox"
    );
    assert_eq!(
        run_cgroups(&mode),
        Vec::<PathBuf>::new(),
        "a cgroup outlived the sandbox"
    );
}
