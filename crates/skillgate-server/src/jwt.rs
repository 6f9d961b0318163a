//! JSON Web Tokens as credentials (`serve --jwt-key FILE --jwt-alg ALG --jwt-issuer ISS
//! --jwt-audience AUD`), beside the API keys: a platform whose identity provider already
//! signs tokens for its agents sends those instead of keys it would have to hand out.
//!
//! A token is accepted only when all of these hold, else the request is 401:
//! - its header names the one algorithm configured (no `none`, and no HS token checked
//!   against an RS public key: the algorithm is never taken from the token);
//! - its signature verifies with the configured key;
//! - `iss` and `aud` are the configured ones, `exp` is present and not past (60 s leeway),
//!   `nbf`, when present, is past;
//! - it names the caller: `sub` (the agent, builder or operator id), `tenant`, and
//!   optionally `role` (`agent`, the default; `builder`; `operator`) and `groups`.
//!
//! The claims then decide the caller exactly as a key record does, and the entities file
//! is checked the same way (an agent it declares in another tenant is refused). A token
//! cannot be revoked before its `exp`: keep lifetimes short.
use crate::Principal;
use crate::keys::AuthFailure;
pub use jsonwebtoken::Algorithm;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{DecodingKey, Validation};
use skillgate_core::Caller;
use skillgate_store::Role;
use std::path::Path;

/// The shortest HMAC secret accepted (256 bits).
pub const MIN_HMAC_SECRET: usize = 32;

/// Clock skew allowed on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECS: u64 = 60;

/// Where a verifier's key comes from, to read it again on reload.
#[derive(Debug, Clone)]
struct Source {
    algorithm: Algorithm,
    key_file: std::path::PathBuf,
    issuer: String,
    audience: String,
}

/// The verification keys: one (a secret or a PEM public key), or a JWK set whose keys
/// are chosen by the token's `kid`.
enum Keys {
    One(DecodingKey),
    Set(Vec<(Option<String>, DecodingKey)>),
}

/// Verifies callers' tokens with one key (or a JWK set), one algorithm, one issuer and
/// one audience.
pub struct JwtVerifier {
    keys: Keys,
    validation: Validation,
    source: Source,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// The claims a token must carry besides the registered ones the validation checks.
#[derive(Debug, serde::Deserialize)]
struct Claims {
    sub: String,
    tenant: String,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
}

/// Parses an algorithm name as the JOSE header spells it (`HS256`, `RS256`, `ES256`,
/// `EdDSA`, ...).
pub fn parse_algorithm(name: &str) -> Result<Algorithm, String> {
    name.parse().map_err(|_| {
        format!(
            "unknown JWT algorithm `{name}`: HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or EdDSA"
        )
    })
}

impl JwtVerifier {
    /// A verifier with the key in `key_file`: a JWK set (JSON, `{"keys": [...]}`: the
    /// identity provider's published keys, chosen by the token's `kid`, each of the
    /// configured algorithm), or for HS algorithms the secret (the file's bytes, one
    /// trailing newline removed; at least [`MIN_HMAC_SECRET`] bytes), else the public key
    /// in PEM. Errors name the file and what is wrong.
    ///
    /// ```
    /// use skillgate_server::jwt::JwtVerifier;
    /// let dir = tempfile::tempdir().unwrap();
    /// let file = dir.path().join("secret");
    /// std::fs::write(&file, "short\n").unwrap();
    /// let alg = jsonwebtoken::Algorithm::HS256;
    /// let err = JwtVerifier::from_file(alg, &file, "https://idp", "skillgate").unwrap_err();
    /// assert!(err.contains("at least 32 bytes"), "{err}");
    /// ```
    pub fn from_file(
        algorithm: Algorithm,
        key_file: &Path,
        issuer: &str,
        audience: &str,
    ) -> Result<JwtVerifier, String> {
        let bytes = std::fs::read(key_file)
            .map_err(|e| format!("cannot read the JWT key {}: {e}", key_file.display()))?;
        let keys = if bytes.trim_ascii_start().starts_with(b"{") {
            Keys::Set(jwk_set(algorithm, key_file, &bytes)?)
        } else {
            Keys::One(one_key(algorithm, key_file, &bytes)?)
        };
        if issuer.is_empty() || audience.is_empty() {
            return Err("--jwt-issuer and --jwt-audience must not be empty".into());
        }
        let mut validation = Validation::new(algorithm);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        Ok(JwtVerifier {
            keys,
            validation,
            source: Source {
                algorithm,
                key_file: key_file.to_path_buf(),
                issuer: issuer.into(),
                audience: audience.into(),
            },
        })
    }

    /// The same verifier with its key file read again (an identity provider rotated its
    /// keys): on SIGHUP and `POST /v1/admin/reload`.
    pub fn reload(&self) -> Result<JwtVerifier, String> {
        let s = &self.source;
        JwtVerifier::from_file(s.algorithm, &s.key_file, &s.issuer, &s.audience)
    }

    /// The key that verifies `token`: the only one, or the JWK set's key of the token's
    /// `kid` (a set of one key serves a token without `kid`).
    fn key_for(&self, token: &str) -> Result<&DecodingKey, AuthFailure> {
        let set = match &self.keys {
            Keys::One(key) => return Ok(key),
            Keys::Set(set) => set,
        };
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| AuthFailure::BadToken(token_error(&e)))?;
        let found = match header.kid.as_deref() {
            Some(kid) => set.iter().find(|(k, _)| k.as_deref() == Some(kid)),
            None if set.len() == 1 => set.first(),
            None => None,
        };
        found.map(|(_, key)| key).ok_or_else(|| {
            AuthFailure::BadToken(match header.kid {
                Some(kid) => format!("no key `{}` in the key set", crate::error::elide(&kid)),
                None => "the token names no key (`kid`) and the key set has several".into(),
            })
        })
    }

    /// The principal `token` speaks for, or why not. `tenant_of` checks the claimed tenant
    /// against the entities, as for a key ([`crate::keys::check_tenant`]).
    pub fn authenticate(
        &self,
        token: &str,
        tenant_of: impl FnOnce(Role, &str, &str) -> Result<(), String>,
    ) -> Result<Principal, AuthFailure> {
        let data = jsonwebtoken::decode::<Claims>(token, self.key_for(token)?, &self.validation)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => AuthFailure::Expired,
                _ => AuthFailure::BadToken(token_error(&e)),
            })?;
        let claims = data.claims;
        let role = match claims.role.as_deref() {
            None | Some("agent") => Role::Agent,
            Some("builder") => Role::Builder,
            Some("operator") => Role::Operator,
            Some(other) => {
                return Err(AuthFailure::BadToken(format!(
                    "unknown role claim `{}`: agent, builder or operator",
                    crate::error::elide(other)
                )));
            }
        };
        if claims.sub.is_empty() || claims.tenant.is_empty() {
            return Err(AuthFailure::BadToken(
                "the `sub` and `tenant` claims must not be empty".into(),
            ));
        }
        // The token's name in the audit trail and the rate limiter: one per subject.
        let id = format!("jwt:{}", claims.sub);
        tenant_of(role, &claims.sub, &claims.tenant)
            .map_err(|e| AuthFailure::TenantMismatch(id.clone(), e))?;
        Ok(Principal {
            caller: Caller::new(&claims.sub, &claims.tenant).with_groups(claims.groups),
            role,
            key_id: id,
        })
    }
}

/// One key: an HMAC secret for HS algorithms, else a public key in PEM.
fn one_key(algorithm: Algorithm, key_file: &Path, bytes: &[u8]) -> Result<DecodingKey, String> {
    let bad = |e: jsonwebtoken::errors::Error| {
        format!(
            "the JWT key {} is not a {algorithm:?} public key in PEM (or a JWK set): {e}",
            key_file.display()
        )
    };
    Ok(match algorithm {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            let secret = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            if secret.len() < MIN_HMAC_SECRET {
                return Err(format!(
                    "the JWT secret {} has {} bytes: an HMAC secret needs at least {MIN_HMAC_SECRET} bytes",
                    key_file.display(),
                    secret.len()
                ));
            }
            DecodingKey::from_secret(secret)
        }
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => DecodingKey::from_rsa_pem(bytes).map_err(bad)?,
        Algorithm::ES256 | Algorithm::ES384 => DecodingKey::from_ec_pem(bytes).map_err(bad)?,
        Algorithm::EdDSA => DecodingKey::from_ed_pem(bytes).map_err(bad)?,
    })
}

/// The keys of a JWK set, with their ids. A key whose `alg` is another algorithm than the
/// configured one is refused (naming it), as is a set without keys.
fn jwk_set(
    algorithm: Algorithm,
    key_file: &Path,
    bytes: &[u8],
) -> Result<Vec<(Option<String>, DecodingKey)>, String> {
    let file = key_file.display();
    let set: jsonwebtoken::jwk::JwkSet = serde_json::from_slice(bytes)
        .map_err(|e| format!("the JWK set {file} does not parse: {e}"))?;
    if set.keys.is_empty() {
        return Err(format!("the JWK set {file} has no key"));
    }
    set.keys
        .iter()
        .enumerate()
        .map(|(i, jwk)| {
            let kid = jwk.common.key_id.clone();
            let name = kid.clone().unwrap_or_else(|| format!("#{}", i + 1));
            if let Some(alg) = jwk.common.key_algorithm
                && format!("{alg:?}") != format!("{algorithm:?}")
            {
                return Err(format!(
                    "key {name} of the JWK set {file} is for {alg:?}, not the configured {algorithm:?}"
                ));
            }
            let key = DecodingKey::from_jwk(jwk)
                .map_err(|e| format!("key {name} of the JWK set {file}: {e}"))?;
            Ok((kid, key))
        })
        .collect()
}

/// What is wrong with a token, without echoing it.
fn token_error(e: &jsonwebtoken::errors::Error) -> String {
    match e.kind() {
        ErrorKind::InvalidSignature => "bad signature".into(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm is not the configured one".into(),
        ErrorKind::InvalidIssuer => "wrong issuer (`iss`)".into(),
        ErrorKind::InvalidAudience => "wrong audience (`aud`)".into(),
        ErrorKind::ImmatureSignature => "not valid yet (`nbf`)".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("the `{c}` claim is missing"),
        ErrorKind::Json(_) => "the claims lack `sub` or `tenant`, or have the wrong types".into(),
        _ => "not a well-formed JWT".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header, encode};

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-test-secret";
    const ISS: &str = "https://idp.example";
    const AUD: &str = "skillgate";

    fn verifier(dir: &Path) -> JwtVerifier {
        let file = dir.join("secret");
        std::fs::write(&file, [SECRET, b"\n"].concat()).unwrap();
        JwtVerifier::from_file(Algorithm::HS256, &file, ISS, AUD).unwrap()
    }

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    fn token(claims: serde_json::Value) -> String {
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET),
        )
        .unwrap()
    }

    fn good() -> serde_json::Value {
        serde_json::json!({
            "sub": "analyst-1", "tenant": "acme", "groups": ["analysts"],
            "iss": ISS, "aud": AUD, "exp": now() + 300,
        })
    }

    fn with(mut v: serde_json::Value, key: &str, value: serde_json::Value) -> serde_json::Value {
        v[key] = value;
        v
    }

    fn without(mut v: serde_json::Value, key: &str) -> serde_json::Value {
        v.as_object_mut().unwrap().remove(key);
        v
    }

    fn any_tenant(_: Role, _: &str, _: &str) -> Result<(), String> {
        Ok(())
    }

    #[test]
    fn a_good_token_speaks_for_its_subject_tenant_groups_and_role() {
        let dir = tempfile::tempdir().unwrap();
        let v = verifier(dir.path());
        let p = v.authenticate(&token(good()), any_tenant).unwrap();
        assert_eq!(
            p.caller,
            Caller::new("analyst-1", "acme").with_groups(["analysts"])
        );
        assert_eq!((p.role, p.key_id.as_str()), (Role::Agent, "jwt:analyst-1"));
        let b = v
            .authenticate(&token(with(good(), "role", "builder".into())), any_tenant)
            .unwrap();
        assert_eq!(b.role, Role::Builder);
    }

    #[test]
    fn tokens_that_do_not_verify_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let v = verifier(dir.path());
        let refused = |t: String| v.authenticate(&t, any_tenant).unwrap_err();
        assert_eq!(
            refused(token(with(good(), "exp", (now() - 3600).into()))),
            AuthFailure::Expired
        );
        let cases = [
            (token(without(good(), "exp")), "`exp` claim is missing"),
            (token(with(good(), "iss", "https://evil".into())), "issuer"),
            (token(with(good(), "aud", "other".into())), "audience"),
            (token(with(good(), "nbf", (now() + 3600).into())), "nbf"),
            (token(without(good(), "tenant")), "lack `sub` or `tenant`"),
            (token(with(good(), "role", "root".into())), "unknown role"),
            (
                token(with(good(), "tenant", "".into())),
                "must not be empty",
            ),
            ("not.a.jwt".into(), "well-formed"),
        ];
        for (t, want) in cases {
            match refused(t) {
                AuthFailure::BadToken(why) => assert!(why.contains(want), "{why} / {want}"),
                other => panic!("{other:?} / {want}"),
            }
        }
        // Signed with another secret; signed with another algorithm; unsigned.
        let other = encode(
            &Header::new(Algorithm::HS256),
            &good(),
            &EncodingKey::from_secret(b"another secret of thirty-two bytes!!"),
        )
        .unwrap();
        assert_eq!(
            refused(other),
            AuthFailure::BadToken("bad signature".into())
        );
        let hs512 = encode(
            &Header::new(Algorithm::HS512),
            &good(),
            &EncodingKey::from_secret(SECRET),
        )
        .unwrap();
        assert!(matches!(refused(hs512), AuthFailure::BadToken(_)));
        let t = token(good());
        let (_, rest) = t.split_once('.').unwrap();
        let (claims, _) = rest.split_once('.').unwrap();
        // {"alg":"none","typ":"JWT"}
        let unsigned = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{claims}.");
        assert!(matches!(refused(unsigned), AuthFailure::BadToken(_)));
    }

    #[test]
    fn the_entities_file_decides_the_tenant_as_for_keys() {
        let dir = tempfile::tempdir().unwrap();
        let v = verifier(dir.path());
        let err = v
            .authenticate(&token(good()), |_, _, _| Err("belongs to globex".into()))
            .unwrap_err();
        assert_eq!(
            err,
            AuthFailure::TenantMismatch("jwt:analyst-1".into(), "belongs to globex".into())
        );
    }

    fn oct(kid: &str, secret: &[u8], alg: &str) -> serde_json::Value {
        use base64::Engine as _;
        serde_json::json!({
            "kty": "oct", "kid": kid, "alg": alg,
            "k": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret),
        })
    }

    fn signed(kid: Option<&str>, secret: &[u8]) -> String {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = kid.map(str::to_string);
        encode(&header, &good(), &EncodingKey::from_secret(secret)).unwrap()
    }

    #[test]
    fn a_jwk_set_chooses_the_key_by_kid_and_is_read_again_on_reload() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("jwks.json");
        let (one, two) = (SECRET, &b"a second secret, thirty-two bytes or more"[..]);
        let write = |keys: serde_json::Value| {
            std::fs::write(&file, serde_json::json!({ "keys": keys }).to_string()).unwrap()
        };
        write(serde_json::json!([
            oct("k1", one, "HS256"),
            oct("k2", two, "HS256")
        ]));
        let v = JwtVerifier::from_file(Algorithm::HS256, &file, ISS, AUD).unwrap();
        assert!(v.authenticate(&signed(Some("k1"), one), any_tenant).is_ok());
        assert!(v.authenticate(&signed(Some("k2"), two), any_tenant).is_ok());
        let refused = |t: String| match v.authenticate(&t, any_tenant).unwrap_err() {
            AuthFailure::BadToken(why) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(refused(signed(Some("k1"), two)), "bad signature");
        assert!(refused(signed(Some("k9"), one)).contains("no key `k9`"));
        assert!(refused(signed(None, one)).contains("names no key"));

        // Rotated: k1 is gone. The loaded verifier keeps its keys; its reload has the new.
        write(serde_json::json!([oct("k2", two, "HS256")]));
        let rotated = v.reload().unwrap();
        assert!(v.authenticate(&signed(Some("k1"), one), any_tenant).is_ok());
        assert!(
            rotated
                .authenticate(&signed(Some("k1"), one), any_tenant)
                .is_err()
        );
        // A set of one key serves a token without `kid`.
        assert!(rotated.authenticate(&signed(None, two), any_tenant).is_ok());

        for (keys, want) in [
            (serde_json::json!([oct("k1", one, "HS512")]), "is for HS512"),
            (serde_json::json!([]), "has no key"),
            (serde_json::json!([{"kty": "oct"}]), "does not parse"),
        ] {
            write(keys);
            let err = JwtVerifier::from_file(Algorithm::HS256, &file, ISS, AUD).unwrap_err();
            assert!(
                err.contains(want) && err.contains("jwks.json"),
                "{err} / {want}"
            );
        }
        std::fs::write(&file, "{not json").unwrap();
        let err = v.reload().unwrap_err();
        assert!(err.contains("does not parse"), "{err}");
    }

    #[test]
    fn a_key_file_that_does_not_fit_the_algorithm_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("key.pem");
        std::fs::write(&file, "not a pem").unwrap();
        for alg in [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA] {
            let err = JwtVerifier::from_file(alg, &file, ISS, AUD).unwrap_err();
            assert!(err.contains("key.pem") && err.contains("PEM"), "{err}");
        }
        let err = JwtVerifier::from_file(Algorithm::HS256, &dir.path().join("gone"), ISS, AUD)
            .unwrap_err();
        assert!(err.contains("cannot read"), "{err}");
        assert!(parse_algorithm("none").is_err());
        assert_eq!(parse_algorithm("EdDSA").unwrap(), Algorithm::EdDSA);
    }
}
