//! The JSON error every endpoint answers with: `{"error": {"code": "...", "message": "..."}}`.
use axum::Json;
use axum::response::{IntoResponse, Response};
use http::StatusCode;

/// Most characters of a client's value an error message repeats.
pub const MAX_ECHO_CHARS: usize = 200;

/// `value` cut to [`MAX_ECHO_CHARS`] characters, with what was left out said, so no
/// error repeats unbounded input.
///
/// ```
/// use skillgate_server::error::elide;
/// assert_eq!(elide("short"), "short");
/// assert!(elide(&"x".repeat(10_000)).len() < 300);
/// ```
pub fn elide(value: &str) -> String {
    skillgate::input::elide(value, MAX_ECHO_CHARS)
}

/// An error answer: a status, a stable code and a message naming the problem.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A short, stable code (`unauthorized`, `bad_json`, `unknown_skill`, ...).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

impl ApiError {
    /// An error of `status` with `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400 Bad Request.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 403 Forbidden.
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404 Not Found.
    pub fn not_found(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, code, message)
    }

    /// 500: the server's own failure (a store that cannot answer), never a client's.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.code, self.message)
    }
}

impl From<skillgate_store::StoreError> for ApiError {
    fn from(e: skillgate_store::StoreError) -> Self {
        ApiError::internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}
