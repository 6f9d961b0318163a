//! The persistent state: SQLite in WAL mode under the state directory (`state.db`), next
//! to the audit trail (`audit.jsonl`).
//!
//! Why SQLite: several `skillgate run` processes write at once (WAL plus `BEGIN
//! IMMEDIATE` with a busy timeout serialises writers across processes; readers never
//! block), and a writer killed mid-transaction leaves the database as of its last commit
//! (the journal is rolled back on the next open). Each execution is one transaction:
//! read the agent's baselines and history, evaluate, write the event, baselines,
//! strikes, quarantine, counters and the audit line, commit.
use crate::Durability;
use crate::audit::{self, AuditRecord, Sink};
use crate::baseline::Baselines;
use crate::detections::History;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use skillgate_core::{QuarantineSource, Status};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Version of the database schema (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// How long a writer waits for another process's transaction.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS events(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL UNIQUE,
    ts_ms INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    skill TEXT NOT NULL,
    digest TEXT NOT NULL,
    status TEXT NOT NULL,
    exit_code INTEGER,
    signal INTEGER,
    wall_us INTEGER NOT NULL,
    cpu_us INTEGER NOT NULL,
    rss_bytes INTEGER NOT NULL,
    output_bytes INTEGER NOT NULL,
    detections INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts_ms);
CREATE INDEX IF NOT EXISTS events_agent_skill ON events(tenant, agent, skill, seq);
CREATE TABLE IF NOT EXISTS agent_minutes(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, minute INTEGER NOT NULL, status TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY(tenant, agent, minute, status)
);
CREATE TABLE IF NOT EXISTS baselines(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, skill TEXT NOT NULL,
    stats TEXT NOT NULL,
    PRIMARY KEY(tenant, agent, skill)
);
CREATE TABLE IF NOT EXISTS strikes(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, ts_ms INTEGER NOT NULL,
    rule_id TEXT NOT NULL, request_id TEXT NOT NULL, count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS strikes_agent ON strikes(tenant, agent, ts_ms);
CREATE TABLE IF NOT EXISTS quarantine(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, since_ms INTEGER NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY(tenant, agent)
);
CREATE TABLE IF NOT EXISTS throttle(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, until_ms INTEGER NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY(tenant, agent)
);
CREATE TABLE IF NOT EXISTS counters(
    name TEXT NOT NULL, labels TEXT NOT NULL, value REAL NOT NULL,
    PRIMARY KEY(name, labels)
);
CREATE TABLE IF NOT EXISTS histograms(
    name TEXT NOT NULL, labels TEXT NOT NULL, bucket INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(name, labels, bucket)
);
";

/// The state store cannot be opened, read or written. The monitor fails closed on it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Opening or preparing the state directory or database failed.
    #[error("cannot open the monitor state in {}: {message}", dir.display())]
    Open {
        /// The state directory.
        dir: PathBuf,
        /// What failed.
        message: String,
    },
    /// A read or write failed.
    #[error("monitor state: {0}")]
    Db(String),
    /// The audit trail could not be written.
    #[error("cannot append to the audit trail: {0}")]
    Audit(#[source] std::io::Error),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Db(e.to_string())
    }
}

/// A quarantined agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuarantineEntry {
    /// Tenant.
    pub tenant: String,
    /// Agent.
    pub agent: String,
    /// Since when, milliseconds since the Unix epoch.
    pub since_ms: i64,
    /// Why (the detections that struck).
    pub reason: String,
}

/// What the store knows about one agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentStatus {
    /// Tenant.
    pub tenant: String,
    /// Agent.
    pub agent: String,
    /// Its quarantine, if any.
    pub quarantine: Option<QuarantineEntry>,
    /// Throttled until (ms since the epoch), if it is throttled now.
    pub throttled_until_ms: Option<i64>,
    /// Strikes inside the current strike window.
    pub strikes: u64,
    /// Executions kept in the store, by status.
    pub executions: Vec<(Status, u64)>,
    /// Executions on which a detection fired.
    pub anomalous: u64,
    /// Last request, ms since the epoch.
    pub last_seen_ms: Option<i64>,
    /// Baselines per skill (`*` is all skills together).
    pub baselines: Vec<(String, Baselines)>,
}

struct Inner {
    conn: Connection,
    audit: Sink,
}

/// The monitor's persistent store: SQLite state plus the audit trail.
///
/// ```
/// use skillgate_monitor::Store;
/// use skillgate_core::QuarantineSource;
/// let dir = tempfile::tempdir().unwrap();
/// let store = Store::open(dir.path(), Default::default()).unwrap();
/// assert!(!store.is_quarantined("acme", "agent-1").unwrap());
/// ```
pub struct Store {
    inner: Mutex<Inner>,
    dir: Option<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

/// The database file's name in the state directory.
pub const DB_FILE: &str = "state.db";
/// The audit trail's name in the state directory.
pub const AUDIT_FILE: &str = "audit.jsonl";

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path, durability: Durability) -> Result<Store, StoreError> {
        let open_err = |message: String| StoreError::Open {
            dir: dir.to_path_buf(),
            message,
        };
        create_private_dir(dir).map_err(|e| open_err(format!("cannot create it: {e}")))?;
        let conn = Connection::open(dir.join(DB_FILE))
            .map_err(|e| open_err(format!("cannot open {DB_FILE}: {e}")))?;
        let audit = Sink::open(&dir.join(AUDIT_FILE), durability == Durability::Sync)
            .map_err(|e| open_err(format!("cannot open {AUDIT_FILE}: {e}")))?;
        let store = Self::prepare(conn, audit, durability, Some(dir.to_path_buf()))
            .map_err(|e| open_err(e.to_string()))?;
        Ok(store)
    }

    /// A store in memory, with the audit trail in memory ([`audit_bytes`](Self::audit_bytes)):
    /// for tests, benches and embedding without persistence.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        Self::prepare(conn, Sink::Memory(Vec::new()), Durability::Flush, None)
    }

    fn prepare(
        conn: Connection,
        audit: Sink,
        durability: Durability,
        dir: Option<PathBuf>,
    ) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if dir.is_some() {
            let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Db(format!(
                    "the database refused WAL mode (got `{mode}`); is the directory on a network file system?"
                )));
            }
        }
        // Each `skillgate run` is a process with the store's only connection: by default
        // closing it checkpoints the WAL into the database and deletes it, and the next
        // run creates it again, four more flushes per run (the WAL's header, its folder,
        // then the WAL and the database at the checkpoint). Keeping the WAL between runs
        // costs no durability: a commit is durable when its WAL frames are synced
        // (`synchronous`, below), and the automatic checkpoint still bounds the WAL.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        conn.pragma_update(
            None,
            "synchronous",
            match durability {
                Durability::Sync => "FULL",
                Durability::Flush => "NORMAL",
            },
        )?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != 0 && version != SCHEMA_VERSION {
            return Err(StoreError::Db(format!(
                "{DB_FILE} has schema version {version}, this skillgate reads version {SCHEMA_VERSION}"
            )));
        }
        if version == 0 {
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))?;
        }
        Ok(Store {
            inner: Mutex::new(Inner { conn, audit }),
            dir,
        })
    }

    /// The state directory (`None` in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The audit trail's path (`None` in memory).
    pub fn audit_path(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(AUDIT_FILE))
    }

    /// The audit trail of an in-memory store.
    pub fn audit_bytes(&self) -> Option<Vec<u8>> {
        let inner = self.inner.lock().ok()?;
        inner.audit.memory().map(<[u8]>::to_vec)
    }

    /// Runs `f` in one write transaction (serialised with other threads and processes);
    /// commits when it returns `Ok`.
    pub(crate) fn transact<R>(
        &self,
        f: impl FnOnce(&mut Tx<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| StoreError::Db("the store's lock is poisoned".into()))?;
        let Inner { conn, audit } = &mut *guard;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut t = Tx { tx, audit };
        let r = f(&mut t)?;
        t.tx.commit()?;
        Ok(r)
    }

    fn read<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let guard = self
            .inner
            .lock()
            .map_err(|_| StoreError::Db("the store's lock is poisoned".into()))?;
        f(&guard.conn)
    }

    /// The agent's quarantine, if any.
    pub fn quarantine_of(
        &self,
        tenant: &str,
        agent: &str,
    ) -> Result<Option<QuarantineEntry>, StoreError> {
        self.read(|c| quarantine_of(c, tenant, agent))
    }

    /// Every quarantined agent.
    pub fn quarantined(&self) -> Result<Vec<QuarantineEntry>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(
                "SELECT tenant, agent, since_ms, reason FROM quarantine ORDER BY tenant, agent",
            )?;
            let rows = st.query_map([], |r| {
                Ok(QuarantineEntry {
                    tenant: r.get(0)?,
                    agent: r.get(1)?,
                    since_ms: r.get(2)?,
                    reason: r.get(3)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Until when the agent is throttled (ms since the epoch), if it is at `now_ms`.
    pub fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.read(|c| throttled_until(c, tenant, agent, now_ms))
    }

    /// Lifts an agent's quarantine and clears its strikes; audited (a `release` record)
    /// and counted. `Ok(None)` when it was not quarantined (nothing is written).
    pub fn release(
        &self,
        tenant: &str,
        agent: &str,
        by: &str,
        now_ms: i64,
    ) -> Result<Option<QuarantineEntry>, StoreError> {
        self.transact(|tx| {
            let Some(entry) = quarantine_of(&tx.tx, tenant, agent)? else {
                return Ok(None);
            };
            tx.tx.execute(
                "DELETE FROM quarantine WHERE tenant = ?1 AND agent = ?2",
                params![tenant, agent],
            )?;
            tx.tx.execute(
                "DELETE FROM strikes WHERE tenant = ?1 AND agent = ?2",
                params![tenant, agent],
            )?;
            tx.count("skillgate_quarantine_releases_total", "", 1.0)?;
            tx.append_audit(&AuditRecord::Release(audit::ReleaseRecord {
                v: audit::FORMAT_VERSION,
                ts_ms: now_ms,
                time: audit::rfc3339(now_ms),
                tenant: tenant.into(),
                agent: agent.into(),
                by: by.into(),
                reason: entry.reason.clone(),
                quarantined_since_ms: entry.since_ms,
            }))?;
            Ok(Some(entry))
        })
    }

    /// Agents the store has seen (tenant, agent), sorted.
    pub fn agents(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(
                "SELECT tenant, agent FROM baselines UNION SELECT tenant, agent FROM events
                 UNION SELECT tenant, agent FROM quarantine ORDER BY 1, 2",
            )?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Everything the store knows about one agent; strikes counted since `strikes_since_ms`.
    pub fn agent_status(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
        strikes_since_ms: i64,
    ) -> Result<AgentStatus, StoreError> {
        self.read(|c| {
            let quarantine = quarantine_of(c, tenant, agent)?;
            let throttled_until_ms = throttled_until(c, tenant, agent, now_ms)?;
            let strikes = strikes_since(c, tenant, agent, strikes_since_ms)?;
            let mut st = c.prepare(
                "SELECT status, count(*) FROM events WHERE tenant = ?1 AND agent = ?2 GROUP BY status ORDER BY status",
            )?;
            let executions = st
                .query_map(params![tenant, agent], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })?
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(|(s, n)| Ok((parse_status(&s)?, n as u64)))
                .collect::<Result<Vec<_>, StoreError>>()?;
            let (anomalous, last_seen_ms): (i64, Option<i64>) = c.query_row(
                "SELECT coalesce(sum(detections > 0), 0), max(ts_ms) FROM events WHERE tenant = ?1 AND agent = ?2",
                params![tenant, agent],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let mut st = c.prepare(
                "SELECT skill, stats FROM baselines WHERE tenant = ?1 AND agent = ?2 ORDER BY skill",
            )?;
            let baselines = st
                .query_map(params![tenant, agent], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(|(s, j)| Ok((s, parse_baselines(&j)?)))
                .collect::<Result<Vec<_>, StoreError>>()?;
            Ok(AgentStatus {
                tenant: tenant.into(),
                agent: agent.into(),
                quarantine,
                throttled_until_ms,
                strikes,
                executions,
                anomalous: anomalous as u64,
                last_seen_ms,
                baselines,
            })
        })
    }

    /// Request ids of every stored execution, oldest first.
    pub fn request_ids(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare("SELECT request_id FROM events ORDER BY seq")?;
            let rows = st.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Counter values: `(name, labels, value)`, sorted.
    pub fn counters(&self) -> Result<Vec<(String, String, f64)>, StoreError> {
        self.read(|c| {
            let mut st =
                c.prepare("SELECT name, labels, value FROM counters ORDER BY name, labels")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Histogram buckets: `(name, labels, bucket index, count)`, sorted.
    pub fn histograms(&self) -> Result<Vec<(String, String, usize, u64)>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(
                "SELECT name, labels, bucket, count FROM histograms ORDER BY name, labels, bucket",
            )?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get::<_, i64>(2)? as usize,
                    r.get::<_, i64>(3)? as u64,
                ))
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Runs SQLite's integrity check; `Ok(())` when the database is sound.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        self.read(|c| {
            let r: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
            if r == "ok" {
                Ok(())
            } else {
                Err(StoreError::Db(format!("integrity check failed: {r}")))
            }
        })
    }
}

impl QuarantineSource for Store {
    fn is_quarantined(&self, tenant: &str, agent_id: &str) -> Result<bool, String> {
        self.quarantine_of(tenant, agent_id)
            .map(|q| q.is_some())
            .map_err(|e| e.to_string())
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

fn parse_status(s: &str) -> Result<Status, StoreError> {
    s.parse().map_err(StoreError::Db)
}

fn parse_baselines(j: &str) -> Result<Baselines, StoreError> {
    serde_json::from_str(j)
        .map_err(|e| StoreError::Db(format!("a stored baseline is unreadable: {e}")))
}

fn quarantine_of(
    c: &Connection,
    tenant: &str,
    agent: &str,
) -> Result<Option<QuarantineEntry>, StoreError> {
    Ok(c.prepare_cached(
        "SELECT since_ms, reason FROM quarantine WHERE tenant = ?1 AND agent = ?2",
    )?
    .query_row(params![tenant, agent], |r| {
        Ok(QuarantineEntry {
            tenant: tenant.into(),
            agent: agent.into(),
            since_ms: r.get(0)?,
            reason: r.get(1)?,
        })
    })
    .optional()?)
}

fn throttled_until(
    c: &Connection,
    tenant: &str,
    agent: &str,
    now_ms: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(c.prepare_cached(
        "SELECT until_ms FROM throttle WHERE tenant = ?1 AND agent = ?2 AND until_ms > ?3",
    )?
    .query_row(params![tenant, agent, now_ms], |r| r.get(0))
    .optional()?)
}

fn strikes_since(
    c: &Connection,
    tenant: &str,
    agent: &str,
    since_ms: i64,
) -> Result<u64, StoreError> {
    let n: i64 = c
        .prepare_cached(
            "SELECT coalesce(sum(count), 0) FROM strikes WHERE tenant = ?1 AND agent = ?2 AND ts_ms >= ?3",
        )?
        .query_row(params![tenant, agent, since_ms], |r| r.get(0))?;
    Ok(n as u64)
}

/// One write transaction.
pub(crate) struct Tx<'c> {
    tx: rusqlite::Transaction<'c>,
    audit: &'c mut Sink,
}

impl Tx<'_> {
    pub(crate) fn quarantine_of(
        &self,
        tenant: &str,
        agent: &str,
    ) -> Result<Option<QuarantineEntry>, StoreError> {
        quarantine_of(&self.tx, tenant, agent)
    }

    pub(crate) fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        throttled_until(&self.tx, tenant, agent, now_ms)
    }

    pub(crate) fn baselines(
        &self,
        tenant: &str,
        agent: &str,
        skill: &str,
    ) -> Result<Baselines, StoreError> {
        let j: Option<String> = self
            .tx
            .prepare_cached(
                "SELECT stats FROM baselines WHERE tenant = ?1 AND agent = ?2 AND skill = ?3",
            )?
            .query_row(params![tenant, agent, skill], |r| r.get(0))
            .optional()?;
        j.map_or(Ok(Baselines::default()), |j| parse_baselines(&j))
    }

    pub(crate) fn save_baselines(
        &self,
        tenant: &str,
        agent: &str,
        skill: &str,
        b: &Baselines,
    ) -> Result<(), StoreError> {
        let j = serde_json::to_string(b).map_err(|e| StoreError::Db(e.to_string()))?;
        self.tx
            .prepare_cached(
                "INSERT INTO baselines(tenant, agent, skill, stats) VALUES(?1, ?2, ?3, ?4)
                 ON CONFLICT(tenant, agent, skill) DO UPDATE SET stats = excluded.stats",
            )?
            .execute(params![tenant, agent, skill, j])?;
        Ok(())
    }

    pub(crate) fn history<'a>(
        &'a self,
        tenant: &'a str,
        agent: &'a str,
        skill: &'a str,
    ) -> TxHistory<'a> {
        TxHistory {
            conn: &self.tx,
            tenant,
            agent,
            skill,
        }
    }

    pub(crate) fn add_strike(
        &self,
        tenant: &str,
        agent: &str,
        ts_ms: i64,
        rule_id: &str,
        request_id: &str,
        count: u32,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "INSERT INTO strikes(tenant, agent, ts_ms, rule_id, request_id, count) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![tenant, agent, ts_ms, rule_id, request_id, count])?;
        Ok(())
    }

    pub(crate) fn strikes_since(
        &self,
        tenant: &str,
        agent: &str,
        since_ms: i64,
    ) -> Result<u64, StoreError> {
        strikes_since(&self.tx, tenant, agent, since_ms)
    }

    pub(crate) fn quarantine(
        &self,
        tenant: &str,
        agent: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT OR IGNORE INTO quarantine(tenant, agent, since_ms, reason) VALUES(?1, ?2, ?3, ?4)",
            params![tenant, agent, since_ms, reason],
        )?;
        Ok(())
    }

    pub(crate) fn throttle(
        &self,
        tenant: &str,
        agent: &str,
        until_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO throttle(tenant, agent, until_ms, reason) VALUES(?1, ?2, ?3, ?4)
             ON CONFLICT(tenant, agent) DO UPDATE SET until_ms = max(until_ms, excluded.until_ms), reason = excluded.reason",
            params![tenant, agent, until_ms, reason],
        )?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_event(&self, e: &EventRow<'_>) -> Result<i64, StoreError> {
        self.tx
            .prepare_cached(
                "INSERT INTO events(request_id, ts_ms, tenant, agent, skill, digest, status, exit_code, signal,
                                    wall_us, cpu_us, rss_bytes, output_bytes, detections)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?
            .execute(params![
                e.request_id,
                e.ts_ms,
                e.tenant,
                e.agent,
                e.skill,
                e.digest,
                e.status.as_str(),
                e.exit_code,
                e.signal,
                e.wall_us,
                e.cpu_us,
                e.rss_bytes,
                e.output_bytes,
                e.detections
            ])?;
        let seq = self.tx.last_insert_rowid();
        self.tx
            .prepare_cached(
                "INSERT INTO agent_minutes(tenant, agent, minute, status, count) VALUES(?1, ?2, ?3, ?4, 1)
                 ON CONFLICT(tenant, agent, minute, status) DO UPDATE SET count = count + 1",
            )?
            .execute(params![e.tenant, e.agent, minute(e.ts_ms), e.status.as_str()])?;
        Ok(seq)
    }

    /// Deletes events and strikes older than `before_ms`, and expired throttles.
    pub(crate) fn prune(&self, before_ms: i64, now_ms: i64) -> Result<(), StoreError> {
        self.tx
            .execute("DELETE FROM events WHERE ts_ms < ?1", params![before_ms])?;
        self.tx.execute(
            "DELETE FROM agent_minutes WHERE minute < ?1",
            params![minute(before_ms)],
        )?;
        self.tx
            .execute("DELETE FROM strikes WHERE ts_ms < ?1", params![before_ms])?;
        self.tx
            .execute("DELETE FROM throttle WHERE until_ms <= ?1", params![now_ms])?;
        Ok(())
    }

    pub(crate) fn count(&self, name: &str, labels: &str, by: f64) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "INSERT INTO counters(name, labels, value) VALUES(?1, ?2, ?3)
                 ON CONFLICT(name, labels) DO UPDATE SET value = value + excluded.value",
            )?
            .execute(params![name, labels, by])?;
        Ok(())
    }

    pub(crate) fn observe(
        &self,
        name: &str,
        labels: &str,
        bucket: usize,
        value: f64,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "INSERT INTO histograms(name, labels, bucket, count) VALUES(?1, ?2, ?3, 1)
                 ON CONFLICT(name, labels, bucket) DO UPDATE SET count = count + 1",
            )?
            .execute(params![name, labels, bucket as i64])?;
        self.count(&format!("{name}_sum"), labels, value)
    }

    pub(crate) fn append_audit(&mut self, record: &AuditRecord) -> Result<(), StoreError> {
        self.audit
            .append(&audit::encode(record))
            .map_err(StoreError::Audit)
    }
}

/// One row of the events table.
pub(crate) struct EventRow<'a> {
    pub(crate) request_id: &'a str,
    pub(crate) ts_ms: i64,
    pub(crate) tenant: &'a str,
    pub(crate) agent: &'a str,
    pub(crate) skill: &'a str,
    pub(crate) digest: &'a str,
    pub(crate) status: Status,
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) wall_us: i64,
    pub(crate) cpu_us: i64,
    pub(crate) rss_bytes: i64,
    pub(crate) output_bytes: i64,
    pub(crate) detections: i64,
}

/// The [`History`] of one agent and skill, read inside a write transaction.
pub(crate) struct TxHistory<'a> {
    conn: &'a Connection,
    tenant: &'a str,
    agent: &'a str,
    skill: &'a str,
}

/// The minute (since the epoch) a timestamp falls in: agent request counts are kept per
/// minute, so a window's count costs at most one row per minute and status, however busy
/// the agent; windows are therefore counted from the start of their first minute.
fn minute(ts_ms: i64) -> i64 {
    ts_ms.div_euclid(60_000)
}

impl History for TxHistory<'_> {
    fn agent_count_since(&self, statuses: &[Status], since_ms: i64) -> Result<u64, String> {
        let list = statuses
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(",");
        self.conn
            .prepare_cached(
                "SELECT coalesce(sum(count), 0) FROM agent_minutes
                 WHERE tenant = ?1 AND agent = ?2 AND minute >= ?3
                 AND (?4 = '' OR instr(',' || ?4 || ',', ',' || status || ',') > 0)",
            )
            .and_then(|mut st| {
                st.query_row(
                    params![self.tenant, self.agent, minute(since_ms), list],
                    |r| r.get::<_, i64>(0),
                )
            })
            .map(|n| n as u64)
            .map_err(|e| e.to_string())
    }

    fn skill_recent_statuses(&self, n: usize) -> Result<Vec<Status>, String> {
        let run = || -> Result<Vec<String>, rusqlite::Error> {
            let mut st = self.conn.prepare_cached(
                "SELECT status FROM events WHERE tenant = ?1 AND agent = ?2 AND skill = ?3 ORDER BY seq DESC LIMIT ?4",
            )?;
            let rows = st.query_map(
                params![self.tenant, self.agent, self.skill, n as i64],
                |r| r.get(0),
            )?;
            rows.collect()
        };
        run()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|s| s.parse())
            .collect()
    }
}
