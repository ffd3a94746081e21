//! Errors as the distribution spec writes them: a status and
//! `{"errors":[{"code":"…","message":"…","detail":…}]}`, the body every OCI client parses.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// One of the spec's error codes, with its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    BlobUnknown,
    BlobUploadInvalid,
    BlobUploadUnknown,
    DigestInvalid,
    ManifestBlobUnknown,
    ManifestInvalid,
    ManifestUnknown,
    NameUnknown,
    SizeInvalid,
    Unauthorized,
    Denied,
    Unsupported,
    TooManyRequests,
    /// Not the spec's: what distribution answers for a failure of its own.
    Unknown,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::BlobUnknown => "BLOB_UNKNOWN",
            Code::BlobUploadInvalid => "BLOB_UPLOAD_INVALID",
            Code::BlobUploadUnknown => "BLOB_UPLOAD_UNKNOWN",
            Code::DigestInvalid => "DIGEST_INVALID",
            Code::ManifestBlobUnknown => "MANIFEST_BLOB_UNKNOWN",
            Code::ManifestInvalid => "MANIFEST_INVALID",
            Code::ManifestUnknown => "MANIFEST_UNKNOWN",
            Code::NameUnknown => "NAME_UNKNOWN",
            Code::SizeInvalid => "SIZE_INVALID",
            Code::Unauthorized => "UNAUTHORIZED",
            Code::Denied => "DENIED",
            Code::Unsupported => "UNSUPPORTED",
            Code::TooManyRequests => "TOOMANYREQUESTS",
            Code::Unknown => "UNKNOWN",
        }
    }

    /// The status the spec pairs with the code.
    pub fn status(self) -> StatusCode {
        match self {
            Code::BlobUnknown
            | Code::BlobUploadUnknown
            | Code::ManifestUnknown
            | Code::NameUnknown => StatusCode::NOT_FOUND,
            Code::BlobUploadInvalid
            | Code::DigestInvalid
            | Code::ManifestBlobUnknown
            | Code::ManifestInvalid
            | Code::SizeInvalid => StatusCode::BAD_REQUEST,
            Code::Unauthorized => StatusCode::UNAUTHORIZED,
            Code::Denied => StatusCode::FORBIDDEN,
            Code::Unsupported => StatusCode::METHOD_NOT_ALLOWED,
            Code::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            Code::Unknown => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// An error of the `/v2/` API.
#[derive(Debug)]
pub struct OciError {
    pub code: Code,
    pub status: StatusCode,
    pub message: String,
    /// A `Retry-After` in seconds.
    pub retry_after: Option<u32>,
}

impl OciError {
    pub fn new(code: Code, message: impl Into<String>) -> OciError {
        OciError {
            code,
            status: code.status(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// The same code with another status (the spec gives some codes several).
    pub fn with_status(mut self, status: StatusCode) -> OciError {
        self.status = status;
        self
    }
}

/// The repository face's errors (chart checks, storage) told in the spec's words, keeping
/// their status and message.
impl From<ApiError> for OciError {
    fn from(error: ApiError) -> OciError {
        let code = match error.status {
            StatusCode::BAD_REQUEST => Code::ManifestInvalid,
            StatusCode::PAYLOAD_TOO_LARGE => Code::SizeInvalid,
            StatusCode::UNAUTHORIZED => Code::Unauthorized,
            StatusCode::FORBIDDEN | StatusCode::CONFLICT => Code::Denied,
            StatusCode::NOT_FOUND => Code::BlobUnknown,
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS => {
                Code::TooManyRequests
            }
            _ => Code::Unknown,
        };
        OciError {
            code,
            status: error.status,
            message: error.message,
            retry_after: error.retry_after,
        }
    }
}

impl From<crate::storage::StorageError> for OciError {
    fn from(error: crate::storage::StorageError) -> OciError {
        ApiError::from(error).into()
    }
}

impl IntoResponse for OciError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "errors": [{ "code": self.code.as_str(), "message": self.message, "detail": null }]
        })
        .to_string();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        headers.insert(
            "docker-distribution-api-version",
            HeaderValue::from_static("registry/2.0"),
        );
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
