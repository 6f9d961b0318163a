//! Building the whole pipeline from a [`Config`]: which layers, with which settings, in
//! the architecture's order, around which executor. `skillgate run` uses exactly this, and
//! so can a service that embeds skillgate.
use crate::{Config, InputSchemaLayer, PipelineBuilder};
use skillgate_core::{BoxExecService, Language, LayerName, NoQuarantine, QuarantineSource};
use skillgate_sandbox::ProcessExecutor;
use std::sync::Arc;

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
    /// Who is quarantined: the monitor's store, or nobody when the monitor is disabled.
    /// The policy layer reads it (its quarantine `forbid`).
    pub quarantine: Arc<dyn QuarantineSource>,
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
    let _ = &mut builder;
    let _ = enabled;
    // The monitor: outermost. A state store that cannot be opened refuses the run.
    let mut quarantine: Arc<dyn QuarantineSource> = Arc::new(NoQuarantine);
    if enabled(LayerName::Monitor) {
        let monitor =
            skillgate_monitor::Monitor::from_config(&config.monitor, None).map_err(|e| {
                AssembleError {
                    layer: LayerName::Monitor,
                    message: e.to_string(),
                }
            })?;
        quarantine = monitor.store().clone();
        builder = builder.layer_at(
            LayerName::Monitor,
            skillgate_monitor::MonitorLayer::new(monitor),
        );
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
        quarantine,
    })
}
