//! The HTTP API's request decoding (`skillgate-server`), on what a client controls: the
//! first byte picks the decoder, the rest is the input.
//! - 0: an `Authorization` header value (`keys::bearer`; a token is given to a JWT
//!   verifier, which must refuse it: the fuzzer does not know the secret);
//! - 1: a run body with a `Content-Type` line first (`protect::json_body` into
//!   `SkillRunBody`);
//! - 2: a bare-script run body likewise (`ScriptRunBody`, then `runs::language` and
//!   `runs::script`);
//! - 3: raw upload bytes (`tarball::read`);
//! - 4: a file list (see `skillgate_fuzz::files`) packed as a `.tar.gz` by the harness and
//!   published through `registry::unpack_and_load` (tar reading, path checks, the
//!   skill-folder loader).
//!
//! Every decoder answers a value or an error with a 4xx status (5xx only for the
//! server's own I/O), never a panic. Seeds: `corpora/fuzz/http_decode/`.
#![no_main]
use axum::body::Body;
use http::{HeaderMap, HeaderValue, header};
use libfuzzer_sys::fuzz_target;
use skillgate_server::protect::{Limits, json_body};
use skillgate_server::runs::{ScriptRunBody, SkillRunBody, language, script};
use skillgate_server::{keys, registry, tarball};
use std::sync::OnceLock;

/// A verifier of HS256 tokens with a secret no input knows.
fn jwt() -> &'static skillgate_server::jwt::JwtVerifier {
    static JWT: OnceLock<skillgate_server::jwt::JwtVerifier> = OnceLock::new();
    JWT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("http-decode-jwt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let file = dir.join("secret");
        std::fs::write(&file, "a secret the fuzzer cannot guess, 32+ bytes").expect("written");
        let alg = skillgate_server::jwt::Algorithm::HS256;
        skillgate_server::jwt::JwtVerifier::from_file(alg, &file, "https://idp", "skillgate")
            .expect("the verifier")
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    })
}

/// Splits `data` at its first newline into a `Content-Type` value and the body.
fn headers_and_body(data: &[u8]) -> (HeaderMap, Vec<u8>) {
    let (ct, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"application/json"[..], data),
    };
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_bytes(ct) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    (headers, body.to_vec())
}

fn client_error(e: &skillgate_server::error::ApiError) {
    assert!(
        e.status.is_client_error(),
        "{} for client input: {}",
        e.status,
        e.message
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    match which % 5 {
        0 => {
            match keys::bearer(Some(rest)) {
                Ok(keys::Credential::Key(key)) => {
                    assert!(key.starts_with(keys::KEY_PREFIX));
                    assert!(rest.len() <= 8192 && std::str::from_utf8(rest).unwrap().contains(key));
                }
                Ok(keys::Credential::Token(token)) => {
                    assert!(
                        rest.len() <= 8192 && std::str::from_utf8(rest).unwrap().contains(token)
                    );
                    // A token that verifies would need the secret: any other is refused.
                    assert!(jwt().authenticate(token, |_, _, _| Ok(())).is_err());
                }
                Err(_) => {}
            }
        }
        1 => {
            let (headers, body) = headers_and_body(rest);
            let got = runtime().block_on(json_body::<SkillRunBody>(
                &headers,
                Body::from(body),
                &limits,
            ));
            if let Err(e) = got {
                client_error(&e);
            }
        }
        2 => {
            let (headers, body) = headers_and_body(rest);
            let got = runtime().block_on(json_body::<ScriptRunBody>(
                &headers,
                Body::from(body),
                &limits,
            ));
            match got {
                Ok(b) => match language(&b.language) {
                    Ok(lang) => {
                        if let Err(e) = script(lang, b.code) {
                            client_error(&e);
                        }
                    }
                    Err(e) => client_error(&e),
                },
                Err(e) => client_error(&e),
            }
        }
        3 => {
            let _ = tarball::read(rest, tarball::Caps::default());
        }
        _ => {
            let list = skillgate_fuzz::files::split_files(rest);
            let Ok(gz) = skillgate_fuzz::files::tar_gz(&list) else {
                return;
            };
            if let Err(e) = registry::unpack_and_load(&gz) {
                // Only the server's own temporary folder may fail with a 5xx.
                if !e.status.is_client_error() {
                    assert!(
                        e.message.contains("private directory")
                            || e.message.contains("cannot unpack"),
                        "{}: {}",
                        e.status,
                        e.message
                    );
                }
            }
        }
    }
});
