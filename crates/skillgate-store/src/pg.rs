//! [`PgConn`]: one PostgreSQL connection of a process, for the stores that keep their
//! state there (`[store] url`), with versioned schema migrations and a URL that is shown
//! without its password.
//!
//! The client is the synchronous `postgres` crate (rust-postgres, the maintained
//! PostgreSQL client without an ORM). The stores are synchronous traits called from
//! blocking code and from inside tokio tasks alike; the synchronous client drives its
//! own small runtime and panics when called on a thread that runs another one, so every
//! call runs on a scoped thread of its own (tens of microseconds, against a network
//! round trip).
use crate::StoreError;
use postgres::{Client, NoTls};
use std::sync::Mutex;
use std::time::Duration;

/// How long opening a connection may take before the store refuses to start.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A PostgreSQL connection, reopened when the server dropped it. Calls are serialised
/// (one connection per store, as SQLite's stores keep one).
pub struct PgConn {
    config: postgres::Config,
    shown: String,
    client: Mutex<Option<Client>>,
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConn").field("url", &self.shown).finish()
    }
}

/// The client's drop closes the connection through its runtime, which panics on a thread
/// that runs another one (an engine swapped out inside a server's task): closed on a
/// thread of its own.
impl Drop for PgConn {
    fn drop(&mut self) {
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(client) = client {
            std::thread::scope(|s| {
                s.spawn(move || drop(client));
            });
        }
    }
}

/// `url` with its password replaced by `***` (for messages and logs): in the URL form
/// (`postgres://user:secret@host/db`) and in the key-value form (`password=secret`).
///
/// ```
/// use skillgate_store::pg::redact_url;
/// assert_eq!(redact_url("postgres://sg:pw@127.0.0.1:5432/db"), "postgres://sg:***@127.0.0.1:5432/db");
/// assert_eq!(redact_url("postgres://sg@h/db?password=pw&x=1"), "postgres://sg@h/db?password=***&x=1");
/// assert_eq!(redact_url("host=h password=pw user=sg"), "host=h password=*** user=sg");
/// ```
pub fn redact_url(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(start) = url.find("://").map(|i| i + 3) {
        let end = url[start..]
            .find(['/', '?'])
            .map_or(url.len(), |i| start + i);
        let colon_at = url[start..end].rfind('@').and_then(|at| {
            let at = start + at;
            url[start..at].find(':').map(|colon| (start + colon, at))
        });
        if let Some((colon, at)) = colon_at {
            out = format!("{}***{}", &url[..=colon], &url[at..]);
        }
    }
    // `password=` parameters, in the query string or the key-value form.
    let mut shown = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.find("password=") {
        let value = i + "password=".len();
        let boundary = i == 0 || matches!(rest.as_bytes()[i - 1], b'?' | b'&' | b' ');
        shown.push_str(&rest[..value]);
        rest = &rest[value..];
        if boundary {
            let end = rest.find(['&', ' ']).unwrap_or(rest.len());
            shown.push_str("***");
            rest = &rest[end..];
        }
    }
    shown.push_str(rest);
    shown
}

fn backend(shown: &str, e: postgres::Error) -> StoreError {
    match e.code() {
        Some(c) if *c == postgres::error::SqlState::UNIQUE_VIOLATION => {
            StoreError::Exists(e.to_string())
        }
        _ => StoreError::Backend(format!("{shown}: {e}")),
    }
}

impl PgConn {
    /// Connects to `url` now (a store that cannot reach its database refuses to start);
    /// the error names the URL without its password.
    pub fn connect(url: &str) -> Result<PgConn, StoreError> {
        let shown = redact_url(url);
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Backend(format!("{shown}: not a PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let conn = PgConn {
            config,
            shown,
            client: Mutex::new(None),
        };
        conn.with(|_| Ok(()))?;
        Ok(conn)
    }

    /// The URL, without its password.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// The connection was lost (the last call failed on it); the next call reconnects.
    pub fn is_broken(&self) -> bool {
        self.client
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
            .is_none_or(Client::is_closed)
    }

    /// Runs `f` with the connection (opening it again if the server closed it).
    pub fn with<R: Send>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, postgres::Error> + Send,
    ) -> Result<R, StoreError> {
        self.with_store(|c| f(c).map_err(|e| backend(&self.shown, e)))
    }

    /// Like [`with`](Self::with), for a body that has errors of its own.
    pub fn with_store<R: Send, E: From<StoreError> + Send>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, E> + Send,
    ) -> Result<R, E> {
        let mut guard = self
            .client
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let slot = &mut *guard;
        std::thread::scope(|s| {
            s.spawn(move || {
                if slot.as_ref().is_none_or(Client::is_closed) {
                    let client = self.config.connect(NoTls).map_err(|e| {
                        StoreError::Backend(format!("cannot connect to {}: {e}", self.shown))
                    })?;
                    *slot = Some(client);
                }
                let client = slot.as_mut().expect("opened above");
                f(client)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Brings `component`'s tables to the last of `migrations` (version N is
    /// `migrations[N-1]`), each applied once, in one transaction, under a lock (several
    /// processes may start at once). A database newer than this skillgate is an error.
    pub fn migrate(&self, component: &str, migrations: &[&str]) -> Result<(), StoreError> {
        let known = migrations.len() as i32;
        self.with_store(|c| {
            let run = |c: &mut Client| -> Result<Result<(), StoreError>, postgres::Error> {
                let mut tx = c.transaction()?;
                // No NOTICE for the table that exists (the client logs each at INFO).
                tx.batch_execute("SET LOCAL client_min_messages = warning")?;
                tx.execute(
                    "SELECT pg_advisory_xact_lock(hashtext('skillgate_migrations'))",
                    &[],
                )?;
                tx.batch_execute(
                    "CREATE TABLE IF NOT EXISTS skillgate_migrations(
                        component TEXT NOT NULL, version INTEGER NOT NULL,
                        applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                        PRIMARY KEY(component, version))",
                )?;
                let have: i32 = tx
                    .query_one(
                        "SELECT coalesce(max(version), 0) FROM skillgate_migrations WHERE component = $1",
                        &[&component],
                    )?
                    .get(0);
                if have > known {
                    return Ok(Err(StoreError::Backend(format!(
                        "{}: the {component} tables have schema version {have}, this skillgate knows versions up to {known}",
                        self.shown
                    ))));
                }
                for (i, sql) in migrations.iter().enumerate().skip(have as usize) {
                    tx.batch_execute(sql)?;
                    tx.execute(
                        "INSERT INTO skillgate_migrations(component, version) VALUES($1, $2)",
                        &[&component, &(i as i32 + 1)],
                    )?;
                }
                tx.commit()?;
                Ok(Ok(()))
            };
            run(c).map_err(|e| backend(&self.shown, e))?
        })
    }
}
