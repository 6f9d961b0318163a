//! Building the whole pipeline from a [`Config`]: which layers, with which settings, in
//! the architecture's order, around which executor. `skillgate run` uses exactly this, and
//! so can a service that embeds skillgate.
use crate::{Config, InputSchemaLayer, PipelineBuilder};
use skillgate_core::{BoxExecService, Language, LayerName};
use skillgate_sandbox::ProcessExecutor;
use skillgate_secrets::{RuleSetBuilder, SecretScanner, SecretsLayer};

/// A configuration that cannot be turned into a pipeline (a rule pack or policy that does
/// not load, say). Refusing to start is the fail-closed answer.
#[derive(Debug, thiserror::Error)]
#[error("{layer} layer: {message}")]
pub struct AssembleError {
    /// The layer whose setup failed.
    pub layer: LayerName,
    /// What is wrong, naming the file or key.
    pub message: String,
}

/// The assembled pipeline and what a user should be told about it.
#[derive(Debug)]
pub struct Assembled {
    /// The pipeline, ready to call.
    pub service: BoxExecService,
    /// Warnings for the user (a disabled layer, weaker enforcement).
    pub notices: Vec<String>,
}

/// Builds the pipeline `config` describes, without the `disabled` layers.
///
/// ```no_run
/// let assembled = skillgate::assemble::from_config(&skillgate::Config::default(), &[]).unwrap();
/// # drop(assembled);
/// ```
pub fn from_config(config: &Config, disabled: &[LayerName]) -> Result<Assembled, AssembleError> {
    let mut notices: Vec<String> = disabled
        .iter()
        .map(|l| format!("the {l} layer is disabled for this run"))
        .collect();
    let enabled = |l: LayerName| !disabled.contains(&l);
    // The input schema gate is part of the skill's contract, not a security layer that
    // can be switched off.
    let mut builder = PipelineBuilder::new().layer_at(LayerName::Input, InputSchemaLayer::new());
    if enabled(LayerName::Secrets) {
        let (layer, secret_notices) = secrets_layer(&config.secrets)?;
        builder = builder.layer_at(LayerName::Secrets, layer);
        notices.extend(secret_notices);
    }

    let mut executor = ProcessExecutor::new();
    if let Some(p) = &config.interpreters.python {
        executor = executor.with_interpreter(Language::Python, p);
    }
    if let Some(p) = &config.interpreters.javascript {
        executor = executor.with_interpreter(Language::JavaScript, p);
    }
    notices.push(
        "execution is not isolated: skills run as plain processes (process tier) until the native sandbox lands".into(),
    );
    Ok(Assembled {
        service: builder.build(executor),
        notices,
    })
}

/// The secrets layer `[secrets]` describes, and notices about gitleaks rules that could
/// not be imported.
fn secrets_layer(
    cfg: &crate::config::SecretsConfig,
) -> Result<(SecretsLayer, Vec<String>), AssembleError> {
    let err = |message: String| AssembleError {
        layer: LayerName::Secrets,
        message,
    };
    let mut rules = if cfg.default_rules {
        RuleSetBuilder::with_default_pack().map_err(|e| err(e.to_string()))?
    } else {
        RuleSetBuilder::new()
    };
    for path in &cfg.rules {
        rules.add_file(path).map_err(|e| err(e.to_string()))?;
    }
    let mut notices = Vec::new();
    if let Some(path) = &cfg.gitleaks {
        let text = std::fs::read_to_string(path).map_err(|e| {
            err(format!(
                "cannot read gitleaks config {}: {e}",
                path.display()
            ))
        })?;
        let import = rules
            .add_gitleaks(&text, &path.display().to_string())
            .map_err(|e| err(e.to_string()))?;
        notices.extend(import.untranslated.iter().map(|u| {
            format!(
                "secrets: gitleaks rule `{}` from {} not imported: {}",
                u.id,
                path.display(),
                u.reason
            )
        }));
    }
    let set = rules.build().map_err(|e| err(e.to_string()))?;
    if set.is_empty() {
        return Err(err(
            "no secret rules: default_rules is false and no rule file is given".into(),
        ));
    }
    Ok((
        SecretsLayer::new(SecretScanner::new(set), cfg.mode),
        notices,
    ))
}
