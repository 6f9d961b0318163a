//! [`SqliteLog`]: sessions in `sessions.db` in the state directory, and one lock file
//! per session beside it (`session-locks/<id>.lock`).
use super::{
    BlobIn, COMPONENT, GcReport, LogStore, SessionLock, SnapshotIn, check_blob, event_from,
    migrations_for, payload, referenced,
};
use crate::key::{GENESIS, chain};
use crate::model::{Event, EventKind, Session, SnapshotRef, now_ms};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};
use skillgate_store::StoreError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The file name of the session database in a state directory.
pub(crate) const FILE_NAME: &str = "sessions.db";
/// The folder of the per-session lock files in a state directory.
pub(crate) const LOCK_DIR: &str = "session-locks";

/// [`LogStore`] in SQLite (WAL: readers do not wait for a writer, and several processes
/// may share the file).
#[derive(Debug)]
pub struct SqliteLog {
    conn: Mutex<Connection>,
    locks: PathBuf,
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Backend(format!("cannot {what} {}: {e}", path.display()))
}

/// Owner-only permissions: a session's uploads and outputs are its tenant's.
fn private(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if path.is_dir() { 0o700 } else { 0o600 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| io("make private", path, e))
}

impl SqliteLog {
    /// Opens (creating it, private to the owner) the session store in state directory
    /// `dir`, and brings its tables to the current schema.
    pub fn open(dir: &Path) -> Result<SqliteLog, StoreError> {
        let locks = dir.join(LOCK_DIR);
        std::fs::create_dir_all(&locks).map_err(|e| io("create", &locks, e))?;
        private(&locks)?;
        let path = dir.join(FILE_NAME);
        let mut conn = Connection::open(&path).map_err(backend)?;
        private(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(backend)?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(backend)?;
        // Each `skillgate session ...` is a process with the store's only connection: by
        // default closing it checkpoints the WAL into the database and deletes it, and
        // the next process creates it again (four more flushes per command: the WAL's
        // header, its folder, then the WAL and the database at the checkpoint). Keeping
        // the WAL between processes costs no durability: a commit is durable once its
        // WAL frames are synced (`synchronous` stays FULL), and the automatic
        // checkpoint still bounds the WAL.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(backend)?;
        // With `fold_wal` after each commit: a long-running process's WAL stays under its
        // limit (see `WAL_AUTOCHECKPOINT_PAGES`).
        conn.pragma_update(
            None,
            "wal_autocheckpoint",
            skillgate_store::WAL_AUTOCHECKPOINT_PAGES,
        )
        .map_err(backend)?;
        let migrations = migrations_for("BLOB");
        let refs: Vec<&str> = migrations.iter().map(String::as_str).collect();
        skillgate_store::migrate_sqlite(&mut conn, COMPONENT, &refs)?;
        Ok(SqliteLog {
            conn: Mutex::new(conn),
            locks,
        })
    }

    fn with<R>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut conn = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut conn)
    }
}

/// After a commit: keeps the WAL bounded ([`skillgate_store::bound_wal`]). The commit
/// stands whatever this gives; a WAL not folded now is folded after a later commit.
fn fold_wal(c: &Connection) {
    let _ = skillgate_store::bound_wal(c);
}

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        tenant: r.get(1)?,
        agent: r.get(2)?,
        created_ms: r.get(3)?,
        default_cwd: r.get(4)?,
    })
}

fn snapshot_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SnapshotRef> {
    Ok(SnapshotRef {
        seq: r.get::<_, i64>(0)? as u64,
        key: r.get(1)?,
        sha256: r.get(2)?,
        workspace_digest: r.get(3)?,
    })
}

fn put_blob(tx: &rusqlite::Transaction<'_>, b: &BlobIn<'_>) -> Result<(), StoreError> {
    check_blob(b)?;
    tx.execute(
        "INSERT INTO session_blobs (sha256, size, bytes) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        params![b.sha256, b.bytes.len() as i64, b.bytes],
    )
    .map(drop)
    .map_err(backend)
}

fn add_ref(tx: &rusqlite::Transaction<'_>, id: &str, sha256: &str) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO session_blob_refs (session_id, sha256) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        params![id, sha256],
    )
    .map(drop)
    .map_err(backend)
}

/// Stores snapshot `s` of session `id` and its archive (replacing one at the same position).
fn insert_snapshot(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    s: &SnapshotRef,
    archive: &[u8],
) -> Result<(), StoreError> {
    put_blob(tx, &BlobIn::new(&s.sha256, archive))?;
    tx.execute(
        "INSERT INTO session_snapshots (session_id, seq, cache_key, sha256, workspace_digest, created_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (session_id, seq) DO UPDATE SET cache_key = excluded.cache_key, \
         sha256 = excluded.sha256, workspace_digest = excluded.workspace_digest, created_ms = excluded.created_ms",
        params![id, s.seq as i64, s.key, s.sha256, s.workspace_digest, now_ms()],
    )
    .map(drop)
    .map_err(backend)
}

const SESSION_COLUMNS: &str = "id, tenant, agent, created_ms, default_cwd";

impl LogStore for SqliteLog {
    fn create(&self, s: &Session) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO session_sessions (id, tenant, agent, created_ms, default_cwd, next_seq) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 0)",
                params![s.id, s.tenant, s.agent, s.created_ms, s.default_cwd],
            )
            .map(drop)
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation => {
                    StoreError::Exists(format!("session {}", s.id))
                }
                e => backend(e),
            })
        })
    }

    fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM session_sessions WHERE id = ?1"),
                params![id],
                session_row,
            )
            .optional()
            .map_err(backend)
        })
    }

    fn sessions(&self) -> Result<Vec<Session>, StoreError> {
        self.with(|c| {
            let mut st = c
                .prepare(&format!(
                    "SELECT {SESSION_COLUMNS} FROM session_sessions ORDER BY created_ms, id"
                ))
                .map_err(backend)?;
            st.query_map([], session_row)
                .and_then(|rows| rows.collect())
                .map_err(backend)
        })
    }

    fn remove(&self, id: &str) -> Result<bool, StoreError> {
        let removed = self.with(|c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            for table in ["session_events", "session_snapshots", "session_blob_refs"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE session_id = ?1"),
                    params![id],
                )
                .map_err(backend)?;
            }
            let n = tx
                .execute("DELETE FROM session_sessions WHERE id = ?1", params![id])
                .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(n > 0)
        })?;
        if removed {
            let lock = self.locks.join(format!("{id}.lock"));
            match std::fs::remove_file(&lock) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &lock, e)),
            }
        }
        Ok(removed)
    }

    fn append_with_snapshot(
        &self,
        id: &str,
        kind: &EventKind,
        blobs: &[BlobIn<'_>],
        snapshot: Option<SnapshotIn<'_>>,
    ) -> Result<Event, StoreError> {
        let text = payload(kind)?;
        self.with(|c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let seq: i64 = tx
                .query_row(
                    "UPDATE session_sessions SET next_seq = next_seq + 1 WHERE id = ?1 RETURNING next_seq",
                    params![id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?
                .ok_or_else(|| StoreError::Backend(format!("no session {id}")))?;
            let prev: String = if seq == 1 {
                GENESIS.to_string()
            } else {
                tx.query_row(
                    "SELECT cache_key FROM session_events WHERE session_id = ?1 AND seq = ?2",
                    params![id, seq - 1],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?
                .ok_or_else(|| StoreError::Corrupt(format!("session {id} lacks event {}", seq - 1)))?
            };
            let key = chain(&prev, kind);
            for b in blobs {
                put_blob(&tx, b)?;
            }
            for sha in referenced(kind) {
                add_ref(&tx, id, sha)?;
            }
            let created_ms = now_ms();
            tx.execute(
                "INSERT INTO session_events (session_id, seq, kind, cache_key, payload, created_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, seq, kind.name(), key, text, created_ms],
            )
            .map_err(backend)?;
            let event = Event {
                seq: seq as u64,
                key,
                created_ms,
                kind: kind.clone(),
            };
            if let Some(s) = snapshot {
                insert_snapshot(&tx, id, &s.at(&event), s.archive)?;
            }
            tx.commit().map_err(backend)?;
            fold_wal(c);
            Ok(event)
        })
    }

    fn events(&self, id: &str, after: u64) -> Result<Vec<Event>, StoreError> {
        let rows = self.with(|c| {
            let mut st = c
                .prepare(
                    "SELECT seq, cache_key, created_ms, payload FROM session_events \
                     WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
                )
                .map_err(backend)?;
            st.query_map(params![id, after as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(backend)
        })?;
        rows.into_iter()
            .map(|(seq, key, created, text)| event_from(seq, key, created, &text))
            .collect()
    }

    fn head(&self, id: &str) -> Result<(u64, String), StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT seq, cache_key FROM session_events WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1",
                params![id],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)),
            )
            .optional()
            .map_err(backend)
        })
        .map(|h| h.unwrap_or_else(|| (0, GENESIS.to_string())))
    }

    fn blob(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT bytes FROM session_blobs WHERE sha256 = ?1",
                params![sha256],
                |r| r.get(0),
            )
            .optional()
            .map_err(backend)
        })
    }

    fn add_snapshot(&self, id: &str, s: &SnapshotRef, archive: &[u8]) -> Result<(), StoreError> {
        self.with(|c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            insert_snapshot(&tx, id, s, archive)?;
            tx.commit().map_err(backend)?;
            fold_wal(c);
            Ok(())
        })
    }

    fn snapshots(&self, id: &str) -> Result<Vec<SnapshotRef>, StoreError> {
        self.with(|c| {
            let mut st = c
                .prepare(
                    "SELECT seq, cache_key, sha256, workspace_digest FROM session_snapshots \
                     WHERE session_id = ?1 ORDER BY seq DESC",
                )
                .map_err(backend)?;
            st.query_map(params![id], snapshot_row)
                .and_then(|rows| rows.collect())
                .map_err(backend)
        })
    }

    fn gc(&self, keep: usize) -> Result<GcReport, StoreError> {
        self.with(|c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let snapshots = tx
                .execute(
                    "DELETE FROM session_snapshots WHERE (session_id, seq) IN ( \
                       SELECT session_id, seq FROM ( \
                         SELECT session_id, seq, row_number() OVER (PARTITION BY session_id ORDER BY seq DESC) AS n \
                         FROM session_snapshots) WHERE n > ?1)",
                    params![keep as i64],
                )
                .map_err(backend)? as u64;
            // A blob lives while an event (its reference) or a snapshot names it.
            let orphan = "FROM session_blobs b WHERE NOT EXISTS \
                 (SELECT 1 FROM session_blob_refs r WHERE r.sha256 = b.sha256) \
                 AND NOT EXISTS (SELECT 1 FROM session_snapshots s WHERE s.sha256 = b.sha256)";
            let (blobs, bytes): (i64, i64) = tx
                .query_row(
                    &format!("SELECT count(*), coalesce(sum(size), 0) {orphan}"),
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(backend)?;
            tx.execute(
                &format!("DELETE FROM session_blobs WHERE sha256 IN (SELECT b.sha256 {orphan})"),
                [],
            )
            .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(GcReport {
                snapshots,
                blobs: blobs as u64,
                bytes: bytes as u64,
            })
        })
    }

    fn lock(&self, id: &str, wait: Duration) -> Result<Option<Box<dyn SessionLock>>, StoreError> {
        crate::id::check(id).map_err(StoreError::Backend)?;
        let path = self.locks.join(format!("{id}.lock"));
        let conn = Connection::open(&path).map_err(backend)?;
        conn.busy_timeout(wait).map_err(backend)?;
        match conn.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => Ok(Some(Box::new(SqliteLock { _conn: conn }))),
            Err(rusqlite::Error::SqliteFailure(f, _)) if f.code == ErrorCode::DatabaseBusy => {
                Ok(None)
            }
            Err(e) => Err(backend(e)),
        }
    }
}

/// A `BEGIN IMMEDIATE` transaction on the session's lock file: the file's reserved lock
/// (an `fcntl` lock the kernel drops with the process) is the session's lock.
#[derive(Debug)]
struct SqliteLock {
    _conn: Connection,
}

impl SessionLock for SqliteLock {
    fn held(&mut self) -> bool {
        true
    }
}
