//! The web view: `chartkit_web`'s pages filled in from this repository, at `/`,
//! `/charts/NAME`, `/charts/NAME/VERSION` and `/charts/NAME/compare`, with the same data as
//! JSON for scripts. Package downloads under `/charts/` are routed before any page.
//!
//! What a page needs from a package (README, values, schema, template names) is read once
//! per package digest and kept in a bounded cache: a stored version never changes under
//! its digest. The chart list is made again only when the repository changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chartkit_signing::Keyring;
use chartkit_web::markdown::RenderedReadme;
use chartkit_web::{
    ChartDetail, ChartSummary, DeprecatedFilter, ListQuery, Maintainer, Provenance, Site,
    VersionFiles, VersionSummary,
};
use futures::StreamExt;

use crate::api::AppState;
use crate::error::ApiError;
use crate::web_cache::Bounded;

/// How the web view is set up (`--disable-web` leaves it out of the policy).
#[derive(Debug, Default)]
pub struct WebOptions {
    /// Keys versions are verified against (`--keyring`).
    pub keyring: Option<Keyring>,
    /// The name in `helm repo add NAME …` (`--web-repo-name`).
    pub repo_name: Option<String>,
}

/// The web view's options and what it keeps between requests, for every repository of
/// the server (a multi-tenant server's are told apart by their path).
#[derive(Debug)]
pub struct Web {
    pub options: WebOptions,
    /// Each repository's chart list, with the change count it was made at.
    lists: Mutex<HashMap<String, (u64, ChartList)>>,
    packages: Mutex<Bounded<(String, String), Arc<PackageView>>>,
    provenance: Mutex<Bounded<(String, String), Provenance>>,
}

type ChartList = Arc<Vec<ChartSummary>>;

/// Memory the cached package views may take, all repositories together.
const PACKAGE_CACHE_BYTES: usize = 64 << 20;
/// Provenance results kept (a few hundred bytes each).
const PROVENANCE_CACHE_ENTRIES: usize = 20_000;
/// Repositories whose chart list is kept; past it the lists are made again on demand.
const LISTS_KEPT: usize = 256;
/// `.prov` files read at once for one chart page.
const PROVENANCE_READS: usize = 8;

impl Web {
    pub fn new(options: WebOptions) -> Web {
        Web {
            options,
            lists: Mutex::default(),
            packages: Mutex::new(Bounded::new(PACKAGE_CACHE_BYTES)),
            provenance: Mutex::new(Bounded::new(PROVENANCE_CACHE_ENTRIES)),
        }
    }
}

/// What a chart page shows of one package, bounded by `chartkit_web::limits`.
#[derive(Debug)]
struct PackageView {
    readme: Option<String>,
    /// The README as the page shows it, rendered once rather than on every request.
    readme_rendered: Option<Arc<RenderedReadme>>,
    values_yaml: Option<String>,
    values_schema: Option<serde_json::Value>,
    templates: Vec<String>,
}

impl PackageView {
    fn bytes(&self) -> usize {
        self.readme.as_ref().map_or(0, String::len)
            + self.readme_rendered.as_ref().map_or(0, |r| r.len())
            + self.values_yaml.as_ref().map_or(0, String::len)
            + self
                .values_schema
                .as_ref()
                .map_or(0, |s| s.to_string().len())
            + self.templates.iter().map(String::len).sum::<usize>()
            + 256
    }
}

/// What the client asked for, from its `Accept` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Html,
    Json,
    /// Neither named: curl and scripts, which get `/`'s plain-text banner.
    Other,
}

pub fn wanted(headers: &HeaderMap) -> Wanted {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            item.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    let mut found = Wanted::Other;
    for media in accept {
        match media.as_str() {
            // The first of the two named wins, as browsers list text/html first.
            "text/html" | "application/xhtml+xml" if found == Wanted::Other => found = Wanted::Html,
            "application/json" if found == Wanted::Other => found = Wanted::Json,
            _ => {}
        }
    }
    found
}

fn web(state: &AppState) -> Result<&Web, ApiError> {
    state
        .policy
        .web
        .as_ref()
        .ok_or_else(|| ApiError::not_found("not found"))
}

/// The repository's key in the caches: its path on a multi-tenant server.
fn repo_key(state: &AppState) -> String {
    state.repo.name().unwrap_or("").to_owned()
}

/// Where this repository's pages are: the context path, then the tenant's path.
fn base_path(state: &AppState) -> String {
    let mut base = state.policy.context_path.trim_end_matches('/').to_owned();
    if let Some(name) = state.repo.name() {
        base.push('/');
        base.push_str(name);
    }
    base
}

fn site(state: &AppState, headers: &HeaderMap) -> Site {
    let base_path = base_path(state);
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost")
        .to_owned();
    let scheme = if state.registry.tls { "https" } else { "http" };
    let repo_url = match &state.repo.urls().base {
        Some(base) => base.trim_end_matches('/').to_owned(),
        None => format!("{scheme}://{host}{base_path}"),
    };
    let repo_name = web(state)
        .ok()
        .and_then(|w| w.options.repo_name.clone())
        .or_else(|| {
            state
                .repo
                .name()
                .and_then(|n| n.rsplit('/').next())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| default_repo_name(&host));
    // The registry answers at the root of the host only.
    let oci_base = state
        .policy
        .context_path
        .is_empty()
        .then(|| format!("oci://{host}/{}", crate::oci::namespace(state)));
    Site {
        repo_name,
        repo_url,
        oci_base,
        base_path,
    }
}

/// The host's first label (`charts` of `charts.example.com`), or `charts` for an address
/// or `localhost`.
fn default_repo_name(host: &str) -> String {
    let name = host
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(name, _)| name);
    let first = name.split('.').next().unwrap_or("");
    let is_address = name.parse::<std::net::IpAddr>().is_ok() || name.starts_with('[');
    if first.is_empty() || is_address || first == "localhost" {
        "charts".to_owned()
    } else {
        first.to_ascii_lowercase()
    }
}

/// A page, with the policy headers every page carries.
fn html(body: String) -> Response {
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response();
    let headers = response.headers_mut();
    for (name, value) in chartkit_web::PAGE_HEADERS {
        headers.insert(*name, HeaderValue::from_static(value));
    }
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

fn json_body<T: serde::Serialize>(value: &T) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => {
            let mut response = crate::error::json(StatusCode::OK, body);
            response
                .headers_mut()
                .insert(header::VARY, HeaderValue::from_static("Accept"));
            response
        }
        Err(e) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// `/`: the chart list for a browser or a script; `None` for anyone else, who gets the
/// plain-text banner.
pub async fn list(state: &AppState, headers: &HeaderMap, query: Option<&str>) -> Option<Response> {
    let web = web(state).ok()?;
    let wanted = wanted(headers);
    if wanted == Wanted::Other {
        return None;
    }
    let (list_query, fragment) = list_query(query.unwrap_or(""));
    let charts = chart_list(web, state);
    let site = site(state, headers);
    Some(match wanted {
        Wanted::Json => {
            let found: Vec<&ChartSummary> = chartkit_web::search::search(&charts, &list_query);
            json_body(&found)
        }
        _ if fragment => {
            html(chartkit_web::list_results(&site, &charts, &list_query).into_string())
        }
        _ => html(chartkit_web::list_page(&site, &charts, &list_query)),
    })
}

/// `/` of a server of several repositories: a link to each one's list.
pub fn repositories(
    state: &AppState,
    headers: &HeaderMap,
    repositories: &[(String, usize)],
) -> Response {
    html(chartkit_web::repositories_page(
        &site(state, headers),
        repositories,
    ))
}

/// The list's query string: `q`, `deprecated`, `signed`, `page` and `fragment`.
fn list_query(query: &str) -> (ListQuery, bool) {
    let mut list = ListQuery::default();
    let mut fragment = false;
    for (key, value) in form_pairs(query) {
        match key.as_str() {
            "q" => list.text = value,
            "deprecated" => list.deprecated = DeprecatedFilter::from_param(&value),
            "signed" => list.signed_only = matches!(value.as_str(), "1" | "true" | "on"),
            "page" => list.page = value.parse().unwrap_or(0),
            "fragment" => fragment = value == "1",
            _ => {}
        }
    }
    (list, fragment)
}

/// `application/x-www-form-urlencoded` pairs, as a browser sends a GET form.
fn form_pairs(query: &str) -> Vec<(String, String)> {
    crate::oci::query_pairs(query)
}

/// The chart list, made again when the repository has changed since it was made.
fn chart_list(web: &Web, state: &AppState) -> Arc<Vec<ChartSummary>> {
    let key = repo_key(state);
    let changes = state.repo.change_count();
    if let Some((made_at, list)) = web
        .lists
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        && *made_at == changes
    {
        return Arc::clone(list);
    }
    let list = Arc::new(summaries(state));
    let mut lists = web.lists.lock().unwrap_or_else(|e| e.into_inner());
    if lists.len() >= LISTS_KEPT && !lists.contains_key(&key) {
        lists.clear();
    }
    lists.insert(key, (changes, Arc::clone(&list)));
    list
}

fn summaries(state: &AppState) -> Vec<ChartSummary> {
    let signed_versions = state.repo.signed_versions();
    state
        .repo
        .charts()
        .into_iter()
        .filter_map(|(name, versions)| {
            let newest = versions.first()?;
            let meta = &newest.metadata;
            let signed = signed_versions.contains(&(name.clone(), meta.version.clone()));
            Some(ChartSummary {
                latest_version: meta.version.clone(),
                app_version: non_empty(&meta.app_version),
                description: meta.description.clone(),
                keywords: meta.keywords.clone(),
                maintainers: maintainers(meta),
                deprecated: meta.deprecated,
                signed,
                version_count: versions.len(),
                icon: non_empty(&meta.icon),
                name,
                search_text: Default::default(),
            })
        })
        .collect()
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

fn maintainers(meta: &chartkit_chart::Metadata) -> Vec<Maintainer> {
    meta.maintainers
        .iter()
        .flatten()
        .map(|m| Maintainer {
            name: m.name.clone(),
            email: non_empty(&m.email),
            url: non_empty(&m.url),
        })
        .collect()
}

/// `/charts/NAME` and `/charts/NAME/VERSION`.
pub async fn chart(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
    version: Option<&str>,
) -> Result<Response, ApiError> {
    let web = web(state)?;
    let versions = state
        .repo
        .chart(name)
        .ok_or_else(|| ApiError::not_found(format!("chart `{name}` is not in this repository")))?;
    let entry = match version {
        None => versions.first().cloned(),
        Some(version) => versions.iter().find(|v| v.version() == version).cloned(),
    }
    .ok_or_else(|| {
        ApiError::not_found(format!(
            "chart `{name}` has no version `{}` in this repository",
            version.unwrap_or("")
        ))
    })?;
    let site = site(state, headers);
    let package = package_view(web, state, &entry).await?;
    let version_list = version_summaries(state, &site, &versions).await;
    let meta = &entry.metadata;
    let charts = chart_list(web, state);
    let dependencies = meta
        .dependencies
        .iter()
        .flatten()
        .map(|d| chartkit_web::Dependency {
            on_this_server: is_on_this_server(&site, &d.repository)
                && charts.iter().any(|c| c.name == d.name),
            name: d.name.clone(),
            version: d.version.clone(),
            repository: d.repository.clone(),
        })
        .collect();
    let detail = ChartDetail {
        name: meta.name.clone(),
        version: meta.version.clone(),
        app_version: non_empty(&meta.app_version),
        description: meta.description.clone(),
        home: non_empty(&meta.home),
        sources: meta.sources.clone(),
        keywords: meta.keywords.clone(),
        maintainers: maintainers(meta),
        deprecated: meta.deprecated,
        dependencies,
        readme: package.readme.clone(),
        readme_rendered: package.readme_rendered.clone(),
        values_yaml: package.values_yaml.clone(),
        values_schema: package.values_schema.clone(),
        templates: package.templates.clone(),
        versions: version_list,
    };
    Ok(match wanted(headers) {
        Wanted::Json => json_body(&detail),
        _ => html(chartkit_web::chart_page(&site, &detail)),
    })
}

/// Whether a dependency's repository is this server: its repository URL or its OCI
/// address.
fn is_on_this_server(site: &Site, repository: &str) -> bool {
    let repository = repository.trim_end_matches('/');
    repository == site.repo_url.trim_end_matches('/')
        || site
            .oci_base
            .as_deref()
            .is_some_and(|base| repository == base.trim_end_matches('/'))
}

async fn version_summaries(
    state: &AppState,
    site: &Site,
    versions: &[chartkit_index::ChartVersion],
) -> Vec<VersionSummary> {
    let mut by_version = versions
        .first()
        .map(|v| state.repo.files_of(v.name()))
        .unwrap_or_default();
    let files: Vec<Option<String>> = versions
        .iter()
        .map(|v| by_version.remove(v.version()))
        .collect();
    // Each read owns what it needs, so the reads can run side by side.
    let jobs: Vec<(Option<String>, String)> = files
        .iter()
        .cloned()
        .zip(versions.iter().map(|v| v.digest.clone()))
        .collect();
    let reads = jobs.into_iter().map(|(file, digest)| {
        let state = state.clone();
        async move {
            match file {
                Some(file) => provenance(&state, &file, &digest).await,
                None => Provenance::Unsigned,
            }
        }
    });
    let provenances: Vec<Provenance> = futures::stream::iter(reads)
        .buffered(PROVENANCE_READS)
        .collect()
        .await;
    versions
        .iter()
        .zip(files)
        .zip(provenances)
        .map(|((version, file), provenance)| {
            let file = file.unwrap_or_default();
            let package_url = match &state.repo.urls().base {
                Some(_) => state.repo.urls().chart_url(&file),
                None => format!("{}/charts/{file}", site.base_path),
            };
            VersionSummary {
                version: version.version().to_owned(),
                app_version: non_empty(&version.metadata.app_version),
                created: version.created.as_ref().map(ToString::to_string),
                provenance,
                package_url,
            }
        })
        .collect()
}

/// The provenance of a stored package, read from its `.prov` and checked against the
/// keyring when the server has one; kept per package digest.
async fn provenance(state: &AppState, file: &str, digest: &str) -> Provenance {
    let Ok(web) = web(state) else {
        return Provenance::Unsigned;
    };
    let prov_file = format!("{file}.prov");
    if !state.repo.has_provenance(&prov_file) {
        return Provenance::Unsigned;
    }
    let key = (
        format!("{}/{prov_file}", repo_key(state)),
        digest.to_owned(),
    );
    if let Some(found) = web
        .provenance
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return found;
    }
    let text = match state.repo.storage().get(&prov_file).await {
        Ok(Some(data)) => String::from_utf8_lossy(&data).into_owned(),
        // Gone since the listing: say nothing rather than keep a guess.
        Ok(None) => return Provenance::Unsigned,
        Err(error) => {
            return Provenance::Invalid {
                reason: format!("the provenance file could not be read: {error}"),
            };
        }
    };
    let found = judge_provenance(web.options.keyring.as_ref(), &text, file, digest);
    web.provenance
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, found.clone(), 1);
    found
}

fn judge_provenance(keyring: Option<&Keyring>, text: &str, file: &str, digest: &str) -> Provenance {
    let Some(sha) = chartkit_signing::Sha256Digest::from_hex(digest) else {
        return Provenance::Invalid {
            reason: "the package's digest is unknown".to_owned(),
        };
    };
    if let Some(keyring) = keyring {
        return match chartkit_signing::verify_digest(text, &sha, file, keyring) {
            Ok(verified) => Provenance::Verified {
                signer: verified.signer,
            },
            Err(error) => Provenance::Invalid {
                reason: error.to_string(),
            },
        };
    }
    match chartkit_signing::Provenance::parse(text) {
        Ok(parsed) => {
            let expected = format!("sha256:{digest}");
            if parsed.files().get(file) != Some(&expected) {
                return Provenance::Invalid {
                    reason: format!("the provenance file does not sign {file} as stored"),
                };
            }
            let ids = parsed.signer_key_ids();
            let signer = (!ids.is_empty() && ids.iter().all(|id| !id.is_empty()))
                .then(|| format!("key {}", ids.join(", ")));
            Provenance::Signed { signer }
        }
        Err(error) => Provenance::Invalid {
            reason: error.to_string(),
        },
    }
}

async fn package_view(
    web: &Web,
    state: &AppState,
    entry: &chartkit_index::ChartVersion,
) -> Result<Arc<PackageView>, ApiError> {
    let file = state
        .repo
        .file_of(entry.name(), entry.version())
        .ok_or_else(|| ApiError::not_found("chart version not found"))?;
    let key = (format!("{}/{file}", repo_key(state)), entry.digest.clone());
    if let Some(view) = web
        .packages
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return Ok(view);
    }
    let chart = crate::chart_contents::load_file(state, &file).await?;
    let readme = chart
        .readme()
        .map(|f| bounded_text(&f.data, chartkit_web::limits::README_BYTES));
    let view = Arc::new(PackageView {
        readme_rendered: readme.as_deref().map(|r| Arc::new(RenderedReadme::new(r))),
        readme,
        values_yaml: chart
            .raw_file("values.yaml")
            .map(|f| bounded_text(&f.data, chartkit_web::limits::VALUES_BYTES)),
        values_schema: chart
            .schema
            .as_ref()
            .and_then(|s| serde_json::from_slice(s).ok()),
        templates: chart
            .templates
            .iter()
            .take(chartkit_web::limits::TEMPLATE_FILES + 1)
            .map(|t| t.name.clone())
            .collect(),
    });
    let size = view.bytes();
    web.packages
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, Arc::clone(&view), size);
    Ok(view)
}

/// Text cut a little past `limit`, so the page still knows it was cut and says so.
fn bounded_text(data: &[u8], limit: usize) -> String {
    let text = String::from_utf8_lossy(data);
    if text.len() <= limit {
        return text.into_owned();
    }
    let mut end = limit + 1;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    text[..end].to_owned()
}

/// `/charts/NAME/compare?from=A&to=B`.
pub async fn compare(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
    query: Option<&str>,
) -> Result<Response, ApiError> {
    web(state)?;
    let pairs = form_pairs(query.unwrap_or(""));
    let param = |wanted: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == wanted)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "compare needs `from` and `to` versions: /charts/{name}/compare?from=A&to=B"
                ))
            })
    };
    let (from, to) = (param("from")?, param("to")?);
    let from = version_files(state, name, &from).await?;
    let to = version_files(state, name, &to).await?;
    let site = site(state, headers);
    Ok(match wanted(headers) {
        Wanted::Json => json_body(&serde_json::json!({ "from": from, "to": to })),
        _ => html(chartkit_web::compare_page(&site, name, &from, &to)),
    })
}

/// Memory one side of a comparison may take of its templates.
const COMPARE_TEMPLATE_BYTES: usize = 2 * chartkit_web::limits::COMPARE_BYTES;

async fn version_files(
    state: &AppState,
    name: &str,
    version: &str,
) -> Result<VersionFiles, ApiError> {
    let file = state.repo.file_of(name, version).ok_or_else(|| {
        ApiError::not_found(format!(
            "chart `{name}` has no version `{version}` in this repository"
        ))
    })?;
    let chart = crate::chart_contents::load_file(state, &file).await?;
    let mut left = COMPARE_TEMPLATE_BYTES;
    let templates = chart
        .templates
        .iter()
        .map(|t| {
            let text = bounded_text(&t.data, left);
            left = left.saturating_sub(text.len());
            (t.name.clone(), text)
        })
        .collect();
    Ok(VersionFiles {
        version: version.to_owned(),
        values_yaml: chart
            .raw_file("values.yaml")
            .map(|f| bounded_text(&f.data, chartkit_web::limits::VALUES_BYTES))
            .unwrap_or_default(),
        templates,
    })
}

/// `/_chartkit/FILE`: the pages' style sheet and script, carried in the binary.
pub async fn static_file(
    State(state): State<AppState>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    web(&state)?;
    let (content_type, body) = match file.as_str() {
        "web.css" => ("text/css; charset=utf-8", chartkit_web::STYLE_CSS),
        "search.js" => ("text/javascript; charset=utf-8", chartkit_web::SEARCH_JS),
        _ => return Err(ApiError::not_found(format!("{file} not found"))),
    };
    let etag = format!(
        "\"{}\"",
        &hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body))[..16]
    );
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|given| given.split(',').any(|tag| tag.trim() == etag));
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, content_type)], body).into_response()
    };
    let out = response.headers_mut();
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, etag);
    }
    out.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_pages_scripts_json_and_curl_the_banner() {
        let accept = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
            wanted(&headers)
        };
        assert_eq!(
            accept("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
            Wanted::Html
        );
        assert_eq!(accept("application/json"), Wanted::Json);
        assert_eq!(accept("*/*"), Wanted::Other);
        assert_eq!(wanted(&HeaderMap::new()), Wanted::Other);
    }

    #[test]
    fn form_values_are_decoded_as_a_browser_encodes_them() {
        let (query, fragment) =
            list_query("q=web+server%21&deprecated=only&signed=1&page=2&fragment=1");
        assert_eq!(query.text, "web server!");
        assert_eq!(query.deprecated, DeprecatedFilter::Only);
        assert!(query.signed_only && fragment);
        assert_eq!(query.page, 2);
        assert_eq!(
            form_pairs("q=100%&x=%zz%4"),
            [("q".into(), "100%".into()), ("x".into(), "%zz%4".into())]
        );
    }

    #[test]
    fn the_repository_name_defaults_to_the_host_first_label() {
        assert_eq!(default_repo_name("charts.example.com"), "charts");
        assert_eq!(default_repo_name("Team.example.com:8443"), "team");
        assert_eq!(default_repo_name("127.0.0.1:8080"), "charts");
        assert_eq!(default_repo_name("[::1]:8080"), "charts");
        assert_eq!(default_repo_name("localhost:8080"), "charts");
    }

    #[test]
    fn long_text_is_cut_past_the_limit_on_a_character_boundary() {
        let text = "é".repeat(10);
        let cut = bounded_text(text.as_bytes(), 5);
        assert!(cut.len() > 5 && cut.len() <= 8, "{cut}");
        assert_eq!(bounded_text(b"short", 10), "short");
    }
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod route_tests;
