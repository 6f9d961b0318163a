//! [`PgStore`] against a real PostgreSQL (`scripts/services up postgres`).
#[path = "../../../tests/support/postgres.rs"]
mod support;

use skillgate_store::{KeyRecord, PgStore, PublishVerdict, Role, SkillVersion, Store, StoreError};

fn version(v: &str) -> SkillVersion {
    SkillVersion {
        tenant: "acme".into(),
        name: "s".into(),
        version: v.into(),
        digest: format!("d{v}"),
        owner: "b".into(),
        visibility: "public".into(),
        verdict: PublishVerdict::Warn,
        findings: serde_json::json!([{"rule_id": "x"}]),
        published_ms: 1,
    }
}

#[test]
fn two_stores_on_one_database_share_keys_and_versions() {
    let url = support::fresh_database("store_share");
    let a = PgStore::open(&url).unwrap();
    // A second process's store: its own connection, and the migration finds the tables.
    let b = PgStore::open(&url).unwrap();
    let key = KeyRecord::new("k1", Role::Agent, "analyst-1", "acme", vec!["g".into()], 3);
    a.insert_key(&key, "h1").unwrap();
    assert_eq!(b.key_by_hash("h1").unwrap(), Some(key.clone()));
    assert!(b.key_by_hash("h2").unwrap().is_none());
    let dup = b.insert_key(&key, "h1");
    assert!(matches!(dup, Err(StoreError::Exists(_))), "{dup:?}");
    assert!(b.revoke_key("k1", 9).unwrap());
    assert!(!a.revoke_key("k1", 10).unwrap());
    assert_eq!(a.list_keys().unwrap()[0].revoked_ms, Some(9));

    a.insert_version(&version("v1"), b"tar").unwrap();
    let again = b.insert_version(&version("v1"), b"other");
    assert!(matches!(again, Err(StoreError::Exists(_))), "{again:?}");
    assert_eq!(b.versions("acme", "s").unwrap(), vec![version("v1")]);
    assert_eq!(b.all_versions().unwrap(), vec![version("v1")]);
    assert_eq!(b.version_bytes("acme", "s", "v1").unwrap().unwrap(), b"tar");
    assert!(b.version_bytes("acme", "s", "v2").unwrap().is_none());
}

#[test]
fn a_database_newer_than_this_skillgate_is_refused() {
    let url = support::fresh_database("store_newer");
    PgStore::open(&url).unwrap();
    support::psql(
        &url,
        "INSERT INTO skillgate_migrations(component, version) VALUES('store', 99)",
    );
    let err = PgStore::open(&url).unwrap_err().to_string();
    assert!(err.contains("schema version 99"), "{err}");
}

#[test]
fn an_unreachable_database_is_refused_naming_it_without_its_password() {
    // A port nobody listens on: take one from the kernel, then close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://sg:hunter2@127.0.0.1:{port}/db");
    let err = PgStore::open(&url).unwrap_err().to_string();
    assert!(
        err.contains(&format!("postgres://sg:***@127.0.0.1:{port}/db")),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn a_store_is_usable_from_inside_a_tokio_runtime() {
    // The synchronous client panics when driven on a runtime's thread; the store runs
    // each call on a thread of its own, so the layers may call it from their futures.
    let url = support::fresh_database("store_in_runtime");
    let store = PgStore::open(&url).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        assert!(store.list_keys().unwrap().is_empty());
        // Dropped inside the runtime too (an engine swapped out in a server's task).
        drop(store);
    });
}
