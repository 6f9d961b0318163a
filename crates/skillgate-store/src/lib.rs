//! The state a skillgate service keeps besides the monitor's: API keys and the skill
//! registry, behind the [`Store`] trait.
//!
//! [`SqliteStore`] (a file in the state directory) is the embedded default; [`PgStore`]
//! (`[store] url = "postgres://..."`) keeps the same records in a PostgreSQL database
//! several replicas share, and [`pg`] is its connection, which the monitor's PostgreSQL
//! state uses too. The trait speaks only in
//! plain records, every method is one transaction, and nothing above it sees SQL. It is
//! synchronous; an async caller runs it on its blocking pool (`spawn_blocking`), which
//! suits both rusqlite and a synchronous PostgreSQL client.
//!
//! This is a crate of its own, not a module of the server, so that other services (the
//! sessions of issue #17, an MCP server) can keep their state in the same store without
//! depending on the HTTP server.
//!
//! ```
//! use skillgate_store::{KeyRecord, Role, SqliteStore, Store};
//! let store = SqliteStore::open_in_memory().unwrap();
//! let key = KeyRecord::new("k1", Role::Agent, "analyst-1", "acme", vec![], 0);
//! store.insert_key(&key, "hash-of-the-secret").unwrap();
//! assert_eq!(store.key_by_hash("hash-of-the-secret").unwrap().unwrap().principal, "analyst-1");
//! assert!(store.revoke_key("k1", 5).unwrap());
//! assert!(store.key_by_hash("hash-of-the-secret").unwrap().unwrap().revoked_ms.is_some());
//! ```

pub mod pg;
mod pgstore;
mod sqlite;

pub use pgstore::PgStore;
pub use sqlite::{
    FILE_NAME, SqliteStore, WAL_AUTOCHECKPOINT_PAGES, WAL_LIMIT_BYTES, bound_wal,
    migrate as migrate_sqlite,
};

use serde::{Deserialize, Serialize};

/// The `[store]` section of `skillgate.toml`: where the state several processes share
/// lives. Without `url`, each keeps it in SQLite in the state directory (the monitor's
/// `state.db` and `audit.jsonl`, the service's `server.db`); with
/// `url = "postgres://..."`, the keys, the registry, the monitor's state and the audit
/// trail are in that PostgreSQL database, shared by every replica naming it.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// A PostgreSQL URL (`postgres://user:password@host:port/database`).
    pub url: Option<String>,
}

/// Shows the URL without its password (a config is logged and printed).
impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreConfig")
            .field("url", &self.url.as_deref().map(pg::redact_url))
            .finish()
    }
}

impl StoreConfig {
    /// The keys and registry store these settings name: [`PgStore`] at `url`, else
    /// [`SqliteStore`] in `state_dir`. A database that cannot be reached is an error
    /// (naming the URL without its password): a service refuses to start on it.
    pub fn open(&self, state_dir: &std::path::Path) -> Result<Box<dyn Store>, StoreError> {
        Ok(match &self.url {
            Some(url) => Box::new(PgStore::open(url)?),
            None => Box::new(SqliteStore::open(state_dir)?),
        })
    }
}

/// A store that cannot answer. Callers fail closed on it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed.
    #[error("store: {0}")]
    Backend(String),
    /// A stored value does not parse (a corrupt or foreign database).
    #[error("store: corrupt record: {0}")]
    Corrupt(String),
    /// The record exists already (a key id, a skill version).
    #[error("store: {0} exists already")]
    Exists(String),
}

/// What a key may do: agents run skills, builders publish them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Runs skills, as the agent the key names.
    Agent,
    /// Publishes skills, as the builder the key names.
    Builder,
    /// Operates the service (reloads its configuration); runs and publishes nothing.
    Operator,
}

impl Role {
    /// `agent` or `builder`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Builder => "builder",
            Role::Operator => "operator",
        }
    }
}

impl Role {
    /// `an agent`, `a builder`, `an operator`.
    pub fn with_article(self) -> &'static str {
        match self {
            Role::Agent => "an agent",
            Role::Builder => "a builder",
            Role::Operator => "an operator",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "agent" => Ok(Role::Agent),
            "builder" => Ok(Role::Builder),
            "operator" => Ok(Role::Operator),
            _ => Err(format!(
                "unknown role `{s}` (expected agent, builder or operator)"
            )),
        }
    }
}

/// An API key as stored: who it speaks for, never the secret (only its hash is kept,
/// beside the record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// The key's public id (what `keys list` shows and `keys revoke` takes).
    pub id: String,
    /// Agent or builder.
    pub role: Role,
    /// The agent's or the builder's id.
    pub principal: String,
    /// The tenant.
    pub tenant: String,
    /// Agent groups (for an agent key).
    pub groups: Vec<String>,
    /// Created, milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// Revoked, milliseconds since the Unix epoch.
    pub revoked_ms: Option<i64>,
}

impl KeyRecord {
    /// A key record, not revoked.
    pub fn new(
        id: impl Into<String>,
        role: Role,
        principal: impl Into<String>,
        tenant: impl Into<String>,
        groups: Vec<String>,
        created_ms: i64,
    ) -> KeyRecord {
        KeyRecord {
            id: id.into(),
            role,
            principal: principal.into(),
            tenant: tenant.into(),
            groups,
            created_ms,
            revoked_ms: None,
        }
    }
}

/// The pre-scan's verdict on a published version, as the registry keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PublishVerdict {
    /// Nothing found.
    Pass,
    /// Findings below the blocking threshold.
    Warn,
    /// Blocked: stored for review only, never run.
    Block,
}

impl PublishVerdict {
    /// `pass`, `warn` or `block`.
    pub fn as_str(self) -> &'static str {
        match self {
            PublishVerdict::Pass => "pass",
            PublishVerdict::Warn => "warn",
            PublishVerdict::Block => "block",
        }
    }
}

impl std::str::FromStr for PublishVerdict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pass" => Ok(PublishVerdict::Pass),
            "warn" => Ok(PublishVerdict::Warn),
            "block" => Ok(PublishVerdict::Block),
            _ => Err(format!("unknown verdict `{s}`")),
        }
    }
}

/// One published version of a skill (its bytes are kept beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillVersion {
    /// The tenant it belongs to (the publishing key's).
    pub tenant: String,
    /// The skill's name.
    pub name: String,
    /// The version: lowercase hex sha256 of the uploaded `.tar.gz`.
    pub version: String,
    /// The skill's digest (`Skill::digest`, what the policy gate's catalogue is keyed by).
    pub digest: String,
    /// The builder who published it (the publishing key's).
    pub owner: String,
    /// Its visibility (`public`, `restricted`, `private`).
    pub visibility: String,
    /// The pre-scan's verdict at publish.
    pub verdict: PublishVerdict,
    /// The pre-scan's findings at publish, as JSON.
    pub findings: serde_json::Value,
    /// Published, milliseconds since the Unix epoch.
    pub published_ms: i64,
}

/// Where a service keeps its keys and its skill registry. Every method is one
/// transaction; an error means "unknown", and callers refuse on it.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Stores a new key under the hash of its secret.
    fn insert_key(&self, key: &KeyRecord, secret_hash: &str) -> Result<(), StoreError>;
    /// The key whose secret hashes to `secret_hash` (revoked ones included: the caller
    /// decides).
    fn key_by_hash(&self, secret_hash: &str) -> Result<Option<KeyRecord>, StoreError>;
    /// Every key, oldest first.
    fn list_keys(&self) -> Result<Vec<KeyRecord>, StoreError>;
    /// Revokes key `id`; `false` when there is no such key or it was revoked already.
    fn revoke_key(&self, id: &str, now_ms: i64) -> Result<bool, StoreError>;

    /// Stores a version and its bytes; a version that exists is
    /// [`StoreError::Exists`] (versions are immutable).
    fn insert_version(&self, version: &SkillVersion, bytes: &[u8]) -> Result<(), StoreError>;
    /// The versions of `tenant`'s skill `name`, oldest first.
    fn versions(&self, tenant: &str, name: &str) -> Result<Vec<SkillVersion>, StoreError>;
    /// Every version of every skill of every tenant, oldest first.
    fn all_versions(&self) -> Result<Vec<SkillVersion>, StoreError>;
    /// The uploaded bytes of one version.
    fn version_bytes(
        &self,
        tenant: &str,
        name: &str,
        version: &str,
    ) -> Result<Option<Vec<u8>>, StoreError>;
}
