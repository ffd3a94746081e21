//! The settings helm reports in `helm env` and hands to every plugin, computed from
//! chartkit's flags and environment by helm's rules.

use std::collections::BTreeMap;

use crate::cli::{GlobalArgs, KubeArgs};
use crate::env;

/// helm's `EnvSettings.EnvVars()`: every `HELM_*` setting by name, and `KUBECONFIG` when
/// `--kubeconfig` was given.
pub fn settings(kube: &KubeArgs, global: &GlobalArgs) -> BTreeMap<String, String> {
    let path =
        |p: Option<std::path::PathBuf>| p.map(|p| p.display().to_string()).unwrap_or_default();
    let [config_home, cache_home, data_home] = env::helm_homes();
    let plugins = std::env::var(env::HELM_PLUGINS)
        .ok()
        .unwrap_or_else(|| path(data_home.as_ref().map(|d| d.join("plugins"))));
    let content_cache = env::var(env::HELM_CONTENT_CACHE)
        .unwrap_or_else(|| path(cache_home.as_ref().map(|d| d.join("content"))));
    let int_or = |name: &str, default: i64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(default)
    };
    let burst = global
        .burst_limit
        .map(i64::from)
        .unwrap_or_else(|| int_or(env::HELM_BURST_LIMIT, 100));
    let qps = global.qps.unwrap_or_else(|| {
        std::env::var(env::HELM_QPS)
            .ok()
            .and_then(|v| v.parse::<f32>().ok())
            .unwrap_or(0.0)
    });
    // Only the flag: helm's flag binding resets the value it read from KUBECONFIG.
    let kubeconfig = kube
        .kubeconfig
        .as_ref()
        .map(|p| p.display().to_string())
        .filter(|k| !k.is_empty());
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut vars: BTreeMap<String, String> = [
        ("HELM_BIN", std::env::args().next().unwrap_or_default()),
        ("HELM_CACHE_HOME", path(cache_home)),
        ("HELM_CONFIG_HOME", path(config_home)),
        ("HELM_DATA_HOME", path(data_home)),
        ("HELM_DEBUG", global.debug.to_string()),
        ("HELM_PLUGINS", plugins),
        (
            "HELM_REGISTRY_CONFIG",
            path(env::registry_config(global.registry_config.as_deref())),
        ),
        (
            "HELM_REPOSITORY_CACHE",
            path(env::repository_cache(global.repository_cache.as_deref())),
        ),
        ("HELM_CONTENT_CACHE", content_cache),
        (
            "HELM_REPOSITORY_CONFIG",
            path(env::repository_config(global.repository_config.as_deref())),
        ),
        ("HELM_NAMESPACE", namespace(kube)),
        (
            "HELM_MAX_HISTORY",
            int_or(env::HELM_MAX_HISTORY, 10).to_string(),
        ),
        ("HELM_BURST_LIMIT", burst.to_string()),
        ("HELM_QPS", format!("{qps:.2}")),
        ("HELM_KUBECONTEXT", text(&kube.kube_context)),
        ("HELM_KUBETOKEN", text(&kube.kube_token)),
        ("HELM_KUBEASUSER", text(&kube.kube_as_user)),
        ("HELM_KUBEASGROUPS", kube.kube_as_group.join(",")),
        ("HELM_KUBEAPISERVER", text(&kube.kube_apiserver)),
        (
            "HELM_KUBECAFILE",
            kube.kube_ca_file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
        (
            "HELM_KUBEINSECURE_SKIP_TLS_VERIFY",
            kube.kube_insecure_skip_tls_verify.to_string(),
        ),
        ("HELM_KUBETLS_SERVER_NAME", text(&kube.kube_tls_server_name)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(kubeconfig) = kubeconfig {
        vars.insert("KUBECONFIG".into(), kubeconfig);
    }
    vars
}

/// The namespace helm reports: `--namespace`/HELM_NAMESPACE, else the kubeconfig
/// context's, else `default` (also when the kubeconfig cannot be read).
fn namespace(kube: &KubeArgs) -> String {
    if let Some(namespace) = kube.namespace.clone().filter(|n| !n.is_empty()) {
        return namespace;
    }
    let options = crate::kube::options(kube);
    tokio::runtime::Builder::new_current_thread()
        .build()
        .ok()
        .and_then(|runtime| runtime.block_on(options.resolve()).ok())
        .map(|resolved| resolved.namespace)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".to_owned())
}
