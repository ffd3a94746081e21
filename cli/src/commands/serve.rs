use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Context;
use chartkit_repo_server::{
    Auth, BucketStorage, GcsStorage, LocalStorage, Server, ServerOptions, Storage, Timeouts,
    TlsFiles,
};

use crate::cli::ServeArgs;
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
    serve(parsed, &personality)
}

type ChartMuseum = chartkit_repo_server::chartmuseum::Personality;

fn serve(args: ServeArgs, chartmuseum: &ChartMuseum) -> crate::error::Result<ExitCode> {
    init_logging(chartmuseum.debug);
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
    if args.auth_reads && !auth.is_enabled() {
        return Err(with_hint(
            crate::error::err!("--auth-reads needs credentials to check"),
            "add --basic-auth-file or --bearer-token-file",
        ));
    }
    let require_signature = match (&args.keyring, args.require_signature) {
        (Some(path), true) => Some(super::read_keyring(path)?),
        _ => None,
    };
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
        let mut banner = format!(
            "Serving {count} chart {} from {}\n",
            if count == 1 { "version" } else { "versions" },
            repo.storage().describe()
        );
        for (file, reason) in &server.initial_sync().skipped {
            banner.push_str(&format!("  skipped {file}: {reason}\n"));
        }
        let prefix = context_path(args.context_path.as_deref())?.unwrap_or_default();
        banner.push_str(&format!("Listening on {scheme}://{addr}{prefix}/\n"));
        banner.push_str(&format!(
            "Use it with: helm repo add NAME {}\n",
            args.url
                .clone()
                .unwrap_or_else(|| format!("{scheme}://{addr}{prefix}"))
        ));
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
fn init_logging(debug: bool) {
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
