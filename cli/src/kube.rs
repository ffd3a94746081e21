//! The connection settings of cluster commands: helm's global flags and variables turned
//! into [`KubeOptions`].

use chartkit_cluster::{KubeOptions, KubeconfigSource};

use crate::cli::KubeArgs;
use crate::env;

/// The options for connecting, from the global flags (whose variables clap has read) and
/// KUBECONFIG.
// The release commands (list, status, install...) are its callers; until they land,
// nothing else is.
#[allow(dead_code)]
pub fn options(args: &KubeArgs) -> KubeOptions {
    let kubeconfig = match &args.kubeconfig {
        Some(path) => KubeconfigSource::Explicit(path.clone()),
        None => KubeconfigSource::Search(env::kubeconfig_search()),
    };
    KubeOptions {
        kubeconfig,
        context: args.kube_context.clone().filter(|c| !c.is_empty()),
        namespace: args.namespace.clone().filter(|n| !n.is_empty()),
        token: args.kube_token.clone().filter(|t| !t.is_empty()),
        apiserver: args.kube_apiserver.clone().filter(|s| !s.is_empty()),
        as_user: args.kube_as_user.clone().filter(|u| !u.is_empty()),
        as_groups: args
            .kube_as_group
            .iter()
            .filter(|g| !g.is_empty())
            .cloned()
            .collect(),
        ca_file: args.kube_ca_file.clone(),
        tls_server_name: args.kube_tls_server_name.clone().filter(|s| !s.is_empty()),
        insecure_skip_tls_verify: args.kube_insecure_skip_tls_verify,
        in_cluster_fallback: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[test]
    fn global_flags_reach_the_options_from_either_side_of_the_command() {
        let cli = crate::cli::Cli::try_parse_from([
            "chartkit",
            "--kube-context",
            "prod",
            "sandbox",
            "status",
            "-n",
            "apps",
            "--kube-as-group",
            "a,b",
            "--kubeconfig",
            "/k/config",
        ])
        .unwrap();
        let options = options(&cli.kube);
        assert_eq!(options.context.as_deref(), Some("prod"));
        assert_eq!(options.namespace.as_deref(), Some("apps"));
        assert_eq!(options.as_groups, ["a", "b"]);
        assert_eq!(
            options.kubeconfig,
            KubeconfigSource::Explicit("/k/config".into())
        );
    }

    #[test]
    fn template_keeps_its_own_namespace() {
        let cli =
            crate::cli::Cli::try_parse_from(["chartkit", "template", "c", "-n", "x"]).unwrap();
        match cli.command {
            crate::cli::Command::Template(args) => assert_eq!(args.namespace, "x"),
            other => panic!("{other:?}"),
        }
    }
}
