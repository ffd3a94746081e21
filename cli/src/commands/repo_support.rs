//! What the repository commands share: the client built from the environment and the
//! flags, repository flags applied to an entry, and hints for the client's errors.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use chartkit_cluster::KubeOptions;
use chartkit_repo_client::{Access, Client, ClientError, Getters, Network, Paths, RepoEntry};

use crate::cli::RepoAccessArgs;
use crate::env;
use crate::report::with_hint;

/// helm's global `--repository-config`, `--repository-cache` and `--registry-config`,
/// and chartkit's `--max-index-size`, recorded once per process as the Kubernetes flags are; unset on the fast path, where
/// none was given.
static LOCATIONS: OnceLock<Locations> = OnceLock::new();

#[derive(Debug, Default)]
struct Locations {
    repository_config: Option<PathBuf>,
    repository_cache: Option<PathBuf>,
    registry_config: Option<PathBuf>,
    max_index_size: Option<u64>,
}

/// Records the global flags that say where the repository list and caches are.
pub fn use_locations(global: &crate::cli::GlobalArgs) {
    let _ = LOCATIONS.set(Locations {
        repository_config: global.repository_config.clone(),
        repository_cache: global.repository_cache.clone(),
        registry_config: global.registry_config.clone(),
        max_index_size: global.max_index_size,
    });
}

/// How to raise the bound on index downloads from `limit`.
pub fn index_limit_hint(limit: u64) -> String {
    format!(
        "if the repository is meant to serve an index that large, raise the limit with --max-index-size SIZE (e.g. --max-index-size {}) or {}=SIZE",
        size_argument(limit.saturating_mul(2)),
        env::MAX_INDEX_SIZE
    )
}

/// A size as `--max-index-size` takes it: whole GiB or MiB when it is, else bytes.
fn size_argument(bytes: u64) -> String {
    match bytes {
        0 => "0".to_owned(),
        b if b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b => b.to_string(),
    }
}

/// The bound on index downloads: `--max-index-size`, else CHARTKIT_MAX_INDEX_SIZE, else
/// the client's default.
fn max_index_size() -> crate::error::Result<u64> {
    if let Some(size) = LOCATIONS.get().and_then(|flags| flags.max_index_size) {
        return Ok(size);
    }
    match env::var(env::MAX_INDEX_SIZE) {
        None => Ok(chartkit_repo_client::DEFAULT_MAX_INDEX_SIZE),
        Some(text) => crate::cli::byte_size(&text).map_err(|why| {
            crate::error::err!("environment variable `{}`: {why}", env::MAX_INDEX_SIZE)
        }),
    }
}

/// Where the repository list, downloaded indexes and chartkit's own caches are, from
/// the global flags and the environment ([`env::repository_config`] and
/// [`env::repository_cache`] say the order).
pub fn paths() -> crate::error::Result<Paths> {
    let flags = LOCATIONS.get_or_init(Locations::default);
    let config_home = env::config_home().ok_or_else(|| {
        with_hint(
            crate::error::err!("cannot locate chartkit's settings directory"),
            format!("set {} (or HOME)", env::CONFIG_HOME),
        )
    })?;
    let cache_home = env::cache_home().ok_or_else(|| {
        with_hint(
            crate::error::err!("cannot locate chartkit's cache directory"),
            format!("set {} (or HOME)", env::CACHE_HOME),
        )
    })?;
    let repositories = env::repository_config(flags.repository_config.as_deref())
        .unwrap_or_else(|| config_home.join("repositories.yaml"));
    let indexes = env::repository_cache(flags.repository_cache.as_deref())
        .unwrap_or_else(|| cache_home.join("repository"));
    Ok(Paths {
        config_home,
        cache_home,
        repositories: Some(repositories),
        indexes: Some(indexes),
        registry_config: env::registry_config(flags.registry_config.as_deref()),
    })
}

/// The cluster `portforward://` repositories are reached through: the global
/// Kubernetes flags, set once per process before any command runs (like the network
/// itself, it is a property of the process rather than of one command's arguments).
/// Unset for a command parsed on the fast path, whose flags' variables are then read
/// when a client is made.
static KUBE: OnceLock<KubeOptions> = OnceLock::new();

/// Records the global Kubernetes flags for the repository client's tunnels.
pub fn use_kube(options: KubeOptions) {
    let _ = KUBE.set(options);
}

/// helm's global flags as the command gave them, for the settings a getter plugin is
/// run with; unset on the fast path, where the environment says them.
static PLUGIN_FLAGS: OnceLock<(crate::cli::KubeArgs, crate::cli::GlobalArgs)> = OnceLock::new();

/// Records the global flags getter plugins are told about.
pub fn use_plugin_flags(kube: &crate::cli::KubeArgs, global: &crate::cli::GlobalArgs) {
    let _ = PLUGIN_FLAGS.set((kube.clone(), global.clone()));
}

/// The getter plugins in Helm's plugin directories, with helm's settings. Unreadable
/// plugins are passed over, as helm passes them over when collecting getters.
fn getters() -> Getters {
    let plugins = chartkit_plugin::find_plugins(&env::helm_plugins(), Some("getter/v1"))
        .map(|found| found.plugins)
        .unwrap_or_default();
    if plugins.is_empty() {
        return Getters::default();
    }
    let settings = match PLUGIN_FLAGS.get() {
        Some((kube, global)) => super::helm_env::settings(kube, global),
        None => super::helm_env::settings(
            &crate::cli::KubeArgs::from_env(),
            &crate::cli::GlobalArgs::default(),
        ),
    };
    Getters::new(plugins, settings)
}

/// The client: online unless `--offline` or CHARTKIT_OFFLINE says otherwise.
pub fn client(offline: bool, timeout_secs: u64) -> crate::error::Result<Client> {
    client_at(paths()?, offline, timeout_secs)
}

/// [`client`] over the given paths.
pub fn client_at(paths: Paths, offline: bool, timeout_secs: u64) -> crate::error::Result<Client> {
    // Offline, no tunnel is ever opened: the network that would carry it does not exist.
    let network = if offline || env::offline() {
        Network::Offline
    } else {
        let kube = KUBE
            .get()
            .cloned()
            .unwrap_or_else(|| crate::kube::options(&crate::cli::KubeArgs::from_env()));
        Network::online_with_tunnels(
            Duration::from_secs(timeout_secs),
            crate::kube::tunnels(kube),
        )
        .map_err(client_error)?
        .with_getters(getters())
    };
    let max_index_size = max_index_size()?;
    Ok(Client::new(paths, network)
        .map_err(client_error)?
        .with_max_index_size(max_index_size))
}

/// The repository flags over an entry's stored settings.
pub fn apply_access(entry: &mut RepoEntry, access: &RepoAccessArgs) {
    self::access(access).apply(entry);
}

/// The repository flags as the resolver takes them.
pub fn access(args: &RepoAccessArgs) -> Access {
    Access {
        username: args.username.clone(),
        password: args.password.clone(),
        token: args.token.clone(),
        ca_file: args.ca_file.clone(),
        cert_file: args.cert_file.clone(),
        key_file: args.key_file.clone(),
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        pass_credentials: args.pass_credentials,
        plain_http: args.plain_http,
    }
}

/// A client error with the next step for the user.
pub fn client_error(error: ClientError) -> crate::error::Error {
    let hint = match &error {
        ClientError::Offline { fetch, .. } if fetch.is_empty() => {
            Some("run the command again without --offline (and without CHARTKIT_OFFLINE)".to_owned())
        }
        ClientError::Offline { fetch, .. } => Some(format!("run \"{fetch}\" without --offline")),
        ClientError::NoSuchRepo { name, .. } => Some(format!(
            "add it first: chartkit repo add {name} URL (chartkit and helm share the list); if `{name}/...` was meant as a path on disk, it does not exist"
        )),
        ClientError::NoCachedIndex { name } => {
            Some(format!("run \"chartkit repo update {name}\""))
        }
        ClientError::DigestMismatch { .. } => Some(
            "the package is not the one the index describes; nothing was kept. Run \"chartkit repo update\" in case the index is stale, or tell the repository's maintainers".to_owned(),
        ),
        ClientError::Status { status: 401 | 403, .. } => {
            Some("give credentials with --username/--password or --token".to_owned())
        }
        ClientError::Status { status: 404, .. } => {
            Some("check the URL: it should be the directory holding index.yaml".to_owned())
        }
        ClientError::Unreachable { .. } => {
            Some("check the URL and that the server is running".to_owned())
        }
        ClientError::Tunnel { .. } => Some(format!(
            "the port-forward is opened in the cluster --kubeconfig and --kube-context select, as install's connection is; the URL's form is {}",
            chartkit_repo_client::tunnel::FORM
        )),
        ClientError::IndexTooLarge { limit, .. } => Some(index_limit_hint(*limit)),
        ClientError::Registry(error) => oci_hint(error),
        ClientError::UnsupportedScheme { scheme } | ClientError::NoProtocolHandler { scheme } => {
            Some(format!(
                "chartkit reads http://, https://, portforward:// and oci://; `{scheme}://` needs a getter plugin serving it in Helm's plugin directory (`chartkit plugin list --type getter/v1` shows those installed)"
            ))
        }
        ClientError::ChartNotFound { .. } => Some(
            "list the versions with \"chartkit search repo NAME --versions\", or update the index with \"chartkit repo update\"".to_owned(),
        ),
        _ => None,
    };
    match hint {
        Some(hint) => with_hint(crate::error::Error::new(error), hint),
        None => crate::error::Error::new(error),
    }
}

/// The next step after a registry error.
pub fn oci_hint(error: &chartkit_oci::OciError) -> Option<String> {
    use chartkit_oci::OciError;
    match error {
        OciError::Unauthorized {
            registry,
            had_credentials: false,
            ..
        } => Some(format!(
            "log in with `chartkit registry login {registry}` (helm's logins are shared), or pass --username and --password"
        )),
        OciError::Unauthorized { registry, .. } => Some(format!(
            "check the username and password for {registry} (`chartkit registry login {registry}` stores new ones)"
        )),
        OciError::DigestMismatch { .. } => Some(
            "the registry serves other bytes than its manifest names; tell its operators".to_owned(),
        ),
        OciError::Unreachable { url, .. } if url.starts_with("https://") => Some(
            "a registry serving plain http needs --plain-http; one with a private CA needs --ca-file".to_owned(),
        ),
        OciError::NoMatchingVersion { .. } | OciError::NoTags { .. } => {
            Some("give a version or range the registry's tags satisfy (--version), or --devel for pre-releases".to_owned())
        }
        _ => None,
    }
}

/// A JSON array of objects with string fields, as Go's encoder writes it.
pub fn go_json_rows(rows: &[Vec<(&str, &str)>]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|row| {
            let fields: Vec<String> = row
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        chartkit_yaml::gojson::string(k),
                        chartkit_yaml::gojson::string(v)
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    format!("[{}]\n", items.join(","))
}

/// The same rows as go-yaml writes a list of maps (keys sorted, as sigs.k8s.io/yaml
/// sorts them through JSON).
pub fn yaml_rows(rows: &[Vec<(&str, &str)>]) -> String {
    use chartkit_yaml::Value;
    let value = Value::Seq(
        rows.iter()
            .map(|row| {
                let mut fields: Vec<&(&str, &str)> = row.iter().collect();
                fields.sort_by_key(|(k, _)| *k);
                Value::Map(
                    fields
                        .into_iter()
                        .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
                        .collect(),
                )
            })
            .collect(),
    );
    chartkit_yaml::to_yaml(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped_as_go_escapes_them() {
        assert_eq!(
            chartkit_yaml::gojson::string("a<b>&\"c\"\n"),
            r#""a\u003cb\u003e\u0026\"c\"\n""#
        );
        assert_eq!(go_json_rows(&[]), "[]\n");
    }
}
