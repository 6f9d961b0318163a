//! The PostgreSQL store (`[store] url`): the keys and the registry shared by every
//! replica that names the same database.
use crate::pg::PgConn;
use crate::sqlite::{finish_key, finish_version};
use crate::{KeyRecord, PublishVerdict, Role, SkillVersion, Store, StoreError};
use postgres::Row;

/// The migrations of the `store` tables, in order (see [`PgConn::migrate`]).
const MIGRATIONS: &[&str] = &["
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    principal TEXT NOT NULL,
    tenant TEXT NOT NULL,
    groups TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT
);
CREATE TABLE skill_versions (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    digest TEXT NOT NULL,
    owner TEXT NOT NULL,
    visibility TEXT NOT NULL,
    verdict TEXT NOT NULL,
    findings TEXT NOT NULL,
    published_ms BIGINT NOT NULL,
    bytes BYTEA NOT NULL,
    PRIMARY KEY (tenant, name, version)
);
"];

/// [`Store`] in PostgreSQL: what [`SqliteStore`](crate::SqliteStore) keeps, in a
/// database several processes share. Each method is one statement (one transaction).
#[derive(Debug)]
pub struct PgStore {
    conn: PgConn,
}

const KEY_COLUMNS: &str = "id, role, principal, tenant, groups, created_ms, revoked_ms";
const VERSION_COLUMNS: &str =
    "tenant, name, version, digest, owner, visibility, verdict, findings, published_ms";

fn key_row(row: &Row) -> (KeyRecord, String, String) {
    (
        KeyRecord {
            id: row.get(0),
            role: Role::Agent,
            principal: row.get(2),
            tenant: row.get(3),
            groups: Vec::new(),
            created_ms: row.get(5),
            revoked_ms: row.get(6),
        },
        row.get(1),
        row.get(4),
    )
}

fn version_row(row: &Row) -> (SkillVersion, String, String) {
    (
        SkillVersion {
            tenant: row.get(0),
            name: row.get(1),
            version: row.get(2),
            digest: row.get(3),
            owner: row.get(4),
            visibility: row.get(5),
            verdict: PublishVerdict::Block,
            findings: serde_json::Value::Null,
            published_ms: row.get(8),
        },
        row.get(6),
        row.get(7),
    )
}

impl PgStore {
    /// Connects to `url` and creates or migrates the tables. An unreachable database is
    /// an error naming the URL without its password.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let conn = PgConn::connect(url)?;
        conn.migrate("store", MIGRATIONS)?;
        Ok(PgStore { conn })
    }

    /// The database's URL, without its password.
    pub fn url(&self) -> &str {
        self.conn.url()
    }
}

impl Store for PgStore {
    fn insert_key(&self, key: &KeyRecord, secret_hash: &str) -> Result<(), StoreError> {
        let groups =
            serde_json::to_string(&key.groups).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.conn.with(|c| {
            c.execute(
                "INSERT INTO api_keys (id, secret_hash, role, principal, tenant, groups, created_ms, revoked_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &key.id,
                    &secret_hash,
                    &key.role.as_str(),
                    &key.principal,
                    &key.tenant,
                    &groups,
                    &key.created_ms,
                    &key.revoked_ms,
                ],
            )
            .map(drop)
        })
    }

    fn key_by_hash(&self, secret_hash: &str) -> Result<Option<KeyRecord>, StoreError> {
        self.conn
            .with(|c| {
                c.query_opt(
                    &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE secret_hash = $1"),
                    &[&secret_hash],
                )
                .map(|r| r.as_ref().map(key_row))
            })?
            .map(finish_key)
            .transpose()
    }

    fn list_keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        self.conn
            .with(|c| {
                c.query(
                    &format!("SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_ms, id"),
                    &[],
                )
                .map(|rows| rows.iter().map(key_row).collect::<Vec<_>>())
            })?
            .into_iter()
            .map(finish_key)
            .collect()
    }

    fn revoke_key(&self, id: &str, now_ms: i64) -> Result<bool, StoreError> {
        self.conn.with(|c| {
            c.execute(
                "UPDATE api_keys SET revoked_ms = $2 WHERE id = $1 AND revoked_ms IS NULL",
                &[&id, &now_ms],
            )
            .map(|n| n == 1)
        })
    }

    fn insert_version(&self, v: &SkillVersion, bytes: &[u8]) -> Result<(), StoreError> {
        let findings =
            serde_json::to_string(&v.findings).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.conn
            .with(|c| {
                c.execute(
                    &format!(
                        "INSERT INTO skill_versions ({VERSION_COLUMNS}, bytes) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
                    ),
                    &[
                        &v.tenant,
                        &v.name,
                        &v.version,
                        &v.digest,
                        &v.owner,
                        &v.visibility,
                        &v.verdict.as_str(),
                        &findings,
                        &v.published_ms,
                        &bytes,
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
        self.conn
            .with(|c| {
                c.query(
                    &format!(
                        "SELECT {VERSION_COLUMNS} FROM skill_versions WHERE tenant = $1 AND name = $2 \
                         ORDER BY published_ms, version"
                    ),
                    &[&tenant, &name],
                )
                .map(|rows| rows.iter().map(version_row).collect::<Vec<_>>())
            })?
            .into_iter()
            .map(finish_version)
            .collect()
    }

    fn all_versions(&self) -> Result<Vec<SkillVersion>, StoreError> {
        self.conn
            .with(|c| {
                c.query(
                    &format!(
                        "SELECT {VERSION_COLUMNS} FROM skill_versions ORDER BY published_ms, tenant, name, version"
                    ),
                    &[],
                )
                .map(|rows| rows.iter().map(version_row).collect::<Vec<_>>())
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
        self.conn.with(|c| {
            c.query_opt(
                "SELECT bytes FROM skill_versions WHERE tenant = $1 AND name = $2 AND version = $3",
                &[&tenant, &name, &version],
            )
            .map(|r| r.map(|r| r.get(0)))
        })
    }
}
