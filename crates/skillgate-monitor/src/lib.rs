//! Layer 7 of skillgate, the behavioural monitor: the outermost layer, which sees every
//! request and every outcome (denials and blocks too), keeps baselines per agent and per
//! skill, explains what looks anomalous, acts (alert, throttle, quarantine), writes the
//! audit trail and keeps the metrics. Outcomes count against the agent, or against the
//! skill when the skill's own schema or code blocked the request
//! ([`signals::Blame`]): a skill's repeated blocks flag the skill, never its callers.
//!
//! - [`signals`]: what is read off an execution.
//! - [`baseline`]: streaming robust baselines (winsorised EWMA mean and variance).
//! - [`detections`]: detection rules as data (`rules/monitor/*.toml`).
//! - [`Store`]: SQLite (WAL) state under the state directory, safe for concurrent
//!   processes and after kill -9; implements [`QuarantineSource`](skillgate_core::QuarantineSource).
//! - [`MonitorState`]: the seam between the monitor and its state; [`PgState`] keeps
//!   it in PostgreSQL (`[store] url`), audit records included, for several replicas.
//! - [`audit`]: the JSON Lines audit trail.
//! - [`metrics`]: Prometheus text exposition.
//! - [`Monitor`] and [`MonitorLayer`]: the monitor, alone and as a `tower` layer.
//! - [`StateQuarantine`]: the quarantines of a state directory, for a pipeline without
//!   the monitor layer and for `skillgate policy check`.
//!
//! ```
//! use skillgate_monitor::{Monitor, MonitorLayer, Store, detections::Detections};
//! use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill, Status, QuarantineSource};
//! use tower::{Layer, ServiceExt, service_fn};
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let store = std::sync::Arc::new(Store::open_in_memory().unwrap());
//! let monitor = Monitor::new(store.clone(), Detections::builtin(), &Default::default()).unwrap();
//! let svc = MonitorLayer::new(monitor).layer(service_fn(|_r: ExecRequest| async {
//!     Ok::<_, skillgate_core::BoxError>(ExecOutcome { status: Status::Ok, exit_code: Some(3), ..Default::default() })
//! }));
//! let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
//! let out = svc.oneshot(ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}))).await.unwrap();
//! assert_eq!(out.findings[0].rule_id, "monitor.nonzero_exit");
//! assert!(!store.is_quarantined("t", "a").unwrap());
//! # });
//! ```

pub mod audit;
pub mod baseline;
pub mod detections;
pub mod fuzz;
mod layer;
pub mod metrics;
mod monitor;
mod operator;
mod pgstate;
mod quarantine;
pub mod signals;
mod state;
mod store;

pub use layer::{MonitorLayer, MonitorService};
pub use monitor::{
    ALL_SKILLS, Assessment, Durability, Monitor, MonitorConfig, MonitorError, RecentEvents,
    Verdict, default_state_dir,
};
pub use pgstate::PgState;
pub use quarantine::{StateQuarantine, resolve_state_dir};
pub use signals::RequestMeta;
pub use state::{AgentActivity, MonitorState, StateTx};
pub use store::{
    AUDIT_FILE, AgentStatus, BUSY_TIMEOUT, DB_FILE, EventRow, QuarantineEntry, SCHEMA_VERSION,
    SkillFlag, Store, StoreError, ThrottleCheck,
};
