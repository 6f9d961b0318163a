//! The pre-scan as a tower layer.
use skillgate_core::{
    BoxError, Caller, ExecOutcome, ExecRequest, Language, LayerName, Severity, Skill, Status,
};
use skillgate_prescan::{PreScanLayer, PreScanner};
use std::sync::{Arc, Mutex};
use tower::{Layer, ServiceExt, service_fn};

fn request(code: &str, lang: Language) -> ExecRequest {
    let skill = Skill::builder("s", lang, code.as_bytes().to_vec()).build();
    ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}))
}

fn run(code: &str, lang: Language) -> (ExecOutcome, Option<ExecRequest>) {
    let seen: Arc<Mutex<Option<ExecRequest>>> = Arc::default();
    let seen2 = seen.clone();
    let inner = service_fn(move |req: ExecRequest| {
        *seen2.lock().unwrap() = Some(req);
        async {
            Ok::<_, BoxError>(ExecOutcome {
                status: Status::Ok,
                ..Default::default()
            })
        }
    });
    let svc = PreScanLayer::new(PreScanner::new().unwrap()).layer(inner);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(svc.oneshot(request(code, lang))).unwrap();
    let req = seen.lock().unwrap().take();
    (out, req)
}

#[test]
fn blocked_code_never_reaches_the_executor() {
    let (out, req) = run(
        "const cp = require('child_process');\n",
        Language::JavaScript,
    );
    assert_eq!(out.status, Status::Blocked);
    assert!(req.is_none());
    let f = &out.findings[0];
    assert_eq!(
        (f.layer, f.rule_id.as_str()),
        (LayerName::Prescan, "js.process.child-process")
    );
    assert_eq!(f.location.unwrap().line, 1);
    assert!(out.layer_timing(LayerName::Prescan).is_some());
}

#[test]
fn warnings_travel_on_the_request_and_end_in_the_outcome() {
    let (out, req) = run("import yaml\nprint(1)\n", Language::Python);
    assert_eq!(out.status, Status::Ok);
    let req = req.expect("the executor ran");
    assert_eq!(req.findings.len(), 1);
    assert_eq!(req.findings[0].severity, Severity::Low);
    assert_eq!(out.findings[0].rule_id, "py.module.unlisted");
    assert!(out.layer_timing(LayerName::Prescan).is_some());
}

#[test]
fn clean_code_passes_silently() {
    let (out, req) = run("import json\nprint(json.dumps({}))\n", Language::Python);
    assert_eq!(out.status, Status::Ok);
    assert!(req.unwrap().findings.is_empty());
    assert!(out.findings.is_empty());
}
