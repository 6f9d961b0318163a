//! The SQLite store: one file, `server.db`, in the state directory.
use crate::{KeyRecord, PublishVerdict, Role, SkillVersion, Store, StoreError};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::Mutex;

/// The file name of the store in a state directory.
pub const FILE_NAME: &str = "server.db";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    principal TEXT NOT NULL,
    tenant TEXT NOT NULL,
    groups TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    revoked_ms INTEGER
);
CREATE TABLE IF NOT EXISTS skill_versions (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    digest TEXT NOT NULL,
    owner TEXT NOT NULL,
    visibility TEXT NOT NULL,
    verdict TEXT NOT NULL,
    findings TEXT NOT NULL,
    published_ms INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (tenant, name, version)
);
";

/// [`Store`] in SQLite (WAL, so readers do not wait for a writer, and several processes
/// may share the file).
#[derive(Debug)]
pub struct SqliteStore {
    conn: Mutex<Connection>,
}

fn backend(e: rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, ref msg)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Exists(msg.clone().unwrap_or_else(|| "the record".into()))
        }
        e => StoreError::Backend(e.to_string()),
    }
}

impl SqliteStore {
    /// Opens (creating it, private to the owner) the store in state directory `dir`.
    pub fn open(dir: &Path) -> Result<SqliteStore, StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Backend(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join(FILE_NAME);
        let conn = Connection::open(&path).map_err(backend)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(
                |e| StoreError::Backend(format!("cannot make {} private: {e}", path.display())),
            )?;
        }
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(backend)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(backend)?;
        Self::prepare(conn)
    }

    /// A store in memory (tests).
    pub fn open_in_memory() -> Result<SqliteStore, StoreError> {
        Self::prepare(Connection::open_in_memory().map_err(backend)?)
    }

    fn prepare(conn: Connection) -> Result<SqliteStore, StoreError> {
        conn.execute_batch(SCHEMA).map_err(backend)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
        })
    }

    fn with<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, rusqlite::Error>,
    ) -> Result<R, StoreError> {
        let conn = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&conn).map_err(backend)
    }
}

fn key_row(row: &rusqlite::Row<'_>) -> Result<(KeyRecord, String, String), rusqlite::Error> {
    Ok((
        KeyRecord {
            id: row.get(0)?,
            role: Role::Agent,
            principal: row.get(2)?,
            tenant: row.get(3)?,
            groups: Vec::new(),
            created_ms: row.get(5)?,
            revoked_ms: row.get(6)?,
        },
        row.get::<_, String>(1)?,
        row.get::<_, String>(4)?,
    ))
}

pub(crate) fn finish_key(
    (mut key, role, groups): (KeyRecord, String, String),
) -> Result<KeyRecord, StoreError> {
    key.role = role.parse().map_err(StoreError::Corrupt)?;
    key.groups = serde_json::from_str(&groups)
        .map_err(|e| StoreError::Corrupt(format!("groups of key {}: {e}", key.id)))?;
    Ok(key)
}

const KEY_COLUMNS: &str = "id, role, principal, tenant, groups, created_ms, revoked_ms";
const VERSION_COLUMNS: &str =
    "tenant, name, version, digest, owner, visibility, verdict, findings, published_ms";

fn version_row(row: &rusqlite::Row<'_>) -> Result<(SkillVersion, String, String), rusqlite::Error> {
    Ok((
        SkillVersion {
            tenant: row.get(0)?,
            name: row.get(1)?,
            version: row.get(2)?,
            digest: row.get(3)?,
            owner: row.get(4)?,
            visibility: row.get(5)?,
            verdict: PublishVerdict::Block,
            findings: serde_json::Value::Null,
            published_ms: row.get(8)?,
        },
        row.get::<_, String>(6)?,
        row.get::<_, String>(7)?,
    ))
}

pub(crate) fn finish_version(
    (mut v, verdict, findings): (SkillVersion, String, String),
) -> Result<SkillVersion, StoreError> {
    v.verdict = verdict.parse().map_err(StoreError::Corrupt)?;
    v.findings = serde_json::from_str(&findings)
        .map_err(|e| StoreError::Corrupt(format!("findings of {}/{}: {e}", v.tenant, v.name)))?;
    Ok(v)
}

impl Store for SqliteStore {
    fn insert_key(&self, key: &KeyRecord, secret_hash: &str) -> Result<(), StoreError> {
        let groups =
            serde_json::to_string(&key.groups).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.with(|c| {
            c.execute(
                "INSERT INTO api_keys (id, secret_hash, role, principal, tenant, groups, created_ms, revoked_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    key.id,
                    secret_hash,
                    key.role.as_str(),
                    key.principal,
                    key.tenant,
                    groups,
                    key.created_ms,
                    key.revoked_ms
                ],
            )
            .map(drop)
        })
    }

    fn key_by_hash(&self, secret_hash: &str) -> Result<Option<KeyRecord>, StoreError> {
        // Every authenticated request looks its key up: the statement is prepared once per
        // connection (parsing and planning it each time was most of the lookup's cost).
        self.with(|c| {
            c.prepare_cached(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE secret_hash = ?1"
            ))?
            .query_row(params![secret_hash], key_row)
            .optional()
        })?
        .map(finish_key)
        .transpose()
    }

    fn list_keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_ms, id"
            ))?;
            stmt.query_map([], key_row)?.collect::<Result<Vec<_>, _>>()
        })?
        .into_iter()
        .map(finish_key)
        .collect()
    }

    fn revoke_key(&self, id: &str, now_ms: i64) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE api_keys SET revoked_ms = ?2 WHERE id = ?1 AND revoked_ms IS NULL",
                params![id, now_ms],
            )
            .map(|n| n == 1)
        })
    }

    fn insert_version(&self, v: &SkillVersion, bytes: &[u8]) -> Result<(), StoreError> {
        let findings =
            serde_json::to_string(&v.findings).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.with(|c| {
            c.execute(
                &format!(
                    "INSERT INTO skill_versions ({VERSION_COLUMNS}, bytes) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                ),
                params![
                    v.tenant,
                    v.name,
                    v.version,
                    v.digest,
                    v.owner,
                    v.visibility,
                    v.verdict.as_str(),
                    findings,
                    v.published_ms,
                    bytes
                ],
            )
            .map(drop)
        })
        .map_err(|e| match e {
            StoreError::Exists(_) => {
                StoreError::Exists(format!("version {} of {}/{}", v.version, v.tenant, v.name))
            }
            e => e,
        })
    }

    fn versions(&self, tenant: &str, name: &str) -> Result<Vec<SkillVersion>, StoreError> {
        self.with(|c| {
            // Every run of a published skill resolves its version here.
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {VERSION_COLUMNS} FROM skill_versions WHERE tenant = ?1 AND name = ?2 \
                 ORDER BY published_ms, version"
            ))?;
            stmt.query_map(params![tenant, name], version_row)?
                .collect::<Result<Vec<_>, _>>()
        })?
        .into_iter()
        .map(finish_version)
        .collect()
    }

    fn all_versions(&self) -> Result<Vec<SkillVersion>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {VERSION_COLUMNS} FROM skill_versions ORDER BY published_ms, tenant, name, version"
            ))?;
            stmt.query_map([], version_row)?
                .collect::<Result<Vec<_>, _>>()
        })?
        .into_iter()
        .map(finish_version)
        .collect()
    }

    fn version_bytes(
        &self,
        tenant: &str,
        name: &str,
        version: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT bytes FROM skill_versions WHERE tenant = ?1 AND name = ?2 AND version = ?3",
                params![tenant, name, version],
                |r| r.get(0),
            )
            .optional()
        })
    }
}

/// The size over which [`bound_wal`] folds a database's WAL back into the database.
pub const WAL_LIMIT_BYTES: u64 = 1024 * 1024;

/// Pages after which SQLite's automatic checkpoint runs (`PRAGMA wal_autocheckpoint`) in
/// the stores that use [`bound_wal`]: well under [`WAL_LIMIT_BYTES`], so the WAL of a
/// long-running process (`serve`), which SQLite checkpoints and restarts itself, never
/// reaches the limit and never costs a truncating checkpoint; only a WAL that nothing
/// restarts (one commit per process) does.
pub const WAL_AUTOCHECKPOINT_PAGES: u32 = 128;

/// Keeps the WAL of `conn`'s database (a file in WAL mode) near [`WAL_LIMIT_BYTES`]: once
/// the file has grown over it, checkpoints every frame into the database (synced) and
/// truncates the WAL to nothing. Returns whether it did; `Ok(false)` as well when another
/// connection kept the checkpoint from finishing (the next call tries again).
///
/// Call it after a commit. A process that opens a database, commits once and closes it
/// without a checkpoint (how each `skillgate run` and `skillgate session` command uses
/// its stores, to save a checkpoint's flushes per command) never lets SQLite restart the
/// WAL: the first connection to open a database rebuilds the WAL's index by reading the
/// whole file and counts none of it as checkpointed, so the automatic checkpoint copies
/// pages but the next commit appends again. Unbounded, the WAL grows with every command
/// and every open reads all of it (40 MB and 10 ms per command after 2,000 runs).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let conn = rusqlite::Connection::open(dir.path().join("x.db")).unwrap();
/// conn.pragma_update(None, "journal_mode", "WAL").unwrap();
/// conn.execute_batch("CREATE TABLE t(x)").unwrap();
/// assert!(!skillgate_store::bound_wal(&conn).unwrap()); // a small WAL stays
/// ```
pub fn bound_wal(conn: &Connection) -> Result<bool, StoreError> {
    let Some(db) = conn.path().filter(|p| !p.is_empty()) else {
        return Ok(false); // in memory
    };
    let wal = format!("{db}-wal");
    match std::fs::metadata(&wal) {
        Ok(m) if m.len() > WAL_LIMIT_BYTES => {}
        Ok(_) => return Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(StoreError::Backend(format!("cannot read {wal}: {e}"))),
    }
    // (busy, frames in the WAL, frames checkpointed): busy when a reader or writer
    // elsewhere kept the WAL from being reset.
    let (busy, _, _): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(backend)?;
    Ok(busy == 0)
}

/// Brings `component`'s tables in the SQLite database `conn` to the last of `migrations`
/// (version N is `migrations[N-1]`), each applied once, in one `BEGIN IMMEDIATE`
/// transaction (several processes may open the file at once): the SQLite twin of
/// [`PgConn::migrate`](crate::pg::PgConn::migrate), with the same `skillgate_migrations`
/// table, so one list of migrations serves both. A database newer than this skillgate
/// is an error.
pub fn migrate(
    conn: &mut Connection,
    component: &str,
    migrations: &[&str],
) -> Result<(), StoreError> {
    let known = migrations.len() as i64;
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS skillgate_migrations(
            component TEXT NOT NULL, version INTEGER NOT NULL,
            applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            PRIMARY KEY(component, version))",
    )
    .map_err(backend)?;
    let have: i64 = tx
        .query_row(
            "SELECT coalesce(max(version), 0) FROM skillgate_migrations WHERE component = ?1",
            params![component],
            |r| r.get(0),
        )
        .map_err(backend)?;
    if have > known {
        return Err(StoreError::Backend(format!(
            "the {component} tables have schema version {have}, this skillgate knows versions up to {known}"
        )));
    }
    for (i, sql) in migrations.iter().enumerate().skip(have as usize) {
        tx.execute_batch(sql).map_err(backend)?;
        tx.execute(
            "INSERT INTO skillgate_migrations(component, version) VALUES(?1, ?2)",
            params![component, i as i64 + 1],
        )
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One command's worth of work: open, commit a row of `bytes`, close without a
    /// checkpoint (as the CLI's stores do); `bound` calls [`bound_wal`] after the commit.
    fn one_command(path: &Path, bytes: usize, bound: bool) {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .unwrap();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS t(x BLOB)")
            .unwrap();
        // Replaces the row: the database itself stays one row.
        conn.execute("DELETE FROM t", []).unwrap();
        conn.execute("INSERT INTO t VALUES (?1)", params![vec![7u8; bytes]])
            .unwrap();
        if bound {
            bound_wal(&conn).unwrap();
        }
    }

    fn wal_len(path: &Path) -> u64 {
        std::fs::metadata(format!("{}-wal", path.display()))
            .map(|m| m.len())
            .unwrap_or(0)
    }

    #[test]
    fn a_long_running_connection_never_needs_a_truncating_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
            .unwrap();
        conn.execute_batch("CREATE TABLE t(x BLOB)").unwrap();
        for _ in 0..400 {
            conn.execute("DELETE FROM t", []).unwrap();
            conn.execute("INSERT INTO t VALUES (?1)", params![vec![7u8; 8192]])
                .unwrap();
            // SQLite's own checkpoint restarts this WAL: it never grows past the limit.
            assert!(!bound_wal(&conn).unwrap());
        }
        assert!(wal_len(&path) <= WAL_LIMIT_BYTES, "{}", wal_len(&path));
    }

    #[test]
    fn a_wal_that_one_commit_per_process_grows_is_folded_back_past_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let (unbounded, bounded) = (dir.path().join("a.db"), dir.path().join("b.db"));
        for _ in 0..200 {
            one_command(&unbounded, 8192, false);
            one_command(&bounded, 8192, true);
        }
        // Without it the WAL holds every command's frames, whatever SQLite's automatic
        // checkpoint did; with it, at most the limit plus one command's frames.
        assert!(
            wal_len(&unbounded) > 2 * WAL_LIMIT_BYTES,
            "{}",
            wal_len(&unbounded)
        );
        assert!(
            wal_len(&bounded) <= WAL_LIMIT_BYTES + 64 * 1024,
            "{}",
            wal_len(&bounded)
        );
        let c = Connection::open(&bounded).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    fn version(v: &str, verdict: PublishVerdict) -> SkillVersion {
        SkillVersion {
            tenant: "acme".into(),
            name: "s".into(),
            version: v.into(),
            digest: format!("d{v}"),
            owner: "b".into(),
            visibility: "public".into(),
            verdict,
            findings: serde_json::json!([{"rule_id": "x"}]),
            published_ms: 1,
        }
    }

    #[test]
    fn versions_are_immutable_and_kept_with_their_verdict_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        store
            .insert_version(&version("v1", PublishVerdict::Block), b"tar")
            .unwrap();
        let again = store.insert_version(&version("v1", PublishVerdict::Pass), b"other");
        assert!(matches!(again, Err(StoreError::Exists(_))), "{again:?}");
        let reopened = SqliteStore::open(dir.path()).unwrap();
        let vs = reopened.versions("acme", "s").unwrap();
        assert_eq!(vs, vec![version("v1", PublishVerdict::Block)]);
        assert_eq!(
            reopened.version_bytes("acme", "s", "v1").unwrap().unwrap(),
            b"tar"
        );
        assert!(reopened.versions("globex", "s").unwrap().is_empty());
    }

    #[test]
    fn keys_are_found_by_hash_listed_and_revoked_once() {
        let store = SqliteStore::open_in_memory().unwrap();
        let key = KeyRecord::new("k1", Role::Builder, "b1", "acme", vec!["g".into()], 3);
        store.insert_key(&key, "h1").unwrap();
        assert!(store.key_by_hash("h2").unwrap().is_none());
        assert_eq!(store.key_by_hash("h1").unwrap().unwrap(), key);
        assert!(store.revoke_key("k1", 9).unwrap());
        assert!(!store.revoke_key("k1", 10).unwrap());
        assert!(!store.revoke_key("nope", 10).unwrap());
        assert_eq!(store.list_keys().unwrap()[0].revoked_ms, Some(9));
    }
}
