//! API keys: created with a high-entropy random secret, stored only as its sha256, and
//! looked up by that hash. The key alone decides the caller.
use crate::Principal;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use skillgate_core::Caller;
use skillgate_store::{KeyRecord, Role, Store, StoreError};

/// Every key starts with this, so a leaked one is recognisable (and a secret scanner can
/// find it).
pub const KEY_PREFIX: &str = "sgk_";

/// Random bytes in a key's secret (256 bits: a plain sha256 of it is a safe lookup hash).
const SECRET_BYTES: usize = 32;

/// A key just created: its record and the secret, shown once.
#[derive(Debug)]
pub struct NewKey {
    /// What the key speaks for.
    pub record: KeyRecord,
    /// The key to send as `Authorization: Bearer KEY`. Not stored anywhere.
    pub secret: String,
}

/// The lowercase hex sha256 of a key, what the store keeps.
pub fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn random<const N: usize>() -> Result<[u8; N], StoreError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b)
        .map_err(|e| StoreError::Backend(format!("no randomness for a key: {e}")))?;
    Ok(b)
}

/// Creates and stores a key for `principal` (an agent or a builder) of `tenant`.
pub fn create(
    store: &dyn Store,
    role: Role,
    principal: &str,
    tenant: &str,
    groups: Vec<String>,
    now_ms: i64,
) -> Result<NewKey, StoreError> {
    let id = hex::encode(random::<6>()?);
    let secret = format!(
        "{KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random::<SECRET_BYTES>()?)
    );
    let record = KeyRecord::new(id, role, principal, tenant, groups, now_ms);
    store.insert_key(&record, &hash(&secret))?;
    Ok(NewKey { record, secret })
}

/// Why a request is not authenticated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// No `Authorization` header.
    #[error("no credential: send `Authorization: Bearer KEY`")]
    Missing,
    /// A header that is not `Bearer sgk_...`.
    #[error("malformed credential: expected `Authorization: Bearer {KEY_PREFIX}...`")]
    Malformed,
    /// No key has this secret.
    #[error("unknown API key")]
    Unknown,
    /// The key was revoked.
    #[error("API key {0} is revoked")]
    Revoked(String),
    /// The key's agent belongs to another tenant in the entities file.
    #[error("API key {0}: {1}")]
    TenantMismatch(String, String),
    /// The store cannot answer (refused: fail closed).
    #[error("the key store cannot answer: {0}")]
    Store(String),
}

impl AuthFailure {
    /// A short stable name, for the audit record and the metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing",
            AuthFailure::Malformed => "malformed",
            AuthFailure::Unknown => "unknown",
            AuthFailure::Revoked(_) => "revoked",
            AuthFailure::TenantMismatch(..) => "tenant_mismatch",
            AuthFailure::Store(_) => "store_error",
        }
    }
}

/// Longest `Authorization` value looked at.
const MAX_HEADER_BYTES: usize = 256;

/// The key an `Authorization` header value carries: `Bearer KEY`, or `KEY` alone (what
/// Piston clients send).
pub fn bearer(header: Option<&[u8]>) -> Result<&str, AuthFailure> {
    let raw = header.ok_or(AuthFailure::Missing)?;
    if raw.len() > MAX_HEADER_BYTES {
        return Err(AuthFailure::Malformed);
    }
    let text = std::str::from_utf8(raw).map_err(|_| AuthFailure::Malformed)?;
    // `Bearer KEY`, or the key alone (as Piston clients send it).
    let key = match text.split_once(' ') {
        Some((scheme, key)) if scheme.eq_ignore_ascii_case("bearer") => key.trim(),
        Some(_) => return Err(AuthFailure::Malformed),
        None => text.trim(),
    };
    if !key.starts_with(KEY_PREFIX) {
        return Err(AuthFailure::Malformed);
    }
    Ok(key)
}

/// The principal a key speaks for, or why not. `tenant_of` checks an agent key's tenant
/// against the entities (it returns the entities' verdict, as `Engine::tenant_of` does).
pub fn authenticate(
    store: &dyn Store,
    key: &str,
    tenant_of: impl FnOnce(&str, &str) -> Result<String, String>,
) -> Result<Principal, AuthFailure> {
    let record = store
        .key_by_hash(&hash(key))
        .map_err(|e| AuthFailure::Store(e.to_string()))?
        .ok_or(AuthFailure::Unknown)?;
    if record.revoked_ms.is_some() {
        return Err(AuthFailure::Revoked(record.id));
    }
    if record.role == Role::Agent {
        tenant_of(&record.principal, &record.tenant)
            .map_err(|e| AuthFailure::TenantMismatch(record.id.clone(), e))?;
    }
    Ok(Principal {
        caller: Caller::new(&record.principal, &record.tenant).with_groups(record.groups.clone()),
        role: record.role,
        key_id: record.id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate_store::SqliteStore;

    fn any_tenant(_: &str, _: &str) -> Result<String, String> {
        Ok("acme".into())
    }

    #[test]
    fn a_created_key_authenticates_until_revoked_and_only_its_hash_is_stored() {
        let store = SqliteStore::open_in_memory().unwrap();
        let k = create(&store, Role::Agent, "a1", "acme", vec!["g".into()], 1).unwrap();
        assert!(k.secret.starts_with(KEY_PREFIX) && k.secret.len() > 40);
        let p = authenticate(&store, &k.secret, any_tenant).unwrap();
        assert_eq!(p.caller, Caller::new("a1", "acme").with_groups(["g"]));
        assert_eq!(p.role, Role::Agent);
        assert!(store.key_by_hash(&k.secret).unwrap().is_none());
        store.revoke_key(&k.record.id, 2).unwrap();
        assert_eq!(
            authenticate(&store, &k.secret, any_tenant).unwrap_err(),
            AuthFailure::Revoked(k.record.id.clone())
        );
        assert_eq!(
            authenticate(&store, "sgk_guess", any_tenant).unwrap_err(),
            AuthFailure::Unknown
        );
    }

    #[test]
    fn an_agent_key_whose_tenant_the_entities_contradict_is_refused() {
        let store = SqliteStore::open_in_memory().unwrap();
        let k = create(&store, Role::Agent, "a1", "globex", vec![], 1).unwrap();
        let err = authenticate(&store, &k.secret, |_, _| Err("belongs to acme".into()));
        assert_eq!(err.unwrap_err().reason(), "tenant_mismatch");
    }

    #[test]
    fn only_a_bearer_key_header_is_read() {
        assert_eq!(bearer(None), Err(AuthFailure::Missing));
        assert_eq!(bearer(Some(b"Basic abc")), Err(AuthFailure::Malformed));
        assert_eq!(bearer(Some(b"Bearer abc")), Err(AuthFailure::Malformed));
        assert_eq!(bearer(Some(b"Bearer sgk_x")), Ok("sgk_x"));
        assert_eq!(bearer(Some(b"sgk_x")), Ok("sgk_x"));
        assert_eq!(bearer(Some(b"nokey")), Err(AuthFailure::Malformed));
        assert_eq!(
            bearer(Some(format!("Bearer sgk_{}", "x".repeat(1000)).as_bytes())),
            Err(AuthFailure::Malformed)
        );
    }
}
