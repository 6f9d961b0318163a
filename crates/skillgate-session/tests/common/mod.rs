//! Shared by the session tests: the stores (SQLite in a temporary state directory, and
//! a fresh database on the real PostgreSQL of `scripts/services up postgres`), and an
//! engine built from the example configuration.
#![allow(dead_code, unreachable_pub)]
#[path = "../../../../tests/support/postgres.rs"]
pub mod pg_support;

use skillgate_session::{LogStore, NativeBackend, Owner, PgLog, Sessions, Settings, SqliteLog};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which store a test runs against.
#[derive(Debug, Clone)]
pub enum Db {
    /// SQLite in this state directory.
    Sqlite(PathBuf),
    /// PostgreSQL at this URL.
    Pg(String),
}

impl Db {
    pub fn sqlite(dir: &Path) -> Db {
        Db::Sqlite(dir.to_path_buf())
    }

    pub fn pg(test: &str) -> Db {
        Db::Pg(pg_support::fresh_database(test))
    }

    /// A new store on this database (as another process would open it).
    pub fn open(&self) -> Arc<dyn LogStore> {
        match self {
            Db::Sqlite(dir) => Arc::new(SqliteLog::open(dir).unwrap()),
            Db::Pg(url) => Arc::new(PgLog::open(url).unwrap()),
        }
    }

    /// Runs one SQL statement on the database (to damage it on purpose).
    pub fn sql(&self, sql: &str) {
        match self {
            Db::Sqlite(dir) => {
                let c = rusqlite::Connection::open(dir.join("sessions.db")).unwrap();
                c.execute_batch(sql).unwrap();
            }
            Db::Pg(url) => {
                pg_support::psql(url, sql);
            }
        }
    }
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example configuration, its monitor's state in `state`, every layer on.
pub fn engine(state: &Path) -> Arc<skillgate::Engine> {
    engine_without(state, &[])
}

/// The example configuration without the `disabled` layers.
pub fn engine_without(state: &Path, disabled: &[skillgate::LayerName]) -> Arc<skillgate::Engine> {
    let mut config = skillgate::Config::load(&repo().join("examples/skillgate.toml")).unwrap();
    config.monitor.state_dir = Some(state.join("monitor"));
    Arc::new(skillgate::Engine::new(config, disabled).unwrap())
}

/// The example's agent.
pub fn owner() -> Owner {
    Owner {
        tenant: "acme".into(),
        agent: "analyst-1".into(),
    }
}

/// Sessions on `store` with native backends running through `engine`.
pub fn sessions(
    store: Arc<dyn LogStore>,
    engine: Arc<skillgate::Engine>,
    settings: Settings,
) -> Sessions<NativeBackend> {
    Sessions::new(store, settings, move |s| {
        NativeBackend::new(
            engine.clone(),
            skillgate::Caller::new(&s.agent, &s.tenant),
            64 << 20,
        )
    })
}

/// A Python step.
pub fn py(code: &str) -> skillgate_session::StepSpec {
    skillgate_session::StepSpec::new(skillgate::Language::Python, code)
}
