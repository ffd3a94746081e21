//! The OCI Distribution API (v1.1) under `/v2/`, over the repository's own storage: charts
//! are `NAMESPACE/NAME` (`charts/NAME` by default), their tags the versions in the index.
//!
//! - [`content`]: where blobs and manifests live, and how a chart uploaded another way
//!   gets Helm's manifest.
//! - [`uploads`]: blob upload sessions.
//! - [`error`]: the spec's error bodies.
//!
//! A manifest pushed here must be a Helm chart's: its chart layer is judged like a
//! ChartMuseum upload and stored as `NAME-VERSION.tgz` through the same code, so it is in
//! index.yaml at once. Deleting its manifest deletes the chart version, as
//! `DELETE /api/charts/NAME/VERSION` does (unless `--disable-delete`: 405 UNSUPPORTED).

pub(crate) mod content;
mod delete;
pub mod error;
pub mod gc;
pub mod token;
pub mod uploads;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use chartkit_oci::manifest::{self, ChartManifest};

use crate::api::AppState;
use crate::upload_body;
use error::{Code, OciError};
pub use uploads::Uploads;

/// Manifests larger than this are refused (distribution's limit too).
pub const MAX_MANIFEST_SIZE: usize = 4 << 20;

/// The registry face's settings and state.
pub struct Registry {
    /// The first path component of every chart's repository name.
    pub namespace: String,
    pub uploads: Uploads,
    /// `--oci-artifacts`: keep manifests other than Helm charts' (signatures, SBOMs, any
    /// OCI artifact) beside the charts, under tags of their own.
    pub artifacts: bool,
    /// When garbage collection runs and what it spares.
    pub gc: gc::GcSettings,
    /// Blobs clients asked for lately, which garbage collection spares.
    pub recent: gc::RecentBlobs,
    /// The token service's key, when credentials are configured.
    pub tokens: Option<token::Tokens>,
    /// Whether the server speaks HTTPS (for the token service's address).
    pub tls: bool,
}

#[cfg(test)]
impl Registry {
    /// What unit tests of other parts of the server start from: the `charts` namespace,
    /// Helm charts only, no credentials, plain HTTP.
    pub(crate) fn for_tests() -> Registry {
        Registry {
            namespace: "charts".to_owned(),
            uploads: Uploads::new(8, std::time::Duration::from_secs(60)).unwrap(),
            artifacts: false,
            gc: gc::GcSettings::default(),
            recent: gc::RecentBlobs::default(),
            tokens: None,
            tls: false,
        }
    }
}

fn api_version(response: &mut Response) {
    response.headers_mut().insert(
        "docker-distribution-api-version",
        HeaderValue::from_static("registry/2.0"),
    );
}

/// `GET /v2/`: the version check.
pub async fn base() -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, "application/json")],
        "{}".to_owned(),
    )
        .into_response();
    api_version(&mut response);
    response
}

/// Every other `/v2/…` request.
pub async fn dispatch(State(state): State<AppState>, request: Request) -> Response {
    let mut response = match route(&state, request).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    };
    api_version(&mut response);
    response
}

/// What a `/v2/` path asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    Tags,
    Manifest(&'a str),
    Blob(&'a str),
    Uploads,
    Upload(&'a str),
    Referrers(&'a str),
}

/// Splits `NAME/KIND/…` at the last marker, as names may have several components.
pub(crate) fn parse_path(rest: &str) -> Option<(&str, Target<'_>)> {
    if let Some(name) = rest.strip_suffix("/tags/list") {
        return Some((name, Target::Tags));
    }
    if let Some(name) = rest
        .strip_suffix("/blobs/uploads/")
        .or_else(|| rest.strip_suffix("/blobs/uploads"))
    {
        return Some((name, Target::Uploads));
    }
    if let Some((name, id)) = rest.rsplit_once("/blobs/uploads/") {
        return Some((name, Target::Upload(id)));
    }
    if let Some((name, digest)) = rest.rsplit_once("/referrers/") {
        return Some((name, Target::Referrers(digest)));
    }
    if let Some((name, reference)) = rest.rsplit_once("/manifests/") {
        return Some((name, Target::Manifest(reference)));
    }
    if let Some((name, digest)) = rest.rsplit_once("/blobs/") {
        return Some((name, Target::Blob(digest)));
    }
    None
}

/// What precedes a chart's name in its OCI repository name: `--oci-namespace`, or on a
/// multi-tenant server the repository's path (`ORG/REPO`).
pub(crate) fn namespace(state: &AppState) -> &str {
    state.repo.name().unwrap_or(&state.registry.namespace)
}

/// The chart a repository name means: `NAMESPACE/NAME`, with a name the repository could
/// hold; anything else is unknown.
fn chart_of<'a>(state: &AppState, repository: &'a str) -> Result<&'a str, OciError> {
    let unknown = || {
        OciError::new(
            Code::NameUnknown,
            format!(
                "repository {repository} is not known: charts are under {}/NAME",
                namespace(state)
            ),
        )
    };
    // A chart's name has no `/`, so the namespace is everything before the last one.
    let (given, chart) = repository.rsplit_once('/').ok_or_else(unknown)?;
    let safe = crate::names::is_safe(chart) && !chart.contains('+');
    if given != namespace(state) || !safe {
        return Err(unknown());
    }
    Ok(chart)
}

fn query(request: &Request) -> Vec<(String, String)> {
    query_pairs(request.uri().query().unwrap_or(""))
}

/// A query string's decoded pairs, in order (a key may repeat), decoded as Go's
/// `url.ParseQuery` and browsers' forms do (`+` is a space).
pub(crate) fn query_pairs(q: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

fn param<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

async fn route(state: &AppState, request: Request) -> Result<Response, OciError> {
    let path = request.uri().path().to_owned();
    let rest = path.strip_prefix("/v2/").unwrap_or("");
    if rest == "_catalog" && request.method() == Method::GET {
        return Ok(catalog(state, &query(&request)));
    }
    let Some((repository, target)) = parse_path(rest) else {
        return Err(OciError::new(
            Code::NameUnknown,
            format!("{path} is not a registry API path"),
        )
        .with_status(StatusCode::NOT_FOUND));
    };
    let chart = chart_of(state, repository)?;
    let method = request.method().clone();
    match (target, method) {
        (Target::Tags, Method::GET) => tag_list(state, repository, chart, &query(&request)).await,
        (Target::Manifest(reference), Method::GET | Method::HEAD) => {
            let head = request.method() == Method::HEAD;
            get_manifest(state, repository, chart, reference, head).await
        }
        (Target::Manifest(reference), Method::PUT) => {
            let reference = reference.to_owned();
            put_manifest(state, repository, chart, &reference, request).await
        }
        (Target::Referrers(digest), Method::GET) => {
            let params = query(&request);
            referrers(state, chart, digest, param(&params, "artifactType")).await
        }
        (Target::Blob(digest), Method::GET | Method::HEAD) => {
            let head = request.method() == Method::HEAD;
            get_blob(state, chart, digest, head, request.headers()).await
        }
        (Target::Uploads, Method::POST) => start_upload(state, repository, chart, request).await,
        (Target::Upload(id), Method::PATCH) => {
            let id = id.to_owned();
            patch_upload(state, repository, &id, request).await
        }
        (Target::Upload(id), Method::PUT) => {
            let id = id.to_owned();
            finish_upload(state, repository, &id, request).await
        }
        (Target::Upload(id), Method::GET) => upload_status(state, repository, id).await,
        (Target::Upload(id), Method::DELETE) => {
            let session = state.registry.uploads.get(repository, id)?;
            uploads::owned_by(&*session.lock().await, repository, id)?;
            state.registry.uploads.remove(id);
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        (Target::Manifest(_) | Target::Blob(_), Method::DELETE) if !state.policy.delete => {
            Err(OciError::new(
                Code::Unsupported,
                "deletion is disabled on this server (--disable-delete)",
            ))
        }
        (Target::Manifest(reference), Method::DELETE) => {
            delete::manifest(state, repository, chart, reference).await
        }
        (Target::Blob(digest), Method::DELETE) => delete::blob(state, chart, digest).await,
        (_, method) => Err(OciError::new(
            Code::Unsupported,
            format!("{method} is not supported on {path}"),
        )),
    }
}

/// `GET /v2/_catalog`: every chart as `NAMESPACE/NAME`, paged like tags.
fn catalog(state: &AppState, params: &[(String, String)]) -> Response {
    let names: Vec<String> = state
        .repo
        .charts()
        .into_keys()
        .map(|name| format!("{}/{name}", namespace(state)))
        .collect();
    catalog_page(&names, params)
}

/// The catalog's answer listing `names` (sorted), paged as `params` ask.
pub(crate) fn catalog_page(names: &[String], params: &[(String, String)]) -> Response {
    let (page, next) = paged(names, params, "/v2/_catalog");
    let body = serde_json::json!({ "repositories": page }).to_string();
    json_page(body, next)
}

/// One page of a sorted list after `last`, at most `n` long, and the `Link` to the next.
fn paged<'a>(
    all: &'a [String],
    params: &[(String, String)],
    path: &str,
) -> (Vec<&'a String>, Option<String>) {
    let last = param(params, "last");
    let mut page: Vec<&String> = all
        .iter()
        .filter(|t| last.is_none_or(|last| t.as_str() > last))
        .collect();
    let mut next = None;
    if let Some(n) = param(params, "n").and_then(|n| n.parse::<usize>().ok())
        && page.len() > n
    {
        page.truncate(n);
        if let Some(last) = page.last() {
            next = Some(format!("<{path}?n={n}&last={last}>; rel=\"next\""));
        }
    }
    (page, next)
}

fn json_page(body: String, next: Option<String>) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(link) = next.and_then(|l| HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(header::LINK, link);
    }
    response
}

async fn tag_list(
    state: &AppState,
    repository: &str,
    chart: &str,
    params: &[(String, String)],
) -> Result<Response, OciError> {
    let tags = content::tags(state, chart).await?.ok_or_else(|| {
        OciError::new(
            Code::NameUnknown,
            format!("repository {repository} is not known: there is no chart {chart}"),
        )
    })?;
    if let Some(n) = param(params, "n")
        && n.parse::<usize>().is_err()
    {
        return Err(
            OciError::new(Code::Unsupported, format!("n={n} is not a number of tags"))
                .with_status(StatusCode::BAD_REQUEST),
        );
    }
    let (page, next) = paged(&tags, params, &format!("/v2/{repository}/tags/list"));
    let body = serde_json::json!({ "name": repository, "tags": page }).to_string();
    Ok(json_page(body, next))
}

fn content_headers(response: &mut Response, content_type: &str, digest: &str, length: usize) {
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        h.insert(header::CONTENT_TYPE, value);
    }
    if let Ok(value) = HeaderValue::from_str(digest) {
        h.insert("docker-content-digest", value);
    }
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
}

async fn get_manifest(
    state: &AppState,
    repository: &str,
    chart: &str,
    reference: &str,
    head: bool,
) -> Result<Response, OciError> {
    let unknown = || {
        OciError::new(
            Code::ManifestUnknown,
            format!("{repository} has no manifest {reference}"),
        )
    };
    if state.repo.chart(chart).is_none() && !state.registry.artifacts {
        return Err(OciError::new(
            Code::NameUnknown,
            format!("repository {repository} is not known: there is no chart {chart}"),
        ));
    }
    let (bytes, digest) = content::resolve(state, chart, reference)
        .await?
        .ok_or_else(unknown)?;
    let length = bytes.len();
    // An artifact's own media type (an index, say); a chart's is always a manifest.
    let media_type = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|json| json.get("mediaType")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| manifest::MANIFEST_MEDIA_TYPE.to_owned());
    let mut response = if head {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(bytes))
    };
    content_headers(&mut response, &media_type, &digest, length);
    Ok(response)
}

async fn get_blob(
    state: &AppState,
    chart: &str,
    digest: &str,
    head: bool,
    headers: &HeaderMap,
) -> Result<Response, OciError> {
    if content::sha256_hex(digest).is_none() {
        return Err(OciError::new(
            Code::DigestInvalid,
            format!("{digest} is not a sha256 digest"),
        ));
    }
    let data = content::find_blob(state, chart, digest)
        .await?
        .ok_or_else(|| OciError::new(Code::BlobUnknown, format!("blob {digest} is not known")))?;
    let total = data.len();
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(|r| byte_range(r, total));
    let (status, body) = match range {
        None => (StatusCode::OK, data),
        Some(Some((start, end))) => (StatusCode::PARTIAL_CONTENT, data.slice(start..=end)),
        Some(None) => {
            let mut response = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{total}")) {
                response.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return Ok(response);
        }
    };
    let length = body.len();
    let mut response = if head {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(body))
    };
    *response.status_mut() = status;
    content_headers(&mut response, "application/octet-stream", digest, length);
    let h = response.headers_mut();
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if status == StatusCode::PARTIAL_CONTENT
        && let Some((start, end)) = range.flatten()
        && let Ok(value) = HeaderValue::from_str(&format!("bytes {start}-{end}/{total}"))
    {
        h.insert(header::CONTENT_RANGE, value);
    }
    Ok(response)
}

/// One `bytes=` range within `total` bytes, as inclusive offsets; `None` when it cannot
/// be served.
fn byte_range(header: &str, total: usize) -> Option<(usize, usize)> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') || total == 0 {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let (start, end) = match (start.trim(), end.trim()) {
        ("", suffix) => {
            let n: usize = suffix.parse().ok()?;
            (total.checked_sub(n.min(total))?, total - 1)
        }
        (start, "") => (start.parse().ok()?, total - 1),
        (start, end) => (
            start.parse().ok()?,
            end.parse::<usize>().ok()?.min(total - 1),
        ),
    };
    (start <= end && start < total).then_some((start, end))
}

fn upload_location(repository: &str, id: &str) -> String {
    format!("/v2/{repository}/blobs/uploads/{id}")
}

fn accepted(location: &str, range: &str, id: &str) -> Response {
    let mut response = StatusCode::ACCEPTED.into_response();
    let h = response.headers_mut();
    for (name, value) in [
        (header::LOCATION.as_str(), location),
        (header::RANGE.as_str(), range),
        ("docker-upload-uuid", id),
    ] {
        if let Ok(value) = HeaderValue::from_str(value) {
            h.insert(name, value);
        }
    }
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(0));
    response
}

fn created_blob(repository: &str, digest: &str) -> Response {
    let mut response = StatusCode::CREATED.into_response();
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&format!("/v2/{repository}/blobs/{digest}")) {
        h.insert(header::LOCATION, value);
    }
    if let Ok(value) = HeaderValue::from_str(digest) {
        h.insert("docker-content-digest", value);
    }
    response
}

/// The `digest` a client names, checked to be a sha256 digest.
fn wanted_digest(params: &[(String, String)]) -> Result<Option<String>, OciError> {
    match param(params, "digest") {
        None => Ok(None),
        Some(digest) if content::sha256_hex(digest).is_some() => Ok(Some(digest.to_owned())),
        Some(digest) => Err(OciError::new(
            Code::DigestInvalid,
            format!("{digest} is not a sha256 digest this server can check"),
        )),
    }
}

async fn start_upload(
    state: &AppState,
    repository: &str,
    chart: &str,
    request: Request,
) -> Result<Response, OciError> {
    let params = query(&request);
    if let Some(mount) = param(&params, "mount") {
        // Mountable when the blob is stored here already; otherwise an ordinary upload
        // starts, as the spec says.
        if content::sha256_hex(mount).is_some()
            && content::find_blob(state, chart, mount).await?.is_some()
        {
            return Ok(created_blob(repository, mount));
        }
    } else if let Some(digest) = wanted_digest(&params)? {
        // A body, so one of the uploads that may be received at once.
        let _turn = state.policy.uploads.acquire().await?;
        let (head, body) = request.into_parts();
        let data =
            upload_body::read_body(&head.headers, body, state.policy.max_upload_size).await?;
        store_verified(state, &digest, data).await?;
        return Ok(created_blob(repository, &digest));
    }
    let id = state.registry.uploads.start(repository).await?;
    Ok(accepted(&upload_location(repository, &id), "0-0", &id))
}

/// Stores a blob after checking it is the digest the client named.
async fn store_verified(state: &AppState, digest: &str, data: Bytes) -> Result<(), OciError> {
    let actual = manifest::digest_of(&data);
    if actual != digest {
        return Err(OciError::new(
            Code::DigestInvalid,
            format!("the upload's digest is {actual}, not {digest}; nothing was stored"),
        ));
    }
    let hex = content::sha256_hex(digest).unwrap_or_default();
    content::put_blob(state, hex, data).await?;
    Ok(())
}

/// `Content-Range: START-END` of a chunk (with or without `bytes `).
fn content_range(headers: &HeaderMap) -> Option<Result<(u64, u64), ()>> {
    let value = headers.get(header::CONTENT_RANGE)?.to_str().ok()?;
    let spec = value.trim().trim_start_matches("bytes").trim();
    let parsed = spec.split_once('-').and_then(|(a, b)| {
        Some((
            a.trim().parse().ok()?,
            b.split('/').next()?.trim().parse().ok()?,
        ))
    });
    Some(parsed.ok_or(()))
}

/// Appends one request body to a session, within the upload limit, after checking that
/// its `Content-Range` (if given) continues where the session is.
async fn append_body(
    state: &AppState,
    id: &str,
    session: &mut uploads::Session,
    request: Request,
) -> Result<(), OciError> {
    let (head, body) = request.into_parts();
    let range = content_range(&head.headers);
    if let Some(range) = range {
        let (start, end) = range.map_err(|()| {
            OciError::new(
                Code::BlobUploadInvalid,
                "the Content-Range header is not START-END",
            )
            .with_status(StatusCode::RANGE_NOT_SATISFIABLE)
        })?;
        if start != session.size || end < start {
            return Err(OciError::new(
                Code::BlobUploadInvalid,
                format!(
                    "chunk {start}-{end} is out of order: the upload has {} bytes, so the next chunk starts at {}",
                    session.size, session.size
                ),
            )
            .with_status(StatusCode::RANGE_NOT_SATISFIABLE));
        }
    }
    let limit = state.policy.max_upload_size;
    let remaining = limit.saturating_sub(usize::try_from(session.size).unwrap_or(usize::MAX));
    let data = match upload_body::read_body(&head.headers, body, remaining).await {
        Ok(data) => data,
        Err(error) if error.status == StatusCode::PAYLOAD_TOO_LARGE => {
            // Nothing of an upload that cannot finish is kept.
            state.registry.uploads.remove(id);
            return Err(OciError::new(
                Code::SizeInvalid,
                format!("the blob is larger than the server's upload limit of {limit} bytes (--max-upload-size); the upload was cancelled"),
            )
            .with_status(StatusCode::PAYLOAD_TOO_LARGE));
        }
        Err(error) => return Err(error.into()),
    };
    if let Some(Ok((start, end))) = range
        && end - start + 1 != data.len() as u64
    {
        return Err(OciError::new(
            Code::SizeInvalid,
            format!(
                "Content-Range {start}-{end} announces {} bytes, but the chunk has {}",
                end - start + 1,
                data.len()
            ),
        ));
    }
    session.append(&data).await
}

async fn patch_upload(
    state: &AppState,
    repository: &str,
    id: &str,
    request: Request,
) -> Result<Response, OciError> {
    let shared = state.registry.uploads.get(repository, id)?;
    let _turn = state.policy.uploads.acquire().await?;
    let mut session = shared.lock().await;
    uploads::owned_by(&session, repository, id)?;
    append_body(state, id, &mut session, request).await?;
    Ok(accepted(
        &upload_location(repository, id),
        &session.range(),
        id,
    ))
}

async fn upload_status(state: &AppState, repository: &str, id: &str) -> Result<Response, OciError> {
    let shared = state.registry.uploads.get(repository, id)?;
    let session = shared.lock().await;
    uploads::owned_by(&session, repository, id)?;
    let mut response = accepted(&upload_location(repository, id), &session.range(), id);
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}

async fn finish_upload(
    state: &AppState,
    repository: &str,
    id: &str,
    request: Request,
) -> Result<Response, OciError> {
    let params = query(&request);
    let shared = state.registry.uploads.get(repository, id)?;
    let _turn = state.policy.uploads.acquire().await?;
    let mut session = shared.lock().await;
    uploads::owned_by(&session, repository, id)?;
    let Some(digest) = wanted_digest(&params)? else {
        return Err(OciError::new(
            Code::DigestInvalid,
            "finishing an upload needs ?digest=sha256:…",
        ));
    };
    append_body(state, id, &mut session, request).await?;
    let actual = session.digest();
    if actual != digest {
        state.registry.uploads.remove(id);
        return Err(OciError::new(
            Code::DigestInvalid,
            format!("the upload's digest is {actual}, not {digest}; nothing was stored"),
        ));
    }
    let data = Bytes::from(session.contents().await?);
    let hex = content::sha256_hex(&digest).unwrap_or_default();
    content::put_blob(state, hex, data).await?;
    drop(session);
    state.registry.uploads.remove(id);
    Ok(created_blob(repository, &digest))
}

async fn put_manifest(
    state: &AppState,
    repository: &str,
    chart: &str,
    reference: &str,
    request: Request,
) -> Result<Response, OciError> {
    // Read and checked as an upload: one of --max-concurrent-uploads, within
    // --max-upload-size, held until the manifest is stored.
    let _turn = state.policy.uploads.acquire().await?;
    let (head, body) = request.into_parts();
    let limit = MAX_MANIFEST_SIZE.min(state.policy.max_upload_size);
    let bytes = upload_body::read_body(&head.headers, body, limit)
        .await
        .map_err(|e| {
            let status = e.status;
            OciError::new(Code::ManifestInvalid, e.message).with_status(status)
        })?;
    let digest = manifest::digest_of(&bytes);
    let tag = if reference.starts_with("sha256:") {
        if reference != digest {
            return Err(OciError::new(
                Code::DigestInvalid,
                format!("the manifest's digest is {digest}, not {reference}; nothing was stored"),
            ));
        }
        None
    } else {
        Some(reference)
    };
    let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        OciError::new(
            Code::ManifestInvalid,
            format!("the manifest is not JSON: {e}"),
        )
    })?;
    if json.get("schemaVersion").and_then(|v| v.as_u64()) != Some(2) {
        return Err(OciError::new(
            Code::ManifestInvalid,
            "the manifest's schemaVersion is not 2",
        ));
    }
    let config_type = json
        .pointer("/config/mediaType")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    if config_type != manifest::CONFIG_MEDIA_TYPE && state.registry.artifacts {
        return put_artifact(state, repository, chart, tag, &json, bytes, &digest).await;
    }
    if config_type != manifest::CONFIG_MEDIA_TYPE {
        return Err(OciError::new(
            Code::Denied,
            format!(
                "this server keeps Helm charts only, and this manifest's config is {:?}, not {}",
                config_type,
                manifest::CONFIG_MEDIA_TYPE
            ),
        ));
    }
    let parsed = ChartManifest::parse(&bytes, repository)
        .map_err(|e| OciError::new(Code::ManifestInvalid, e.to_string()))?;
    let blob = |descriptor: &chartkit_oci::Descriptor| {
        let descriptor = descriptor.clone();
        async move {
            let data = content::find_blob(state, chart, &descriptor.digest)
                .await?
                .ok_or_else(|| {
                    OciError::new(
                        Code::ManifestBlobUnknown,
                        format!(
                            "the manifest names the blob {} ({}), which was not uploaded",
                            descriptor.digest, descriptor.media_type
                        ),
                    )
                })?;
            if data.len() as u64 != descriptor.size {
                return Err(OciError::new(
                    Code::ManifestInvalid,
                    format!(
                        "the manifest gives {} bytes for {}, but the blob has {}",
                        descriptor.size,
                        descriptor.digest,
                        data.len()
                    ),
                ));
            }
            Ok::<Bytes, OciError>(data)
        }
    };
    let config = blob(&parsed.config).await?;
    let package = blob(&parsed.chart).await?;
    let prov = match &parsed.prov {
        Some(d) => Some(blob(d).await?),
        None => None,
    };
    let config: serde_json::Value = serde_json::from_slice(&config).map_err(|e| {
        OciError::new(
            Code::ManifestInvalid,
            format!("the config blob is not JSON: {e}"),
        )
    })?;
    let field = |key: &str| {
        config
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let (name, version) = (field("name"), field("version"));
    if name != chart {
        return Err(OciError::new(
            Code::ManifestInvalid,
            format!(
                "the chart is {name:?}, so it belongs in {}/{name}, not {repository}",
                namespace(state)
            ),
        ));
    }
    if let Some(tag) = tag
        && tag != content::tag_of(&version)
    {
        return Err(OciError::new(
            Code::ManifestInvalid,
            format!(
                "the chart's version is {version}, so its tag is {}, not {tag}",
                content::tag_of(&version)
            ),
        ));
    }
    let chart_hex = content::sha256_hex(&parsed.chart.digest)
        .unwrap_or_default()
        .to_owned();
    let same_package = state
        .repo
        .chart_version(chart, &version)
        .is_some_and(|entry| entry.digest == chart_hex);
    if !same_package {
        let expected = (chart.to_owned(), version.clone());
        crate::publish::publish_package(state, package, None, prov, Some(&expected), false).await?;
    }
    // The package is the chart layer from now on; the manifest is written last, so it
    // names only what is stored.
    let storage = state.repo.storage();
    content::put_blob(
        state,
        content::sha256_hex(&digest).unwrap_or_default(),
        bytes.clone(),
    )
    .await?;
    storage
        .put(
            &content::manifest_name(chart, &version),
            bytes,
            crate::storage::WriteMode::Overwrite,
        )
        .await?;
    if let Err(error) = storage.delete(&content::blob_name(&chart_hex)).await {
        tracing::warn!(%error, "could not remove a chart layer kept as its package too");
    }
    tracing::info!(%repository, %version, %digest, "manifest stored");
    let mut response = StatusCode::CREATED.into_response();
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&format!("/v2/{repository}/manifests/{digest}")) {
        h.insert(header::LOCATION, value);
    }
    if let Ok(value) = HeaderValue::from_str(&digest) {
        h.insert("docker-content-digest", value);
    }
    Ok(response)
}

fn created_manifest(repository: &str, digest: &str) -> Response {
    let mut response = StatusCode::CREATED.into_response();
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&format!("/v2/{repository}/manifests/{digest}")) {
        h.insert(header::LOCATION, value);
    }
    if let Ok(value) = HeaderValue::from_str(digest) {
        h.insert("docker-content-digest", value);
    }
    response
}

/// Stores a manifest that is not a chart's (with `--oci-artifacts`): every blob or
/// manifest it names must be here; it is kept by digest, and its tag (which may not be a
/// chart version's) recorded after it.
async fn put_artifact(
    state: &AppState,
    repository: &str,
    chart: &str,
    tag: Option<&str>,
    json: &serde_json::Value,
    bytes: Bytes,
    digest: &str,
) -> Result<Response, OciError> {
    let mut named: Vec<&serde_json::Value> = Vec::new();
    named.extend(json.get("config"));
    for key in ["layers", "manifests"] {
        named.extend(
            json.get(key)
                .and_then(|l| l.as_array())
                .into_iter()
                .flatten(),
        );
    }
    named.extend(json.get("subject"));
    if json.get("layers").is_none() && json.get("manifests").is_none() {
        return Err(OciError::new(
            Code::ManifestInvalid,
            "the manifest has neither layers nor manifests",
        ));
    }
    for descriptor in named {
        let Some(wanted) = descriptor.get("digest").and_then(|d| d.as_str()) else {
            return Err(OciError::new(
                Code::ManifestInvalid,
                "a descriptor in the manifest has no digest",
            ));
        };
        // A subject may be a chart's manifest; anything else must be stored here.
        let present = content::find_blob(state, chart, wanted).await?.is_some()
            || content::resolve(state, chart, wanted).await?.is_some();
        if !present {
            return Err(OciError::new(
                Code::ManifestBlobUnknown,
                format!("the manifest names {wanted}, which is not stored here"),
            ));
        }
    }
    if let Some(tag) = tag {
        if !content::valid_tag(tag) {
            return Err(OciError::new(
                Code::ManifestInvalid,
                format!("{tag:?} is not a valid tag"),
            ));
        }
        if state
            .repo
            .chart_version(chart, &content::version_of(tag))
            .is_some()
        {
            return Err(OciError::new(
                Code::Denied,
                format!("{repository}:{tag} is a chart version; an artifact may not take its tag"),
            ));
        }
    }
    let hex = content::sha256_hex(digest).unwrap_or_default();
    let size = bytes.len();
    content::put_blob(state, hex, bytes).await?;
    let subject = json
        .pointer("/subject/digest")
        .and_then(|d| d.as_str())
        .and_then(content::sha256_hex);
    if let Some(subject) = subject {
        // The referrers API's record: this manifest's descriptor, under its subject.
        let mut descriptor = serde_json::json!({
            "mediaType": json.get("mediaType").and_then(|m| m.as_str()).unwrap_or(manifest::MANIFEST_MEDIA_TYPE),
            "digest": digest,
            "size": size,
        });
        let artifact_type = json
            .get("artifactType")
            .or_else(|| json.pointer("/config/mediaType"))
            .cloned();
        if let Some(artifact_type) = artifact_type {
            descriptor["artifactType"] = artifact_type;
        }
        if let Some(annotations) = json.get("annotations") {
            descriptor["annotations"] = annotations.clone();
        }
        state
            .repo
            .storage()
            .put(
                &content::referrer_name(chart, subject, hex),
                Bytes::from(descriptor.to_string()),
                crate::storage::WriteMode::Overwrite,
            )
            .await?;
    }
    if let Some(tag) = tag {
        state
            .repo
            .storage()
            .put(
                &content::artifact_tag_name(chart, tag),
                Bytes::from(digest.to_owned()),
                crate::storage::WriteMode::Overwrite,
            )
            .await?;
    }
    tracing::info!(%repository, %digest, "artifact manifest stored");
    let mut response = created_manifest(repository, digest);
    if let Some(subject) = subject
        && let Ok(value) = HeaderValue::from_str(&format!("sha256:{subject}"))
    {
        response.headers_mut().insert("oci-subject", value);
    }
    Ok(response)
}

/// `GET /v2/NAME/referrers/DIGEST`: an image index of the manifests whose subject is
/// `DIGEST`, filtered by `artifactType` when asked.
async fn referrers(
    state: &AppState,
    chart: &str,
    digest: &str,
    artifact_type: Option<&str>,
) -> Result<Response, OciError> {
    let Some(subject) = content::sha256_hex(digest) else {
        return Err(OciError::new(
            Code::DigestInvalid,
            format!("{digest} is not a sha256 digest"),
        ));
    };
    let mut manifests = Vec::new();
    if state.registry.artifacts {
        let prefix = content::referrer_name(chart, subject, "");
        let storage = state.repo.storage();
        let mut names: Vec<String> = storage
            .list_hidden(&prefix)
            .await?
            .into_iter()
            .map(|info| info.name)
            .collect();
        names.sort();
        for name in names {
            let Some(text) = storage.get(&name).await? else {
                continue;
            };
            let Ok(descriptor) = serde_json::from_slice::<serde_json::Value>(&text) else {
                continue;
            };
            let matches = artifact_type.is_none_or(|wanted| {
                descriptor.get("artifactType").and_then(|t| t.as_str()) == Some(wanted)
            });
            if matches {
                manifests.push(descriptor);
            }
        }
    }
    let body = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": manifest::INDEX_MEDIA_TYPE,
        "manifests": manifests,
    })
    .to_string();
    let mut response = ([(header::CONTENT_TYPE, manifest::INDEX_MEDIA_TYPE)], body).into_response();
    if artifact_type.is_some() {
        response.headers_mut().insert(
            "oci-filters-applied",
            HeaderValue::from_static("artifactType"),
        );
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_at_the_last_marker() {
        assert_eq!(
            parse_path("charts/web/tags/list"),
            Some(("charts/web", Target::Tags))
        );
        assert_eq!(
            parse_path("a/b/c/manifests/1.0.0"),
            Some(("a/b/c", Target::Manifest("1.0.0")))
        );
        assert_eq!(
            parse_path("charts/web/blobs/uploads/"),
            Some(("charts/web", Target::Uploads))
        );
        assert_eq!(
            parse_path("charts/web/blobs/uploads/abc"),
            Some(("charts/web", Target::Upload("abc")))
        );
        assert_eq!(
            parse_path("charts/web/blobs/sha256:00"),
            Some(("charts/web", Target::Blob("sha256:00")))
        );
        assert_eq!(
            parse_path("charts/web/referrers/sha256:00"),
            Some(("charts/web", Target::Referrers("sha256:00")))
        );
        assert_eq!(parse_path("charts/web"), None);
    }

    #[test]
    fn byte_ranges() {
        assert_eq!(byte_range("bytes=0-3", 10), Some((0, 3)));
        assert_eq!(byte_range("bytes=5-", 10), Some((5, 9)));
        assert_eq!(byte_range("bytes=-4", 10), Some((6, 9)));
        assert_eq!(byte_range("bytes=8-20", 10), Some((8, 9)));
        assert_eq!(byte_range("bytes=10-12", 10), None);
        assert_eq!(byte_range("bytes=0-1,3-4", 10), None);
        assert_eq!(byte_range("items=0-1", 10), None);
    }

    #[test]
    fn query_values_are_decoded() {
        let pairs = query_pairs("digest=sha256%3Aab&n=a%2&scope=repository:x:pull+push");
        assert_eq!(pairs[0].1, "sha256:ab");
        assert_eq!(pairs[1].1, "a%2");
        assert_eq!(
            pairs[2].1, "repository:x:pull push",
            "as Go's url.ParseQuery"
        );
    }
}
