//! Every environment variable chartkit reads, in one place.
//!
//! Flags with an environment fallback are declared with clap (`env = ...`), so their
//! variables are named here and used in `cli.rs`. The S3 backend of `chartkit serve` reads
//! the standard `AWS_*` variables through `object_store` (see `chartkit-repo-server`).

/// Largest single file in a chart, in bytes (default 5 MiB).
pub const MAX_FILE_SIZE: &str = "CHARTKIT_MAX_FILE_SIZE";
/// Largest total size of a chart's files, in bytes (default 100 MiB).
pub const MAX_CHART_SIZE: &str = "CHARTKIT_MAX_CHART_SIZE";
/// Bytes one render (`template`, `lint`) may build in template output and in the
/// strings and lists template functions make (default 1 GiB).
pub const MAX_RENDER_MEMORY: &str = "CHARTKIT_MAX_RENDER_MEMORY";
/// The largest repository index a command downloads, in bytes or with a unit (`512MiB`,
/// `2GiB`); `--max-index-size` wins (default 512 MiB).
pub const MAX_INDEX_SIZE: &str = "CHARTKIT_MAX_INDEX_SIZE";
/// Seconds since the epoch written as the modification time of packaged files
/// (the reproducible-builds convention; default 0).
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// Directory for chartkit's caches (default `$XDG_CACHE_HOME/chartkit`, then
/// `$HOME/.cache/chartkit`).
pub const CACHE_HOME: &str = "CHARTKIT_CACHE_HOME";
/// Directory for chartkit's settings (default `$XDG_CONFIG_HOME/chartkit`, then
/// `$HOME/.config/chartkit`). When set, it also holds the repository list
/// (`repositories.yaml`) instead of helm's, unless HELM_REPOSITORY_CONFIG or
/// `--repository-config` names one, and downloaded indexes go to chartkit's cache
/// instead of helm's: it isolates chartkit from the user's helm.
pub const CONFIG_HOME: &str = "CHARTKIT_CONFIG_HOME";
/// Set to `1` (or `true`) to work offline, as `--offline` does: no command opens a
/// network connection, and each either succeeds from the cache or says what is missing.
pub const OFFLINE: &str = "CHARTKIT_OFFLINE";
/// Log filter for `chartkit serve` (tracing's syntax, e.g. `debug` or
/// `chartkit_repo_server=debug`; default `info`).
pub const LOG: &str = "CHARTKIT_LOG";
/// `--username` of push, pull, repo add, install and upgrade when the flag is absent.
pub const REPO_USERNAME: &str = "CHARTKIT_REPO_USERNAME";
/// `--password` of push, pull, repo add, install and upgrade when the flag is absent.
pub const REPO_PASSWORD: &str = "CHARTKIT_REPO_PASSWORD";
/// `--token` of push, pull, repo add, install and upgrade when the flag is absent.
pub const REPO_TOKEN: &str = "CHARTKIT_REPO_TOKEN";
/// Set (to anything) to turn off colour in `chartkit serve`'s logs; non-empty, it also
/// keeps release tables plain whatever `--color` says, as helm does
/// (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";
/// The repository list (`repositories.yaml`) when `--repository-config` is not given;
/// chartkit and helm share it.
pub const HELM_REPOSITORY_CONFIG: &str = "HELM_REPOSITORY_CONFIG";
/// The directory of downloaded indexes (`NAME-index.yaml`, `NAME-charts.txt`) when
/// `--repository-cache` is not given; chartkit and helm share it.
pub const HELM_REPOSITORY_CACHE: &str = "HELM_REPOSITORY_CACHE";
/// helm's registry credentials file (`--registry-config`'s default), for OCI registries.
pub const HELM_REGISTRY_CONFIG: &str = "HELM_REGISTRY_CONFIG";
/// Helm's configuration base directory (default `$XDG_CONFIG_HOME/helm`, then
/// `$HOME/.config/helm`): its `repositories.yaml` is chartkit's by default.
pub const HELM_CONFIG_HOME: &str = "HELM_CONFIG_HOME";
/// Helm's cache base directory (default `$XDG_CACHE_HOME/helm`, then
/// `$HOME/.cache/helm`): its `repository/` holds the downloaded indexes by default.
pub const HELM_CACHE_HOME: &str = "HELM_CACHE_HOME";
/// Helm's data directory; `chartkit create --starter NAME` finds starters in its
/// `starters/` (default `$XDG_DATA_HOME/helm`, else `~/.local/share/helm`).
pub const HELM_DATA_HOME: &str = "HELM_DATA_HOME";
/// Helm's plugin directories (a path list); default `plugins/` in Helm's data directory.
/// chartkit finds, installs and runs plugins there, as helm does.
pub const HELM_PLUGINS: &str = "HELM_PLUGINS";
/// `1` turns plugins off: an unknown command is then only an error, as in helm.
pub const HELM_NO_PLUGINS: &str = "HELM_NO_PLUGINS";
/// Helm's content cache (`content/` in Helm's cache directory by default), reported by
/// `chartkit env` and to plugins.
pub const HELM_CONTENT_CACHE: &str = "HELM_CONTENT_CACHE";
/// Reported by `chartkit env` and to plugins as helm reports them (history limit, client
/// throttling), which chartkit reads nowhere else.
pub const HELM_MAX_HISTORY: &str = "HELM_MAX_HISTORY";
pub const HELM_BURST_LIMIT: &str = "HELM_BURST_LIMIT";
pub const HELM_QPS: &str = "HELM_QPS";
/// The XDG data base directory.
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// The XDG configuration base directory.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// The XDG cache base directory.
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// GnuPG's home directory; its `pubring.gpg` is the default keyring of `verify` and
/// `package --sign`, as in helm.
pub const GNUPGHOME: &str = "GNUPGHOME";
/// The user's home directory.
pub const HOME: &str = "HOME";
/// kubectl's list of kubeconfig files (the first one is written to); default
/// `~/.kube/config`.
pub const KUBECONFIG: &str = "KUBECONFIG";
/// helm's `--kube-context` when the flag is absent.
pub const HELM_KUBECONTEXT: &str = "HELM_KUBECONTEXT";
/// helm's `--kube-token` when the flag is absent.
pub const HELM_KUBETOKEN: &str = "HELM_KUBETOKEN";
/// helm's `--kube-apiserver` when the flag is absent.
pub const HELM_KUBEAPISERVER: &str = "HELM_KUBEAPISERVER";
/// helm's `--kube-as-user` when the flag is absent.
pub const HELM_KUBEASUSER: &str = "HELM_KUBEASUSER";
/// helm's `--kube-as-group` (comma-separated) when the flag is absent.
pub const HELM_KUBEASGROUPS: &str = "HELM_KUBEASGROUPS";
/// helm's `--kube-ca-file` when the flag is absent.
pub const HELM_KUBECAFILE: &str = "HELM_KUBECAFILE";
/// helm's `--kube-tls-server-name` when the flag is absent.
pub const HELM_KUBETLS_SERVER_NAME: &str = "HELM_KUBETLS_SERVER_NAME";
/// helm's `--kube-insecure-skip-tls-verify` when the flag is absent (`true`/`false`).
pub const HELM_KUBEINSECURE_SKIP_TLS_VERIFY: &str = "HELM_KUBEINSECURE_SKIP_TLS_VERIFY";
/// helm's `--namespace` when the flag is absent.
pub const HELM_NAMESPACE: &str = "HELM_NAMESPACE";
/// helm's `--debug` when the flag is absent (`true`/`false`).
pub const HELM_DEBUG: &str = "HELM_DEBUG";
/// helm's `--color` when the flag is absent: never, auto or always, in any case; any
/// other value is auto, as helm reads it.
pub const HELM_COLOR: &str = "HELM_COLOR";
/// helm-diff's colour switch for `chartkit diff` when neither --no-color nor --color is
/// given: `true` or `false` (Go's boolean spellings); anything else is ignored.
pub const HELM_DIFF_COLOR: &str = "HELM_DIFF_COLOR";
/// `chartkit diff`'s `--context` when the flag is absent (an integer; anything else is
/// ignored, as helm-diff ignores it).
pub const HELM_DIFF_OUTPUT_CONTEXT: &str = "HELM_DIFF_OUTPUT_CONTEXT";
/// The terminal type; `dumb` turns `chartkit diff`'s colours off, as helm-diff's.
pub const TERM: &str = "TERM";
/// Directory for chartkit's runtime state, such as a background sandbox's address and
/// log (default `$XDG_STATE_HOME/chartkit`, then `$HOME/.local/state/chartkit`).
pub const STATE_HOME: &str = "CHARTKIT_STATE_HOME";
/// The XDG state base directory.
pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
/// Where release records are kept, as helm reads it: `secret` (the default, also
/// `secrets` or empty) or `configmap`/`configmaps`. helm's `memory` and `sql` are refused.
pub const HELM_DRIVER: &str = "HELM_DRIVER";
/// Seconds a release lock lasts without renewal (default 30). An install, upgrade,
/// rollback or uninstall holds a Lease named `chartkit.release.NAME` in the release's
/// namespace and renews it every third of this; when the process is killed, the next
/// operation on the release waits out this long at most before recovering it (none at all
/// when the dead process ran on the same machine).
pub const RELEASE_LOCK_SECONDS: &str = "CHARTKIT_RELEASE_LOCK_SECONDS";
/// The user named in a release lock's holder (with the host and process id).
pub const USER: &str = "USER";
/// The login name, when `USER` is not set (cron jobs, some CI runners).
pub const LOGNAME: &str = "LOGNAME";
/// The host named in a release lock's holder.
pub const HOSTNAME: &str = "HOSTNAME";
/// The local time zone, as Go reads it: an IANA name (`:` prefix allowed), UTC when set
/// but empty or unknown; unset means /etc/localtime. Release times print in it as helm's do.
pub const TZ: &str = "TZ";

/// The storage driver `HELM_DRIVER` names (empty when unset).
pub fn helm_driver() -> String {
    var(HELM_DRIVER).unwrap_or_default()
}

/// Go's `time.Local`: `$TZ` when set, else the zone /etc/localtime links to, else UTC.
/// (A /etc/localtime that is a copied file rather than a link reads as UTC.)
pub fn local_zone() -> chartkit_release::LocalZone {
    use chartkit_release::LocalZone;
    match std::env::var(TZ) {
        Ok(name) => LocalZone::from_name(&name),
        Err(_) => std::fs::read_link("/etc/localtime")
            .ok()
            .and_then(|target| {
                let text = target.to_string_lossy().into_owned();
                text.split_once("zoneinfo/")
                    .map(|(_, name)| name.to_owned())
            })
            .map(|name| LocalZone::from_name(&name))
            .unwrap_or_default(),
    }
}

/// chartkit's cache directory, from the environment.
pub fn cache_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(CACHE_HOME)
        .map(PathBuf::from)
        .or_else(|| var(XDG_CACHE_HOME).map(|d| PathBuf::from(d).join("chartkit")))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".cache/chartkit")))
}

/// chartkit's settings directory, from the environment.
pub fn config_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(CONFIG_HOME)
        .map(PathBuf::from)
        .or_else(|| var(XDG_CONFIG_HOME).map(|d| PathBuf::from(d).join("chartkit")))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".config/chartkit")))
}

/// chartkit's runtime state directory, from the environment.
pub fn state_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(STATE_HOME)
        .map(PathBuf::from)
        .or_else(|| var(XDG_STATE_HOME).map(|d| PathBuf::from(d).join("chartkit")))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".local/state/chartkit")))
}

/// The kubeconfig file written to: the first path in KUBECONFIG, else `~/.kube/config`.
pub fn kubeconfig_path() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let sep = if cfg!(windows) { ';' } else { ':' };
    var(KUBECONFIG)
        .and_then(|v| v.split(sep).find(|p| !p.is_empty()).map(PathBuf::from))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".kube/config")))
}

/// The kubeconfig files to read when `--kubeconfig` is not given: KUBECONFIG's list
/// (merged, missing files skipped), else `~/.kube/config`.
pub fn kubeconfig_search() -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let sep = if cfg!(windows) { ';' } else { ':' };
    match var(KUBECONFIG) {
        Some(list) => list
            .split(sep)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect(),
        None => var(HOME)
            .map(|d| vec![PathBuf::from(d).join(".kube/config")])
            .unwrap_or_default(),
    }
}

/// True when CHARTKIT_OFFLINE asks for offline work (`1`, `true`, `yes`, `on`).
pub fn offline() -> bool {
    var(OFFLINE)
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// Where Helm keeps its repository list, by Helm's own rules.
pub fn helm_repository_config() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(path) = var(HELM_REPOSITORY_CONFIG) {
        return Some(PathBuf::from(path));
    }
    Some(helm_config_home()?.join("repositories.yaml"))
}

/// Helm's configuration directory, by Helm's rules.
fn helm_config_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(HELM_CONFIG_HOME)
        .map(PathBuf::from)
        .or_else(|| var(XDG_CONFIG_HOME).map(|d| PathBuf::from(d).join("helm")))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".config/helm")))
}

/// Helm's cache directory, by Helm's rules.
fn helm_cache_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(HELM_CACHE_HOME)
        .map(PathBuf::from)
        .or_else(|| var(XDG_CACHE_HOME).map(|d| PathBuf::from(d).join("helm")))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".cache/helm")))
}

/// chartkit's repository list: `--repository-config`, else HELM_REPOSITORY_CONFIG, else
/// CHARTKIT_CONFIG_HOME's when that is set, else helm's own.
pub fn repository_config(flag: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_owned());
    }
    if let Some(path) = var(HELM_REPOSITORY_CONFIG) {
        return Some(path.into());
    }
    if let Some(dir) = var(CONFIG_HOME) {
        return Some(std::path::PathBuf::from(dir).join("repositories.yaml"));
    }
    helm_repository_config()
}

/// The directory of downloaded indexes: `--repository-cache`, else
/// HELM_REPOSITORY_CACHE, else chartkit's cache when CHARTKIT_CONFIG_HOME or
/// CHARTKIT_CACHE_HOME isolates chartkit, else helm's own.
pub fn repository_cache(flag: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_owned());
    }
    if let Some(path) = var(HELM_REPOSITORY_CACHE) {
        return Some(path.into());
    }
    if var(CONFIG_HOME).is_some() || var(CACHE_HOME).is_some() {
        return Some(cache_home()?.join("repository"));
    }
    Some(helm_cache_home()?.join("repository"))
}

/// helm's registry credentials file: `--registry-config`, else HELM_REGISTRY_CONFIG,
/// else `registry/config.json` in helm's configuration directory.
pub fn registry_config(flag: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_owned());
    }
    if let Some(path) = var(HELM_REGISTRY_CONFIG) {
        return Some(path.into());
    }
    Some(helm_config_home()?.join("registry/config.json"))
}

/// helm's default keyring: `$GNUPGHOME/pubring.gpg`, else `$HOME/.gnupg/pubring.gpg`.
pub fn default_keyring() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(GNUPGHOME)
        .map(|d| PathBuf::from(d).join("pubring.gpg"))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".gnupg/pubring.gpg")))
}

/// Helm's data directory, by Helm's rules.
pub fn helm_data_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    var(HELM_DATA_HOME)
        .map(PathBuf::from)
        .or_else(|| var(XDG_DATA_HOME).map(|d| PathBuf::from(d).join("helm")))
        .or_else(|| var(HOME).map(|d| PathBuf::from(d).join(".local/share/helm")))
}

/// Helm's plugin directories: HELM_PLUGINS (a path list; set but empty is no
/// directory, as in helm), else `plugins/` in Helm's data directory.
pub fn helm_plugins() -> Vec<std::path::PathBuf> {
    match std::env::var_os(HELM_PLUGINS) {
        Some(list) => std::env::split_paths(&list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
        None => helm_data_home()
            .map(|d| vec![d.join("plugins")])
            .unwrap_or_default(),
    }
}

/// The first of Helm's plugin directories, where plugins are installed.
pub fn helm_plugins_install_dir() -> Option<std::path::PathBuf> {
    helm_plugins().into_iter().next()
}

/// Helm's configuration, cache and data directories, as `helm env` reports them.
pub fn helm_homes() -> [Option<std::path::PathBuf>; 3] {
    [helm_config_home(), helm_cache_home(), helm_data_home()]
}

/// Reads a variable; unset and empty are the same.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Reads a numeric variable, naming it when the value is not a number.
pub fn number(name: &str) -> crate::error::Result<Option<u64>> {
    match var(name) {
        None => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|_| {
            crate::error::err!(
                "environment variable `{name}` must be a whole number, found `{text}`"
            )
        }),
    }
}

/// The release lock's duration and a holder name that tells a user who meets the lock
/// whose it is: `chartkit upgrade by alice@build-7 (pid 4121)`.
pub fn release_lock(operation: &str) -> crate::error::Result<chartkit_engine::LockSettings> {
    let mut settings = chartkit_engine::LockSettings::default();
    if let Some(seconds) = number(RELEASE_LOCK_SECONDS)? {
        if seconds == 0 {
            return Err(crate::error::err!(
                "environment variable `{RELEASE_LOCK_SECONDS}` must be at least 1"
            ));
        }
        settings.ttl = std::time::Duration::from_secs(seconds);
    }
    let host = var(HOSTNAME)
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    let user = var(USER)
        .or_else(|| var(LOGNAME))
        .unwrap_or_else(|| format!("uid {}", current_uid().unwrap_or_default()));
    settings.holder = format!(
        "chartkit {operation} by {user}@{host} (pid {})",
        std::process::id()
    );
    Ok(settings)
}

/// The process's user id, from /proc (Linux); None elsewhere.
fn current_uid() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .map(str::to_string)
}
