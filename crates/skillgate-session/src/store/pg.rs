//! [`PgLog`]: sessions in a PostgreSQL database (`[store] url`), shared by every process
//! naming it, through `skillgate-store`'s connection ([`PgConn`]).
use super::{
    BlobIn, COMPONENT, GcReport, LogStore, SessionLock, SnapshotIn, check_blob, event_from,
    migrations_for, payload, referenced,
};
use crate::key::{GENESIS, chain};
use crate::model::{Event, EventKind, Session, SnapshotRef, now_ms};
use postgres::error::SqlState;
use postgres::{Row, Transaction};
use skillgate_store::StoreError;
use skillgate_store::pg::PgConn;
use std::time::Duration;

/// [`LogStore`] in PostgreSQL.
#[derive(Debug)]
pub struct PgLog {
    url: String,
    conn: PgConn,
}

impl PgLog {
    /// Connects to `url` and creates or migrates the session tables. An unreachable
    /// database is an error naming the URL without its password.
    pub fn open(url: &str) -> Result<PgLog, StoreError> {
        let conn = PgConn::connect(url)?;
        let migrations = migrations_for("BYTEA");
        let refs: Vec<&str> = migrations.iter().map(String::as_str).collect();
        conn.migrate(COMPONENT, &refs)?;
        Ok(PgLog {
            url: url.to_string(),
            conn,
        })
    }

    /// The database's URL, without its password.
    pub fn url(&self) -> &str {
        self.conn.url()
    }
}

fn session_row(r: &Row) -> Session {
    Session {
        id: r.get(0),
        tenant: r.get(1),
        agent: r.get(2),
        created_ms: r.get(3),
        default_cwd: r.get(4),
    }
}

fn snapshot_row(r: &Row) -> SnapshotRef {
    SnapshotRef {
        seq: r.get::<_, i64>(0) as u64,
        key: r.get(1),
        sha256: r.get(2),
        workspace_digest: r.get(3),
    }
}

fn put_blob(tx: &mut Transaction<'_>, b: &BlobIn<'_>) -> Result<(), postgres::Error> {
    tx.execute(
        "INSERT INTO session_blobs (sha256, size, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        &[&b.sha256, &(b.bytes.len() as i64), &b.bytes],
    )
    .map(drop)
}

/// Stores snapshot `s` of session `id` and its archive (replacing one at the same position).
fn insert_snapshot(
    tx: &mut Transaction<'_>,
    id: &str,
    s: &SnapshotRef,
    archive: &[u8],
) -> Result<(), postgres::Error> {
    put_blob(tx, &BlobIn::new(&s.sha256, archive))?;
    tx.execute(
        "INSERT INTO session_snapshots (session_id, seq, cache_key, sha256, workspace_digest, created_ms) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (session_id, seq) DO UPDATE SET cache_key = excluded.cache_key, \
         sha256 = excluded.sha256, workspace_digest = excluded.workspace_digest, created_ms = excluded.created_ms",
        &[&id, &(s.seq as i64), &s.key, &s.sha256, &s.workspace_digest, &now_ms()],
    )
    .map(drop)
}

const SESSION_COLUMNS: &str = "id, tenant, agent, created_ms, default_cwd";

/// The advisory lock's name for session `id` (hashed to 64 bits by the server).
fn lock_name(id: &str) -> String {
    format!("skillgate-session:{id}")
}

impl LogStore for PgLog {
    fn create(&self, s: &Session) -> Result<(), StoreError> {
        self.conn.with(|c| {
            c.execute(
                "INSERT INTO session_sessions (id, tenant, agent, created_ms, default_cwd, next_seq) \
                 VALUES ($1, $2, $3, $4, $5, 0)",
                &[&s.id, &s.tenant, &s.agent, &s.created_ms, &s.default_cwd],
            )
            .map(drop)
        })
    }

    fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        self.conn.with(|c| {
            c.query_opt(
                &format!("SELECT {SESSION_COLUMNS} FROM session_sessions WHERE id = $1"),
                &[&id],
            )
            .map(|r| r.as_ref().map(session_row))
        })
    }

    fn sessions(&self) -> Result<Vec<Session>, StoreError> {
        self.conn.with(|c| {
            c.query(
                &format!("SELECT {SESSION_COLUMNS} FROM session_sessions ORDER BY created_ms, id"),
                &[],
            )
            .map(|rows| rows.iter().map(session_row).collect())
        })
    }

    fn remove(&self, id: &str) -> Result<bool, StoreError> {
        self.conn.with(|c| {
            let mut tx = c.transaction()?;
            for table in ["session_events", "session_snapshots", "session_blob_refs"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE session_id = $1"),
                    &[&id],
                )?;
            }
            let n = tx.execute("DELETE FROM session_sessions WHERE id = $1", &[&id])?;
            tx.commit()?;
            Ok(n > 0)
        })
    }

    fn append_with_snapshot(
        &self,
        id: &str,
        kind: &EventKind,
        blobs: &[BlobIn<'_>],
        snapshot: Option<SnapshotIn<'_>>,
    ) -> Result<Event, StoreError> {
        let text = payload(kind)?;
        for b in blobs {
            check_blob(b)?;
        }
        if let Some(s) = &snapshot {
            check_blob(&BlobIn::new(s.sha256, s.archive))?;
        }
        let shown = self.conn.url().to_string();
        self.conn.with_store(|c| {
            let pg = |e: postgres::Error| StoreError::Backend(format!("{shown}: {e}"));
            let mut tx = c.transaction().map_err(pg)?;
            // The row lock this update takes orders concurrent appends to one session.
            let seq: i64 = tx
                .query_opt(
                    "UPDATE session_sessions SET next_seq = next_seq + 1 WHERE id = $1 RETURNING next_seq",
                    &[&id],
                )
                .map_err(pg)?
                .ok_or_else(|| StoreError::Backend(format!("no session {id}")))?
                .get(0);
            let prev: String = if seq == 1 {
                GENESIS.to_string()
            } else {
                tx.query_opt(
                    "SELECT cache_key FROM session_events WHERE session_id = $1 AND seq = $2",
                    &[&id, &(seq - 1)],
                )
                .map_err(pg)?
                .ok_or_else(|| StoreError::Corrupt(format!("session {id} lacks event {}", seq - 1)))?
                .get(0)
            };
            let key = chain(&prev, kind);
            for b in blobs {
                put_blob(&mut tx, b).map_err(pg)?;
            }
            for sha in referenced(kind) {
                tx.execute(
                    "INSERT INTO session_blob_refs (session_id, sha256) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    &[&id, &sha],
                )
                .map_err(pg)?;
            }
            let created_ms = now_ms();
            tx.execute(
                "INSERT INTO session_events (session_id, seq, kind, cache_key, payload, created_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[&id, &seq, &kind.name(), &key, &text, &created_ms],
            )
            .map_err(pg)?;
            let event = Event {
                seq: seq as u64,
                key,
                created_ms,
                kind: kind.clone(),
            };
            if let Some(s) = snapshot {
                insert_snapshot(&mut tx, id, &s.at(&event), s.archive).map_err(pg)?;
            }
            tx.commit().map_err(pg)?;
            Ok(event)
        })
    }

    fn events(&self, id: &str, after: u64) -> Result<Vec<Event>, StoreError> {
        let rows = self.conn.with(|c| {
            c.query(
                "SELECT seq, cache_key, created_ms, payload FROM session_events \
                 WHERE session_id = $1 AND seq > $2 ORDER BY seq",
                &[&id, &(after as i64)],
            )
        })?;
        rows.iter()
            .map(|r| event_from(r.get(0), r.get(1), r.get(2), r.get::<_, &str>(3)))
            .collect()
    }

    fn head(&self, id: &str) -> Result<(u64, String), StoreError> {
        self.conn
            .with(|c| {
                c.query_opt(
                    "SELECT seq, cache_key FROM session_events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1",
                    &[&id],
                )
            })
            .map(|r| {
                r.map_or_else(
                    || (0, GENESIS.to_string()),
                    |r| (r.get::<_, i64>(0) as u64, r.get(1)),
                )
            })
    }

    fn blob(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn.with(|c| {
            c.query_opt(
                "SELECT bytes FROM session_blobs WHERE sha256 = $1",
                &[&sha256],
            )
            .map(|r| r.map(|r| r.get(0)))
        })
    }

    fn add_snapshot(&self, id: &str, s: &SnapshotRef, archive: &[u8]) -> Result<(), StoreError> {
        check_blob(&BlobIn::new(&s.sha256, archive))?;
        self.conn.with(|c| {
            let mut tx = c.transaction()?;
            insert_snapshot(&mut tx, id, s, archive)?;
            tx.commit()
        })
    }

    fn snapshots(&self, id: &str) -> Result<Vec<SnapshotRef>, StoreError> {
        self.conn.with(|c| {
            c.query(
                "SELECT seq, cache_key, sha256, workspace_digest FROM session_snapshots \
                 WHERE session_id = $1 ORDER BY seq DESC",
                &[&id],
            )
            .map(|rows| rows.iter().map(snapshot_row).collect())
        })
    }

    fn gc(&self, keep: usize) -> Result<GcReport, StoreError> {
        self.conn.with(|c| {
            let mut tx = c.transaction()?;
            let snapshots = tx.execute(
                "DELETE FROM session_snapshots WHERE (session_id, seq) IN ( \
                   SELECT session_id, seq FROM ( \
                     SELECT session_id, seq, row_number() OVER (PARTITION BY session_id ORDER BY seq DESC) AS n \
                     FROM session_snapshots) ranked WHERE n > $1)",
                &[&(keep as i64)],
            )?;
            let orphan = "FROM session_blobs b WHERE NOT EXISTS \
                 (SELECT 1 FROM session_blob_refs r WHERE r.sha256 = b.sha256) \
                 AND NOT EXISTS (SELECT 1 FROM session_snapshots s WHERE s.sha256 = b.sha256)";
            let row = tx.query_one(
                &format!("SELECT count(*), coalesce(sum(size), 0)::BIGINT {orphan}"),
                &[],
            )?;
            let (blobs, bytes): (i64, i64) = (row.get(0), row.get(1));
            tx.execute(
                &format!("DELETE FROM session_blobs WHERE sha256 IN (SELECT b.sha256 {orphan})"),
                &[],
            )?;
            tx.commit()?;
            Ok(GcReport {
                snapshots,
                blobs: blobs as u64,
                bytes: bytes as u64,
            })
        })
    }

    fn lock(&self, id: &str, wait: Duration) -> Result<Option<Box<dyn SessionLock>>, StoreError> {
        crate::id::check(id).map_err(StoreError::Backend)?;
        // A connection of its own: a session-level advisory lock lives as long as it.
        let conn = PgConn::connect(&self.url)?;
        let name = lock_name(id);
        let ms = wait.as_millis().clamp(1, i32::MAX as u128);
        let shown = conn.url().to_string();
        let got = conn.with_store(|c| -> Result<bool, StoreError> {
            let pg = |e: postgres::Error| StoreError::Backend(format!("{shown}: {e}"));
            c.batch_execute(&format!("SET lock_timeout = {ms}"))
                .map_err(pg)?;
            match c.execute("SELECT pg_advisory_lock(hashtextextended($1, 0))", &[&name]) {
                Ok(_) => Ok(true),
                Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => Ok(false),
                Err(e) => Err(pg(e)),
            }
        })?;
        Ok(got.then(|| Box::new(PgLock { conn, name }) as Box<dyn SessionLock>))
    }
}

/// A session-level advisory lock, held by its own connection; closing the connection
/// (or the process dying) releases it.
#[derive(Debug)]
struct PgLock {
    conn: PgConn,
    name: String,
}

impl SessionLock for PgLock {
    fn held(&mut self) -> bool {
        // A connection that was lost took the lock with it (a new one would not hold it).
        if self.conn.is_broken() {
            return false;
        }
        let name = self.name.clone();
        self.conn
            .with(move |c| {
                c.query_one(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
                     AND pid = pg_backend_pid() AND objsubid = 1 \
                     AND ((classid::BIGINT << 32) | objid::BIGINT) = hashtextextended($1, 0)",
                    &[&name],
                )
            })
            .map(|r| r.get::<_, i64>(0) > 0)
            .unwrap_or(false)
    }
}
