//! The connection settings of cluster commands: helm's global flags and variables turned
//! into [`KubeOptions`], and the repository client's tunnels for `portforward://`
//! repositories opened with them.

use std::net::SocketAddr;
use std::sync::Arc;

use chartkit_cluster::portforward::{PortRef, Resource, Target};
use chartkit_cluster::{KubeOptions, KubeconfigSource};
use chartkit_repo_client::{TunnelKind, TunnelPort, TunnelTarget};

use crate::cli::KubeArgs;
use crate::env;

/// The options for connecting, from the global flags (whose variables clap has read) and
/// KUBECONFIG.
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
        ca_file: args
            .kube_ca_file
            .clone()
            .filter(|p| !p.as_os_str().is_empty()),
        tls_server_name: args.kube_tls_server_name.clone().filter(|s| !s.is_empty()),
        insecure_skip_tls_verify: args.kube_insecure_skip_tls_verify,
        in_cluster_fallback: true,
    }
}

/// chartkit-cluster's tunnels as the repository client's: they connect to the cluster
/// `options` describe only when a `portforward://` URL is first used.
pub fn tunnels(options: KubeOptions) -> Arc<dyn chartkit_repo_client::Tunnels> {
    Arc::new(Tunnels(chartkit_cluster::portforward::Tunnels::new(
        options,
    )))
}

struct Tunnels(chartkit_cluster::portforward::Tunnels);

impl chartkit_repo_client::Tunnels for Tunnels {
    fn open(&self, target: &TunnelTarget) -> Result<SocketAddr, String> {
        self.0
            .open(&cluster_target(target))
            .map_err(|e| e.to_string())
    }

    fn take_failure(&self, target: &TunnelTarget) -> Option<String> {
        self.0.take_failure(&cluster_target(target))
    }
}

fn cluster_target(target: &TunnelTarget) -> Target {
    let name = target.name.clone();
    Target {
        namespace: target.namespace.clone(),
        resource: match target.kind {
            TunnelKind::Service => Resource::Service(name),
            TunnelKind::Pod => Resource::Pod(name),
            TunnelKind::Deployment => Resource::Deployment(name),
        },
        port: match &target.port {
            TunnelPort::Number(n) => PortRef::Number(*n),
            TunnelPort::Name(n) => PortRef::Name(n.clone()),
        },
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
    fn the_fast_path_leaves_the_kube_flags_to_their_variables() {
        let cli = crate::cli::Cli::from_arg_list(vec!["chartkit".into(), "lint".into()]).unwrap();
        assert!(cli.kube_unread);
        let cli = crate::cli::Cli::try_parse_from(["chartkit", "lint"]).unwrap();
        assert!(!cli.kube_unread);
        // No variable set here (the test's environment has none of HELM_KUBE*): the
        // values are clap's defaults.
        assert!(crate::cli::KubeArgs::from_env().kubeconfig.is_none());
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
