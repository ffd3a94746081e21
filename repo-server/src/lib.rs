//! The chart repository server behind `chartkit serve`.
//!
//! - [`storage`]: where packages live (a directory, or an S3-compatible bucket shared by
//!   several replicas).
//! - [`repository`]: every chart version in memory, synced from storage, index.yaml
//!   rendered on demand after changes.
//! - `api`: Helm's repository protocol and ChartMuseum's API over axum.
//! - [`connections`]: the connection limit and the timeouts that close connections which
//!   stop making progress.
//! - [`tenancy`]: which repository a path is for on a multi-tenant server (`--depth`);
//!   `tenants`: those repositories, each its own [`Repository`] over its storage prefix.
//! - [`Server`]: binding, TLS, the periodic sync, graceful shutdown.

mod api;
mod artifacthub;
pub mod auth;
pub mod auth_jwt;
mod chart_contents;
pub mod chartmuseum;
pub mod connections;
mod error;
pub mod gen_index;
mod index_body;
mod index_json;
mod limits;
pub mod log_json;
pub mod metrics;
pub mod names;
pub mod oci;
mod publish;
pub mod repository;
pub mod request_log;
pub mod storage;
pub mod tenancy;
mod tenant_paths;
mod tenants;
mod tls;
mod upload;
mod upload_body;
pub mod web;
mod web_cache;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chartkit_chart::archive::Limits;
use chartkit_signing::Keyring;

pub use api::Policy;
pub use auth::{Auth, AuthFileError};
pub use connections::{
    OpenFiles, Timeouts, connection_limit, default_max_connections, raise_open_files_limit,
};
pub use limits::RepositoryLimits;
pub use repository::{PackageRules, Repository, SyncReport, UrlStyle};
pub use storage::{
    BucketStorage, GcsStorage, LocalStorage, ObjectInfo, S3Options, Storage, StorageError,
    WriteMode,
};
pub use upload::FormFields;

/// Everything `chartkit serve` configures.
pub struct ServerOptions {
    pub storage: Arc<dyn Storage>,
    /// Where to listen: `HOST:PORT`, the host an IP address or a name (`localhost:8879`),
    /// resolved at bind time; the first address that can be bound is used. Port 0 picks
    /// a free port.
    pub addr: String,
    /// `--url`: absolute chart URLs under this base.
    pub url: Option<String>,
    pub allow_overwrite: bool,
    pub max_upload_size: usize,
    pub require_signature: Option<Keyring>,
    pub auth: Auth,
    pub auth_reads: bool,
    pub tls: Option<TlsFiles>,
    /// How often to look for changes made by others (other replicas, files copied in).
    pub refresh_interval: Duration,
    pub limits: Limits,
    /// The most bytes one chart version may add to index.yaml.
    pub max_index_entry_size: usize,
    /// `--max-storage-objects`, `--per-chart-limit`, `--index-limit`.
    pub repository_limits: RepositoryLimits,
    /// `--artifact-hub-repo-id`: served as `/artifacthub-repo.yml`.
    pub artifact_hub_repo_id: Option<String>,
    /// `--disable-metrics`: `/metrics` answers 404.
    pub disable_metrics: bool,
    /// `--metrics-without-auth`: `/metrics` needs no credentials.
    pub metrics_without_auth: bool,
    /// `--chart-form-field`, `--prov-form-field`.
    pub form_fields: FormFields,
    /// `--json-index`: index.yaml served as JSON, as ChartMuseum's option writes it.
    pub json_index: bool,
    /// Uploads received and checked at once; more wait up to [`UPLOAD_WAIT`], then get 503.
    pub max_concurrent_uploads: usize,
    /// How long clients may take over each stage of a connection.
    pub timeouts: Timeouts,
    /// Connections open at once (see [`default_max_connections`]).
    pub max_connections: usize,
    /// The first component of the charts' OCI repository names (`charts`: `oci://HOST/charts/NAME`).
    pub oci_namespace: String,
    /// Keep OCI artifacts other than charts (signatures, SBOMs) beside the charts.
    pub oci_artifacts: bool,
    /// `--disable-delete`: no chart version, manifest or blob is deleted through either face.
    pub disable_delete: bool,
    /// `--context-path`: every route under this prefix (`/charts`), or at the root.
    pub context_path: Option<String>,
    /// `--disable-api`: ChartMuseum's `/api/` routes answer 404.
    pub disable_api: bool,
    /// `--disable-force-overwrite`: `?force` on an upload replaces nothing.
    pub disable_force_overwrite: bool,
    /// When the registry's garbage collection runs and what it spares.
    pub oci_gc: oci::gc::GcSettings,
    /// `--depth`/`--depth-dynamic`: one repository, or one per path prefix.
    pub depth: tenancy::Depth,
    /// ChartMuseum's scoped bearer tokens (JWTs from an outside authorization server),
    /// checked instead of `auth`.
    pub jwt: Option<auth_jwt::JwtAuth>,
    /// `--cors-allow-origin`: the `Access-Control-Allow-Origin` of API answers.
    pub cors_allow_origin: Option<String>,
    /// How each request is logged.
    pub request_log: request_log::RequestLog,
    /// The web view (`None` with `--disable-web`).
    pub web: Option<web::WebOptions>,
}

/// How long an upload waits for its turn before the server answers 503.
pub const UPLOAD_WAIT: Duration = Duration::from_secs(10);

/// PEM files for `--tls-cert` and `--tls-key`.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// `--tls-client-ca`: client certificates are required and must chain to these CAs.
    pub client_ca: Option<PathBuf>,
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("cannot make a temporary directory for registry uploads: {0}")]
    Uploads(String),
    #[error("the CORS origin cannot be sent as an HTTP header value")]
    CorsOrigin,
}

/// A server that has read its storage and bound its address, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    app: axum::Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
    repo: Arc<Repository>,
    refresh_interval: Duration,
    initial: SyncReport,
    timeouts: Timeouts,
    max_connections: usize,
    state: api::AppState,
    tenants: Option<Arc<tenants::Tenants>>,
}

impl Server {
    /// Reads the whole repository from storage (in parallel), then binds.
    pub async fn bind(options: ServerOptions) -> Result<Server, ServerError> {
        let tls = options.tls.as_ref().map(tls::acceptor).transpose()?;
        let metrics = Arc::new(metrics::Metrics::default());
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let rules = PackageRules {
            limits: options.limits,
            max_entry_size: options.max_index_entry_size,
            // Checking is CPU work: more at once than cores only adds memory.
            concurrent_checks: options.max_concurrent_uploads.clamp(1, cores),
        };
        let mut repo = Repository::new(
            options.storage,
            UrlStyle { base: options.url },
            rules,
            Arc::clone(&metrics),
        );
        if let Some(reads) = options.repository_limits.index_reads {
            repo = repo.with_sync_reads(reads);
        }
        let repo = Arc::new(repo);
        let initial = repo.sync().await?;
        // tokio resolves a host name and tries each of its addresses in turn.
        let listener = tokio::net::TcpListener::bind(options.addr.as_str())
            .await
            .map_err(|source| ServerError::Bind {
                addr: options.addr.clone(),
                source,
            })?;
        let tokens = options
            .auth
            .is_enabled()
            .then(|| oci::token::Tokens::in_storage(Arc::clone(repo.storage())));
        let policy = Policy {
            allow_overwrite: options.allow_overwrite,
            max_upload_size: options.max_upload_size,
            require_signature: options.require_signature,
            auth: options.auth,
            auth_reads: options.auth_reads,
            uploads: publish::UploadSlots::new(options.max_concurrent_uploads, UPLOAD_WAIT),
            delete: !options.disable_delete,
            api: !options.disable_api,
            force_overwrite: !options.disable_force_overwrite,
            limits: options.repository_limits,
            artifact_hub_repo_id: options.artifact_hub_repo_id,
            metrics: !options.disable_metrics,
            context_path: options.context_path.clone().unwrap_or_default(),
            metrics_without_auth: options.metrics_without_auth,
            form_fields: options.form_fields,
            json_index: options.json_index,
            jwt: options.jwt,
            cors_allow_origin: options
                .cors_allow_origin
                .as_deref()
                .map(axum::http::HeaderValue::from_str)
                .transpose()
                .map_err(|_| ServerError::CorsOrigin)?,
            request_log: options.request_log,
            web: options.web.map(web::Web::new),
        };
        // A session idle past the grace period could only be finished into a blob that
        // garbage collection may already consider abandoned.
        let idle = oci::uploads::IDLE_TIMEOUT.min(options.oci_gc.grace);
        let uploads = oci::Uploads::new(oci::uploads::MAX_SESSIONS, idle)
            .map_err(|e| ServerError::Uploads(e.to_string()))?;
        let registry = Arc::new(oci::Registry {
            namespace: options.oci_namespace,
            uploads,
            artifacts: options.oci_artifacts,
            gc: options.oci_gc,
            recent: oci::gc::RecentBlobs::default(),
            tokens,
            tls: tls.is_some(),
        });
        let state = api::AppState {
            repo: Arc::clone(&repo),
            policy: Arc::new(policy),
            metrics,
            registry,
        };
        let tenants = options
            .depth
            .is_multi_tenant()
            .then(|| tenants::Tenants::new(options.depth, state.clone()));
        if let Some(tenants) = &tenants {
            tenants.discover().await?;
        }
        let app = app(&state, tenants.as_ref(), options.context_path.as_deref());
        Ok(Server {
            listener,
            app,
            tls,
            repo,
            refresh_interval: options.refresh_interval,
            initial,
            timeouts: options.timeouts,
            max_connections: options.max_connections,
            state,
            tenants,
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    pub fn repository(&self) -> &Arc<Repository> {
        &self.repo
    }

    /// What the initial read of the storage found.
    pub fn initial_sync(&self) -> &SyncReport {
        &self.initial
    }

    /// Serves until `shutdown` completes, then stops accepting, lets requests in flight
    /// finish (up to 30 seconds) and returns.
    ///
    /// Each connection holds one of `max_connections` slots and runs under a watchdog that
    /// enforces the [`Timeouts`]; at the limit the longest-idle connection makes room
    /// (see [`connections`]).
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ServerError> {
        use hyper_util::rt::TokioExecutor;
        use hyper_util::server::conn::auto::Builder;

        let refresh = self.repo.spawn_refresh(self.refresh_interval);
        // Abandoned upload sessions are dropped even when no new upload starts, and the
        // registry's garbage is collected now and then (the first tick is at once).
        let registry = Arc::clone(&self.state.registry);
        let sweep = tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                every.tick().await;
                registry.uploads.sweep();
            }
        });
        let state = self.state.clone();
        let collect = tokio::spawn(async move {
            let mut every = tokio::time::interval(state.registry.gc.interval);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                if let Err(error) = oci::gc::collect(&state).await {
                    tracing::warn!(%error, "registry garbage collection failed; trying again later");
                }
            }
        });
        let tenant_tasks = self.tenants.as_ref().map(|tenants| {
            (
                tenants.spawn_refresh(self.refresh_interval),
                tenants.spawn_collect(),
            )
        });
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let builder = Builder::new(TokioExecutor::new());
        let connections = connections::Connections::new(self.max_connections);
        // Out of descriptors, an accept fails every time it is tried: warn once in a while,
        // not 20 times a second.
        let mut accept_failed = connections::Throttle::new(Duration::from_secs(10));
        let mut limit_reached = connections::Throttle::new(Duration::from_secs(10));
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(connection) => connection,
                    Err(error) => {
                        if connections::out_of_descriptors(&error) {
                            // Closing an idle connection gives a descriptor back.
                            connections.evict_idlest();
                        }
                        if let Some(suppressed) = accept_failed.ready(tokio::time::Instant::now()) {
                            tracing::warn!(%error, suppressed, "accept failed");
                        }
                        // Back off rather than spin: the failed connection is still pending.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let slot = tokio::select! {
                slot = connections.claim(&mut limit_reached) => slot,
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            let service = connections::Tracked::new(
                self.app.clone(),
                peer,
                Arc::clone(slot.activity()),
                self.timeouts.read_body,
            );
            let builder = builder.clone();
            let watcher = graceful.watcher();
            let tls = self.tls.clone();
            let timeouts = self.timeouts;
            tokio::spawn(async move {
                let activity = Arc::clone(slot.activity());
                let connection = serve_connection(
                    stream,
                    peer,
                    tls,
                    &builder,
                    service,
                    watcher,
                    &activity,
                    timeouts.tls_handshake,
                );
                if let Err(reason) = connections::supervise(connection, &activity, &timeouts).await
                {
                    tracing::debug!(%peer, reason, "connection closed");
                }
                drop(slot);
            });
        }
        drop(self.listener);
        refresh.abort();
        sweep.abort();
        collect.abort();
        if let Some((refresh, collect)) = tenant_tasks {
            refresh.abort();
            collect.abort();
        }
        tracing::info!("shutting down: finishing requests in flight");
        if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("requests still running after 30 seconds; stopping anyway");
        }
        Ok(())
    }
}

/// Every route the server answers: one repository's or the tenants' dispatch, under the
/// context path if there is one.
pub(crate) fn app(
    state: &api::AppState,
    tenants: Option<&Arc<tenants::Tenants>>,
    context_path: Option<&str>,
) -> axum::Router {
    match (tenants, context_path) {
        // Every route under the prefix, as ChartMuseum's `--context-path` puts them;
        // anything else is not found, but /metrics, which ChartMuseum keeps at the root.
        (None, Some(prefix)) => {
            // A nested router's `/` is the prefix alone; the prefix with its slash (the web
            // view's address, where its links and search form point) is the same.
            let slash_root = tower::ServiceExt::map_request(
                api::router(state.clone()),
                |mut request: axum::extract::Request| {
                    let root = match request.uri().query() {
                        Some(query) => format!("/?{query}"),
                        None => "/".to_owned(),
                    };
                    if let Ok(uri) = root.parse() {
                        *request.uri_mut() = uri;
                    }
                    request
                },
            );
            axum::Router::new()
                .route_service(&format!("{prefix}/"), slash_root)
                .nest(prefix, api::router(state.clone()))
                .merge(api::metrics_router(state.clone()))
        }
        (None, None) => api::router(state.clone()),
        // The tenants' router has no routes of its own, only the dispatch, which a
        // nested router would never reach: the prefix is taken off as a service's.
        (Some(tenants), Some(prefix)) => axum::Router::new()
            .nest_service(prefix, tenants.router())
            .merge(tenants.metrics_router()),
        (Some(tenants), None) => tenants.router(),
    }
}

/// Serves one connection: the TLS handshake (within its timeout), then HTTP/1.1 or HTTP/2.
#[allow(clippy::too_many_arguments)]
async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    builder: &hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>,
    service: connections::Tracked,
    watcher: hyper_util::server::graceful::Watcher,
    activity: &Arc<connections::Activity>,
    tls_handshake: Duration,
) {
    use connections::TimedIo;
    use hyper_util::rt::TokioIo;

    let served = match tls {
        Some(acceptor) => {
            activity.begin_handshake();
            let stream = match tokio::time::timeout(tls_handshake, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake not done within --tls-handshake-timeout");
                    return;
                }
            };
            activity.restart();
            let io = TokioIo::new(TimedIo::new(stream, Arc::clone(activity)));
            watcher.watch(builder.serve_connection(io, service)).await
        }
        None => {
            let io = TokioIo::new(TimedIo::new(stream, Arc::clone(activity)));
            watcher.watch(builder.serve_connection(io, service)).await
        }
    };
    if let Err(error) = served {
        tracing::debug!(%peer, %error, "connection ended with an error");
    }
}
