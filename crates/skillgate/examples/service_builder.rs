//! The pipeline as a plain `tower::ServiceBuilder` stack around the native sandbox: what
//! `skillgate::assemble::from_config` builds, spelled out layer by layer. Swap
//! `native_sandbox` for your own executor service to wrap what you already run.
//!
//! ```sh
//! cargo run -p skillgate --example service_builder
//! ```
use skillgate::{
    BoxError, Caller, Config, ExecRequest, InputSchemaLayer, IsolationLayer, skill_dir,
};
use skillgate_confine::NetworkLayer;
use skillgate_policy::{Policy, PolicyLayer, PolicySources};
use skillgate_prescan::{PreScanLayer, PreScanner};
use skillgate_secrets::{Mode, SecretScanner, SecretsLayer};
use tower::{ServiceBuilder, ServiceExt};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = Config::default();
    let sandbox = skillgate::assemble::native_sandbox(&config);
    let policy = Policy::load(&PolicySources {
        entities: Some(repo.join("examples/entities.json")),
        catalogue: Some(repo.join("examples/catalogue.json")),
        ..PolicySources::default()
    })?;

    // Outermost first: the order of the architecture (the monitor, left out here, would
    // go first).
    let pipeline = ServiceBuilder::new()
        .layer(PolicyLayer::new(policy))
        .layer(InputSchemaLayer::new())
        .layer(PreScanLayer::new(PreScanner::new()?))
        .layer(IsolationLayer::new(
            config.limits,
            config.isolation.clone(),
            sandbox.capabilities(),
        ))
        .layer(config.seccomp.build_layer()?)
        .layer(NetworkLayer::new(config.network.default.clone()))
        .layer(SecretsLayer::new(
            SecretScanner::default_pack()?,
            Mode::Redact,
        ))
        .service(sandbox);

    let skill = skill_dir::load(&repo.join("examples/skills/analyze-rows"))?;
    let input = serde_json::json!({"query": "revenue", "data": [1, 2, 3]});
    let req = ExecRequest::new(Caller::new("analyst-1", "acme"), skill, input);
    let outcome = pipeline.oneshot(req).await?;
    println!(
        "{}: {}",
        outcome.status,
        String::from_utf8_lossy(&outcome.stdout).trim()
    );
    for f in &outcome.findings {
        println!(
            "  [{}] {} {}: {}",
            f.severity, f.layer, f.rule_id, f.message
        );
    }
    Ok(())
}
