//! The seccomp and network layers in a tower stack around a recording executor.
use skillgate_confine::{NetworkConfig, SeccompConfig, profile::evaluate};
use skillgate_core::{
    BoxError, Caller, ExecOutcome, ExecRequest, Language, LayerName, NetworkPolicy, SandboxSpec,
    SeccompAction, Skill, Status,
};
use std::sync::{Arc, Mutex};
use tower::{ServiceBuilder, ServiceExt, service_fn};

type Seen = Arc<Mutex<Option<SandboxSpec>>>;

async fn run(
    seccomp: &str,
    network: &str,
    tenant: &str,
    skill: Skill,
) -> (ExecOutcome, Option<SandboxSpec>) {
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    let executor = service_fn(move |req: ExecRequest| {
        let record = Arc::clone(&record);
        async move {
            *record.lock().unwrap() = Some(req.spec.clone());
            Ok::<_, BoxError>(ExecOutcome {
                status: Status::Ok,
                ..Default::default()
            })
        }
    });
    let seccomp: SeccompConfig = toml::from_str(seccomp).unwrap();
    let network: NetworkConfig = toml::from_str(network).unwrap();
    let svc = ServiceBuilder::new()
        .layer(seccomp.build_layer().unwrap())
        .layer(network.build_layer().unwrap())
        .service(executor);
    let req = ExecRequest::new(Caller::new("agent", tenant), skill, serde_json::json!({}));
    let out = svc.oneshot(req).await.unwrap();
    let spec = seen.lock().unwrap().clone();
    (out, spec)
}

fn skill(language: Language, network: NetworkPolicy) -> Skill {
    Skill::builder("s", language, b"".to_vec())
        .network(network)
        .build()
}

fn wants(cidr: &str, port: u16) -> NetworkPolicy {
    skillgate_confine::network::parse_policy(
        &format!("mode = \"allow_list\"\n[[allow]]\ncidr = \"{cidr}\"\nports = [{{ start = {port}, end = {port} }}]\n"),
        "skill",
    )
    .unwrap()
}

const ACME_HTTPS: &str = "[tenants.acme]\nmode = \"allow_list\"\nallow = [{ cidr = \"0.0.0.0/0\", ports = [{ start = 443, end = 443 }] }]\n";

#[tokio::test]
async fn profiles_follow_language_and_tenant_and_the_violation_setting() {
    let cfg = "violation = \"kill\"\n[tenants.acme]\npython = \"strict\"\nviolation = \"errno\"\n";
    let (out, spec) = run(
        cfg,
        "",
        "other",
        skill(Language::Python, NetworkPolicy::None),
    )
    .await;
    assert_eq!(out.status, Status::Ok);
    let p = spec.unwrap().seccomp.unwrap();
    assert_eq!(
        (p.name.as_str(), p.default_action),
        ("python", SeccompAction::KillProcess)
    );
    let (_, spec) = run(
        cfg,
        "",
        "acme",
        skill(Language::Python, NetworkPolicy::None),
    )
    .await;
    let p = spec.unwrap().seccomp.unwrap();
    assert_eq!(
        (p.name.as_str(), p.default_action),
        ("strict", SeccompAction::Errno(1))
    );
    let (out, spec) = run(
        cfg,
        "",
        "acme",
        skill(Language::JavaScript, NetworkPolicy::None),
    )
    .await;
    assert_eq!(spec.unwrap().seccomp.unwrap().name, "node");
    let names: Vec<LayerName> = out.layers.iter().map(|l| l.name).collect();
    assert_eq!(
        names,
        vec![LayerName::Seccomp, LayerName::Network],
        "outermost first"
    );
}

#[tokio::test]
async fn a_skill_asking_for_more_network_than_allowed_is_denied_with_findings() {
    let (out, spec) = run(
        "",
        ACME_HTTPS,
        "other",
        skill(Language::Python, wants("203.0.113.9/32", 443)),
    )
    .await;
    assert_eq!(out.status, Status::Denied);
    assert!(spec.is_none(), "the executor never ran");
    assert_eq!(out.findings.len(), 1);
    assert_eq!(out.findings[0].rule_id, "network.not_allowed");
    assert!(
        out.findings[0].message.contains("203.0.113.9/32")
            && out.findings[0].message.contains("other")
    );
    let (out, _) = run(
        "",
        ACME_HTTPS,
        "acme",
        skill(Language::Python, wants("169.254.169.254/32", 443)),
    )
    .await;
    assert_eq!(
        out.status,
        Status::Denied,
        "metadata is never implied by 0.0.0.0/0"
    );
    let (out, _) = run(
        "",
        ACME_HTTPS,
        "acme",
        skill(Language::Python, wants("203.0.113.9/32", 22)),
    )
    .await;
    assert_eq!(out.status, Status::Denied, "port 22 is not 443");
}

#[tokio::test]
async fn an_allowed_request_is_granted_as_asked_and_opens_inet_sockets() {
    let (out, spec) = run(
        "",
        ACME_HTTPS,
        "acme",
        skill(Language::Python, wants("203.0.113.9/32", 443)),
    )
    .await;
    assert_eq!(out.status, Status::Ok);
    let spec = spec.unwrap();
    assert_eq!(
        spec.network,
        wants("203.0.113.9/32", 443),
        "least privilege: what the skill asked"
    );
    let p = spec.seccomp.unwrap();
    assert_eq!(
        evaluate(&p, "socket", &[2, 1, 0, 0, 0, 0]),
        SeccompAction::Allow
    );
    // Without network, inet sockets stay closed.
    let (_, spec) = run(
        "",
        ACME_HTTPS,
        "acme",
        skill(Language::Python, NetworkPolicy::None),
    )
    .await;
    let spec = spec.unwrap();
    assert!(spec.network.is_none());
    assert_eq!(
        evaluate(&spec.seccomp.unwrap(), "socket", &[2, 1, 0, 0, 0, 0]),
        SeccompAction::Errno(1)
    );
}

#[test]
fn config_errors_name_what_is_wrong() {
    let cfg: SeccompConfig = toml::from_str("python = \"pyhton\"").unwrap();
    let err = cfg.build_layer().unwrap_err().to_string();
    assert!(err.contains("pyhton") && err.contains("strict"), "{err}");
    let cfg: SeccompConfig = toml::from_str("python = \"/nonexistent/preset.toml\"").unwrap();
    assert!(
        cfg.build_layer()
            .unwrap_err()
            .to_string()
            .contains("/nonexistent/preset.toml")
    );
    assert!(toml::from_str::<SeccompConfig>("pyton = \"python\"").is_err());
    let bad = "default = { mode = \"allow_list\", allow = [{ cidr = \"203.0.113.0/24\", ports = [{ start = 0, end = 1 }] }] }";
    let cfg: NetworkConfig = toml::from_str(bad).unwrap();
    assert!(cfg.build_layer().unwrap_err().to_string().contains("0-1"));
}
