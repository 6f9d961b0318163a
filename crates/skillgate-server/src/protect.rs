//! Protection against bad or too much input: body and JSON depth limits, JSON bodies read
//! with errors that name the problem (never echoing unbounded input).
use crate::error::{ApiError, elide};
use axum::body::{Body, Bytes};
use http::{HeaderMap, StatusCode, header};
use std::time::Duration;

/// The server's protection settings.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest JSON request body, in bytes.
    pub json_body_bytes: usize,
    /// Largest upload (a `.tar.gz` skill folder), in bytes.
    pub upload_bytes: usize,
    /// Deepest nesting of a JSON body.
    pub json_depth: usize,
    /// Longest a request may take, end to end.
    pub request_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            json_body_bytes: 16 << 20,
            upload_bytes: skillgate::folder::MAX_TOTAL_BYTES as usize,
            json_depth: 64,
            request_timeout: Duration::from_secs(120),
        }
    }
}

/// Reads a body of at most `limit` bytes: 413 naming the limit when it is larger.
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large =
            std::iter::successors(Some(&e as &(dyn std::error::Error + 'static)), |e| {
                e.source()
            })
            .any(|e| e.is::<http_body_util::LengthLimitError>());
        if too_large {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the request body is over the {limit} byte limit"),
            )
        } else {
            ApiError::bad_request("bad_body", format!("cannot read the request body: {e}"))
        }
    })
}

/// Refuses a body whose `Content-Type` is not `want` (or one of its `+json`-style
/// parameters): 415 naming both.
pub fn require_content_type(headers: &HeaderMap, want: &[&str]) -> Result<(), ApiError> {
    let got = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = got
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if want.contains(&essence.as_str()) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "wrong_content_type",
            format!(
                "Content-Type must be {}, not `{}`",
                want.join(" or "),
                elide(got)
            ),
        ))
    }
}

/// The nesting depth of `v` (a scalar is 0), computed without recursion.
pub fn depth(v: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            serde_json::Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            serde_json::Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Reads a JSON body into `T`: 415 for another content type, 413 over the size limit,
/// 400 for malformed JSON, nesting deeper than the limit, or a value of the wrong shape.
pub async fn json_body<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
    limits: &Limits,
) -> Result<T, ApiError> {
    require_content_type(headers, &["application/json"])?;
    let bytes = read_body(body, limits.json_body_bytes).await?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    // serde_json refuses nesting deeper than 128 by itself; the depth limit is checked
    // below, on a value that parsed.
    let value: serde_json::Value = serde::Deserialize::deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| {
            if e.to_string().contains("recursion limit") {
                too_deep(limits.json_depth)
            } else {
                ApiError::bad_request(
                    "bad_json",
                    format!("the body is not valid JSON: {}", elide(&e.to_string())),
                )
            }
        })?;
    if depth(&value) > limits.json_depth {
        return Err(too_deep(limits.json_depth));
    }
    serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request(
            "bad_request_body",
            format!(
                "the body does not have the expected fields: {}",
                elide(&e.to_string())
            ),
        )
    })
}

fn too_deep(limit: usize) -> ApiError {
    ApiError::bad_request(
        "too_deep",
        format!("the JSON body is nested deeper than {limit} levels"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nesting() {
        assert_eq!(depth(&serde_json::json!(1)), 0);
        assert_eq!(depth(&serde_json::json!({"a": [1, {"b": []}]})), 3);
    }
}
