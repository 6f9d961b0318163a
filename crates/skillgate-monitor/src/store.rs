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
use crate::signals::Blame;
use crate::state::AgentActivity;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use skillgate_core::{QuarantineSource, Status};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Version of the database schema (`PRAGMA user_version`). Version 1 databases are
/// migrated when opened.
pub const SCHEMA_VERSION: i64 = 2;

/// How long a writer waits for another process's transaction.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The tables. Who a request's outcome counts against (`blame`: `agent`, or `skill` for
/// a block the skill's own schema or code caused) is kept with the event and the agent's
/// per-minute counts, so the agent's bursts count only what the agent is accountable for.
/// Quarantines are keyed by agent id alone: the entities file makes agent ids unique
/// across tenants, and moving an agent to another tenant must not lift its quarantine.
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
    detections INTEGER NOT NULL,
    blame TEXT NOT NULL DEFAULT 'agent'
);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts_ms);
CREATE INDEX IF NOT EXISTS events_agent_skill ON events(tenant, agent, skill, seq);
CREATE TABLE IF NOT EXISTS agent_minutes(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, minute INTEGER NOT NULL, status TEXT NOT NULL,
    blame TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(tenant, agent, minute, status, blame)
);
CREATE TABLE IF NOT EXISTS skill_minutes(
    digest TEXT NOT NULL, minute INTEGER NOT NULL, status TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(digest, minute, status)
);
CREATE TABLE IF NOT EXISTS skill_flags(
    digest TEXT PRIMARY KEY, skill TEXT NOT NULL, since_ms INTEGER NOT NULL, reason TEXT NOT NULL
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
    agent TEXT PRIMARY KEY, tenant TEXT NOT NULL, since_ms INTEGER NOT NULL, reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS throttle(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, until_ms INTEGER NOT NULL, reason TEXT NOT NULL,
    tat_ms INTEGER NOT NULL DEFAULT 0,
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

/// The migration of a version 1 database to version 2: the blame of each event (every
/// old event was counted against its agent), per-minute counts rebuilt from the events
/// with it, quarantines keyed by agent id (the oldest one of an agent kept), the
/// throttle's shared rate counter (`tat_ms`, the GCRA's theoretical arrival time), and
/// the skills' block counts and flags.
const MIGRATE_V1: &str = "
ALTER TABLE events ADD COLUMN blame TEXT NOT NULL DEFAULT 'agent';
DROP TABLE agent_minutes;
CREATE TABLE agent_minutes(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, minute INTEGER NOT NULL, status TEXT NOT NULL,
    blame TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(tenant, agent, minute, status, blame)
);
INSERT INTO agent_minutes(tenant, agent, minute, status, blame, count)
    SELECT tenant, agent, ts_ms / 60000, status, 'agent', count(*) FROM events GROUP BY 1, 2, 3, 4;
CREATE TABLE quarantine_v2(
    agent TEXT PRIMARY KEY, tenant TEXT NOT NULL, since_ms INTEGER NOT NULL, reason TEXT NOT NULL
);
INSERT OR IGNORE INTO quarantine_v2(agent, tenant, since_ms, reason)
    SELECT agent, tenant, since_ms, reason FROM quarantine ORDER BY since_ms;
DROP TABLE quarantine;
ALTER TABLE quarantine_v2 RENAME TO quarantine;
ALTER TABLE throttle ADD COLUMN tat_ms INTEGER NOT NULL DEFAULT 0;
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

/// What [`Store::take_throttle_slot`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleCheck {
    /// The agent is not throttled.
    NotThrottled,
    /// Throttled until `until_ms`, and this request took a slot of its rate.
    Admitted {
        /// Until when it is throttled, ms since the epoch.
        until_ms: i64,
    },
    /// Throttled until `until_ms`, and over its rate: refuse the request.
    OverRate {
        /// Until when it is throttled, ms since the epoch.
        until_ms: i64,
    },
}

/// A skill whose own schema or code keeps getting its callers' requests blocked (a
/// detection with action `flag_skill` fired for it). Flagged skills are shown by
/// `skillgate monitor status` and on every report of the skill until an operator clears
/// the flag; they are not denied (a caller's bad input could otherwise disable a skill
/// for everyone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillFlag {
    /// The skill's code digest (sha256 hex): what the flag is keyed by.
    pub digest: String,
    /// The skill's name when it was flagged.
    pub skill: String,
    /// Since when, milliseconds since the Unix epoch.
    pub since_ms: i64,
    /// Why (the detection and its explanation).
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
    /// Sync the commits that change enforcement state (see [`Store::transact`]).
    sync_enforcement: bool,
    /// Commits synced so far by this connection.
    synced_commits: u64,
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
    /// With durability `sync`, a second handle of the audit trail for intent records,
    /// written and synced outside the store's lock (see [`Store::announce`]).
    intents: Option<std::fs::File>,
    /// Syncs of the intents so far.
    intent_syncs: std::sync::atomic::AtomicU64,
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
/// SQLite's write-ahead log next to the database.
const DB_WAL_FILE: &str = "state.db-wal";
/// SQLite's shared-memory index of the log.
const DB_SHM_FILE: &str = "state.db-shm";

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    ///
    /// The directory is created mode 0700; `state.db` (and with it SQLite's `-wal` and
    /// `-shm` files, which take the database's mode) and `audit.jsonl` are mode 0600,
    /// and existing ones readable by others are narrowed to 0600.
    pub fn open(dir: &Path, durability: Durability) -> Result<Store, StoreError> {
        let open_err = |message: String| StoreError::Open {
            dir: dir.to_path_buf(),
            message,
        };
        create_private_dir(dir).map_err(|e| open_err(format!("cannot create it: {e}")))?;
        let db = dir.join(DB_FILE);
        create_private_file(&db).map_err(|e| open_err(format!("cannot create {DB_FILE}: {e}")))?;
        for name in [DB_FILE, DB_WAL_FILE, DB_SHM_FILE, AUDIT_FILE] {
            make_private(&dir.join(name))
                .map_err(|e| open_err(format!("cannot make {name} private (mode 0600): {e}")))?;
        }
        let conn =
            Connection::open(&db).map_err(|e| open_err(format!("cannot open {DB_FILE}: {e}")))?;
        let audit = Sink::open(&dir.join(AUDIT_FILE), durability == Durability::Sync)
            .map_err(|e| open_err(format!("cannot open {AUDIT_FILE}: {e}")))?;
        let mut store = Self::prepare(conn, audit, durability, Some(dir.to_path_buf()))
            .map_err(|e| open_err(e.to_string()))?;
        if durability == Durability::Sync {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(dir.join(AUDIT_FILE))
                .map_err(|e| open_err(format!("cannot open {AUDIT_FILE}: {e}")))?;
            store.intents = Some(file);
        }
        Ok(store)
    }

    /// Opens the store in `dir` if something has run with it (its `state.db` exists),
    /// `Ok(None)` if not. For readers that must not create state: the quarantine lookup
    /// of a run without the monitor layer, `policy check`, `monitor status`.
    pub fn open_existing(dir: &Path, durability: Durability) -> Result<Option<Store>, StoreError> {
        match std::fs::symlink_metadata(dir.join(DB_FILE)) {
            Ok(_) => Self::open(dir, durability).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::Open {
                dir: dir.to_path_buf(),
                message: format!("cannot read {DB_FILE}: {e}"),
            }),
        }
    }

    /// A store in memory, with the audit trail in memory ([`audit_bytes`](Self::audit_bytes)):
    /// for tests, benches and embedding without persistence.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        Self::prepare(conn, Sink::Memory(Vec::new()), Durability::Flush, None)
    }

    fn prepare(
        mut conn: Connection,
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
        // (see `Store::transact`), and the automatic checkpoint still bounds
        // the WAL.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        // With `bound_wal` after each commit: a long-running process's WAL stays under its
        // limit (see `WAL_AUTOCHECKPOINT_PAGES`).
        conn.pragma_update(
            None,
            "wal_autocheckpoint",
            skillgate_store::WAL_AUTOCHECKPOINT_PAGES,
        )?;
        // A commit is not synced by default (WAL mode: it survives a crash of the process,
        // and power loss leaves the database as of an earlier commit, never corrupt).
        // `Sync` syncs the commits that change enforcement state; every run's audit
        // record is synced by the audit trail itself.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        if schema_version(&conn)? != SCHEMA_VERSION {
            // Create or migrate under the write lock, deciding on the version read there:
            // another process may have done it meanwhile.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            match schema_version(&tx)? {
                0 => tx.execute_batch(SCHEMA)?,
                1 => {
                    tx.execute_batch(MIGRATE_V1)?;
                    tx.execute_batch(SCHEMA)?;
                }
                SCHEMA_VERSION => {}
                v => {
                    return Err(StoreError::Db(format!(
                        "{DB_FILE} has schema version {v}, this skillgate reads versions 1 to {SCHEMA_VERSION}"
                    )));
                }
            }
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            tx.commit()?;
        }
        Ok(Store {
            inner: Mutex::new(Inner {
                conn,
                audit,
                sync_enforcement: durability == Durability::Sync,
                synced_commits: 0,
            }),
            dir,
            intents: None,
            intent_syncs: Default::default(),
        })
    }

    /// Appends a run's intent record (see [`audit::intent_record`]) to the trail without
    /// syncing it; [`sync_announced`](Self::sync_announced) makes it durable. `Ok(false)`
    /// when this store keeps no intents (durability `flush`, or in memory: nothing there
    /// is synced, so an intent would add a write and cover nothing).
    pub fn announce(&self, record: &AuditRecord) -> Result<bool, StoreError> {
        let Some(file) = &self.intents else {
            return Ok(false);
        };
        audit::write_line(file, &audit::encode(record)).map_err(StoreError::Audit)?;
        Ok(true)
    }

    /// Syncs the audit trail: every record written to it so far, the announced intents
    /// among them, survives power loss once this returns.
    pub fn sync_announced(&self) -> Result<(), StoreError> {
        match &self.intents {
            Some(file) => {
                file.sync_data().map_err(StoreError::Audit)?;
                self.intent_syncs
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// How many times this store synced its audit trail: once per record written without
    /// an intent before it, once per [`sync_announced`](Self::sync_announced). For tests
    /// and diagnostics.
    pub fn trail_syncs(&self) -> u64 {
        let records = self.inner.lock().map_or(0, |inner| inner.audit.synced());
        records + self.intent_syncs.load(std::sync::atomic::Ordering::Relaxed)
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

    /// How many commits of this store were synced to disk: with durability `sync`, those
    /// that changed enforcement state (a strike, quarantine, throttle or skill flag, set or
    /// lifted); none with `flush`. For tests and diagnostics.
    pub fn synced_commits(&self) -> u64 {
        self.inner.lock().map_or(0, |inner| inner.synced_commits)
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
        let Inner {
            conn,
            audit,
            sync_enforcement,
            synced_commits,
        } = &mut *guard;
        let (r, enforcement) = {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut t = Tx {
                tx,
                audit,
                enforcement: Cell::new(false),
            };
            let r = f(&mut t)?;
            let enforcement = t.enforcement.get();
            t.tx.commit()?;
            (r, enforcement)
        };
        if self.dir.is_some() {
            // Keeps the WAL from growing with every run (see `bound_wal`). The commit
            // stands whatever this gives; a WAL not folded now is at a later commit.
            let _ = skillgate_store::bound_wal(conn);
        }
        // With durability `sync`, a commit that changes enforcement state is made durable
        // before this returns, as `synchronous=FULL` would have (which cannot be switched
        // on inside a transaction, and the change is only known there): the WAL holding
        // it, and with it every earlier commit, is synced, then its directory entry. A
        // checkpoint meanwhile has moved the commit into the database and synced that.
        // Other commits (events, baselines, counters) are written and not synced: their
        // audit records are.
        if *sync_enforcement && enforcement {
            if let Some(dir) = &self.dir {
                sync_wal(dir).map_err(|e| {
                    StoreError::Db(format!("cannot sync {DB_WAL_FILE} after a commit: {e}"))
                })?;
                *synced_commits += 1;
            }
        }
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

    /// The agent's quarantine, if any, whichever tenant it was recorded in (quarantines
    /// are keyed by agent id, so moving an agent to another tenant does not lift one).
    pub fn quarantine_of(&self, agent: &str) -> Result<Option<QuarantineEntry>, StoreError> {
        self.read(|c| quarantine_of(c, agent))
    }

    /// The skill's flag (by code digest), if it is flagged.
    pub fn skill_flag(&self, digest: &str) -> Result<Option<SkillFlag>, StoreError> {
        self.read(|c| skill_flag(c, digest))
    }

    /// Every flagged skill.
    pub fn flagged_skills(&self) -> Result<Vec<SkillFlag>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(
                "SELECT digest, skill, since_ms, reason FROM skill_flags ORDER BY since_ms, digest",
            )?;
            let rows = st.query_map([], |r| {
                Ok(SkillFlag {
                    digest: r.get(0)?,
                    skill: r.get(1)?,
                    since_ms: r.get(2)?,
                    reason: r.get(3)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Clears a skill's flag; audited (an `unflag` record) and counted. `Ok(None)` when
    /// it was not flagged (nothing is written). The same for every state: see
    /// [`MonitorState`](crate::MonitorState)'s `unflag_skill`.
    pub fn unflag_skill(
        &self,
        digest: &str,
        by: &str,
        now_ms: i64,
    ) -> Result<Option<SkillFlag>, StoreError> {
        (self as &dyn crate::MonitorState).unflag_skill(digest, by, now_ms)
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

    /// Takes one request slot of a throttled agent's shared rate, in one statement.
    ///
    /// The rate is a GCRA (the generic cell rate algorithm, as the `governor` crate
    /// counts it in memory) kept in the `throttle` row: `per_minute` requests may come at
    /// once, then one every `60s / per_minute`. Being in the store, the quota is shared
    /// by every process and thread using the state directory, and a slot is taken when
    /// the request is admitted, so concurrent starts cannot all pass.
    pub fn take_throttle_slot(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
        per_minute: std::num::NonZeroU32,
    ) -> Result<ThrottleCheck, StoreError> {
        let Some(until_ms) = self.throttled_until(tenant, agent, now_ms)? else {
            return Ok(ThrottleCheck::NotThrottled);
        };
        let interval = (60_000 / i64::from(per_minute.get())).max(1);
        let limit = interval * i64::from(per_minute.get());
        let taken = self.read(|c| {
            Ok(c.prepare_cached(
                "UPDATE throttle SET tat_ms = max(tat_ms, ?3) + ?4
                 WHERE tenant = ?1 AND agent = ?2 AND until_ms > ?3 AND max(tat_ms, ?3) + ?4 - ?3 <= ?5",
            )?
            .execute(params![tenant, agent, now_ms, interval, limit])?)
        })?;
        Ok(if taken == 1 {
            ThrottleCheck::Admitted { until_ms }
        } else {
            ThrottleCheck::OverRate { until_ms }
        })
    }

    /// Lifts an agent's quarantine (whichever tenant it was recorded in) and clears its
    /// strikes; audited (a `release` record) and counted. `Ok(None)` when it was not
    /// quarantined (nothing is written).
    pub fn release(
        &self,
        agent: &str,
        by: &str,
        now_ms: i64,
    ) -> Result<Option<QuarantineEntry>, StoreError> {
        (self as &dyn crate::MonitorState).release(agent, by, now_ms)
    }

    /// Records a refused credential: an `auth_failure` audit record, and
    /// `skillgate_auth_failures_total{reason}` counted.
    pub fn record_auth_failure(&self, record: audit::AuthFailureRecord) -> Result<(), StoreError> {
        (self as &dyn crate::MonitorState).record_auth_failure(record)
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
        (self as &dyn crate::MonitorState).agent_status(tenant, agent, now_ms, strikes_since_ms)
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

/// Quarantines are keyed by agent id: `tenant` is not consulted, so an agent moved to
/// another tenant (or claiming one) stays quarantined.
impl QuarantineSource for Store {
    fn is_quarantined(&self, _tenant: &str, agent_id: &str) -> Result<bool, String> {
        self.quarantine_of(agent_id)
            .map(|q| q.is_some())
            .map_err(|e| e.to_string())
    }
}

fn schema_version(c: &Connection) -> Result<i64, StoreError> {
    Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Syncs the database's WAL in `dir` (its data and size), then `dir` itself.
fn sync_wal(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir.join(DB_WAL_FILE))?.sync_data()?;
    std::fs::File::open(dir)?.sync_all()
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Creates `path` mode 0600 if it does not exist (SQLite would create it 0644 under the
/// usual umask, and gives its `-wal` and `-shm` files the database's mode).
fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path).map(drop)
}

/// Narrows an existing file that others may read or write to mode 0600 (state written
/// by an older skillgate); a missing file is left alone.
fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(path) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            }
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

pub(crate) fn parse_status(s: &str) -> Result<Status, StoreError> {
    s.parse().map_err(StoreError::Db)
}

pub(crate) fn parse_baselines(j: &str) -> Result<Baselines, StoreError> {
    serde_json::from_str(j)
        .map_err(|e| StoreError::Db(format!("a stored baseline is unreadable: {e}")))
}

fn quarantine_of(c: &Connection, agent: &str) -> Result<Option<QuarantineEntry>, StoreError> {
    Ok(
        c.prepare_cached("SELECT tenant, since_ms, reason FROM quarantine WHERE agent = ?1")?
            .query_row(params![agent], |r| {
                Ok(QuarantineEntry {
                    tenant: r.get(0)?,
                    agent: agent.into(),
                    since_ms: r.get(1)?,
                    reason: r.get(2)?,
                })
            })
            .optional()?,
    )
}

fn skill_flag(c: &Connection, digest: &str) -> Result<Option<SkillFlag>, StoreError> {
    Ok(
        c.prepare_cached("SELECT skill, since_ms, reason FROM skill_flags WHERE digest = ?1")?
            .query_row(params![digest], |r| {
                Ok(SkillFlag {
                    digest: digest.into(),
                    skill: r.get(0)?,
                    since_ms: r.get(1)?,
                    reason: r.get(2)?,
                })
            })
            .optional()?,
    )
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
    /// It changes enforcement state: a strike, quarantine, throttle or skill flag, set
    /// or lifted.
    enforcement: Cell<bool>,
}

impl Tx<'_> {
    pub(crate) fn quarantine_of(&self, agent: &str) -> Result<Option<QuarantineEntry>, StoreError> {
        quarantine_of(&self.tx, agent)
    }

    pub(crate) fn skill_flag(&self, digest: &str) -> Result<Option<SkillFlag>, StoreError> {
        skill_flag(&self.tx, digest)
    }

    /// Flags a skill (kept if it already is).
    pub(crate) fn flag_skill(
        &self,
        digest: &str,
        skill: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.enforcement.set(true);
        self.tx.execute(
            "INSERT OR IGNORE INTO skill_flags(digest, skill, since_ms, reason) VALUES(?1, ?2, ?3, ?4)",
            params![digest, skill, since_ms, reason],
        )?;
        Ok(())
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
        digest: &'a str,
    ) -> TxHistory<'a> {
        TxHistory {
            conn: &self.tx,
            tenant,
            agent,
            skill,
            digest,
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
        self.enforcement.set(true);
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
        self.enforcement.set(true);
        self.tx.execute(
            "INSERT OR IGNORE INTO quarantine(agent, tenant, since_ms, reason) VALUES(?1, ?2, ?3, ?4)",
            params![agent, tenant, since_ms, reason],
        )?;
        Ok(())
    }

    /// Lifts the agent's quarantine and clears its strikes.
    pub(crate) fn lift_quarantine(&self, agent: &str) -> Result<(), StoreError> {
        self.enforcement.set(true);
        self.tx
            .execute("DELETE FROM quarantine WHERE agent = ?1", params![agent])?;
        self.tx
            .execute("DELETE FROM strikes WHERE agent = ?1", params![agent])?;
        Ok(())
    }

    /// Clears the skill's flag and the block counts that raised it.
    pub(crate) fn clear_skill_flag(&self, digest: &str) -> Result<(), StoreError> {
        self.enforcement.set(true);
        self.tx
            .execute("DELETE FROM skill_flags WHERE digest = ?1", params![digest])?;
        self.tx.execute(
            "DELETE FROM skill_minutes WHERE digest = ?1",
            params![digest],
        )?;
        Ok(())
    }

    pub(crate) fn activity(&self, tenant: &str, agent: &str) -> Result<AgentActivity, StoreError> {
        let mut st = self.tx.prepare(
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
        let (anomalous, last_seen_ms): (i64, Option<i64>) = self.tx.query_row(
            "SELECT coalesce(sum(detections > 0), 0), max(ts_ms) FROM events WHERE tenant = ?1 AND agent = ?2",
            params![tenant, agent],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(AgentActivity {
            executions,
            anomalous: anomalous as u64,
            last_seen_ms,
        })
    }

    pub(crate) fn all_baselines(
        &self,
        tenant: &str,
        agent: &str,
    ) -> Result<Vec<(String, Baselines)>, StoreError> {
        let mut st = self.tx.prepare(
            "SELECT skill, stats FROM baselines WHERE tenant = ?1 AND agent = ?2 ORDER BY skill",
        )?;
        st.query_map(params![tenant, agent], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .map(|(s, j)| Ok((s, parse_baselines(&j)?)))
        .collect()
    }

    pub(crate) fn throttle(
        &self,
        tenant: &str,
        agent: &str,
        until_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.enforcement.set(true);
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
                                    wall_us, cpu_us, rss_bytes, output_bytes, detections, blame)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
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
                e.detections,
                e.blame.as_str()
            ])?;
        let seq = self.tx.last_insert_rowid();
        self.tx
            .prepare_cached(
                "INSERT INTO agent_minutes(tenant, agent, minute, status, blame, count) VALUES(?1, ?2, ?3, ?4, ?5, 1)
                 ON CONFLICT(tenant, agent, minute, status, blame) DO UPDATE SET count = count + 1",
            )?
            .execute(params![e.tenant, e.agent, minute(e.ts_ms), e.status.as_str(), e.blame.as_str()])?;
        if e.blame == Blame::Skill {
            self.tx
                .prepare_cached(
                    "INSERT INTO skill_minutes(digest, minute, status, count) VALUES(?1, ?2, ?3, 1)
                     ON CONFLICT(digest, minute, status) DO UPDATE SET count = count + 1",
                )?
                .execute(params![e.digest, minute(e.ts_ms), e.status.as_str()])?;
        }
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
        self.tx.execute(
            "DELETE FROM skill_minutes WHERE minute < ?1",
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

    /// Appends a record, synced before the commit with durability `sync`, unless
    /// `after_intent` (the run's intent is already durable) and this transaction changes
    /// no enforcement state.
    pub(crate) fn append_audit(
        &mut self,
        record: &AuditRecord,
        after_intent: bool,
    ) -> Result<(), StoreError> {
        let covered = after_intent && !self.enforcement.get();
        self.audit
            .append(&audit::encode(record), covered)
            .map_err(StoreError::Audit)
    }
}

/// One row of the events table: one execution as the monitor records it.
pub struct EventRow<'a> {
    /// The request id (unique).
    pub request_id: &'a str,
    /// When, ms since the epoch.
    pub ts_ms: i64,
    /// Tenant.
    pub tenant: &'a str,
    /// Agent.
    pub agent: &'a str,
    /// Skill name.
    pub skill: &'a str,
    /// Skill code digest.
    pub digest: &'a str,
    /// Outcome status.
    pub status: Status,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Signal.
    pub signal: Option<i32>,
    /// Wall time, µs.
    pub wall_us: i64,
    /// CPU time, µs.
    pub cpu_us: i64,
    /// Peak RSS, bytes.
    pub rss_bytes: i64,
    /// Output size, bytes.
    pub output_bytes: i64,
    /// Detections that fired.
    pub detections: i64,
    /// Whom the outcome counts against.
    pub blame: Blame,
}

/// The [`History`] of one agent and skill, read inside a write transaction.
pub(crate) struct TxHistory<'a> {
    conn: &'a Connection,
    tenant: &'a str,
    agent: &'a str,
    skill: &'a str,
    digest: &'a str,
}

/// The minute (since the epoch) a timestamp falls in: agent request counts are kept per
/// minute, so a window's count costs at most one row per minute and status, however busy
/// the agent; windows are therefore counted from the start of their first minute.
fn minute(ts_ms: i64) -> i64 {
    ts_ms.div_euclid(60_000)
}

fn status_list(statuses: &[Status]) -> String {
    statuses
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

impl History for TxHistory<'_> {
    fn agent_count_since(&self, statuses: &[Status], since_ms: i64) -> Result<u64, String> {
        self.conn
            .prepare_cached(
                "SELECT coalesce(sum(count), 0) FROM agent_minutes
                 WHERE tenant = ?1 AND agent = ?2 AND minute >= ?3
                 AND (?4 = '' OR (blame = 'agent' AND instr(',' || ?4 || ',', ',' || status || ',') > 0))",
            )
            .and_then(|mut st| {
                st.query_row(
                    params![self.tenant, self.agent, minute(since_ms), status_list(statuses)],
                    |r| r.get::<_, i64>(0),
                )
            })
            .map(|n| n as u64)
            .map_err(|e| e.to_string())
    }

    fn skill_count_since(&self, statuses: &[Status], since_ms: i64) -> Result<u64, String> {
        self.conn
            .prepare_cached(
                "SELECT coalesce(sum(count), 0) FROM skill_minutes
                 WHERE digest = ?1 AND minute >= ?2
                 AND (?3 = '' OR instr(',' || ?3 || ',', ',' || status || ',') > 0)",
            )
            .and_then(|mut st| {
                st.query_row(
                    params![self.digest, minute(since_ms), status_list(statuses)],
                    |r| r.get::<_, i64>(0),
                )
            })
            .map(|n| n as u64)
            .map_err(|e| e.to_string())
    }

    fn skill_recent_statuses(&self, n: usize) -> Result<Vec<Status>, String> {
        let run = || -> Result<Vec<String>, rusqlite::Error> {
            let mut st = self.conn.prepare_cached(
                "SELECT status FROM events WHERE tenant = ?1 AND agent = ?2 AND skill = ?3 AND blame = 'agent'
                 ORDER BY seq DESC LIMIT ?4",
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
