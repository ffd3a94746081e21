//! `--json-index`: index.yaml served as JSON, as ChartMuseum's `--json-index` writes it
//! (Go's `encoding/json` of its index: `apiVersion`, `generated`, `entries`, `serverInfo`),
//! which helm reads as it reads YAML, and faster for a large repository.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chartkit_index::ChartVersion;
use sha2::{Digest, Sha256};

use crate::api::AppState;

/// The index as ChartMuseum's JSON: entries by chart name in byte order (Go sorts a map's
/// keys so), each chart's versions newest first, `generated` to the second.
pub fn render(
    charts: &BTreeMap<String, Vec<ChartVersion>>,
    generated: &str,
    context_path: &str,
) -> String {
    let mut out = String::from(r#"{"apiVersion":"v1","generated":"#);
    out.push_str(&serde_json::Value::String(generated.to_owned()).to_string());
    out.push_str(r#","entries":{"#);
    for (i, (name, versions)) in charts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&go_json_string(name));
        out.push_str(":[");
        for (j, version) in versions.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&chartkit_index::entry_to_json(version));
        }
        out.push(']');
    }
    out.push_str(r#"},"serverInfo":{"#);
    if !context_path.is_empty() {
        out.push_str(r#""contextPath":"#);
        out.push_str(&go_json_string(context_path));
    }
    out.push_str("}}");
    out
}

/// A string as Go's `encoding/json` writes it (`<`, `>` and `&` escaped too).
fn go_json_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned())
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// Now, to the second, as ChartMuseum stamps a regenerated index.
pub fn generated_now() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs() + u64::from(since.subsec_millis() >= 500);
    let text = chartkit_repo::format_utc(secs, 0).as_str().to_owned();
    // Go's RFC 3339 with nanoseconds drops a zero fraction.
    match text.split_once('.') {
        Some((whole, _)) => format!("{whole}Z"),
        None => text,
    }
}

/// `GET /index.yaml` with `--json-index`: ChartMuseum's content type (still YAML's), a
/// strong ETag of the body for conditional requests, never cached without asking.
pub async fn respond(state: &AppState, headers: &HeaderMap) -> Response {
    let repo = Arc::clone(&state.repo);
    let context_path = state.policy.context_path.clone();
    let body = tokio::task::spawn_blocking(move || {
        render(&repo.charts(), &generated_now(), &context_path)
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    // `generated` changes every second; the ETag is of the entries, so an unchanged
    // repository still answers 304.
    let entries = body
        .split_once(r#","entries":"#)
        .map_or(body.as_str(), |(_, rest)| rest);
    let etag = format!("\"{}\"", hex::encode(Sha256::digest(entries.as_bytes())));
    let matched = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim().trim_start_matches("W/") == etag || tag.trim() == "*");
    let mut response = if matched {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = Response::new(Body::from(body));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-yaml"),
        );
        response
    };
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, value);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_chartmuseums_json() {
        let mut charts = BTreeMap::new();
        let mut version = ChartVersion::default();
        version.metadata.name = "a<b".to_owned();
        version.metadata.version = "1.0.0".to_owned();
        version.metadata.api_version = "v2".to_owned();
        version.urls = Some(vec!["charts/a-1.0.0.tgz".to_owned()]);
        version.digest = "abc".to_owned();
        charts.insert("a<b".to_owned(), vec![version.clone()]);
        let text = render(&charts, "2026-01-02T03:04:05Z", "");
        assert!(
            text.starts_with(
                r#"{"apiVersion":"v1","generated":"2026-01-02T03:04:05Z","entries":{"a\u003cb":[{"#
            ),
            "{text}"
        );
        assert!(text.ends_with(r#"]},"serverInfo":{}}"#), "{text}");
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["entries"]["a<b"][0]["version"], "1.0.0");
        let empty = render(&BTreeMap::new(), "2026-01-02T03:04:05Z", "/cm");
        assert_eq!(
            empty,
            r#"{"apiVersion":"v1","generated":"2026-01-02T03:04:05Z","entries":{},"serverInfo":{"contextPath":"/cm"}}"#
        );
    }

    #[test]
    fn generated_is_to_the_second() {
        let now = generated_now();
        assert_eq!(now.len(), "2026-01-02T03:04:05Z".len(), "{now}");
        assert!(now.ends_with('Z'));
    }
}
