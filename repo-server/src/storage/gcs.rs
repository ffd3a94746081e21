//! Google Cloud Storage through its JSON API, as ChartMuseum's `google` backend (Go's
//! `cloud.google.com/go/storage`) uses it: credentials from Application Default
//! Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's file, or the metadata server),
//! and `STORAGE_EMULATOR_HOST` for an emulator, reached without credentials.
//!
//! Not `object_store`'s GCS store, which speaks the XML API: the emulators a test can run
//! (fake-gcs-server, gcp-storage-emulator) and the Go client's emulator setting are JSON
//! API only. `object_store` still finds and refreshes the credentials.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use object_store::gcp::GcpCredentialProvider;
use reqwest::{Method, StatusCode, Url};

use super::{ObjectInfo, Storage, StorageError, WriteMode, bucket_and_prefix, opening_failed};

const DEFAULT_BASE_URL: &str = "https://storage.googleapis.com";
/// The Go client's emulator setting: `HOST:PORT` or a URL.
const EMULATOR_HOST: &str = "STORAGE_EMULATOR_HOST";

/// A bucket (and optional prefix) in Google Cloud Storage.
#[derive(Debug)]
pub struct GcsStorage {
    http: reqwest::Client,
    base: Url,
    bucket: String,
    /// Empty, or ending in `/`.
    prefix: String,
    /// `None` for an emulator.
    credentials: Option<GcpCredentialProvider>,
    url: String,
}

/// An object's metadata as the JSON API gives it.
#[derive(serde::Deserialize)]
struct Metadata {
    name: String,
    /// A decimal number in a string, as the API writes 64-bit integers.
    size: String,
    updated: Option<String>,
    generation: Option<String>,
    etag: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listing {
    #[serde(default)]
    items: Vec<Metadata>,
    next_page_token: Option<String>,
}

impl GcsStorage {
    /// Opens `gs://BUCKET[/PREFIX]`.
    pub fn open(url: &str) -> Result<GcsStorage, StorageError> {
        let (bucket, prefix) = bucket_and_prefix(url, &["gs"], "gs://BUCKET[/PREFIX]")?;
        let failed = |message: String| opening_failed(url, message);
        let emulator = std::env::var(EMULATOR_HOST).ok().filter(|v| !v.is_empty());
        let (base, credentials) = match emulator {
            Some(host) => {
                let base = if host.contains("://") {
                    host
                } else {
                    format!("http://{host}")
                };
                (base, None)
            }
            None => {
                // The builder reads GOOGLE_APPLICATION_CREDENTIALS and the other GOOGLE_*
                // variables, and falls back to gcloud's file and the metadata server.
                let store = object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_bucket_name(bucket)
                    .build()
                    .map_err(|e| failed(e.to_string()))?;
                (
                    DEFAULT_BASE_URL.to_owned(),
                    Some(store.credentials().clone()),
                )
            }
        };
        let base = Url::parse(base.trim_end_matches('/'))
            .map_err(|e| failed(format!("{EMULATOR_HOST} is not an address: {e}")))?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| failed(e.to_string()))?;
        Ok(GcsStorage {
            http,
            base,
            bucket: bucket.to_owned(),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
            credentials,
            url: url.trim_end_matches('/').to_owned(),
        })
    }

    fn failed(&self, action: &'static str, name: &str, error: impl ToString) -> StorageError {
        StorageError::Failed {
            action,
            name: name.to_owned(),
            storage: self.url.clone(),
            message: error.to_string(),
        }
    }

    /// `BASE/storage/v1/b/BUCKET/o[/NAME]` (or under `upload/`), every part escaped.
    fn endpoint(&self, upload: bool, name: Option<&str>) -> Url {
        let mut url = self.base.clone();
        {
            let mut path = url.path_segments_mut().expect("an http(s) URL has a path");
            path.pop_if_empty();
            if upload {
                path.push("upload");
            }
            path.extend(["storage", "v1", "b", &self.bucket, "o"]);
            if let Some(name) = name {
                path.push(&format!("{}{name}", self.prefix));
            }
        }
        url
    }

    async fn send(
        &self,
        action: &'static str,
        name: &str,
        method: Method,
        url: Url,
        body: Option<Bytes>,
    ) -> Result<reqwest::Response, StorageError> {
        let mut request = self.http.request(method, url);
        if let Some(credentials) = &self.credentials {
            let credential = credentials
                .get_credential()
                .await
                .map_err(|e| self.failed(action, name, e))?;
            if !credential.bearer.is_empty() {
                request = request.bearer_auth(&credential.bearer);
            }
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                .body(body);
        }
        request
            .send()
            .await
            .map_err(|e| self.failed(action, name, plain_error(&e)))
    }

    /// The error a response that is not a success carries: its status and the API's
    /// message.
    async fn refused(
        &self,
        action: &'static str,
        name: &str,
        response: reqwest::Response,
    ) -> StorageError {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && name.is_empty() {
            return self.failed(
                action,
                name,
                format!("there is no bucket `{}`", self.bucket),
            );
        }
        let body = response.text().await.unwrap_or_default();
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| body.trim().chars().take(200).collect());
        self.failed(action, name, format!("{status}: {message}"))
    }

    async fn read_json<T: serde::de::DeserializeOwned>(
        &self,
        action: &'static str,
        name: &str,
        response: reqwest::Response,
    ) -> Result<T, StorageError> {
        let body = response
            .bytes()
            .await
            .map_err(|e| self.failed(action, name, plain_error(&e)))?;
        serde_json::from_slice(&body)
            .map_err(|e| self.failed(action, name, format!("unexpected answer: {e}")))
    }

    fn info(&self, meta: &Metadata) -> Option<ObjectInfo> {
        let name = meta.name.strip_prefix(&self.prefix)?;
        let modified = meta
            .updated
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(SystemTime::from)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        Some(ObjectInfo {
            name: name.to_owned(),
            size: meta.size.parse().unwrap_or(0),
            modified,
            // A new generation with every write, where the emulator keeps one.
            tag: meta
                .generation
                .clone()
                .or_else(|| meta.etag.clone())
                .unwrap_or_else(|| format!("{}-{:?}", meta.size, meta.updated)),
        })
    }

    /// Every object directly under the prefix.
    async fn list_all(&self) -> Result<Vec<ObjectInfo>, StorageError> {
        let mut found = Vec::new();
        let mut page_token: Option<String> = None;
        loop {
            let mut url = self.endpoint(false, None);
            {
                let mut query = url.query_pairs_mut();
                query.append_pair("delimiter", "/");
                query.append_pair("prefix", &self.prefix);
                query.append_pair(
                    "fields",
                    "items(name,size,updated,generation,etag),nextPageToken",
                );
                if let Some(token) = &page_token {
                    query.append_pair("pageToken", token);
                }
            }
            let response = self.send("listing", "", Method::GET, url, None).await?;
            if !response.status().is_success() {
                return Err(self.refused("listing", "", response).await);
            }
            let listing: Listing = self.read_json("listing", "", response).await?;
            found.extend(listing.items.iter().filter_map(|meta| self.info(meta)));
            match listing.next_page_token.filter(|t| !t.is_empty()) {
                Some(token) => page_token = Some(token),
                None => return Ok(found),
            }
        }
    }
}

/// reqwest's error with its causes, in one line (its `Display` stops at the first).
fn plain_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[async_trait::async_trait]
impl Storage for GcsStorage {
    fn describe(&self) -> String {
        self.url.clone()
    }

    async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError> {
        let mut found = self.list_all().await?;
        found.retain(|info| !info.name.starts_with('.'));
        Ok(found)
    }

    async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError> {
        let mut url = self.endpoint(false, Some(name));
        url.query_pairs_mut().append_pair("alt", "media");
        let response = self.send("reading", name, Method::GET, url, None).await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => response
                .bytes()
                .await
                .map(Some)
                .map_err(|e| self.failed("reading", name, plain_error(&e))),
            _ => Err(self.refused("reading", name, response).await),
        }
    }

    async fn put(
        &self,
        name: &str,
        data: Bytes,
        mode: WriteMode,
    ) -> Result<ObjectInfo, StorageError> {
        let mut url = self.endpoint(true, None);
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("uploadType", "media");
            query.append_pair("name", &format!("{}{name}", self.prefix));
            // Generation 0 matches only an object that does not exist: an exclusive
            // create, decided by the service, so two replicas cannot both win.
            if mode == WriteMode::Create {
                query.append_pair("ifGenerationMatch", "0");
            }
        }
        let response = self
            .send("writing", name, Method::POST, url, Some(data))
            .await?;
        match response.status() {
            StatusCode::PRECONDITION_FAILED => Err(StorageError::AlreadyExists {
                name: name.to_owned(),
            }),
            status if status.is_success() => {
                let meta: Metadata = self.read_json("writing", name, response).await?;
                self.info(&meta)
                    .ok_or_else(|| self.failed("writing", name, "the service named another object"))
            }
            _ => Err(self.refused("writing", name, response).await),
        }
    }

    async fn delete(&self, name: &str) -> Result<bool, StorageError> {
        let url = self.endpoint(false, Some(name));
        let response = self
            .send("deleting", name, Method::DELETE, url, None)
            .await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(false),
            status if status.is_success() => Ok(true),
            _ => Err(self.refused("deleting", name, response).await),
        }
    }

    async fn list_hidden(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        let mut found = self.list_all().await?;
        found.retain(|info| info.name.starts_with('.') && info.name.starts_with(prefix));
        Ok(found)
    }

    async fn check(&self) -> Result<(), StorageError> {
        // The metadata of a name nobody writes: "not found" is an answer, so the bucket is
        // reachable and the credentials work.
        let url = self.endpoint(false, Some(".chartkit-ready"));
        let response = self.send("checking", "", Method::GET, url, None).await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(()),
            status if status.is_success() => Ok(()),
            _ => Err(self.refused("checking", "", response).await),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(prefix: &str) -> GcsStorage {
        GcsStorage {
            http: reqwest::Client::new(),
            base: Url::parse("http://127.0.0.1:4443").unwrap(),
            bucket: "charts".to_owned(),
            prefix: prefix.to_owned(),
            credentials: None,
            url: "gs://charts".to_owned(),
        }
    }

    #[test]
    fn object_names_are_one_escaped_path_segment_after_the_prefix() {
        let gcs = storage("team/a/");
        assert_eq!(
            gcs.endpoint(false, Some("web-1.0.0+build.tgz")).as_str(),
            "http://127.0.0.1:4443/storage/v1/b/charts/o/team%2Fa%2Fweb-1.0.0+build.tgz"
        );
        assert_eq!(
            gcs.endpoint(true, None).as_str(),
            "http://127.0.0.1:4443/upload/storage/v1/b/charts/o"
        );
    }

    #[test]
    fn listed_objects_lose_the_prefix_and_keep_their_generation() {
        let gcs = storage("p/");
        let info = gcs
            .info(&Metadata {
                name: "p/web-1.0.0.tgz".to_owned(),
                size: "42".to_owned(),
                updated: Some("2026-11-28T11:00:00.5Z".to_owned()),
                generation: Some("17".to_owned()),
                etag: None,
            })
            .unwrap();
        assert_eq!(info.name, "web-1.0.0.tgz");
        assert_eq!(info.size, 42);
        assert_eq!(info.tag, "17");
        assert_eq!(
            info.modified
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
            1_795_863_600_500
        );
    }
}
