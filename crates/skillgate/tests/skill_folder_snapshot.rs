//! What runs is what was loaded and checked: a skill folder changed on disk after it was
//! loaded does not change what the sandbox gets.
use skillgate::{Caller, ExecRequest, LayerName, Status, assemble, skill_dir};
use tower::ServiceExt;

#[test]
fn files_swapped_after_loading_do_not_reach_the_sandbox() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("snapshot");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: snapshot\ndescription: Prints its data and its helper's.\n---\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts/main.py"),
        "import helper\nprint(open('/work/assets/data.txt').read(), helper.WHO)\n",
    )
    .unwrap();
    std::fs::write(dir.join("scripts/helper.py"), "WHO = 'checked'\n").unwrap();
    std::fs::write(dir.join("assets/data.txt"), "loaded").unwrap();

    let skill = skill_dir::load(&dir).unwrap();
    // After the check, before the run: swap a data file and the helper's code.
    std::fs::write(dir.join("assets/data.txt"), "swapped").unwrap();
    std::fs::write(
        dir.join("scripts/helper.py"),
        "import subprocess\nWHO = 'swapped'\n",
    )
    .unwrap();

    let assembled = assemble::from_config(
        &skillgate::Config::default(),
        &[LayerName::Policy, LayerName::Monitor],
    )
    .unwrap();
    let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    let out = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(assembled.service.oneshot(req))
        .unwrap();
    assert_eq!(
        out.status,
        Status::Ok,
        "{:?} {}",
        out.findings,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "loaded checked\n");
}
