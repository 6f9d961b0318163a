//! The engine's flavour, from the headers of its `/_ping` answer: Podman's compatible
//! service adds `Libpod-Api-Version` and names itself `Libpod/…` in `Server`; Docker
//! Engine does neither. `/version` says it too, but Podman takes about 190 ms to answer
//! that (it gathers the host's information each time), against well under a millisecond
//! for `/_ping`, and a `skillgate run` process asks once per run.
use super::Flavour;
use bytes::Bytes;
use http_body_util::Empty;
use hyper::header::{HeaderMap, SERVER};
use hyper_util::rt::TokioIo;
use std::path::Path;

/// Asks the engine at the unix socket `socket` for `/_ping`; its flavour, or what failed.
pub(crate) async fn flavour(socket: &Path) -> Result<Flavour, String> {
    let stream = tokio::net::UnixStream::connect(socket)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    let conn = tokio::spawn(conn);
    let request = hyper::Request::get("/_ping")
        .header(hyper::header::HOST, "docker")
        .body(Empty::<Bytes>::new())
        .map_err(|e| e.to_string())?;
    let answer = sender.send_request(request).await;
    conn.abort();
    let answer = answer.map_err(|e| e.to_string())?;
    if !answer.status().is_success() {
        return Err(format!("/_ping answered {}", answer.status()));
    }
    Ok(of_headers(answer.headers()))
}

/// The flavour the headers of a `/_ping` answer name.
fn of_headers(headers: &HeaderMap) -> Flavour {
    let server_is_libpod = headers
        .get(SERVER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| s.to_ascii_lowercase().starts_with("libpod"));
    if headers.contains_key("libpod-api-version") || server_is_libpod {
        Flavour::Podman
    } else {
        Flavour::Docker
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn podman_is_known_by_its_libpod_headers() {
        let mut h = HeaderMap::new();
        h.insert("api-version", HeaderValue::from_static("1.41"));
        assert_eq!(of_headers(&h), Flavour::Docker);
        h.insert(SERVER, HeaderValue::from_static("Docker/20.10.24 (linux)"));
        assert_eq!(of_headers(&h), Flavour::Docker);
        let mut p = h.clone();
        p.insert("libpod-api-version", HeaderValue::from_static("4.3.1"));
        assert_eq!(of_headers(&p), Flavour::Podman);
        h.insert(SERVER, HeaderValue::from_static("Libpod/4.3.1 (linux)"));
        assert_eq!(of_headers(&h), Flavour::Podman);
    }
}
