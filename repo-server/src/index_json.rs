//! `--json-index`: index.yaml served as JSON, as ChartMuseum's `--json-index` writes it
//! (Go's `encoding/json` of its index: `apiVersion`, `generated`, `entries`, `serverInfo`),
//! which helm reads as it reads YAML, and faster for a large repository.
//!
//! The JSON and its gzip form are made once per change of the repository (as ChartMuseum
//! regenerates its index, `generated` is when that happened) and kept by the
//! [`Repository`](crate::repository::Repository) beside its YAML, so a request sends
//! bytes already made.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Arc;

use axum::body::Body;
use axum::http::HeaderMap;
use axum::response::Response;
use bytes::Bytes;
use chartkit_index::ChartVersion;
use sha2::{Digest, Sha256};

use crate::api::{AppState, index_response};
use crate::repository::Repository;

/// The JSON index of one state of the repository, in both encodings, with strong ETags.
#[derive(Debug)]
pub struct JsonIndex {
    /// The `serverInfo.contextPath` it was made with.
    pub context_path: String,
    text: Bytes,
    gzip: Bytes,
    /// Of the entries only: `generated` changes when the index is made again, and an
    /// unchanged repository (after a restart, or a change undone) still answers 304.
    pub etag: String,
}

impl JsonIndex {
    pub fn new(
        charts: &BTreeMap<String, Vec<ChartVersion>>,
        generated: &str,
        context_path: &str,
    ) -> JsonIndex {
        let text = render(charts, generated, context_path);
        let entries = text
            .split_once(r#","entries":"#)
            .map_or(text.as_str(), |(_, rest)| rest);
        let etag = format!("\"{}\"", hex::encode(Sha256::digest(entries.as_bytes())));
        let mut gzip =
            flate2::write::GzEncoder::new(Vec::with_capacity(text.len() / 4), Default::default());
        gzip.write_all(text.as_bytes())
            .and_then(|()| gzip.try_finish())
            .expect("compressing into memory cannot fail");
        JsonIndex {
            context_path: context_path.to_owned(),
            gzip: Bytes::from(gzip.get_ref().clone()),
            text: Bytes::from(text),
            etag,
        }
    }

    /// The ETag of the gzip form (distinct, as a strong validator must be per encoding).
    pub fn gzip_etag(&self) -> String {
        format!("{}-gzip\"", self.etag.trim_end_matches('"'))
    }

    pub fn text(&self) -> Bytes {
        self.text.clone()
    }

    pub fn gzip(&self) -> Bytes {
        self.gzip.clone()
    }
}

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

/// `GET /index.yaml` with `--json-index`: the kept bytes, answered as the YAML is.
pub async fn respond(state: &AppState, headers: &HeaderMap) -> Response {
    let index = current(&state.repo, &state.policy.context_path).await;
    index_response(headers, &index.etag, &index.gzip_etag(), |gzip| {
        Body::from(if gzip { index.gzip() } else { index.text() })
    })
}

/// The repository's JSON index, made now (off the async threads) if it changed since.
async fn current(repo: &Arc<Repository>, context_path: &str) -> Arc<JsonIndex> {
    if let Some(index) = repo.made_json_index(context_path) {
        return index;
    }
    let repo = Arc::clone(repo);
    let context_path = context_path.to_owned();
    tokio::task::spawn_blocking(move || repo.json_index(&context_path))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use axum::http::{Request, StatusCode, header};
    use tower::ServiceExt as _;

    use super::*;
    use crate::api::{Policy, router};
    use crate::metrics::Metrics;
    use crate::repository::tests::package;
    use crate::repository::{PackageRules, UrlStyle};
    use crate::storage::LocalStorage;

    async fn get(app: &axum::Router, gzip: bool) -> (HeaderMap, Bytes) {
        let mut request = Request::get("/index.yaml");
        if gzip {
            request = request.header(header::ACCEPT_ENCODING, "gzip");
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (headers, body)
    }

    fn gunzip(bytes: &[u8]) -> Bytes {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut text)
            .unwrap();
        Bytes::from(text)
    }

    #[tokio::test]
    async fn the_index_is_made_once_per_change_and_served_as_made() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Arc::new(Metrics::default());
        let repo = Arc::new(Repository::new(
            Arc::new(LocalStorage::open(dir.path()).unwrap()),
            UrlStyle::default(),
            PackageRules::default(),
            Arc::clone(&metrics),
        ));
        let app = router(AppState {
            repo: Arc::clone(&repo),
            policy: Arc::new(Policy {
                json_index: true,
                ..Policy::for_tests()
            }),
            metrics,
            registry: Arc::new(crate::oci::Registry::for_tests()),
        });
        let upload = |name: &str| {
            let request = Request::post("/api/charts")
                .body(Body::from(package(name, "1.0.0")))
                .unwrap();
            let app = app.clone();
            async move {
                let response = app.oneshot(request).await.unwrap();
                assert_eq!(response.status(), StatusCode::CREATED);
            }
        };
        upload("first").await;
        let (headers, first) = get(&app, false).await;
        assert!(first.starts_with(br#"{"apiVersion":"v1","generated":"#));
        // Made once: a request a second later (when `generated` would read differently)
        // gets the same bytes, and the same made index.
        let made = repo
            .made_json_index("")
            .expect("kept after the first request");
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let (_, again) = get(&app, false).await;
        assert_eq!(again, first);
        assert!(Arc::ptr_eq(
            &made,
            &repo.made_json_index("").expect("still kept")
        ));
        // The gzip form is of the same bytes, with its own ETag.
        let (gzip_headers, gzipped) = get(&app, true).await;
        assert_eq!(gzip_headers[header::CONTENT_ENCODING], "gzip");
        assert_eq!(gunzip(&gzipped), first);
        assert_ne!(gzip_headers[header::ETAG], headers[header::ETAG]);
        assert_eq!(get(&app, true).await.1, gzipped);

        // An upload changes them, in both encodings.
        upload("second").await;
        assert!(repo.made_json_index("").is_none(), "dropped on the change");
        let (changed_headers, changed) = get(&app, false).await;
        assert_ne!(changed, first);
        assert_ne!(changed_headers[header::ETAG], headers[header::ETAG]);
        let parsed: serde_json::Value = serde_json::from_slice(&changed).unwrap();
        assert_eq!(parsed["entries"]["second"][0]["version"], "1.0.0");
        assert_eq!(gunzip(&get(&app, true).await.1), changed);
    }

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
