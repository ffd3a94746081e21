use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Context;
use chartkit_repo_server::{
    Auth, BucketStorage, GcsStorage, LocalStorage, Server, ServerOptions, Storage, Timeouts,
    TlsFiles,
};

use chartkit_repo_server::auth_jwt::{JwtAuth, JwtOptions};
use chartkit_repo_server::request_log::RequestLog;

use crate::cli::{ServeArgs, ServeLogFormat};
use crate::env;
use crate::report::with_hint;

pub fn run(args: ServeArgs) -> crate::error::Result<ExitCode> {
    if args.chartmuseum {
        crate::error::bail!(
            "--chartmuseum must come right after `serve`, before ChartMuseum's flags"
        );
    }
    serve(args, &ChartMuseum::default())
}

/// Runs as ChartMuseum: its command line (`args`, without the program name), environment
/// and config file, read by the server library and served by `chartkit serve`.
pub fn run_chartmuseum(args: &[String]) -> crate::error::Result<ExitCode> {
    use chartkit_repo_server::chartmuseum;
    let personality = chartmuseum::read(args, &|name| std::env::var(name).ok()).map_err(|e| {
        with_hint(
            e,
            "README.md's \"Replacing ChartMuseum\" lists the ChartMuseum settings chartkit takes",
        )
    })?;
    chartmuseum::prepare(&personality)?;
    let serve_args =
        std::iter::once("serve".to_owned()).chain(personality.serve_args.iter().cloned());
    let parsed = crate::cli::parse_serve_args(serve_args).map_err(crate::error::Error::new)?;
    if personality.gen_index {
        return gen_index(&parsed, &personality);
    }
    serve(parsed, &personality)
}

/// ChartMuseum's `--gen-index`: the index the server would serve, on stdout, and exit.
fn gen_index(args: &ServeArgs, chartmuseum: &ChartMuseum) -> crate::error::Result<ExitCode> {
    use chartkit_repo_server::gen_index::{GenIndex, generate};
    let options = GenIndex {
        storage: open_storage(&args.storage, &chartmuseum.s3)?,
        url: args.url.clone(),
        limits: super::limits()?,
        max_index_entry_size: args.max_index_entry_size,
        json: args.json_index,
        context_path: context_path(args.context_path.as_deref())?.unwrap_or_default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (text, skipped) = runtime.block_on(generate(options))?;
    for (file, reason) in &skipped {
        crate::log::warn_with(
            "skipping a package that is not a usable chart",
            &[("file", file), ("reason", reason)],
        );
    }
    crate::output::stdout_bytes(&text)?;
    Ok(ExitCode::SUCCESS)
}

type ChartMuseum = chartkit_repo_server::chartmuseum::Personality;

fn serve(args: ServeArgs, chartmuseum: &ChartMuseum) -> crate::error::Result<ExitCode> {
    let json_log = args.log_format == ServeLogFormat::Json;
    init_logging(chartmuseum.debug, json_log);
    for warning in &chartmuseum.warnings {
        crate::log::warn(warning);
    }
    let storage = open_storage(&args.storage, &chartmuseum.s3)?;
    let mut auth = Auth::default();
    if let Some(user) = &chartmuseum.basic_auth {
        auth.add_plain_user(&user.user, &user.password)?;
    }
    if let Some(path) = &args.basic_auth_file {
        auth.add_htpasswd_file(path)?;
    }
    if let Some(path) = &args.bearer_token_file {
        auth.add_token_file(path)?;
    }
    let jwt = match &args.auth_jwt_cert {
        Some(cert) => Some(JwtAuth::new(&JwtOptions {
            realm: args.auth_jwt_realm.clone().unwrap_or_default(),
            service: args.auth_jwt_service.clone().unwrap_or_default(),
            cert: cert.clone(),
            search_path: args.auth_jwt_search_path.clone(),
        })?),
        None => None,
    };
    if args.auth_reads && !auth.is_enabled() && jwt.is_none() {
        return Err(with_hint(
            crate::error::err!("--auth-reads needs credentials to check"),
            "add --basic-auth-file, --bearer-token-file or --auth-jwt-cert",
        ));
    }
    let read_keyring = || args.keyring.as_deref().map(super::read_keyring).transpose();
    let require_signature = if args.require_signature {
        read_keyring()?
    } else {
        None
    };
    let keyring = read_keyring()?;
    let web = (!args.disable_web).then(|| chartkit_repo_server::web::WebOptions {
        keyring,
        repo_name: args.web_repo_name.clone(),
    });
    let refresh_interval = seconds("--refresh-interval", args.refresh_interval)?;
    let timeouts = Timeouts {
        read_header: seconds("--read-header-timeout", args.read_header_timeout)?,
        read_body: seconds("--read-timeout", args.read_timeout)?,
        idle: seconds("--idle-timeout", args.idle_timeout)?,
        tls_handshake: seconds("--tls-handshake-timeout", args.tls_handshake_timeout)?,
    };
    // Raises the soft open-file limit first: the default comes from it.
    let max_connections = chartkit_repo_server::connection_limit(
        args.max_connections
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    );
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: args.tls_client_ca.clone(),
        }),
        _ => None,
    };
    let options = ServerOptions {
        storage,
        addr: args.addr.clone(),
        url: args.url.clone(),
        allow_overwrite: args.allow_overwrite,
        max_upload_size: args.max_upload_size,
        require_signature,
        auth,
        auth_reads: args.auth_reads,
        tls,
        refresh_interval,
        limits: super::limits()?,
        max_index_entry_size: args.max_index_entry_size,
        repository_limits: chartkit_repo_server::RepositoryLimits {
            max_objects: args.max_storage_objects.map(count),
            per_chart: args.per_chart_limit.map(count),
            index_reads: args.index_limit.map(count),
        },
        artifact_hub_repo_id: args.artifact_hub_repo_id.clone(),
        disable_metrics: args.disable_metrics,
        metrics_without_auth: args.metrics_without_auth,
        form_fields: chartkit_repo_server::FormFields {
            chart: args.chart_form_field.clone(),
            prov: args.prov_form_field.clone(),
        },
        json_index: args.json_index,
        max_concurrent_uploads: usize::from(args.max_concurrent_uploads),
        timeouts,
        max_connections,
        oci_namespace: args.oci_namespace.clone(),
        oci_artifacts: args.oci_artifacts,
        disable_delete: args.disable_delete,
        disable_api: args.disable_api,
        context_path: context_path(args.context_path.as_deref())?,
        disable_force_overwrite: args.disable_force_overwrite,
        oci_gc: chartkit_repo_server::oci::gc::GcSettings {
            interval: seconds("--oci-gc-interval", args.oci_gc_interval)?,
            grace: seconds("--oci-gc-grace", args.oci_gc_grace)?,
        },
        depth: chartkit_repo_server::tenancy::Depth::new(args.depth, args.depth_dynamic),
        jwt,
        cors_allow_origin: args.cors_allow_origin.clone(),
        request_log: RequestLog {
            chartmuseum: json_log,
            health: args.log_health,
            latency_integer: args.log_latency_integer,
        },
        web,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let server = Server::bind(options).await.map_err(|e| match &e {
            chartkit_repo_server::ServerError::Bind { source, .. }
                if source.kind() == std::io::ErrorKind::AddrInUse =>
            {
                with_hint(
                    e,
                    "another process is using the port; pick another with --addr 127.0.0.1:PORT",
                )
            }
            chartkit_repo_server::ServerError::Bind { .. } => with_hint(
                e,
                "give --addr as HOST:PORT, the host an address or a name: 127.0.0.1:8879, localhost:8879, [::1]:8879",
            ),
            _ => e.into(),
        })?;
        let addr = server.local_addr()?;
        let scheme = if server.is_tls() { "https" } else { "http" };
        let repo = server.repository();
        let count = repo.chart_count();
        // At depth N the repositories are found as they are asked for.
        let (mut banner, repository_path) = match (args.depth, args.depth_dynamic) {
            (0, false) => (
                format!(
                    "Serving {count} chart {} from {}\n",
                    if count == 1 { "version" } else { "versions" },
                    repo.storage().describe()
                ),
                String::new(),
            ),
            (_, true) => (
                format!(
                    "Serving a repository at every path (--depth-dynamic) from {}\n",
                    repo.storage().describe()
                ),
                "/PATH".to_owned(),
            ),
            (depth, false) => (
                format!(
                    "Serving a repository per path of {depth} segment{} from {}\n",
                    if depth == 1 { "" } else { "s" },
                    repo.storage().describe()
                ),
                match depth {
                    1 => "/REPO".to_owned(),
                    2 => "/ORG/REPO".to_owned(),
                    3 => "/ORG/TEAM/REPO".to_owned(),
                    _ => "/ORG/…/REPO".to_owned(),
                },
            ),
        };
        for (file, reason) in &server.initial_sync().skipped {
            banner.push_str(&format!("  skipped {file}: {reason}\n"));
        }
        let prefix = context_path(args.context_path.as_deref())?.unwrap_or_default();
        banner.push_str(&format!("Listening on {scheme}://{addr}{prefix}/\n"));
        banner.push_str(&format!(
            "Use it with: helm repo add NAME {}{repository_path}\n",
            args.url
                .clone()
                .unwrap_or_else(|| format!("{scheme}://{addr}{prefix}"))
        ));
        if !args.disable_web {
            banner.push_str(&format!(
                "Browse it at: {scheme}://{addr}{prefix}{}/\n",
                if repository_path.starts_with("/PATH") {
                    ""
                } else {
                    &repository_path
                }
            ));
        }
        crate::output::stdout_bytes(banner.as_bytes())?;
        server.run(shutdown_signal()).await?;
        Ok(ExitCode::SUCCESS)
    })
}

/// `--context-path` as a prefix axum can nest under: one leading slash, none trailing;
/// `/` or empty is the root.
fn context_path(given: Option<&str>) -> crate::error::Result<Option<String>> {
    let Some(given) = given else {
        return Ok(None);
    };
    let trimmed = given.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(None);
    }
    if trimmed.contains("//") || trimmed.contains(['{', '}', '?', '#']) {
        crate::error::bail!("--context-path `{given}` is not a plain URL path");
    }
    Ok(Some(format!("/{trimmed}")))
}

/// A count from the command line, where a larger one than memory can index means no bound.
fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A flag's seconds as a duration; it must be positive.
fn seconds(flag: &str, value: f64) -> crate::error::Result<Duration> {
    if !(value.is_finite() && value > 0.0) {
        crate::error::bail!("{flag} must be a positive number of seconds, found {value}");
    }
    Duration::try_from_secs_f64(value)
        .map_err(|_| crate::error::err!("{flag} is too large: {value} seconds"))
}

fn open_storage(
    location: &str,
    s3: &chartkit_repo_server::S3Options,
) -> crate::error::Result<Arc<dyn Storage>> {
    if let Some((scheme, _)) = location.split_once("://") {
        return match scheme {
            "s3" => Ok(Arc::new(BucketStorage::open_s3_with(location, s3)?)),
            "gs" => Ok(Arc::new(GcsStorage::open(location)?)),
            "az" | "azure" => Ok(Arc::new(BucketStorage::open_azure(location)?)),
            _ => Err(with_hint(
                crate::error::err!("unsupported storage `{location}`"),
                format!(
                    "use a directory, s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX] or az://CONTAINER[/PREFIX]; `{scheme}://` is not supported"
                ),
            )),
        };
    }
    let dir = std::path::Path::new(location);
    if !dir.is_dir() {
        return Err(with_hint(
            crate::error::err!("`{location}` is not a directory"),
            format!("create it, or package charts into it: chartkit package CHART -d {location}"),
        ));
    }
    Ok(Arc::new(LocalStorage::open(dir)?))
}

/// Logs go to stderr; `CHARTKIT_LOG` takes tracing's target filter syntax (`debug`,
/// `chartkit_repo_server=debug,info`; default `info`). Colours only on a terminal (and not
/// with `NO_COLOR`), so log files stay plain text.
///
/// The filter is `Targets`, not `EnvFilter`: `EnvFilter` brings in regex-automata's DFA
/// builder, and with it every regex the program compiles (template functions, schema
/// patterns) also built a full DFA, most of the cost of compiling one.
fn init_logging(debug: bool, json: bool) {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let colour = std::io::stderr().is_terminal() && std::env::var_os(env::NO_COLOR).is_none();
    let filter = env::var(env::LOG)
        .and_then(|directives| directives.parse::<Targets>().ok())
        .unwrap_or_else(|| {
            Targets::new().with_default(if debug {
                LevelFilter::DEBUG
            } else {
                LevelFilter::INFO
            })
        });
    if json {
        let _ = tracing_subscriber::registry()
            .with(chartkit_repo_server::log_json::ZapJson::new(
                std::io::stderr(),
            ))
            .with(filter)
            .try_init();
        return;
    }
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(colour),
        )
        .with(filter)
        .try_init();
}

/// Completes on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
