//! [`PgState`]: the monitor's state in PostgreSQL (`[store] url`), shared by every
//! skillgate process (replicas of `serve`, `skillgate run`) naming the same database.
//!
//! The tables are the SQLite store's, plus `monitor_audit`, the audit trail (one row per
//! record, the JSON line as the file would hold it). Recording transactions take one
//! transaction-scoped advisory lock first, so they are serialised across every process
//! exactly as SQLite's `BEGIN IMMEDIATE` serialises them on one machine: strikes,
//! quarantines and the detections' counts are decided on what every replica recorded.
//! An execution is recorded once per request id: a transaction that finds its request id
//! recorded already (a retry after a connection lost during the commit, a client
//! replaying a request) writes nothing and succeeds.
use crate::audit::{self, AuditRecord};
use crate::baseline::Baselines;
use crate::detections::History;
use crate::signals::Blame;
use crate::state::{AgentActivity, MonitorState, StateTx};
use crate::store::{
    EventRow, QuarantineEntry, SkillFlag, StoreError, ThrottleCheck, parse_baselines, parse_status,
};
use postgres::types::ToSql;
use postgres::{Row, Transaction};
use skillgate_core::{QuarantineSource, Status};
use skillgate_store::pg::PgConn;
use std::cell::{Cell, RefCell};
use std::num::NonZeroU32;
use std::sync::Arc;

/// The key of the advisory lock that serialises recording transactions ("skillgat").
const WRITE_LOCK: i64 = 0x736b_696c_6c67_6174;

/// The migrations of the `monitor` tables, in order.
const MIGRATIONS: &[&str] = &["
CREATE TABLE monitor_events(
    seq BIGSERIAL PRIMARY KEY,
    request_id TEXT NOT NULL UNIQUE,
    ts_ms BIGINT NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    skill TEXT NOT NULL,
    digest TEXT NOT NULL,
    status TEXT NOT NULL,
    exit_code INTEGER,
    signal INTEGER,
    wall_us BIGINT NOT NULL,
    cpu_us BIGINT NOT NULL,
    rss_bytes BIGINT NOT NULL,
    output_bytes BIGINT NOT NULL,
    detections BIGINT NOT NULL,
    blame TEXT NOT NULL
);
CREATE INDEX monitor_events_ts ON monitor_events(ts_ms);
CREATE INDEX monitor_events_agent_skill ON monitor_events(tenant, agent, skill, seq);
CREATE TABLE monitor_agent_minutes(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, minute BIGINT NOT NULL, status TEXT NOT NULL,
    blame TEXT NOT NULL, count BIGINT NOT NULL,
    PRIMARY KEY(tenant, agent, minute, status, blame)
);
CREATE TABLE monitor_skill_minutes(
    digest TEXT NOT NULL, minute BIGINT NOT NULL, status TEXT NOT NULL, count BIGINT NOT NULL,
    PRIMARY KEY(digest, minute, status)
);
CREATE TABLE monitor_skill_flags(
    digest TEXT PRIMARY KEY, skill TEXT NOT NULL, since_ms BIGINT NOT NULL, reason TEXT NOT NULL
);
CREATE TABLE monitor_baselines(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, skill TEXT NOT NULL, stats TEXT NOT NULL,
    PRIMARY KEY(tenant, agent, skill)
);
CREATE TABLE monitor_strikes(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, ts_ms BIGINT NOT NULL,
    rule_id TEXT NOT NULL, request_id TEXT NOT NULL, count BIGINT NOT NULL
);
CREATE INDEX monitor_strikes_agent ON monitor_strikes(tenant, agent, ts_ms);
CREATE TABLE monitor_quarantine(
    agent TEXT PRIMARY KEY, tenant TEXT NOT NULL, since_ms BIGINT NOT NULL, reason TEXT NOT NULL
);
CREATE TABLE monitor_throttle(
    tenant TEXT NOT NULL, agent TEXT NOT NULL, until_ms BIGINT NOT NULL, reason TEXT NOT NULL,
    tat_ms BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY(tenant, agent)
);
CREATE TABLE monitor_counters(
    name TEXT NOT NULL, labels TEXT NOT NULL, value DOUBLE PRECISION NOT NULL,
    PRIMARY KEY(name, labels)
);
CREATE TABLE monitor_histograms(
    name TEXT NOT NULL, labels TEXT NOT NULL, bucket BIGINT NOT NULL, count BIGINT NOT NULL,
    PRIMARY KEY(name, labels, bucket)
);
CREATE TABLE monitor_audit(
    seq BIGSERIAL PRIMARY KEY,
    request_id TEXT UNIQUE,
    ts_ms BIGINT NOT NULL,
    kind TEXT NOT NULL,
    record TEXT NOT NULL
);
"];

/// The monitor's state in PostgreSQL.
#[derive(Debug)]
pub struct PgState {
    conn: PgConn,
}

fn db(e: postgres::Error) -> StoreError {
    StoreError::Db(e.to_string())
}

impl From<skillgate_store::StoreError> for StoreError {
    fn from(e: skillgate_store::StoreError) -> Self {
        StoreError::Db(e.to_string())
    }
}

fn store(e: skillgate_store::StoreError) -> StoreError {
    e.into()
}

impl PgState {
    /// Connects to `url` and creates or migrates the monitor's tables. A database that
    /// cannot be reached is an error naming the URL without its password.
    pub fn open(url: &str) -> Result<PgState, StoreError> {
        let conn = PgConn::connect(url).map_err(store)?;
        conn.migrate("monitor", MIGRATIONS).map_err(store)?;
        Ok(PgState { conn })
    }

    /// The database's URL, without its password.
    pub fn url(&self) -> &str {
        self.conn.url()
    }

    /// The audit trail: every record, oldest first, as JSON lines.
    pub fn audit_lines(&self) -> Result<Vec<String>, StoreError> {
        self.conn
            .with(|c| {
                c.query("SELECT record FROM monitor_audit ORDER BY seq", &[])
                    .map(|rows| rows.iter().map(|r| r.get(0)).collect())
            })
            .map_err(store)
    }

    fn rows<T: Send>(
        &self,
        sql: &str,
        row: impl Fn(&Row) -> T + Send + Sync,
    ) -> Result<Vec<T>, StoreError> {
        self.conn
            .with(|c| {
                c.query(sql, &[])
                    .map(|rows| rows.iter().map(&row).collect())
            })
            .map_err(store)
    }

    /// The agent's quarantine, if any, whichever tenant it was recorded in.
    pub fn quarantine_of(&self, agent: &str) -> Result<Option<QuarantineEntry>, StoreError> {
        self.conn
            .with(|c| {
                c.query_opt(QUARANTINE_OF, &[&agent])
                    .map(|r| r.as_ref().map(quarantine_row))
            })
            .map_err(store)
    }
}

const QUARANTINE_OF: &str =
    "SELECT tenant, agent, since_ms, reason FROM monitor_quarantine WHERE agent = $1";

fn quarantine_row(r: &Row) -> QuarantineEntry {
    QuarantineEntry {
        tenant: r.get(0),
        agent: r.get(1),
        since_ms: r.get(2),
        reason: r.get(3),
    }
}

const THROTTLED_UNTIL: &str =
    "SELECT until_ms FROM monitor_throttle WHERE tenant = $1 AND agent = $2 AND until_ms > $3";

/// Quarantines are keyed by agent id, as in the SQLite store.
impl QuarantineSource for PgState {
    fn is_quarantined(&self, _tenant: &str, agent_id: &str) -> Result<bool, String> {
        self.quarantine_of(agent_id)
            .map(|q| q.is_some())
            .map_err(|e| e.to_string())
    }
}

impl MonitorState for PgState {
    fn transact_dyn(
        &self,
        f: &mut (dyn FnMut(&mut dyn StateTx) -> Result<(), StoreError> + Send),
    ) -> Result<(), StoreError> {
        let attempt = |f: &mut (dyn FnMut(&mut dyn StateTx) -> Result<(), StoreError> + Send)| {
            self.conn.with_store(|c| -> Result<(), StoreError> {
                let mut tx = c.transaction().map_err(db)?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
                    .map_err(db)?;
                let mut t = PgTx {
                    tx: RefCell::new(tx),
                    replay: Cell::new(false),
                };
                f(&mut t)?;
                let PgTx { tx, replay } = t;
                let tx = tx.into_inner();
                if replay.get() {
                    tx.rollback().map_err(db)
                } else {
                    tx.commit().map_err(db)
                }
            })
        };
        match attempt(f) {
            // The connection dropped (the server restarted, a proxy cut it): once more on
            // a new one. A commit that did land is found by its request id.
            Err(_) if self.conn.is_broken() => attempt(f),
            r => r,
        }
    }

    fn take_throttle_slot(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
        per_minute: NonZeroU32,
    ) -> Result<ThrottleCheck, StoreError> {
        let Some(until_ms) = MonitorState::throttled_until(self, tenant, agent, now_ms)? else {
            return Ok(ThrottleCheck::NotThrottled);
        };
        let interval = (60_000 / i64::from(per_minute.get())).max(1);
        let limit = interval * i64::from(per_minute.get());
        // One statement: the row lock makes taking a slot atomic across processes.
        let taken = self
            .conn
            .with(|c| {
                c.execute(
                    "UPDATE monitor_throttle SET tat_ms = GREATEST(tat_ms, $3) + $4
                     WHERE tenant = $1 AND agent = $2 AND until_ms > $3
                     AND GREATEST(tat_ms, $3) + $4 - $3 <= $5",
                    &[&tenant, &agent, &now_ms, &interval, &limit],
                )
            })
            .map_err(store)?;
        Ok(if taken == 1 {
            ThrottleCheck::Admitted { until_ms }
        } else {
            ThrottleCheck::OverRate { until_ms }
        })
    }

    fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.conn
            .with(|c| {
                c.query_opt(THROTTLED_UNTIL, &[&tenant, &agent, &now_ms])
                    .map(|r| r.map(|r| r.get(0)))
            })
            .map_err(store)
    }

    fn into_quarantine_source(self: Arc<Self>) -> Arc<dyn QuarantineSource> {
        self
    }

    fn counters(&self) -> Result<Vec<(String, String, f64)>, StoreError> {
        self.rows(
            "SELECT name, labels, value FROM monitor_counters ORDER BY name, labels",
            |r| (r.get(0), r.get(1), r.get(2)),
        )
    }

    fn histograms(&self) -> Result<Vec<(String, String, usize, u64)>, StoreError> {
        self.rows(
            "SELECT name, labels, bucket, count FROM monitor_histograms ORDER BY name, labels, bucket",
            |r| {
                (
                    r.get(0),
                    r.get(1),
                    r.get::<_, i64>(2) as usize,
                    r.get::<_, i64>(3) as u64,
                )
            },
        )
    }

    fn quarantined(&self) -> Result<Vec<QuarantineEntry>, StoreError> {
        self.rows(
            "SELECT tenant, agent, since_ms, reason FROM monitor_quarantine ORDER BY tenant, agent",
            quarantine_row,
        )
    }

    fn flagged_skills(&self) -> Result<Vec<SkillFlag>, StoreError> {
        self.rows(
            "SELECT digest, skill, since_ms, reason FROM monitor_skill_flags ORDER BY since_ms, digest",
            |r| SkillFlag {
                digest: r.get(0),
                skill: r.get(1),
                since_ms: r.get(2),
                reason: r.get(3),
            },
        )
    }

    fn agents(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.rows(
            "SELECT tenant, agent FROM monitor_baselines UNION SELECT tenant, agent FROM monitor_events
             UNION SELECT tenant, agent FROM monitor_quarantine ORDER BY 1, 2",
            |r| (r.get(0), r.get(1)),
        )
    }
}

/// One recording transaction. The client's calls take `&mut`; the seam's take `&self`
/// (as SQLite's do), hence the cell.
struct PgTx<'c> {
    tx: RefCell<Transaction<'c>>,
    /// The execution's request id was recorded already: roll back instead of committing.
    replay: Cell<bool>,
}

impl PgTx<'_> {
    fn exec(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        self.tx.borrow_mut().execute(sql, params).map_err(db)
    }

    fn one(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Option<Row>, StoreError> {
        self.tx.borrow_mut().query_opt(sql, params).map_err(db)
    }

    fn all(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        self.tx.borrow_mut().query(sql, params).map_err(db)
    }
}

/// The minute (since the epoch) a timestamp falls in, as the SQLite store counts.
fn minute(ts_ms: i64) -> i64 {
    ts_ms.div_euclid(60_000)
}

fn statuses(s: &[Status]) -> Vec<&'static str> {
    s.iter().map(|s| s.as_str()).collect()
}

impl StateTx for PgTx<'_> {
    fn quarantine_of(&self, agent: &str) -> Result<Option<QuarantineEntry>, StoreError> {
        Ok(self
            .one(QUARANTINE_OF, &[&agent])?
            .as_ref()
            .map(quarantine_row))
    }

    fn skill_flag(&self, digest: &str) -> Result<Option<SkillFlag>, StoreError> {
        Ok(self
            .one(
                "SELECT skill, since_ms, reason FROM monitor_skill_flags WHERE digest = $1",
                &[&digest],
            )?
            .map(|r| SkillFlag {
                digest: digest.into(),
                skill: r.get(0),
                since_ms: r.get(1),
                reason: r.get(2),
            }))
    }

    fn flag_skill(
        &self,
        digest: &str,
        skill: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO monitor_skill_flags(digest, skill, since_ms, reason) VALUES($1, $2, $3, $4)
             ON CONFLICT DO NOTHING",
            &[&digest, &skill, &since_ms, &reason],
        )
        .map(drop)
    }

    fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        Ok(self
            .one(THROTTLED_UNTIL, &[&tenant, &agent, &now_ms])?
            .map(|r| r.get(0)))
    }

    fn baselines(&self, tenant: &str, agent: &str, skill: &str) -> Result<Baselines, StoreError> {
        match self.one(
            "SELECT stats FROM monitor_baselines WHERE tenant = $1 AND agent = $2 AND skill = $3",
            &[&tenant, &agent, &skill],
        )? {
            None => Ok(Baselines::default()),
            Some(r) => parse_baselines(r.get(0)),
        }
    }

    fn save_baselines(
        &self,
        tenant: &str,
        agent: &str,
        skill: &str,
        b: &Baselines,
    ) -> Result<(), StoreError> {
        let j = serde_json::to_string(b).map_err(|e| StoreError::Db(e.to_string()))?;
        self.exec(
            "INSERT INTO monitor_baselines(tenant, agent, skill, stats) VALUES($1, $2, $3, $4)
             ON CONFLICT(tenant, agent, skill) DO UPDATE SET stats = excluded.stats",
            &[&tenant, &agent, &skill, &j],
        )
        .map(drop)
    }

    fn history<'a>(
        &'a self,
        tenant: &'a str,
        agent: &'a str,
        skill: &'a str,
        digest: &'a str,
    ) -> Box<dyn History + 'a> {
        Box::new(PgHistory {
            tx: self,
            tenant,
            agent,
            skill,
            digest,
        })
    }

    fn add_strike(
        &self,
        tenant: &str,
        agent: &str,
        ts_ms: i64,
        rule_id: &str,
        request_id: &str,
        count: u32,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO monitor_strikes(tenant, agent, ts_ms, rule_id, request_id, count)
             VALUES($1, $2, $3, $4, $5, $6)",
            &[
                &tenant,
                &agent,
                &ts_ms,
                &rule_id,
                &request_id,
                &i64::from(count),
            ],
        )
        .map(drop)
    }

    fn strikes_since(&self, tenant: &str, agent: &str, since_ms: i64) -> Result<u64, StoreError> {
        let n: i64 = self
            .one(
                "SELECT coalesce(sum(count), 0)::BIGINT FROM monitor_strikes
                 WHERE tenant = $1 AND agent = $2 AND ts_ms >= $3",
                &[&tenant, &agent, &since_ms],
            )?
            .map_or(0, |r| r.get(0));
        Ok(n as u64)
    }

    fn quarantine(
        &self,
        tenant: &str,
        agent: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO monitor_quarantine(agent, tenant, since_ms, reason) VALUES($1, $2, $3, $4)
             ON CONFLICT DO NOTHING",
            &[&agent, &tenant, &since_ms, &reason],
        )
        .map(drop)
    }

    fn lift_quarantine(&self, agent: &str) -> Result<(), StoreError> {
        self.exec("DELETE FROM monitor_quarantine WHERE agent = $1", &[&agent])?;
        self.exec("DELETE FROM monitor_strikes WHERE agent = $1", &[&agent])
            .map(drop)
    }

    fn clear_skill_flag(&self, digest: &str) -> Result<(), StoreError> {
        self.exec(
            "DELETE FROM monitor_skill_flags WHERE digest = $1",
            &[&digest],
        )?;
        self.exec(
            "DELETE FROM monitor_skill_minutes WHERE digest = $1",
            &[&digest],
        )
        .map(drop)
    }

    fn activity(&self, tenant: &str, agent: &str) -> Result<AgentActivity, StoreError> {
        let executions = self
            .all(
                "SELECT status, count(*) FROM monitor_events WHERE tenant = $1 AND agent = $2
                 GROUP BY status ORDER BY status",
                &[&tenant, &agent],
            )?
            .iter()
            .map(|r| Ok((parse_status(r.get(0))?, r.get::<_, i64>(1) as u64)))
            .collect::<Result<_, StoreError>>()?;
        let (anomalous, last_seen_ms) = self
            .one(
                "SELECT coalesce(sum((detections > 0)::INT), 0)::BIGINT, max(ts_ms)
                 FROM monitor_events WHERE tenant = $1 AND agent = $2",
                &[&tenant, &agent],
            )?
            .map_or((0, None), |r| (r.get::<_, i64>(0), r.get(1)));
        Ok(AgentActivity {
            executions,
            anomalous: anomalous as u64,
            last_seen_ms,
        })
    }

    fn all_baselines(
        &self,
        tenant: &str,
        agent: &str,
    ) -> Result<Vec<(String, Baselines)>, StoreError> {
        self.all(
            "SELECT skill, stats FROM monitor_baselines WHERE tenant = $1 AND agent = $2 ORDER BY skill",
            &[&tenant, &agent],
        )?
        .iter()
        .map(|r| Ok((r.get(0), parse_baselines(r.get(1))?)))
        .collect()
    }

    fn throttle(
        &self,
        tenant: &str,
        agent: &str,
        until_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO monitor_throttle(tenant, agent, until_ms, reason) VALUES($1, $2, $3, $4)
             ON CONFLICT(tenant, agent) DO UPDATE
             SET until_ms = GREATEST(monitor_throttle.until_ms, excluded.until_ms), reason = excluded.reason",
            &[&tenant, &agent, &until_ms, &reason],
        )
        .map(drop)
    }

    fn insert_event(&self, e: &EventRow<'_>) -> Result<i64, StoreError> {
        let seq = self.one(
            "INSERT INTO monitor_events(request_id, ts_ms, tenant, agent, skill, digest, status,
                 exit_code, signal, wall_us, cpu_us, rss_bytes, output_bytes, detections, blame)
             VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
             ON CONFLICT(request_id) DO NOTHING RETURNING seq",
            &[
                &e.request_id,
                &e.ts_ms,
                &e.tenant,
                &e.agent,
                &e.skill,
                &e.digest,
                &e.status.as_str(),
                &e.exit_code,
                &e.signal,
                &e.wall_us,
                &e.cpu_us,
                &e.rss_bytes,
                &e.output_bytes,
                &e.detections,
                &e.blame.as_str(),
            ],
        )?;
        let Some(seq) = seq.map(|r| r.get::<_, i64>(0)) else {
            // Recorded already: this transaction must change nothing.
            self.replay.set(true);
            return Ok(1);
        };
        self.exec(
            "INSERT INTO monitor_agent_minutes(tenant, agent, minute, status, blame, count)
             VALUES($1, $2, $3, $4, $5, 1)
             ON CONFLICT(tenant, agent, minute, status, blame)
             DO UPDATE SET count = monitor_agent_minutes.count + 1",
            &[
                &e.tenant,
                &e.agent,
                &minute(e.ts_ms),
                &e.status.as_str(),
                &e.blame.as_str(),
            ],
        )?;
        if e.blame == Blame::Skill {
            self.exec(
                "INSERT INTO monitor_skill_minutes(digest, minute, status, count) VALUES($1, $2, $3, 1)
                 ON CONFLICT(digest, minute, status) DO UPDATE SET count = monitor_skill_minutes.count + 1",
                &[&e.digest, &minute(e.ts_ms), &e.status.as_str()],
            )?;
        }
        Ok(seq)
    }

    fn prune(&self, before_ms: i64, now_ms: i64) -> Result<(), StoreError> {
        self.exec("DELETE FROM monitor_events WHERE ts_ms < $1", &[&before_ms])?;
        self.exec(
            "DELETE FROM monitor_agent_minutes WHERE minute < $1",
            &[&minute(before_ms)],
        )?;
        self.exec(
            "DELETE FROM monitor_skill_minutes WHERE minute < $1",
            &[&minute(before_ms)],
        )?;
        self.exec(
            "DELETE FROM monitor_strikes WHERE ts_ms < $1",
            &[&before_ms],
        )?;
        self.exec(
            "DELETE FROM monitor_throttle WHERE until_ms <= $1",
            &[&now_ms],
        )
        .map(drop)
    }

    fn count(&self, name: &str, labels: &str, by: f64) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO monitor_counters(name, labels, value) VALUES($1, $2, $3)
             ON CONFLICT(name, labels) DO UPDATE SET value = monitor_counters.value + excluded.value",
            &[&name, &labels, &by],
        )
        .map(drop)
    }

    fn observe(
        &self,
        name: &str,
        labels: &str,
        bucket: usize,
        value: f64,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO monitor_histograms(name, labels, bucket, count) VALUES($1, $2, $3, 1)
             ON CONFLICT(name, labels, bucket) DO UPDATE SET count = monitor_histograms.count + 1",
            &[&name, &labels, &(bucket as i64)],
        )?;
        self.count(&format!("{name}_sum"), labels, value)
    }

    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), StoreError> {
        let line = audit::encode(record);
        let line = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(&line));
        let (kind, request_id, ts_ms) = match record {
            AuditRecord::Execution(r) => ("execution", Some(r.request_id.as_str()), r.ts_ms),
            AuditRecord::AuthFailure(r) => ("auth_failure", Some(r.request_id.as_str()), r.ts_ms),
            AuditRecord::Release(r) => ("release", None, r.ts_ms),
            AuditRecord::Unflag(r) => ("unflag", None, r.ts_ms),
            // Not written here (a commit is durable: no intent is announced), and keyed
            // apart from the run's execution record if it were.
            AuditRecord::Intent(r) => ("intent", None, r.ts_ms),
        };
        // Keyed by request id: a record written again (a retried transaction) is kept once.
        self.exec(
            "INSERT INTO monitor_audit(request_id, ts_ms, kind, record) VALUES($1, $2, $3, $4)
             ON CONFLICT(request_id) DO NOTHING",
            &[&request_id, &ts_ms, &kind, &line.as_ref()],
        )
        .map(drop)
    }
}

/// The [`History`] of one agent and skill, read inside a recording transaction.
struct PgHistory<'a, 'c> {
    tx: &'a PgTx<'c>,
    tenant: &'a str,
    agent: &'a str,
    skill: &'a str,
    digest: &'a str,
}

impl History for PgHistory<'_, '_> {
    fn agent_count_since(&self, s: &[Status], since_ms: i64) -> Result<u64, String> {
        let n: i64 = self
            .tx
            .one(
                "SELECT coalesce(sum(count), 0)::BIGINT FROM monitor_agent_minutes
                 WHERE tenant = $1 AND agent = $2 AND minute >= $3
                 AND (cardinality($4::TEXT[]) = 0 OR (blame = 'agent' AND status = ANY($4)))",
                &[&self.tenant, &self.agent, &minute(since_ms), &statuses(s)],
            )
            .map_err(|e| e.to_string())?
            .map_or(0, |r| r.get(0));
        Ok(n as u64)
    }

    fn skill_count_since(&self, s: &[Status], since_ms: i64) -> Result<u64, String> {
        let n: i64 = self
            .tx
            .one(
                "SELECT coalesce(sum(count), 0)::BIGINT FROM monitor_skill_minutes
                 WHERE digest = $1 AND minute >= $2
                 AND (cardinality($3::TEXT[]) = 0 OR status = ANY($3))",
                &[&self.digest, &minute(since_ms), &statuses(s)],
            )
            .map_err(|e| e.to_string())?
            .map_or(0, |r| r.get(0));
        Ok(n as u64)
    }

    fn skill_recent_statuses(&self, n: usize) -> Result<Vec<Status>, String> {
        let rows = self
            .tx
            .tx
            .borrow_mut()
            .query(
                "SELECT status FROM monitor_events
                 WHERE tenant = $1 AND agent = $2 AND skill = $3 AND blame = 'agent'
                 ORDER BY seq DESC LIMIT $4",
                &[&self.tenant, &self.agent, &self.skill, &(n as i64)],
            )
            .map_err(|e| e.to_string())?;
        rows.iter().map(|r| r.get::<_, &str>(0).parse()).collect()
    }
}
