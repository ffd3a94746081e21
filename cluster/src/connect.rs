//! From helm-style connection settings (kubeconfig files, context, overrides) to a
//! [`kube::Client`] and the namespace commands work in.
//!
//! Nothing here reads the environment: the command line turns `--kubeconfig`,
//! `KUBECONFIG`, `HELM_KUBECONTEXT` and friends into a [`KubeOptions`]. The one exception
//! is the in-cluster fallback, where kube-rs reads the service-account files and the
//! `KUBERNETES_SERVICE_*` variables a pod is given.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};

/// Where the kubeconfig comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KubeconfigSource {
    /// One file named on the command line (`--kubeconfig`): it must exist.
    Explicit(PathBuf),
    /// A search list (`KUBECONFIG`'s entries, or `~/.kube/config`): files that do not
    /// exist are skipped, and the rest are merged with the first file to set a value
    /// winning, as kubectl does.
    Search(Vec<PathBuf>),
}

impl Default for KubeconfigSource {
    fn default() -> Self {
        KubeconfigSource::Search(Vec::new())
    }
}

/// How to reach the cluster: helm's global Kubernetes flags.
#[derive(Debug, Clone, Default)]
pub struct KubeOptions {
    pub kubeconfig: KubeconfigSource,
    /// `--kube-context`: the kubeconfig context to use instead of its current-context.
    pub context: Option<String>,
    /// `-n/--namespace`: overrides the context's namespace.
    pub namespace: Option<String>,
    /// `--kube-token`: a bearer token used instead of the kubeconfig user's credentials.
    pub token: Option<String>,
    /// `--kube-apiserver`: the API server's address, instead of the context's cluster's.
    pub apiserver: Option<String>,
    /// `--kube-as-user`: a user to impersonate.
    pub as_user: Option<String>,
    /// `--kube-as-group`: groups to impersonate.
    pub as_groups: Vec<String>,
    /// `--kube-ca-file`: a PEM bundle of certificate authorities to trust for the server.
    pub ca_file: Option<PathBuf>,
    /// `--kube-tls-server-name`: the name the server's certificate is checked against.
    pub tls_server_name: Option<String>,
    /// `--kube-insecure-skip-tls-verify`: do not check the server's certificate.
    pub insecure_skip_tls_verify: bool,
    /// Use the pod's service account when no kubeconfig file exists (client-go does).
    pub in_cluster_fallback: bool,
}

/// A connected client and what it was built from.
#[derive(Clone)]
pub struct Connection {
    pub client: kube::Client,
    /// The namespace commands work in: `--namespace`, else the context's, else the
    /// service account's (in a cluster), else `default`.
    pub namespace: String,
    /// The kubeconfig context used, if one was.
    pub context: Option<String>,
    /// The API server's address.
    pub server: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("namespace", &self.namespace)
            .field("context", &self.context)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "no kubeconfig found (looked for {}) and not running inside a cluster; pass \
         --kubeconfig FILE, set KUBECONFIG, or start a local cluster with `chartkit sandbox up`",
        list_paths(searched)
    )]
    NoKubeconfig { searched: Vec<PathBuf> },
    #[error("kubeconfig `{}` does not exist; check the --kubeconfig path", path.display())]
    KubeconfigMissing { path: PathBuf },
    #[error("cannot read kubeconfig `{}`: {message}", path.display())]
    ReadKubeconfig { path: PathBuf, message: String },
    #[error(
        "context `{context}` does not exist in kubeconfig {} ({}); pick one of those with \
         --kube-context, or see `kubectl config get-contexts`",
        list_paths(files),
        known_contexts(known)
    )]
    UnknownContext {
        context: String,
        files: Vec<PathBuf>,
        known: Vec<String>,
    },
    #[error(
        "kubeconfig {} sets no current-context ({}); pass --kube-context NAME or run \
         `kubectl config use-context NAME`",
        list_paths(files),
        known_contexts(known)
    )]
    NoCurrentContext {
        files: Vec<PathBuf>,
        known: Vec<String>,
    },
    #[error("context `{context}` in kubeconfig {}: {message}", list_paths(files))]
    BadContext {
        context: String,
        files: Vec<PathBuf>,
        message: String,
    },
    #[error("--kube-apiserver `{value}` is not a URL: {message}")]
    BadApiServer { value: String, message: String },
    #[error("cannot read --kube-ca-file `{}`: {message}", path.display())]
    CaFile { path: PathBuf, message: String },
    #[error(
        "--kube-ca-file and --kube-insecure-skip-tls-verify cannot be used together: a \
         certificate authority is pointless when certificates are not checked"
    )]
    CaWithInsecure,
    #[error("running inside a cluster, but its service account cannot be used: {message}")]
    InCluster { message: String },
    #[error("cannot create a Kubernetes client for {server}: {message}")]
    Client { server: String, message: String },
}

fn list_paths(paths: &[PathBuf]) -> String {
    match paths {
        [] => "(no files)".to_string(),
        [one] => format!("`{}`", one.display()),
        many => many
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn known_contexts(known: &[String]) -> String {
    if known.is_empty() {
        "it has no contexts".to_string()
    } else {
        format!("its contexts: {}", known.join(", "))
    }
}

/// The kube-rs configuration and namespace the options describe.
pub struct Resolved {
    pub config: kube::Config,
    pub namespace: String,
    pub context: Option<String>,
}

impl KubeOptions {
    /// Builds the client configuration without connecting.
    pub async fn resolve(&self) -> Result<Resolved, ConnectError> {
        let (files, kubeconfig) = self.load_files()?;
        let mut context_name = None;
        let config: Option<kube::Config> = match kubeconfig {
            Some(kubeconfig) if self.context.is_some() || kubeconfig.current_context.is_some() => {
                let name = self
                    .context
                    .clone()
                    .or_else(|| kubeconfig.current_context.clone())
                    .unwrap_or_default();
                let known: Vec<String> =
                    kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
                if !known.contains(&name) {
                    // A current-context naming nothing, with the server given on the
                    // command line, is what client-go accepts too.
                    if self.context.is_none() && self.apiserver.is_some() {
                        None
                    } else {
                        return Err(ConnectError::UnknownContext {
                            context: name,
                            files,
                            known,
                        });
                    }
                } else {
                    let options = KubeConfigOptions {
                        context: Some(name.clone()),
                        ..KubeConfigOptions::default()
                    };
                    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                        .await
                        .or_else(|error| match (&self.apiserver, &error) {
                            // The server may come from --kube-apiserver alone.
                            (Some(_), kube::config::KubeconfigError::MissingClusterUrl) => {
                                Ok(self.bare_config())
                            }
                            _ => Err(ConnectError::BadContext {
                                context: name.clone(),
                                files: files.clone(),
                                message: error.to_string(),
                            }),
                        })?;
                    context_name = Some(name);
                    Some(config)
                }
            }
            Some(kubeconfig) if self.apiserver.is_none() => {
                let known = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
                return Err(ConnectError::NoCurrentContext { files, known });
            }
            _ => None,
        };
        let mut config = match config {
            Some(config) => config,
            None if self.apiserver.is_some() => self.bare_config(),
            None if self.in_cluster_fallback && files.is_empty() => {
                match kube::Config::incluster() {
                    Ok(config) => config,
                    Err(kube::config::InClusterError::ReadEnvironmentVariable(_)) => {
                        return Err(self.no_kubeconfig());
                    }
                    Err(error) => {
                        return Err(ConnectError::InCluster {
                            message: error.to_string(),
                        });
                    }
                }
            }
            None => return Err(self.no_kubeconfig()),
        };
        self.apply_overrides(&mut config)?;
        let namespace = self
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| config.default_namespace.clone());
        config.default_namespace = namespace.clone();
        Ok(Resolved {
            config,
            namespace,
            context: context_name,
        })
    }

    /// Builds the client.
    pub async fn connect(&self) -> Result<Connection, ConnectError> {
        let resolved = self.resolve().await?;
        let server = resolved.config.cluster_url.to_string();
        let builder = kube::client::ClientBuilder::try_from(resolved.config).map_err(|error| {
            ConnectError::Client {
                server: server.clone(),
                message: crate::kube_error::describe(&error),
            }
        })?;
        let client = builder
            .with_layer(&crate::kube_error::NameTheServer::new(&server))
            .build();
        Ok(Connection {
            client,
            namespace: resolved.namespace,
            context: resolved.context,
            server,
        })
    }

    fn no_kubeconfig(&self) -> ConnectError {
        let searched = match &self.kubeconfig {
            KubeconfigSource::Explicit(path) => vec![path.clone()],
            KubeconfigSource::Search(paths) => paths.clone(),
        };
        ConnectError::NoKubeconfig { searched }
    }

    /// A configuration with nothing but the server of --kube-apiserver (set by
    /// [`apply_overrides`](Self::apply_overrides)).
    fn bare_config(&self) -> kube::Config {
        kube::Config::new(http_uri_placeholder())
    }

    /// The files that exist, and their merged contents (`None` when there are none).
    pub(crate) fn load_files(&self) -> Result<(Vec<PathBuf>, Option<Kubeconfig>), ConnectError> {
        let candidates: Vec<PathBuf> = match &self.kubeconfig {
            KubeconfigSource::Explicit(path) => {
                if !path.exists() {
                    return Err(ConnectError::KubeconfigMissing { path: path.clone() });
                }
                vec![path.clone()]
            }
            KubeconfigSource::Search(paths) => paths
                .iter()
                .filter(|p| !p.as_os_str().is_empty() && p.is_file())
                .cloned()
                .collect(),
        };
        let mut merged: Option<Kubeconfig> = None;
        for path in &candidates {
            let one = read_kubeconfig(path)?;
            merged = Some(match merged {
                None => one,
                Some(m) => m.merge(one).map_err(|e| ConnectError::ReadKubeconfig {
                    path: path.clone(),
                    message: e.to_string(),
                })?,
            });
        }
        Ok((candidates, merged))
    }

    fn apply_overrides(&self, config: &mut kube::Config) -> Result<(), ConnectError> {
        if let Some(server) = &self.apiserver {
            config.cluster_url = parse_server(server)?;
        }
        if let Some(token) = &self.token {
            config.auth_info.token = Some(token.clone().into());
            config.auth_info.token_file = None;
            // A token given on the command line is who the user means to be; kubeconfig
            // plugins would otherwise be asked for another one.
            config.auth_info.exec = None;
            config.auth_info.auth_provider = None;
        }
        if let Some(user) = &self.as_user {
            config.auth_info.impersonate = Some(user.clone());
        }
        if !self.as_groups.is_empty() {
            config.auth_info.impersonate_groups = Some(self.as_groups.clone());
        }
        if let Some(name) = &self.tls_server_name {
            config.tls_server_name = Some(name.clone());
        }
        if self.insecure_skip_tls_verify {
            if self.ca_file.is_some() {
                return Err(ConnectError::CaWithInsecure);
            }
            config.accept_invalid_certs = true;
            config.root_cert = None;
            config.root_cert_file = None;
        }
        if let Some(path) = &self.ca_file {
            config.root_cert = Some(read_ca_file(path)?);
            config.root_cert_file = None;
            config.accept_invalid_certs = false;
        }
        Ok(())
    }
}

fn read_kubeconfig(path: &Path) -> Result<Kubeconfig, ConnectError> {
    Kubeconfig::read_from(path).map_err(|error| ConnectError::ReadKubeconfig {
        path: path.to_path_buf(),
        message: match error {
            // kube-rs's message repeats the path.
            kube::config::KubeconfigError::ReadConfig(io, _) => io.to_string(),
            other => other.to_string(),
        },
    })
}

/// Stands in until --kube-apiserver's value replaces it; never used to connect.
fn http_uri_placeholder() -> http::Uri {
    http::Uri::from_static("http://localhost")
}

fn parse_server(value: &str) -> Result<http::Uri, ConnectError> {
    // client-go accepts a bare host:port and means https.
    let text = if value.contains("://") {
        value.to_string()
    } else {
        format!("https://{value}")
    };
    let uri: http::Uri =
        text.parse()
            .map_err(|e: http::uri::InvalidUri| ConnectError::BadApiServer {
                value: value.to_string(),
                message: e.to_string(),
            })?;
    if uri.host().is_none() {
        return Err(ConnectError::BadApiServer {
            value: value.to_string(),
            message: "it names no host".to_string(),
        });
    }
    Ok(uri)
}

/// The DER certificates of a PEM bundle.
fn read_ca_file(path: &Path) -> Result<Vec<Vec<u8>>, ConnectError> {
    let error = |message: String| ConnectError::CaFile {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let certs = pem_certificates(&text).map_err(error)?;
    if certs.is_empty() {
        return Err(error("it holds no PEM certificate".to_string()));
    }
    Ok(certs)
}

/// Decodes every `CERTIFICATE` block of a PEM text.
fn pem_certificates(text: &str) -> Result<Vec<Vec<u8>>, String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut certs = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let body_start = start + BEGIN.len();
        let Some(len) = rest[body_start..].find(END) else {
            return Err("a certificate block has no END line".to_string());
        };
        let body: String = rest[body_start..body_start + len]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        use base64::Engine as _;
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.as_bytes())
            .map_err(|e| format!("a certificate block is not base64: {e}"))?;
        certs.push(der);
        rest = &rest[body_start + len + END.len()..];
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    const TWO_CONTEXTS: &str = "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
clusters:\n- name: a\n  cluster: {server: 'http://127.0.0.1:1111'}\n- name: b\n  cluster: {server: 'http://127.0.0.1:2222'}\n\
users:\n- name: u\n  user: {token: secret}\n\
contexts:\n- name: a\n  context: {cluster: a, user: u, namespace: apps}\n- name: b\n  context: {cluster: b, user: u}\n";

    fn options(source: KubeconfigSource) -> KubeOptions {
        KubeOptions {
            kubeconfig: source,
            ..KubeOptions::default()
        }
    }

    #[tokio::test]
    async fn the_current_context_gives_server_and_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "config", TWO_CONTEXTS);
        let resolved = options(KubeconfigSource::Explicit(path))
            .resolve()
            .await
            .unwrap();
        assert_eq!(
            resolved.config.cluster_url.to_string(),
            "http://127.0.0.1:1111/"
        );
        assert_eq!(resolved.namespace, "apps");
        assert_eq!(resolved.context.as_deref(), Some("a"));
    }

    #[tokio::test]
    async fn context_and_namespace_overrides_apply() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "config", TWO_CONTEXTS);
        let mut opts = options(KubeconfigSource::Explicit(path));
        opts.context = Some("b".into());
        let resolved = opts.resolve().await.unwrap();
        assert_eq!(
            resolved.config.cluster_url.to_string(),
            "http://127.0.0.1:2222/"
        );
        assert_eq!(resolved.namespace, "default");
        opts.namespace = Some("other".into());
        opts.apiserver = Some("127.0.0.1:3333".into());
        opts.token = Some("tok".into());
        opts.as_user = Some("jane".into());
        opts.as_groups = vec!["devs".into(), "ops".into()];
        let resolved = opts.resolve().await.unwrap();
        assert_eq!(resolved.namespace, "other");
        assert_eq!(resolved.config.default_namespace, "other");
        assert_eq!(
            resolved.config.cluster_url.to_string(),
            "https://127.0.0.1:3333/"
        );
        assert_eq!(
            resolved.config.auth_info.impersonate.as_deref(),
            Some("jane")
        );
        assert_eq!(
            resolved.config.auth_info.impersonate_groups,
            Some(vec!["devs".to_string(), "ops".to_string()])
        );
    }

    #[tokio::test]
    async fn an_unknown_context_names_the_file_and_the_known_contexts() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "config", TWO_CONTEXTS);
        let mut opts = options(KubeconfigSource::Explicit(path.clone()));
        opts.context = Some("prod".into());
        let message = opts.resolve().await.err().unwrap().to_string();
        assert!(
            message.contains("context `prod` does not exist"),
            "{message}"
        );
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("its contexts: a, b"), "{message}");
        assert!(message.contains("--kube-context"), "{message}");
    }

    #[tokio::test]
    async fn search_lists_skip_missing_files_and_the_first_file_wins() {
        let dir = tempfile::tempdir().unwrap();
        let first = write(
            dir.path(),
            "first",
            "clusters:\n- name: a\n  cluster: {server: 'http://127.0.0.1:9999'}\n",
        );
        let second = write(dir.path(), "second", TWO_CONTEXTS);
        let missing = dir.path().join("missing");
        let resolved = options(KubeconfigSource::Search(vec![missing, first, second]))
            .resolve()
            .await
            .unwrap();
        // Cluster `a` comes from the first file that names it; the context from the second.
        assert_eq!(
            resolved.config.cluster_url.to_string(),
            "http://127.0.0.1:9999/"
        );
        assert_eq!(resolved.namespace, "apps");
    }

    #[tokio::test]
    async fn nothing_to_connect_with_says_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("config");
        let message = options(KubeconfigSource::Search(vec![missing.clone()]))
            .resolve()
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(message.starts_with("no kubeconfig found"), "{message}");
        assert!(
            message.contains(&missing.display().to_string()),
            "{message}"
        );
        let message = options(KubeconfigSource::Explicit(missing))
            .resolve()
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(message.contains("does not exist"), "{message}");
    }

    #[tokio::test]
    async fn the_apiserver_flag_alone_is_enough() {
        let mut opts = options(KubeconfigSource::Search(Vec::new()));
        opts.apiserver = Some("http://127.0.0.1:4444".into());
        opts.token = Some("t".into());
        let resolved = opts.resolve().await.unwrap();
        assert_eq!(
            resolved.config.cluster_url.to_string(),
            "http://127.0.0.1:4444/"
        );
        assert_eq!(resolved.namespace, "default");
        opts.apiserver = Some("http://".into());
        assert!(opts.resolve().await.is_err());
    }

    #[tokio::test]
    async fn no_current_context_asks_for_one() {
        let dir = tempfile::tempdir().unwrap();
        let text = TWO_CONTEXTS.replace("current-context: a\n", "");
        let path = write(dir.path(), "config", &text);
        let message = options(KubeconfigSource::Explicit(path))
            .resolve()
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(message.contains("sets no current-context"), "{message}");
        assert!(message.contains("a, b"), "{message}");
    }

    #[test]
    fn pem_bundles_decode() {
        let pem = "junk\n-----BEGIN CERTIFICATE-----\nAAEC\nAw==\n-----END CERTIFICATE-----\n\
                   -----BEGIN CERTIFICATE-----\n/w==\n-----END CERTIFICATE-----\n";
        assert_eq!(
            pem_certificates(pem).unwrap(),
            vec![vec![0, 1, 2, 3], vec![255]]
        );
        assert!(pem_certificates("-----BEGIN CERTIFICATE-----\nAA").is_err());
    }

    #[test]
    fn ca_file_and_insecure_conflict() {
        let opts = KubeOptions {
            ca_file: Some(PathBuf::from("/ca.pem")),
            insecure_skip_tls_verify: true,
            ..KubeOptions::default()
        };
        let mut config = kube::Config::new(http_uri_placeholder());
        assert!(matches!(
            opts.apply_overrides(&mut config),
            Err(ConnectError::CaWithInsecure)
        ));
    }
}
