//! Errors as HTTP responses: a status and a JSON body `{"error": "..."}`, the shape
//! ChartMuseum clients (helm-push, CI scripts) already parse.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
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
        match error {
            crate::storage::StorageError::AlreadyExists { name } => ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "{name} already exists; the server refuses overwrites unless started with --allow-overwrite"
                ),
            ),
            other => {
                tracing::error!(error = %other, "storage failure");
                ApiError::internal(other.to_string())
            }
        }
    }
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
        json(self.status, body)
    }
}
