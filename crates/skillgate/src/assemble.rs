//! Building the whole pipeline from a [`Config`]: which layers, with which settings, in
//! the architecture's order, around which executor. `skillgate run` uses exactly this, and
//! so can a service that embeds skillgate.
use crate::{Config, InputSchemaLayer, PipelineBuilder};
use skillgate_core::{BoxExecService, Language, LayerName};
use skillgate_sandbox::ProcessExecutor;

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
    if enabled(LayerName::Prescan) {
        builder = builder.layer_at(LayerName::Prescan, prescan_layer(&config.prescan)?);
    }
    let _ = &mut builder;
    let _ = enabled;

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

/// The pre-scan layer `[prescan]` describes: the built-in packs or `rules_dir`.
fn prescan_layer(
    cfg: &crate::config::PrescanConfig,
) -> Result<skillgate_prescan::PreScanLayer, AssembleError> {
    use skillgate_prescan::{PreScanLayer, PreScanner, RuleSet, ScanOptions};
    let rules = match &cfg.rules_dir {
        Some(dir) => RuleSet::load_dir(dir),
        None => RuleSet::embedded(),
    }
    .map_err(|e| AssembleError {
        layer: LayerName::Prescan,
        message: e.to_string(),
    })?;
    let options = ScanOptions {
        threshold: cfg.severity_threshold,
        unknown_module: cfg.unknown_module,
        ..ScanOptions::default()
    };
    Ok(PreScanLayer::new(PreScanner::with_rules(
        std::sync::Arc::new(rules),
        options,
    )))
}
