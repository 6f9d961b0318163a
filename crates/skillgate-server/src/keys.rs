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
    /// A header that is not `Bearer sgk_...` or `Bearer JWT`.
    #[error("malformed credential: expected `Authorization: Bearer {KEY_PREFIX}...` (or a JWT)")]
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
    /// A JWT whose `exp` is past.
    #[error("the token has expired")]
    Expired,
    /// A JWT that does not verify (signature, algorithm, issuer, audience, claims).
    #[error("the token is refused: {0}")]
    BadToken(String),
    /// A JWT sent to a server that verifies none.
    #[error("this server accepts API keys only (it was started without --jwt-key)")]
    NoVerifier,
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
            AuthFailure::Expired => "expired",
            AuthFailure::BadToken(_) => "bad_token",
            AuthFailure::NoVerifier => "token_not_accepted",
        }
    }
}

/// Longest `Authorization` value looked at (a JWT with an RSA signature and a few groups
/// fits many times over).
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// What an `Authorization` header carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential<'a> {
    /// An API key (`sgk_...`).
    Key(&'a str),
    /// A JSON Web Token (three base64url parts joined by dots).
    Token(&'a str),
}

/// The credential an `Authorization` header value carries: `Bearer CREDENTIAL`, or the
/// credential alone (what Piston clients send).
///
/// ```
/// use skillgate_server::keys::{bearer, Credential, AuthFailure};
/// assert_eq!(bearer(Some(b"Bearer sgk_abc")), Ok(Credential::Key("sgk_abc")));
/// assert_eq!(bearer(Some(b"Bearer eyJ0.eyJz.c2ln")), Ok(Credential::Token("eyJ0.eyJz.c2ln")));
/// assert_eq!(bearer(Some(b"Basic dXNlcjpwYXNz")), Err(AuthFailure::Malformed));
/// assert_eq!(bearer(None), Err(AuthFailure::Missing));
/// ```
pub fn bearer(header: Option<&[u8]>) -> Result<Credential<'_>, AuthFailure> {
    let raw = header.ok_or(AuthFailure::Missing)?;
    if raw.len() > MAX_HEADER_BYTES {
        return Err(AuthFailure::Malformed);
    }
    let text = std::str::from_utf8(raw).map_err(|_| AuthFailure::Malformed)?;
    let credential = match text.split_once(' ') {
        Some((scheme, credential)) if scheme.eq_ignore_ascii_case("bearer") => credential.trim(),
        Some(_) => return Err(AuthFailure::Malformed),
        None => text.trim(),
    };
    if credential.starts_with(KEY_PREFIX) {
        return Ok(Credential::Key(credential));
    }
    let base64url = |p: &str| {
        p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let parts: Vec<&str> = credential.split('.').collect();
    match parts[..] {
        [header, claims, _signature]
            if !header.is_empty() && !claims.is_empty() && parts.iter().all(|p| base64url(p)) =>
        {
            Ok(Credential::Token(credential))
        }
        _ => Err(AuthFailure::Malformed),
    }
}

/// Checks a key's tenant against the entities: an agent or builder they declare must be
/// of the key's tenant (an undeclared one has no rights anyway: the policy gate denies
/// it). `policy` is the engine's gate.
pub fn check_tenant(
    policy: Option<&skillgate_policy::Policy>,
    role: Role,
    principal: &str,
    tenant: &str,
) -> Result<(), String> {
    let known = match role {
        Role::Agent => {
            return skillgate::engine::tenant_of(policy, principal, Some(tenant))
                .map(drop)
                .map_err(|e| e.to_string());
        }
        Role::Builder => policy.and_then(|p| p.builder_tenant(principal)),
        Role::Operator => None,
    };
    match known {
        Some(known) if known != tenant => Err(format!(
            "{} `{principal}` belongs to tenant `{known}` in the entities file, not to `{tenant}`",
            role.as_str()
        )),
        _ => Ok(()),
    }
}

/// The principal a key speaks for, or why not. `tenant_of` checks the key's tenant
/// against the entities (see [`check_tenant`]).
pub fn authenticate(
    store: &dyn Store,
    key: &str,
    tenant_of: impl FnOnce(Role, &str, &str) -> Result<(), String>,
) -> Result<Principal, AuthFailure> {
    let record = store
        .key_by_hash(&hash(key))
        .map_err(|e| AuthFailure::Store(e.to_string()))?
        .ok_or(AuthFailure::Unknown)?;
    if record.revoked_ms.is_some() {
        return Err(AuthFailure::Revoked(record.id));
    }
    tenant_of(record.role, &record.principal, &record.tenant)
        .map_err(|e| AuthFailure::TenantMismatch(record.id.clone(), e))?;
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

    fn any_tenant(_: Role, _: &str, _: &str) -> Result<(), String> {
        Ok(())
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
        let err = authenticate(&store, &k.secret, |_, _, _| Err("belongs to acme".into()));
        assert_eq!(err.unwrap_err().reason(), "tenant_mismatch");
    }

    #[test]
    fn a_builder_key_of_another_tenant_than_its_builders_is_refused() {
        let entities = r#"[
          {"uid": {"type": "Tenant", "id": "acme"}, "attrs": {}, "parents": []},
          {"uid": {"type": "Builder", "id": "alice"},
           "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "acme"}}}, "parents": []}
        ]"#;
        let policy = skillgate_policy::Policy::builtin()
            .unwrap()
            .with_entities_json("inline", entities)
            .unwrap();
        let p = Some(&policy);
        assert!(check_tenant(p, Role::Builder, "alice", "acme").is_ok());
        let err = check_tenant(p, Role::Builder, "alice", "globex").unwrap_err();
        assert!(err.contains("tenant `acme`"), "{err}");
        // Undeclared: no rights anyway, the gate denies it.
        assert!(check_tenant(p, Role::Builder, "bob", "globex").is_ok());
    }

    #[test]
    fn only_a_bearer_key_or_token_header_is_read() {
        assert_eq!(bearer(None), Err(AuthFailure::Missing));
        assert_eq!(bearer(Some(b"Basic abc")), Err(AuthFailure::Malformed));
        assert_eq!(bearer(Some(b"Bearer abc")), Err(AuthFailure::Malformed));
        assert_eq!(bearer(Some(b"Bearer sgk_x")), Ok(Credential::Key("sgk_x")));
        assert_eq!(bearer(Some(b"sgk_x")), Ok(Credential::Key("sgk_x")));
        assert_eq!(bearer(Some(b"nokey")), Err(AuthFailure::Malformed));
        assert_eq!(
            bearer(Some(b"Bearer a.b.c")),
            Ok(Credential::Token("a.b.c"))
        );
        // Unsigned: read as a token, which the verifier refuses.
        assert_eq!(bearer(Some(b"Bearer a.b.")), Ok(Credential::Token("a.b.")));
        for bad in [
            "a.b", "a..c", ".b.c", "a.b.c.d", "a.b+.c", "a.b.c=", "a b.c.d",
        ] {
            assert_eq!(
                bearer(Some(format!("Bearer {bad}").as_bytes())),
                Err(AuthFailure::Malformed),
                "{bad}"
            );
        }
        assert_eq!(
            bearer(Some(
                format!("Bearer sgk_{}", "x".repeat(10_000)).as_bytes()
            )),
            Err(AuthFailure::Malformed)
        );
    }
}
