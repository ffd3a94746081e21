//! The repositories of a multi-tenant server (`--depth N`, `--depth-dynamic`): each is a
//! [`Repository`](crate::repository::Repository) of its own over the storage scoped to its path (`ORG/REPO/`), with its
//! own index and cache, served by the same handlers as the single repository, behind the
//! same policy (auth, limits, upload slots), metrics and registry state.
//!
//! A request is matched by [`crate::tenancy::route`], then handed to its repository's
//! router with the path a single repository would see (`/ORG/REPO/index.yaml` becomes
//! `/index.yaml`); registry requests keep their path, whose name carries the repository.
//!
//! Repositories are opened when first asked for, by reading their part of the storage.
//! One is kept (and refreshed, and its registry garbage collected) once it has charts or
//! a write to it succeeded; a read of a repository with nothing in it is answered from
//! what was just read and forgotten, so requests for made-up paths cost a listing each,
//! as in ChartMuseum, and no memory.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, Uri, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

use crate::api::{self, AppState};
use crate::error::ApiError;
use crate::oci::error::{Code, OciError};
use crate::storage::StorageError;
use crate::tenancy::{self, Depth, Route};

/// One repository and the router that serves it.
#[derive(Clone)]
struct Tenant {
    state: AppState,
    router: Router,
}

/// Every repository the server has open, and the routing to them.
pub struct Tenants {
    depth: Depth,
    /// The server's own routes, and the root repository (what `--depth-dynamic` serves
    /// at depth 0).
    root: Tenant,
    held: RwLock<HashMap<String, Tenant>>,
}

impl Tenants {
    pub fn new(depth: Depth, root: AppState) -> Arc<Tenants> {
        Arc::new(Tenants {
            depth,
            root: Tenant {
                router: api::router(root.clone()),
                state: root,
            },
            held: RwLock::new(HashMap::new()),
        })
    }

    /// The service that routes every request.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .fallback(dispatch)
            .with_state(Arc::clone(self))
    }

    fn held(&self, name: &str) -> Option<Tenant> {
        self.held
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// The repositories kept, for refreshes and garbage collection.
    fn all_held(&self) -> Vec<Tenant> {
        self.held
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Opens the repository at `name` by reading its part of the storage.
    async fn open(&self, name: &str) -> Result<Tenant, StorageError> {
        let root = &self.root.state;
        let storage = root.repo.storage().scoped(name)?;
        let repo = Arc::new(root.repo.tenant(name, storage));
        repo.sync().await?;
        let state = AppState {
            repo,
            ..root.clone()
        };
        Ok(Tenant {
            router: api::router(state.clone()),
            state,
        })
    }

    /// Keeps a repository opened for a request that left charts in it or wrote to it. If
    /// another request kept one first, that one is kept and reads what this one wrote.
    async fn keep(&self, name: &str, opened: Tenant) {
        let kept = {
            let mut held = self.held.write().unwrap_or_else(|e| e.into_inner());
            held.entry(name.to_owned())
                .or_insert(opened.clone())
                .clone()
        };
        if !Arc::ptr_eq(&kept.state.repo, &opened.state.repo)
            && let Err(error) = kept.state.repo.sync().await
        {
            tracing::warn!(repository = name, %error, "refresh from storage failed");
        }
    }

    /// Serves `request` from the repository at `name`.
    async fn serve(&self, name: &str, request: Request) -> Response {
        if name.is_empty() {
            return call(&self.root.router, request).await;
        }
        if let Some(tenant) = self.held(name) {
            return call(&tenant.router, request).await;
        }
        let opened = match self.open(name).await {
            Ok(opened) => opened,
            Err(error) => return ApiError::from(error).into_response(),
        };
        let writes = !matches!(*request.method(), Method::GET | Method::HEAD);
        let response = call(&opened.router, request).await;
        if opened.state.repo.chart_count() > 0 || (writes && response.status().is_success()) {
            self.keep(name, opened).await;
        }
        response
    }

    /// Opens and keeps the repositories with charts in the storage that are not kept yet
    /// (at `--depth N`: every path N directories deep), so that listings over every
    /// repository, like the registry's catalog, are complete. With `--depth-dynamic` a
    /// repository may be at any depth, so only those asked for are known.
    pub async fn discover(&self) -> Result<(), StorageError> {
        let Depth::Fixed(depth) = self.depth else {
            return Ok(());
        };
        let storage = self.root.state.repo.storage();
        for path in crate::tenant_paths::repository_paths(storage, depth).await? {
            if self.held(&path).is_some() {
                continue;
            }
            let opened = self.open(&path).await?;
            if opened.state.repo.chart_count() > 0 {
                self.keep(&path, opened).await;
            }
        }
        Ok(())
    }

    /// Every chart of every kept repository as the registry names it (`ORG/REPO/NAME`),
    /// sorted.
    fn catalog(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .all_held()
            .iter()
            .flat_map(|tenant| {
                let repo = &tenant.state.repo;
                let path = repo.name().unwrap_or_default().to_owned();
                repo.charts()
                    .into_keys()
                    .map(move |chart| format!("{path}/{chart}"))
            })
            .collect();
        names.sort();
        names
    }

    /// Brings every kept repository in line with the storage every `interval`, and keeps
    /// the repositories others wrote meanwhile.
    pub fn spawn_refresh(self: &Arc<Self>, interval: Duration) -> tokio::task::JoinHandle<()> {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                // Those found now were read just now: only the others need a sync.
                let held = this.all_held();
                if let Err(error) = this.discover().await {
                    tracing::warn!(%error, "looking for new repositories in storage failed");
                }
                for tenant in held {
                    let repo = &tenant.state.repo;
                    if let Err(error) = repo.sync().await {
                        let name = repo.name().unwrap_or_default();
                        tracing::warn!(repository = name, %error, "refresh from storage failed");
                    }
                }
            }
        })
    }

    /// `/metrics` alone, for the root of a server whose other routes are under a context
    /// path (where ChartMuseum keeps it): answered by the dispatch, as `/metrics` under
    /// the path is, so both count the repositories when scraped.
    pub fn metrics_router(self: &Arc<Self>) -> Router {
        Router::new()
            .route("/metrics", axum::routing::any(dispatch))
            .with_state(Arc::clone(self))
    }

    /// Sets each kept repository's gauges from what it holds now: counted when scraped,
    /// as the root repository is, so an upload shows at once rather than at the next sync.
    fn count_repositories(&self) {
        let metrics = &self.root.state.metrics;
        for tenant in self.all_held() {
            let repo = &tenant.state.repo;
            let name = repo.name().unwrap_or_default();
            metrics.set_repository_charts(name, repo.chart_count());
            metrics.set_repository_chart_names(name, repo.chart_name_count());
        }
    }

    /// Collects the registry's garbage in every kept repository, as the server does in
    /// the root one.
    pub fn spawn_collect(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(this.root.state.registry.gc.interval);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                for tenant in this.all_held() {
                    if let Err(error) = crate::oci::gc::collect(&tenant.state).await {
                        let name = tenant.state.repo.name().unwrap_or_default();
                        tracing::warn!(repository = name, %error, "registry garbage collection failed; trying again later");
                    }
                }
            }
        })
    }
}

async fn call(router: &Router, request: Request) -> Response {
    match router.clone().oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Routes one request to the server's own routes or to a repository's.
async fn dispatch(State(tenants): State<Arc<Tenants>>, mut request: Request) -> Response {
    match tenancy::route(request.uri().path(), tenants.depth) {
        Route::Server
            if request.uri().path() == "/v2/_catalog" && request.method() == Method::GET =>
        {
            // The root router checks the credentials; the names are every repository's.
            let params = crate::oci::query_pairs(request.uri().query().unwrap_or(""));
            let checked = call(&tenants.root.router, request).await;
            if !checked.status().is_success() {
                return checked;
            }
            let mut page = crate::oci::catalog_page(&tenants.catalog(), &params);
            for (name, value) in checked.headers() {
                if !matches!(
                    *name,
                    header::CONTENT_LENGTH | header::CONTENT_TYPE | header::LINK
                ) {
                    page.headers_mut().insert(name.clone(), value.clone());
                }
            }
            page
        }
        Route::Server
            if request.uri().path() == "/"
                && request.method() == Method::GET
                && tenants.root.state.policy.web.is_some()
                && crate::web::wanted(request.headers()) == crate::web::Wanted::Html =>
        {
            // The root router checks the credentials; the page lists every repository.
            let headers = request.headers().clone();
            let checked = call(&tenants.root.router, request).await;
            if !checked.status().is_success() {
                return checked;
            }
            let mut repositories: Vec<(String, usize)> = tenants
                .all_held()
                .iter()
                .filter_map(|t| {
                    Some((
                        t.state.repo.name()?.to_owned(),
                        t.state.repo.chart_name_count(),
                    ))
                })
                .collect();
            repositories.sort();
            crate::web::repositories(&tenants.root.state, &headers, &repositories)
        }
        Route::Server => {
            if request.uri().path() == "/metrics" {
                tenants.count_repositories();
            }
            call(&tenants.root.router, request).await
        }
        Route::Registry { repository } => tenants.serve(&repository, request).await,
        Route::Repository { repository, path } => {
            let rewritten = match request.uri().query() {
                Some(query) => format!("{path}?{query}"),
                None => path,
            };
            match rewritten.parse::<Uri>() {
                Ok(uri) => *request.uri_mut() = uri,
                Err(_) => return not_found(&tenants, &request),
            }
            tenants.serve(&repository, request).await
        }
        Route::UnknownRegistryName(name) => {
            let expected = match tenants.depth {
                Depth::Fixed(n) => format!("{n} segments naming the repository, then the chart"),
                _ => "the repository's path, then the chart".to_owned(),
            };
            let mut response = OciError::new(
                Code::NameUnknown,
                format!("repository {name} is not known: a chart's name is {expected}"),
            )
            .into_response();
            response.headers_mut().insert(
                "docker-distribution-api-version",
                HeaderValue::from_static("registry/2.0"),
            );
            answered(&tenants, &request, "other", response)
        }
        Route::NotFound => not_found(&tenants, &request),
    }
}

/// ChartMuseum's answer to a path no route matches (at the wrong depth, say).
fn not_found(tenants: &Tenants, request: &Request) -> Response {
    let response = ApiError::not_found("not found").into_response();
    answered(tenants, request, "other", response)
}

/// What the routers' guard does for answers given before any router: counted, and
/// tagged with the request's id.
fn answered(tenants: &Tenants, request: &Request, route: &str, mut response: Response) -> Response {
    response
        .headers_mut()
        .insert("x-request-id", api::request_id(request.headers()));
    tenants.root.state.metrics.request(
        route,
        request.method().as_str(),
        response.status().as_u16(),
    );
    response
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};

    use super::*;
    use crate::api::Policy;
    use crate::metrics::Metrics;
    use crate::repository::tests::package;
    use crate::repository::{PackageRules, Repository, UrlStyle};
    use crate::storage::LocalStorage;

    fn tenants(dir: &std::path::Path, depth: Depth) -> Arc<Tenants> {
        let metrics = Arc::new(Metrics::default());
        let repo = Arc::new(Repository::new(
            Arc::new(LocalStorage::open(dir).unwrap()),
            UrlStyle::default(),
            PackageRules::default(),
            Arc::clone(&metrics),
        ));
        let policy = Policy {
            web: Some(crate::web::Web::new(Default::default())),
            ..Policy::for_tests()
        };
        Tenants::new(
            depth,
            AppState {
                repo,
                policy: Arc::new(policy),
                metrics,
                registry: Arc::new(crate::oci::Registry::for_tests()),
            },
        )
    }

    async fn send(
        tenants: &Arc<Tenants>,
        method: &str,
        uri: &str,
        body: Vec<u8>,
    ) -> (StatusCode, String) {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .body(Body::from(body))
            .unwrap();
        let response = tenants.router().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn a_browser_at_the_root_finds_each_repository_and_its_charts() {
        let dir = tempfile::tempdir().unwrap();
        let tenants = tenants(dir.path(), Depth::Fixed(2));
        send(
            &tenants,
            "POST",
            "/api/org/a/charts",
            package("web", "1.0.0"),
        )
        .await;
        send(
            &tenants,
            "POST",
            "/api/org/b/charts",
            package("db", "1.0.0"),
        )
        .await;
        let page = |uri: &'static str| {
            let tenants = Arc::clone(&tenants);
            async move {
                let request = Request::get(uri)
                    .header(axum::http::header::ACCEPT, "text/html")
                    .body(Body::empty())
                    .unwrap();
                let response = tenants.router().oneshot(request).await.unwrap();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap();
                String::from_utf8_lossy(&body).into_owned()
            }
        };
        let root = page("/").await;
        assert!(root.contains("<a href=\"/org/a/\">org/a</a>"), "{root}");
        assert!(root.contains("<a href=\"/org/b/\">org/b</a>"));
        let list = page("/org/a/").await;
        assert!(
            list.contains("<a href=\"/org/a/charts/web\">web</a>"),
            "{list}"
        );
        assert!(!list.contains("/charts/db"));
        let chart = page("/org/a/charts/web/1.0.0").await;
        assert!(
            chart.contains("href=\"/org/a/charts/web-1.0.0.tgz\""),
            "{chart}"
        );
        // Without text/html the root stays the banner.
        let (_, banner) = send(&tenants, "GET", "/", Vec::new()).await;
        assert!(banner.starts_with("chartkit chart repository"), "{banner}");
    }

    #[tokio::test]
    async fn each_repository_has_its_own_index_and_storage_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let tenants = tenants(dir.path(), Depth::Fixed(1));
        let (status, _) = send(&tenants, "POST", "/api/a/charts", package("web", "1.0.0")).await;
        assert_eq!(status, StatusCode::CREATED);
        assert!(dir.path().join("a/web-1.0.0.tgz").is_file());
        let (status, index) = send(&tenants, "GET", "/a/index.yaml", Vec::new()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(index.contains("- charts/web-1.0.0.tgz\n"), "{index}");
        let (_, other) = send(&tenants, "GET", "/b/index.yaml", Vec::new()).await;
        assert!(
            other.starts_with("apiVersion: v1\nentries: {}\n"),
            "{other}"
        );
        assert_eq!(
            send(&tenants, "GET", "/index.yaml", Vec::new()).await,
            (StatusCode::NOT_FOUND, r#"{"error":"not found"}"#.to_owned())
        );
        // The query goes with the path: ?force reaches the upload.
        let (status, _) = send(
            &tenants,
            "POST",
            "/api/a/charts?force",
            package("web", "1.0.0"),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
    }

    #[tokio::test]
    async fn only_repositories_with_charts_or_writes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tenants = tenants(dir.path(), Depth::Fixed(2));
        send(&tenants, "GET", "/x/y/index.yaml", Vec::new()).await;
        let (status, _) = send(&tenants, "POST", "/api/x/z/charts", b"not a chart".to_vec()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(tenants.all_held().is_empty());
        assert!(
            !dir.path().join("x").exists(),
            "nothing made for reads or refusals"
        );

        // Charts another replica wrote: kept once read.
        std::fs::create_dir_all(dir.path().join("x/y")).unwrap();
        std::fs::write(dir.path().join("x/y/db-1.0.0.tgz"), package("db", "1.0.0")).unwrap();
        let (_, index) = send(&tenants, "GET", "/x/y/index.yaml", Vec::new()).await;
        assert!(index.contains("  db:\n"), "{index}");
        let held: Vec<String> = tenants
            .all_held()
            .iter()
            .map(|t| t.state.repo.name().unwrap().to_owned())
            .collect();
        assert_eq!(held, ["x/y"]);
    }

    #[tokio::test]
    async fn the_catalog_lists_every_repository_in_storage_and_new_writes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("org1/repo1")).unwrap();
        std::fs::create_dir_all(dir.path().join("org1/empty")).unwrap();
        std::fs::write(
            dir.path().join("org1/repo1/db-1.0.0.tgz"),
            package("db", "1.0.0"),
        )
        .unwrap();
        let tenants = tenants(dir.path(), Depth::Fixed(2));
        tenants.discover().await.unwrap();
        let (status, body) = send(&tenants, "GET", "/v2/_catalog", Vec::new()).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, r#"{"repositories":["org1/repo1/db"]}"#);

        let (status, _) = send(
            &tenants,
            "POST",
            "/api/org2/repo9/charts",
            package("web", "1.0.0"),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
        // Written by another replica: found by the periodic look.
        std::fs::create_dir_all(dir.path().join("org3/repo3")).unwrap();
        std::fs::write(
            dir.path().join("org3/repo3/api-2.0.0.tgz"),
            package("api", "2.0.0"),
        )
        .unwrap();
        tenants.discover().await.unwrap();
        let (_, body) = send(&tenants, "GET", "/v2/_catalog?n=2", Vec::new()).await;
        assert_eq!(
            body,
            r#"{"repositories":["org1/repo1/db","org2/repo9/web"]}"#
        );
        let (_, body) = send(
            &tenants,
            "GET",
            "/v2/_catalog?last=org2/repo9/web",
            Vec::new(),
        )
        .await;
        assert_eq!(body, r#"{"repositories":["org3/repo3/api"]}"#);
    }

    #[tokio::test]
    async fn an_upload_is_counted_at_once_by_metrics_at_the_root_and_under_a_context_path() {
        let dir = tempfile::tempdir().unwrap();
        let tenants = tenants(dir.path(), Depth::Fixed(1));
        let app = crate::app(&tenants.root.state, Some(&tenants), Some("/cp"));
        let send = |method: &str, uri: &str, body: Vec<u8>| {
            let request = Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::from(body))
                .unwrap();
            let app = app.clone();
            async move {
                let response = app.oneshot(request).await.unwrap();
                let status = response.status();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap();
                (status, String::from_utf8_lossy(&body).into_owned())
            }
        };
        for (n, version) in ["1.0.0", "1.1.0"].into_iter().enumerate() {
            let (status, _) = send("POST", "/cp/api/a/charts", package("web", version)).await;
            assert_eq!(status, StatusCode::CREATED);
            // No sync in between: the scrape itself counts.
            for scraped in ["/metrics", "/cp/metrics"] {
                let (status, text) = send("GET", scraped, Vec::new()).await;
                assert_eq!(status, StatusCode::OK, "{scraped}");
                let versions = format!(
                    "chartmuseum_chart_versions_served_total{{repo=\"a\"}} {}\n",
                    n + 1
                );
                assert!(text.contains(&versions), "{scraped}:\n{text}");
                assert!(
                    text.contains("chartmuseum_charts_served_total{repo=\"a\"} 1\n"),
                    "{scraped}:\n{text}"
                );
            }
        }
    }
}
