//! API errors as the API server reports them: a `Status` object with the HTTP code, a
//! machine-readable reason and the message kubectl prints after "Error from server".

use serde_json::{Value, json};

/// A failed request, rendered as a `metav1.Status`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> ApiError {
        self.details = Some(details);
        self
    }

    /// `pods "web" not found`.
    pub fn not_found(resource: &str, group: &str, name: &str) -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(resource, group)),
        )
        .with_details(details(name, group, resource))
    }

    /// A path or resource type that does not exist at all.
    pub fn no_route() -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn already_exists(resource: &str, group: &str, name: &str) -> ApiError {
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(resource, group)),
        )
        .with_details(details(name, group, resource))
    }

    /// A write based on a stale resourceVersion.
    pub fn conflict(resource: &str, group: &str, name: &str) -> ApiError {
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                qualified(resource, group)
            ),
        )
        .with_details(details(name, group, resource))
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    pub fn method_not_allowed(message: impl Into<String>) -> ApiError {
        ApiError::new(405, "MethodNotAllowed", message).with_details(json!({}))
    }

    /// A patch whose Content-Type is none of the patch types (built-in resources take
    /// strategic merge patches too). The argument is what the client sent, which the API
    /// server does not repeat.
    pub fn unsupported_media_type(_content_type: &str) -> ApiError {
        ApiError::unsupported_patch_type(false)
    }

    /// A patch type the resource does not take: custom resources take no strategic
    /// merge patches.
    pub fn unsupported_patch_type(custom: bool) -> ApiError {
        let accepted: &[&str] = if custom {
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml",
            ]
        } else {
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
            ]
        };
        ApiError::unknown_format(accepted)
    }

    /// A create or update body in a media type the server cannot decode.
    pub fn unsupported_body_type(custom: bool) -> ApiError {
        let accepted: &[&str] = if custom {
            &["application/json", "application/yaml"]
        } else {
            &[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ]
        };
        ApiError::unknown_format(accepted)
    }

    fn unknown_format(accepted: &[&str]) -> ApiError {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// A request body over the server's limit.
    pub fn too_large(limit: usize) -> ApiError {
        ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    pub fn forbidden(resource: &str, group: &str, name: &str, why: &str) -> ApiError {
        let what = if name.is_empty() {
            qualified(resource, group)
        } else {
            format!("{} \"{name}\"", qualified(resource, group))
        };
        ApiError::new(403, "Forbidden", format!("{what} is forbidden: {why}"))
            .with_details(details(name, group, resource))
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "InternalError", message)
    }

    /// A watch or list from a resourceVersion the server no longer has.
    pub fn gone(message: impl Into<String>) -> ApiError {
        ApiError::new(410, "Expired", message)
    }

    pub fn unauthorized() -> ApiError {
        ApiError::new(401, "Unauthorized", "Unauthorized")
    }

    /// 422 with each cause (field path and message), worded as the API server words it:
    /// `Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: ..., ...]`.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> ApiError {
        let kind_q = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        // Identical messages are listed once, as the API server's aggregate lists them.
        let mut listed: Vec<String> = Vec::new();
        for c in &causes {
            let text = c.to_string();
            if !listed.contains(&text) {
                listed.push(text);
            }
        }
        let joined = if listed.len() == 1 {
            listed[0].clone()
        } else {
            format!("[{}]", listed.join(", "))
        };
        ApiError::new(
            422,
            "Invalid",
            format!("{kind_q} \"{name}\" is invalid: {joined}"),
        )
        .with_details(json!({
            "name": name,
            "group": group,
            "kind": kind,
            "causes": causes.iter().map(|c| json!({
                "reason": c.reason,
                "message": c.message(),
                "field": c.field,
            })).collect::<Vec<_>>(),
        }))
    }

    /// An error the API server has no status for (reason unset), which it answers with 500.
    pub fn unknown(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "", message)
    }

    /// Why a resourceVersion string is not one, in the storage layer's words (a field
    /// error around Go's `strconv.ParseUint` error).
    pub fn resource_version_text(rv: &str) -> String {
        let why = if !rv.is_empty() && rv.bytes().all(|b| b.is_ascii_digit()) {
            "value out of range"
        } else {
            "invalid syntax"
        };
        format!("resourceVersion: Invalid value: {rv:?}: strconv.ParseUint: parsing {rv:?}: {why}")
    }

    /// The `Status` object sent to the client.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Some(m) = status.as_object_mut()
        {
            m.shift_remove("reason");
        }
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

/// One field error of a 422.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`,
    /// `FieldValueDuplicate`, `FieldValueForbidden`, `FieldValueTypeInvalid`.
    pub reason: &'static str,
    pub field: String,
    /// The value, as the API server prints it (quoted for strings), for Invalid.
    pub value: Option<String>,
    pub detail: String,
}

impl Cause {
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Cause {
        Cause {
            reason: "FieldValueRequired",
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    pub fn invalid(field: impl Into<String>, value: &Value, detail: impl Into<String>) -> Cause {
        Cause {
            reason: "FieldValueInvalid",
            field: field.into(),
            value: Some(go_value(value)),
            detail: detail.into(),
        }
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Cause {
        Cause {
            reason: "FieldValueForbidden",
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    pub fn not_supported(field: impl Into<String>, value: &Value, supported: &[&str]) -> Cause {
        let quoted: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
        Cause {
            reason: "FieldValueNotSupported",
            field: field.into(),
            value: Some(go_value(value)),
            detail: format!("supported values: {}", quoted.join(", ")),
        }
    }

    /// The message part of the cause (`Invalid value: "x": detail`).
    pub fn message(&self) -> String {
        match (self.reason, &self.value) {
            ("FieldValueRequired", _) => {
                if self.detail.is_empty() {
                    "Required value".to_string()
                } else {
                    format!("Required value: {}", self.detail)
                }
            }
            ("FieldValueForbidden", _) => format!("Forbidden: {}", self.detail),
            ("FieldValueNotSupported", Some(v)) => {
                format!("Unsupported value: {v}: {}", self.detail)
            }
            ("FieldValueDuplicate", Some(v)) => format!("Duplicate value: {v}"),
            (_, Some(v)) => {
                if self.detail.is_empty() {
                    format!("Invalid value: {v}")
                } else {
                    format!("Invalid value: {v}: {}", self.detail)
                }
            }
            _ => self.detail.clone(),
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message())
    }
}

/// A value as field errors print it (Go's `%#v` for strings, `%v` otherwise).
fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".to_string(),
        other => other.to_string(),
    }
}

fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(name: &str, group: &str, resource: &str) -> Value {
    let mut d = json!({ "name": name, "kind": resource });
    if !group.is_empty() {
        d["group"] = json!(group);
    }
    d
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_worded_as_the_api_server_words_them() {
        assert_eq!(
            ApiError::not_found("deployments", "apps", "web").message,
            "deployments.apps \"web\" not found"
        );
        let e = ApiError::invalid(
            "ConfigMap",
            "",
            "Bad",
            vec![Cause::invalid(
                "metadata.name",
                &json!("Bad"),
                "a lowercase RFC 1123 subdomain",
            )],
        );
        assert_eq!(
            e.message,
            "ConfigMap \"Bad\" is invalid: metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain"
        );
        assert_eq!(e.to_status()["code"], 422);
    }
}
