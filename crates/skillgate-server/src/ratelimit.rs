//! The per-caller rate limit: a token bucket per API key, `per_minute` requests a minute
//! with bursts of as many. Over it, 429 with `Retry-After`. (The monitor's throttle, per
//! agent and shared by every process of a state directory, still applies inside the
//! pipeline.)
use crate::error::ApiError;
use crate::{Principal, ServerState};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Requests a key may make a minute by default.
pub const DEFAULT_PER_MINUTE: u32 = 600;

/// Token buckets by key id.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    /// `per_minute` requests a minute per key (0: none at all).
    pub fn new(per_minute: u32) -> RateLimiter {
        RateLimiter {
            per_minute,
            buckets: Mutex::default(),
        }
    }

    /// Takes a token of `key`'s bucket at `now`, or says how long until one is there.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let cap = f64::from(self.per_minute);
        if cap == 0.0 {
            return Err(Duration::from_secs(60));
        }
        let per_sec = cap / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let (tokens, last) = buckets.entry(key.to_string()).or_insert((cap, now));
        *tokens = (*tokens + now.saturating_duration_since(*last).as_secs_f64() * per_sec).min(cap);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / per_sec))
        }
    }
}

/// Refuses a caller over its rate (runs behind the authentication).
pub async fn limit(State(state): State<Arc<ServerState>>, req: Request, next: Next) -> Response {
    let Some(key) = req
        .extensions()
        .get::<Principal>()
        .map(|p| p.key_id.clone())
    else {
        return next.run(req).await;
    };
    match state.rate.take(&key, Instant::now()) {
        Ok(()) => next.run(req).await,
        Err(wait) => {
            let mut resp = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "key {key} is over its rate of {} requests a minute",
                    state.rate.per_minute
                ),
            )
            .into_response();
            resp.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from(wait.as_secs().max(1)),
            );
            resp
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let r = RateLimiter::new(60);
        let t0 = Instant::now();
        for _ in 0..60 {
            r.take("k", t0).unwrap();
        }
        let wait = r.take("k", t0).unwrap_err();
        assert_eq!(wait, Duration::from_secs(1));
        // Other keys have their own bucket; a second later one token is back.
        r.take("other", t0).unwrap();
        r.take("k", t0 + Duration::from_secs(1)).unwrap();
        assert!(r.take("k", t0 + Duration::from_secs(1)).is_err());
    }
}
