//! [`StateQuarantine`]: the quarantines of a state directory, for readers that do not run
//! the monitor (a run with the monitor layer switched off, `skillgate policy check`).
use crate::Durability;
use crate::monitor::{MonitorConfig, MonitorError, default_state_dir};
use crate::store::Store;
use skillgate_core::QuarantineSource;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The state directory a monitor uses: `state_dir` if given, else `[monitor] state_dir`,
/// else [`default_state_dir`].
pub fn resolve_state_dir(
    config: &MonitorConfig,
    state_dir: Option<&Path>,
) -> Result<PathBuf, MonitorError> {
    match state_dir.or(config.state_dir.as_deref()) {
        Some(d) => Ok(d.to_path_buf()),
        None => default_state_dir(),
    }
}

/// The quarantines recorded in a state directory, read from its store whether or not the
/// monitor layer runs: switching the monitor off must not lift a quarantine.
///
/// It creates nothing: while nothing has run with the directory (no `state.db`), nobody
/// is quarantined, and the store is opened at the first lookup that finds one. A store
/// that exists but cannot be opened or read is an error, and the policy layer denies on
/// it (fail closed).
///
/// ```
/// use skillgate_monitor::StateQuarantine;
/// use skillgate_core::QuarantineSource;
/// let dir = tempfile::tempdir().unwrap();
/// let q = StateQuarantine::new(dir.path().join("state"), Default::default());
/// assert!(!q.is_quarantined("acme", "agent-1").unwrap());
/// assert!(!dir.path().join("state").exists());
/// ```
#[derive(Debug)]
pub struct StateQuarantine {
    dir: PathBuf,
    durability: Durability,
    store: OnceLock<Store>,
}

impl StateQuarantine {
    /// The quarantines of the state directory `dir`.
    pub fn new(dir: impl Into<PathBuf>, durability: Durability) -> Self {
        StateQuarantine {
            dir: dir.into(),
            durability,
            store: OnceLock::new(),
        }
    }

    /// The quarantines of the directory the monitor settings name (see
    /// [`resolve_state_dir`]).
    pub fn from_config(
        config: &MonitorConfig,
        state_dir: Option<&Path>,
    ) -> Result<Self, MonitorError> {
        Ok(Self::new(
            resolve_state_dir(config, state_dir)?,
            config.durability,
        ))
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl QuarantineSource for StateQuarantine {
    fn is_quarantined(&self, tenant: &str, agent_id: &str) -> Result<bool, String> {
        let store = match self.store.get() {
            Some(s) => s,
            None => match Store::open_existing(&self.dir, self.durability) {
                Ok(Some(s)) => self.store.get_or_init(|| s),
                Ok(None) => return Ok(false),
                Err(e) => return Err(e.to_string()),
            },
        };
        store.is_quarantined(tenant, agent_id)
    }
}
