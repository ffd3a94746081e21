//! Errors as HTTP responses: a status and a JSON body `{"error": "..."}`, the shape
//! ChartMuseum clients (helm-push, CI scripts) already parse.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds for a `Retry-After` header (with 503).
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn retry_after(mut self, seconds: u32) -> ApiError {
        self.retry_after = Some(seconds);
        self
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl From<crate::storage::StorageError> for ApiError {
    fn from(error: crate::storage::StorageError) -> ApiError {
        use crate::storage::StorageError;
        match &error {
            StorageError::AlreadyExists { name } => ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "{name} already exists; the server refuses overwrites unless started with --allow-overwrite, or the upload asks for ?force (unless --disable-force-overwrite)"
                ),
            ),
            StorageError::Failed { action, name, .. } => {
                // The details name directories and endpoints, which are for the log, not
                // for clients; the reference ties the two together.
                let reference = error_reference();
                tracing::error!(%error, %reference, "storage failure");
                let name = if name.is_empty() {
                    String::new()
                } else {
                    format!(" `{name}`")
                };
                ApiError::internal(format!(
                    "storage failed while {action}{name}; the server log has the details (reference {reference})"
                ))
            }
        }
    }
}

/// A short reference for an error, unique enough to find it in the log.
fn error_reference() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "{:x}-{}",
        started & 0xffff_ffff,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A JSON response with the given status.
pub fn json(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message }).to_string();
        let mut response = json(self.status, body);
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
