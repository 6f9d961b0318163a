/// The boxed error type of the pipeline's services.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An infrastructure failure: the pipeline could not produce an outcome. Rejections are
/// never errors; they are outcomes with a status.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The interpreter or another required program is missing.
    #[error("interpreter not found: {0}")]
    InterpreterNotFound(String),
    /// The host forbids what the executor needs (names the setting and the fix).
    #[error("host does not allow it: {0}")]
    HostUnsupported(String),
    /// An I/O failure while preparing, running or collecting.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Anything else, with a message.
    #[error("{0}")]
    Other(String),
}

impl ExecError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ExecError::Io {
            context: context.into(),
            source,
        }
    }
}
