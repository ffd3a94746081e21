//! The HTTP surface: Helm's repository protocol (`/index.yaml`, `/charts/<file>`) and
//! ChartMuseum's API (`/api/charts`, `/api/prov`, `/health`), plus `/metrics`.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use chartkit_signing::Keyring;

use crate::auth::{Auth, Decision};
use crate::error::{ApiError, json};
use crate::index_body::IndexBody;
use crate::metrics::Metrics;
use crate::names::{self, FileKind};
use crate::publish::{self, UploadSlots};
use crate::repository::Repository;
use crate::upload;

/// Request policy, from the command line.
#[derive(Debug)]
pub struct Policy {
    pub allow_overwrite: bool,
    pub max_upload_size: usize,
    /// With a keyring, every package must come with a `.prov` signed by one of its keys.
    pub require_signature: Option<Keyring>,
    pub auth: Auth,
    pub auth_reads: bool,
    /// Uploads read and checked at once.
    pub uploads: UploadSlots,
    /// Whether chart versions, manifests and blobs may be deleted (not `--disable-delete`).
    pub delete: bool,
    /// Whether ChartMuseum's `/api/` routes are served (not `--disable-api`).
    pub api: bool,
    /// Whether `?force` replaces a stored version (not `--disable-force-overwrite`).
    pub force_overwrite: bool,
    /// What the repository may hold (`--max-storage-objects`, `--per-chart-limit`).
    pub limits: crate::limits::RepositoryLimits,
    /// `--artifact-hub-repo-id`, served as `/artifacthub-repo.yml`.
    pub artifact_hub_repo_id: Option<String>,
    /// Whether `/metrics` is served (not `--disable-metrics`).
    pub metrics: bool,
    /// `--context-path` (`/charts`), or empty: what the routes see of a path is without it.
    pub context_path: String,
    /// `--metrics-without-auth`: `/metrics` needs no credentials, as ChartMuseum's never does.
    pub metrics_without_auth: bool,
    /// Multipart field names taken besides `chart` and `prov`.
    pub form_fields: upload::FormFields,
    /// `--json-index`: index.yaml served as JSON.
    pub json_index: bool,
    /// ChartMuseum's scoped bearer tokens, checked instead of `auth` when set.
    pub jwt: Option<crate::auth_jwt::JwtAuth>,
    /// The `Access-Control-Allow-Origin` of API answers.
    pub cors_allow_origin: Option<HeaderValue>,
    pub request_log: crate::request_log::RequestLog,
    /// The web view's settings and caches; `None` with `--disable-web`.
    pub web: Option<crate::web::Web>,
}

#[cfg(test)]
impl Policy {
    /// What unit tests start from: no auth, overwrites refused, the API and deletes on, a
    /// 1 MiB upload bound and two upload turns; a test changes what it is about.
    pub(crate) fn for_tests() -> Policy {
        Policy {
            allow_overwrite: false,
            max_upload_size: 1 << 20,
            require_signature: None,
            auth: crate::Auth::default(),
            auth_reads: false,
            uploads: crate::publish::UploadSlots::new(2, std::time::Duration::from_secs(1)),
            delete: true,
            api: true,
            force_overwrite: true,
            limits: Default::default(),
            artifact_hub_repo_id: None,
            metrics: true,
            context_path: String::new(),
            metrics_without_auth: false,
            form_fields: Default::default(),
            json_index: false,
            jwt: None,
            cors_allow_origin: None,
            request_log: Default::default(),
            web: None,
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub repo: Arc<Repository>,
    pub policy: Arc<Policy>,
    pub metrics: Arc<Metrics>,
    /// The OCI registry face (`/v2/`).
    pub registry: Arc<crate::oci::Registry>,
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(root))
        .route("/index.yaml", get(index_yaml))
        .route("/charts/{file}", get(chart_file_or_page))
        .route("/charts/{name}/{version}", get(chart_version_page))
        .route("/_chartkit/{file}", get(crate::web::static_file))
        .route("/api/charts", get(list_charts).post(publish::upload_chart))
        .route("/api/charts/{name}", get(chart_versions))
        .route(
            "/api/charts/{name}/{version}",
            get(chart_version).delete(publish::delete_version),
        )
        .route(
            "/api/charts/{name}/{version}/templates",
            get(crate::chart_contents::templates),
        )
        .route(
            "/api/charts/{name}/{version}/values",
            get(crate::chart_contents::values),
        )
        .route("/api/prov", post(publish::upload_provenance))
        .route("/health", get(health))
        .route("/info", get(info))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics))
        .route(
            "/artifacthub-repo.yml",
            get(crate::artifacthub::repository_file),
        )
        .route("/v2", get(crate::oci::base))
        .route("/v2/", get(crate::oci::base))
        .route("/v2/token", get(crate::oci::token::endpoint))
        .route("/v2/{*rest}", any(crate::oci::dispatch))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// `/metrics` alone, for the root of a server whose other routes are under a context path:
/// ChartMuseum serves its metrics there, where scrapers already look.
pub fn metrics_router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

fn route_of(path: &str) -> &'static str {
    match path {
        "/" => "/",
        "/index.yaml" => "/index.yaml",
        "/health" => "/health",
        "/info" => "/info",
        "/ready" => "/ready",
        "/metrics" => "/metrics",
        "/api/prov" => "/api/prov",
        p if p.starts_with("/charts/") => "/charts",
        p if p == "/api/charts" || p.starts_with("/api/charts/") => "/api/charts",
        p if p == "/v2" || p.starts_with("/v2/") => "/v2",
        _ => "other",
    }
}

/// Rejects traversal and unauthorised requests before any handler runs, then counts and
/// logs what happened.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let route = route_of(&path);
    let request_id = request_id(request.headers());
    let log = state.policy.request_log;
    let original_path = request
        .extensions()
        .get::<crate::request_log::OriginalPath>()
        .map_or_else(|| path.clone(), |p| p.0.clone());
    let number = log.chartmuseum.then(|| log.incoming(&original_path));
    let client_ip = log.chartmuseum.then(|| {
        let peer = request
            .extensions()
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0);
        crate::request_log::client_ip(request.headers(), peer)
    });
    let mut allow_origin = None;
    // Owned, so the password check can be awaited without holding the request.
    let authorization = request.headers().get(header::AUTHORIZATION).cloned();
    // Where the client reached the server, for the token service's address.
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    let museum = MuseumRequest::of(&request, &state.policy.context_path);
    let response = if !state.policy.api && (path == "/api" || path.starts_with("/api/")) {
        // ChartMuseum registers none of its API routes then.
        ApiError::not_found("not found").into_response()
    } else if method == Method::DELETE && !state.policy.delete && path.starts_with("/api/charts/") {
        // ChartMuseum registers no DELETE route then, so it answers as for any unknown
        // route, before asking for credentials.
        ApiError::not_found("not found").into_response()
    } else if method == Method::OPTIONS && !is_registry(&path) {
        // ChartMuseum has no OPTIONS routes: a CORS preflight is not found, and gets no
        // CORS headers.
        ApiError::not_found("not found").into_response()
    } else if let Some(error) = refuse(&state, &method, authorization, &path, &host).await {
        if method == Method::POST {
            state.metrics.upload(false);
        }
        error
    } else {
        allow_origin = state
            .policy
            .cors_allow_origin
            .clone()
            .filter(|_| is_cors_route(&path) && route != "other");
        next.run(request).await
    };
    let mut response = response;
    if let Some(origin) = allow_origin {
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    let status = response.status();
    state
        .metrics
        .request(route, method.as_str(), status.as_u16());
    if path != "/metrics" {
        museum.record(&state.metrics, &method, status, started, &response);
    }
    if let (Some(number), Some(client_ip)) = (number, client_ip) {
        log.served(&crate::request_log::Served {
            number,
            path: &original_path,
            client_ip,
            method: method.as_str(),
            status: status.as_u16(),
            latency: started.elapsed(),
            request_id: request_id.to_str().unwrap_or(""),
        });
    } else {
        let took_ms = started.elapsed().as_secs_f64() * 1000.0;
        if method == Method::GET || method == Method::HEAD {
            tracing::debug!(%method, %path, status = status.as_u16(), took_ms, "request");
        } else {
            tracing::info!(%method, %path, status = status.as_u16(), took_ms, "request");
        }
    }
    response.headers_mut().insert("x-request-id", request_id);
    response
}

/// What ChartMuseum's metrics keep of a request, taken before it is handled.
struct MuseumRequest {
    host: String,
    /// The `url` label: the path as the client sent it (with any context path) and query.
    url: String,
    size: u64,
}

impl MuseumRequest {
    fn of(request: &Request, context_path: &str) -> MuseumRequest {
        use crate::metrics::chartmuseum::{depth0_params, url_label};
        let uri = request.uri();
        let path_and_query = format!(
            "{context_path}{}",
            uri.path_and_query().map_or("/", |p| p.as_str())
        );
        // The parameters are those of the path the routes see (without a context path).
        let params = depth0_params(request.method().as_str(), uri.path());
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let headers = request.headers();
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or_else(|| uri.authority().map(|a| a.to_string()))
            .unwrap_or_default();
        // Go's approximation (gin-prometheus): path, method, protocol, headers (the Host
        // apart), host and the declared body length.
        let header_bytes: usize = headers
            .iter()
            .filter(|(name, _)| *name != header::HOST)
            .map(|(name, value)| name.as_str().len() + value.len())
            .sum();
        let body = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        let size = context_path.len()
            + uri.path().len()
            + request.method().as_str().len()
            + "HTTP/1.1".len()
            + header_bytes
            + host.len()
            + body;
        MuseumRequest {
            url: url_label(&path_and_query, &params),
            host,
            size: size as u64,
        }
    }

    fn record(
        &self,
        metrics: &Metrics,
        method: &Method,
        status: StatusCode,
        started: Instant,
        response: &Response,
    ) {
        use axum::body::HttpBody;
        let hint = response.body().size_hint();
        metrics
            .museum
            .record(&crate::metrics::chartmuseum::Request {
                code: status.as_u16(),
                method: method.as_str(),
                host: &self.host,
                url: &self.url,
                seconds: started.elapsed().as_secs_f64(),
                request_size: self.size,
                response_size: hint.exact().unwrap_or(hint.lower()),
            });
    }
}

fn is_registry(path: &str) -> bool {
    path == "/v2" || path.starts_with("/v2/")
}

/// ChartMuseum's API routes, whose answers carry `Access-Control-Allow-Origin`: under
/// `/api/`, and not named like a repository file.
fn is_cors_route(path: &str) -> bool {
    path.starts_with("/api/")
        && ![".yaml", ".tgz", ".prov"]
            .iter()
            .any(|suffix| path.ends_with(suffix))
}

/// What ChartMuseum's route table asks of a request under bearer auth: nothing for the
/// probes and for what it has no route for, `pull` to read, `push` to write.
fn jwt_action(method: &Method, path: &str) -> Option<crate::auth_jwt::Action> {
    use crate::auth_jwt::Action;
    let route = route_of(path);
    if matches!(route, "/health" | "/info" | "/ready" | "/metrics" | "other") {
        return None;
    }
    match *method {
        Method::GET | Method::HEAD => Some(Action::Pull),
        Method::POST | Method::DELETE => Some(Action::Push),
        // The registry's writes.
        Method::PUT | Method::PATCH if route == "/v2" => Some(Action::Push),
        _ => None,
    }
}

/// The client's `X-Request-Id`, or a new random (version 4) UUID, as ChartMuseum answers
/// every request with one.
pub(crate) fn request_id(headers: &HeaderMap) -> HeaderValue {
    if let Some(given) = headers.get("x-request-id").filter(|v| !v.is_empty()) {
        return given.clone();
    }
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    let id = format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("0"))
}

/// ChartMuseum's `/info`: the server's version.
async fn info() -> Response {
    json(
        StatusCode::OK,
        format!(r#"{{"version":"{}"}}"#, env!("CARGO_PKG_VERSION")),
    )
}

/// ChartMuseum's paging of `/api/charts`: chart names in order, `offset` skipped, at most
/// `limit` kept. Its arithmetic is kept too: an offset without a limit gives nothing.
fn page(query: Option<&str>) -> Result<Option<(usize, i64)>, ApiError> {
    let mut offset = None;
    let mut limit = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "offset" if offset.is_none() => offset = Some(value.to_owned()),
            "limit" if limit.is_none() => limit = Some(value.to_owned()),
            _ => {}
        }
    }
    if offset.is_none() && limit.is_none() {
        return Ok(None);
    }
    let offset = match offset {
        None => 0,
        Some(text) => text
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request("offset is not a valid non-negative integer"))?,
    };
    let limit = match limit {
        None => -1,
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| ApiError::bad_request("limit is not a valid positive integer"))?,
    };
    Ok((offset != 0 || limit != -1).then_some((offset, limit)))
}

async fn refuse(
    state: &AppState,
    method: &Method,
    authorization: Option<HeaderValue>,
    path: &str,
    host: &str,
) -> Option<Response> {
    let decoded = percent_decode(path);
    if decoded.split(['/', '\\']).any(|segment| segment == "..") {
        return Some(
            ApiError::bad_request(format!("path `{path}` contains `..`; refused")).into_response(),
        );
    }
    if let Some(jwt) = &state.policy.jwt {
        let action = jwt_action(method, path)?;
        // Without --auth-reads reads are anonymous, as ChartMuseum's --auth-anonymous-get.
        if action == crate::auth_jwt::Action::Pull && !state.policy.auth_reads {
            return None;
        }
        let header = authorization.as_ref().and_then(|v| v.to_str().ok());
        if jwt.allows(header, action, crate::auth_jwt::now()) {
            return None;
        }
        let mut response = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized").into_response();
        if let Ok(challenge) = HeaderValue::from_str(&jwt.challenge(action)) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        return Some(response);
    }
    if is_registry(path) {
        let header = authorization.as_ref().and_then(|v| v.to_str().ok());
        return crate::oci::token::authorize(state, method, header, path, host).await;
    }
    let auth = &state.policy.auth;
    let writes = !matches!(*method, Method::GET | Method::HEAD);
    let probe = path == "/health"
        || path == "/ready"
        || path == "/info"
        || (path == "/metrics" && state.policy.metrics_without_auth);
    if !auth.is_enabled() || probe || !(writes || state.policy.auth_reads) {
        return None;
    }
    let header = authorization.as_ref().and_then(|v| v.to_str().ok());
    let message = match auth.check(header).await {
        Decision::Allowed => return None,
        Decision::Missing => "authentication required: send basic auth or a bearer token",
        Decision::Denied => "invalid credentials",
        Decision::Busy => {
            let mut response = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many password checks are waiting; try again shortly",
            )
            .into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Some(response);
        }
    };
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, message).into_response();
    let challenge = if auth.has_users() {
        "Basic realm=\"chartkit\""
    } else {
        "Bearer realm=\"chartkit\""
    };
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    Some(response)
}

fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(byte) = path
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn root(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if let Some(page) = crate::web::list(&state, &headers, query.as_deref()).await {
        return page;
    }
    let body = format!(
        "chartkit chart repository: {} chart versions from {}\n\n\
         Use it with:  helm repo add NAME <this URL>\n\
         Index:        /index.yaml\n\
         API:          /api/charts (ChartMuseum-compatible)\n",
        state.repo.chart_count(),
        state.repo.storage().describe()
    );
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut params = coding.split(';');
            let name = params.next().unwrap_or("").trim();
            let refused = params.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    == Some(0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

fn not_modified(headers: &HeaderMap, etags: &[&str]) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || etags.contains(&tag))
}

async fn current_index(repo: &Arc<Repository>) -> Arc<IndexBody> {
    if let Some(index) = repo.rendered_index() {
        return index;
    }
    let repo = Arc::clone(repo);
    tokio::task::spawn_blocking(move || repo.index())
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

async fn index_yaml(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if state.policy.json_index {
        return crate::index_json::respond(&state, &headers).await;
    }
    let index = current_index(&state.repo).await;
    // The parts are shared with the repository and sent as they are, not copied.
    index_response(&headers, &index.etag, &index.gzip_etag(), |gzip| {
        if gzip {
            Body::new(index.gzip())
        } else {
            Body::new(index.identity())
        }
    })
}

/// index.yaml's answer, YAML or `--json-index`'s JSON alike: ChartMuseum's content type,
/// gzip when the client takes it (`body(true)`), a strong ETag per encoding with 304 on a
/// match, never cached without asking.
pub(crate) fn index_response(
    headers: &HeaderMap,
    etag: &str,
    gzip_etag: &str,
    body: impl FnOnce(bool) -> Body,
) -> Response {
    let gzip = accepts_gzip(headers);
    let mut response = if not_modified(headers, &[etag, gzip_etag]) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = Response::new(body(gzip));
        let h = response.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-yaml"),
        );
        if gzip {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response
    };
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(if gzip { gzip_etag } else { etag }) {
        h.insert(header::ETAG, value);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `/charts/FILE` downloads a package or its provenance; any other name is a chart's page
/// in the web view.
async fn chart_file_or_page(
    State(state): State<AppState>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // A name with a dot that is no chart of this repository is a file name gone wrong,
    // answered as before the web view; chart names rarely have dots.
    let page = names::classify(&file).is_none()
        && (!file.contains('.') || state.repo.chart(&file).is_some());
    if page && state.policy.web.is_some() {
        return crate::web::chart(&state, &headers, &file, None).await;
    }
    chart_file(state, file).await
}

/// `/charts/NAME/VERSION` and `/charts/NAME/compare` in the web view.
async fn chart_version_page(
    State(state): State<AppState>,
    Path((name, version)): Path<(String, String)>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    if version == "compare" {
        return crate::web::compare(&state, &headers, &name, query.as_deref()).await;
    }
    crate::web::chart(&state, &headers, &name, Some(&version)).await
}

async fn chart_file(state: AppState, file: String) -> Result<Response, ApiError> {
    let content_type = match names::classify(&file) {
        Some(FileKind::Package) => "application/gzip",
        Some(FileKind::Provenance) => "application/pgp-signature",
        None => {
            return Err(ApiError::bad_request(format!(
                "`{file}` is not a chart package or provenance file name"
            )));
        }
    };
    let missing = || ApiError::not_found(format!("{file} not found"));
    // A package the server refused to index (copied into the storage by hand) is not
    // served either: its clients' loaders would refuse it too.
    if let Some(reason) = state.repo.refusal(&file) {
        return Err(ApiError::not_found(format!(
            "{file} is in the storage but not served, because it is not a usable chart: {reason}"
        )));
    }
    let data = state.repo.storage().get(&file).await?.ok_or_else(missing)?;
    if let Some(package) = file.strip_suffix(".prov") {
        // A `.prov` is served only with the package it signs: one left without its
        // package, or from an older version of it, would only fail `helm verify`.
        let signs_package = state
            .repo
            .package_digest(package)
            .and_then(|hex| chartkit_signing::Sha256Digest::from_hex(&hex))
            .is_some_and(|digest| upload::check_provenance(&data).is_ok_and(|p| p.signs(&digest)));
        if !signs_package {
            tracing::warn!(%file, "not serving a provenance file that does not match its package");
            return Err(missing());
        }
    }
    Ok(([(header::CONTENT_TYPE, content_type)], data).into_response())
}

fn entries_json<'a>(versions: impl Iterator<Item = &'a chartkit_index::ChartVersion>) -> String {
    let mut out = String::from("[");
    for (i, version) in versions.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&chartkit_index::entry_to_json(version));
    }
    out.push(']');
    out
}

async fn list_charts(
    State(state): State<AppState>,
    uri: axum::http::Uri,
) -> Result<Response, ApiError> {
    let page = page(uri.query())?;
    let charts = state.repo.charts();
    let selected: Vec<_> = match page {
        None => charts.iter().collect(),
        Some((offset, limit)) => {
            let end = i64::try_from(offset)
                .unwrap_or(i64::MAX)
                .saturating_add(limit)
                .clamp(0, i64::try_from(charts.len()).unwrap_or(i64::MAX));
            let end = usize::try_from(end).unwrap_or(0);
            charts.iter().take(end).skip(offset).collect()
        }
    };
    let mut out = String::from("{");
    for (i, (name, versions)) in selected.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::Value::String(name.clone()).to_string());
        out.push(':');
        out.push_str(&entries_json(versions.iter()));
    }
    out.push('}');
    Ok(json(StatusCode::OK, out))
}

async fn chart_versions(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let versions = state
        .repo
        .chart(&name)
        .ok_or_else(|| ApiError::not_found(format!("chart {name} not found")))?;
    Ok(json(StatusCode::OK, entries_json(versions.iter())))
}

async fn chart_version(
    State(state): State<AppState>,
    Path((name, version)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let entry = state
        .repo
        .chart_version(&name, &version)
        .ok_or_else(|| ApiError::not_found(format!("chart {name} version {version} not found")))?;
    Ok(json(StatusCode::OK, chartkit_index::entry_to_json(&entry)))
}

/// Liveness: the process is serving requests.
async fn health() -> Response {
    json(StatusCode::OK, r#"{"healthy":true}"#.to_owned())
}

/// Readiness: the storage answers too. Details of a failure go to the log only.
async fn ready(State(state): State<AppState>) -> Response {
    let check = state.repo.storage().check();
    match tokio::time::timeout(std::time::Duration::from_secs(5), check).await {
        Ok(Ok(())) => json(StatusCode::OK, r#"{"ready":true}"#.to_owned()),
        outcome => {
            let reason = match outcome {
                Ok(Err(error)) => error.to_string(),
                _ => "no answer within 5 seconds".to_owned(),
            };
            tracing::warn!(%reason, "not ready: storage check failed");
            let mut response = json(
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"ready":false,"error":"storage is not reachable"}"#.to_owned(),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            response
        }
    }
}

async fn metrics(State(state): State<AppState>, uri: axum::http::Uri) -> Response {
    if !state.policy.metrics {
        // ChartMuseum registers no /metrics route then.
        return not_found(uri).await.into_response();
    }
    state.metrics.set_charts(state.repo.chart_count());
    state.metrics.set_chart_names(state.repo.chart_name_count());
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no such route: {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_auth_asks_what_chartmuseums_route_table_asks() {
        use crate::auth_jwt::Action;
        assert_eq!(jwt_action(&Method::GET, "/index.yaml"), Some(Action::Pull));
        assert_eq!(jwt_action(&Method::GET, "/"), Some(Action::Pull));
        assert_eq!(
            jwt_action(&Method::HEAD, "/api/charts/a"),
            Some(Action::Pull)
        );
        assert_eq!(jwt_action(&Method::POST, "/api/prov"), Some(Action::Push));
        assert_eq!(
            jwt_action(&Method::DELETE, "/api/charts/a/1.0.0"),
            Some(Action::Push)
        );
        assert_eq!(
            jwt_action(&Method::PUT, "/v2/charts/a/manifests/1"),
            Some(Action::Push)
        );
        for probe in ["/health", "/info", "/metrics", "/nowhere"] {
            assert_eq!(jwt_action(&Method::GET, probe), None, "{probe}");
        }
    }

    #[test]
    fn cors_goes_on_api_routes_not_named_like_repository_files() {
        assert!(is_cors_route("/api/charts"));
        assert!(is_cors_route("/api/charts/web/1.0.0/values"));
        assert!(!is_cors_route("/api/charts/web-1.0.0.tgz"));
        assert!(!is_cors_route("/index.yaml"));
        assert!(!is_cors_route("/api"));
    }

    #[test]
    fn traversal_is_seen_through_percent_encoding() {
        assert_eq!(percent_decode("/charts/..%2Fsecret"), "/charts/../secret");
        assert_eq!(percent_decode("/a%2"), "/a%2");
    }

    #[test]
    fn gzip_negotiation_honours_q_zero() {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, "br, gzip;q=0".parse().unwrap());
        assert!(!accepts_gzip(&headers));
        headers.insert(header::ACCEPT_ENCODING, "gzip, deflate".parse().unwrap());
        assert!(accepts_gzip(&headers));
    }

    #[test]
    fn if_none_match_lists_and_weak_tags() {
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, "\"x\", W/\"abc\"".parse().unwrap());
        assert!(not_modified(&headers, &["\"abc\""]));
        assert!(!not_modified(&headers, &["\"abd\""]));
    }
}
