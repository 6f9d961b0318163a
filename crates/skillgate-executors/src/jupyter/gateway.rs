//! The gateway's REST API: start, interrupt and delete a kernel, ask whether one exists.
//! Every call is bounded by a timeout ([`GATEWAY_CALL_TIMEOUT`] by default) and its
//! failure names the gateway's
//! URL (and authentication, when the gateway refused the token).
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use skillgate_core::ExecError;
use std::time::Duration;

/// How long one REST call (or opening the websocket) may take, by default, before the
/// run fails with an error naming the gateway.
pub const GATEWAY_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A gateway's base URL (`http://host:port[/base]`, no trailing slash) and token.
#[derive(Clone)]
pub(crate) struct Gateway {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
    token: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Gateway").field("base", &self.base).finish()
    }
}

/// The failure of one call, naming the gateway.
pub(crate) fn gateway_error(base: &str, what: &str, e: impl std::fmt::Display) -> ExecError {
    ExecError::Other(format!("Jupyter kernel gateway at {base}: {what}: {e}"))
}

impl Gateway {
    /// A client for the gateway at `url` (checked: `http://` only, a host, no query),
    /// each call bounded by `timeout`.
    pub(crate) fn new(
        url: &str,
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Gateway, ExecError> {
        let base = url.trim_end_matches('/').to_string();
        let uri: hyper::Uri = base
            .parse()
            .map_err(|e| ExecError::Other(format!("[executor] url `{url}` is not a URL: {e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(ExecError::Other(format!(
                    "[executor] url `{url}`: https is not supported by the Jupyter executor \
                     (reach a remote gateway through a local TLS tunnel on 127.0.0.1)"
                )));
            }
            _ => {
                return Err(ExecError::Other(format!(
                    "[executor] url `{url}` must start with http://"
                )));
            }
        }
        if uri.host().is_none_or(str::is_empty) || uri.query().is_some() {
            return Err(ExecError::Other(format!(
                "[executor] url `{url}` needs a host and no query"
            )));
        }
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(timeout));
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Gateway {
            client,
            base,
            token,
            timeout,
        })
    }

    /// The bound of each call.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The base URL, for messages.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// The websocket URL of a kernel's channels.
    pub(crate) fn channels_url(&self, kernel: &str) -> String {
        let rest = self.base.strip_prefix("http://").unwrap_or(&self.base);
        format!("ws://{rest}/api/kernels/{kernel}/channels")
    }

    /// The `Authorization` header's value, when a token is set.
    pub(crate) fn authorization(&self) -> Option<String> {
        self.token.as_ref().map(|t| format!("token {t}"))
    }

    /// One call: its status and body, or an error naming the gateway.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
        what: &str,
    ) -> Result<(StatusCode, Bytes), ExecError> {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(auth) = self.authorization() {
            req = req.header(hyper::header::AUTHORIZATION, auth);
        }
        let body = match body {
            Some(v) => {
                req = req.header(hyper::header::CONTENT_TYPE, "application/json");
                Bytes::from(v.to_string())
            }
            None => Bytes::new(),
        };
        let req = req
            .body(Full::new(body))
            .map_err(|e| gateway_error(&self.base, what, e))?;
        let exchange = async {
            let resp = self.client.request(req).await.map_err(|e| {
                gateway_error(
                    &self.base,
                    what,
                    format!(
                        "{} (is the gateway running? `scripts/services up jupyter` starts one)",
                        with_causes(&e)
                    ),
                )
            })?;
            let status = resp.status();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| gateway_error(&self.base, what, e))?
                .to_bytes();
            Ok::<_, ExecError>((status, body))
        };
        let (status, body) = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| {
                gateway_error(
                    &self.base,
                    what,
                    format!("no answer within {:?}", self.timeout),
                )
            })??;
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(gateway_error(
                &self.base,
                what,
                format!(
                    "authentication failed ({status}): check [executor] token (or the \
                     SKILLGATE_JUPYTER_TOKEN environment variable)"
                ),
            ));
        }
        Ok((status, body))
    }

    /// Starts a kernel of `name`; its id.
    pub(crate) async fn start_kernel(&self, name: &str) -> Result<String, ExecError> {
        let what = "starting a kernel";
        let (status, body) = self
            .call(
                Method::POST,
                "/api/kernels",
                Some(serde_json::json!({ "name": name })),
                what,
            )
            .await?;
        if !status.is_success() {
            return Err(gateway_error(
                &self.base,
                what,
                format!("{status}: {}", String::from_utf8_lossy(&body)),
            ));
        }
        let v: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| gateway_error(&self.base, what, format!("an answer not JSON: {e}")))?;
        v["id"]
            .as_str()
            .filter(|id| is_kernel_id(id))
            .map(str::to_owned)
            .ok_or_else(|| gateway_error(&self.base, what, format!("no kernel id in {v}")))
    }

    /// Interrupts the kernel (SIGINT to it: a `KeyboardInterrupt` in the skill).
    pub(crate) async fn interrupt(&self, kernel: &str) -> Result<(), ExecError> {
        let what = "interrupting the kernel";
        let path = format!("/api/kernels/{kernel}/interrupt");
        let (status, body) = self.call(Method::POST, &path, None, what).await?;
        expect_success(&self.base, what, status, &body)
    }

    /// Deletes the kernel (its process group is killed); one already gone is fine.
    pub(crate) async fn delete(&self, kernel: &str) -> Result<(), ExecError> {
        let what = "deleting the kernel";
        let path = format!("/api/kernels/{kernel}");
        let (status, body) = self.call(Method::DELETE, &path, None, what).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(());
        }
        expect_success(&self.base, what, status, &body)
    }

    /// Whether the kernel still exists on the gateway.
    pub(crate) async fn exists(&self, kernel: &str) -> Result<bool, ExecError> {
        let what = "asking for a kernel";
        let path = format!("/api/kernels/{kernel}");
        let (status, body) = self.call(Method::GET, &path, None, what).await?;
        match status {
            StatusCode::NOT_FOUND => Ok(false),
            s if s.is_success() => Ok(true),
            _ => Err(gateway_error(
                &self.base,
                what,
                format!("{status}: {}", String::from_utf8_lossy(&body)),
            )),
        }
    }
}

fn expect_success(
    base: &str,
    what: &str,
    status: StatusCode,
    body: &[u8],
) -> Result<(), ExecError> {
    if status.is_success() {
        Ok(())
    } else {
        Err(gateway_error(
            base,
            what,
            format!("{status}: {}", String::from_utf8_lossy(body)),
        ))
    }
}

/// An error and its causes, `: `-separated (hyper's own message names only the step).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// A kernel id goes into URL paths: letters, digits and hyphens only.
fn is_kernel_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_the_channels_url_derived() {
        let g = Gateway::new("http://127.0.0.1:8888/", None, GATEWAY_CALL_TIMEOUT).unwrap();
        assert_eq!(g.base(), "http://127.0.0.1:8888");
        assert_eq!(
            g.channels_url("abc-1"),
            "ws://127.0.0.1:8888/api/kernels/abc-1/channels"
        );
        let based = Gateway::new("http://gw.local:80/jkg", None, GATEWAY_CALL_TIMEOUT).unwrap();
        assert_eq!(
            based.channels_url("k"),
            "ws://gw.local:80/jkg/api/kernels/k/channels"
        );
        for bad in [
            "https://gw:8888",
            "ftp://gw",
            "not a url",
            "http://gw/?a=b",
            "/api",
        ] {
            assert!(
                Gateway::new(bad, None, GATEWAY_CALL_TIMEOUT).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_token_is_never_in_debug_output() {
        let g = Gateway::new(
            "http://127.0.0.1:1",
            Some("s3cret".into()),
            GATEWAY_CALL_TIMEOUT,
        )
        .unwrap();
        assert!(!format!("{g:?}").contains("s3cret"));
        assert_eq!(g.authorization().as_deref(), Some("token s3cret"));
    }

    #[test]
    fn only_plain_kernel_ids_go_into_paths() {
        assert!(is_kernel_id("42dcd976-0ad4-4364-9d8c-16547838e7f8"));
        for bad in ["", "../x", "a/b", "a?b", "a b"] {
            assert!(!is_kernel_id(bad), "{bad}");
        }
    }
}
