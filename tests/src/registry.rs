//! A real OCI registry for end-to-end tests: Debian's `docker-registry` (the CNCF
//! distribution registry 2.8) on an ephemeral port of 127.0.0.1, its storage in the test's
//! temporary directory, with htpasswd users and, when asked, TLS with a certificate from a
//! CA made for the test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How a registry is started.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// htpasswd users (`(name, password)`); none: anonymous access.
    pub users: Vec<(String, String)>,
    /// Serve https with a certificate signed by a test CA ([`RegistryProcess::ca_file`]).
    pub tls: bool,
    /// Authenticate with Bearer tokens from a token service the test runs (the users are
    /// its users) instead of htpasswd.
    pub token: bool,
    /// Run as a pull-through cache of this registry URL (`proxy: remoteurl:`).
    pub proxy: Option<String>,
}

/// A running registry; killed when dropped.
pub struct RegistryProcess {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub host: String,
    /// The test CA's certificate (PEM), with TLS.
    pub ca_file: Option<PathBuf>,
    /// A client certificate and key the CA signed (PEM), with TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    pub dir: PathBuf,
    /// The token service, with `token`.
    pub token_service: Option<crate::token_service::TokenService>,
    log: PathBuf,
}

/// The registry binary, if installed.
pub fn registry_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("docker-registry"))
        .find(|candidate| candidate.is_file())
}

/// `registry login HOST --username USER --password PASSWORD --plain-http` by `command`
/// (helm or chartkit, which take the same flags), which must succeed; its output.
pub fn login(
    command: &mut Command,
    host: &str,
    user: &str,
    password: &str,
) -> std::process::Output {
    crate::sandbox::run_ok(command.args([
        "registry",
        "login",
        host,
        "--username",
        user,
        "--password",
        password,
        "--plain-http",
    ]))
}

impl RegistryProcess {
    /// Starts a registry under `dir`, or skips (`None`) when `docker-registry` is missing
    /// outside CI.
    pub fn start_or_skip(
        test: &str,
        dir: &Path,
        options: &RegistryOptions,
    ) -> Option<RegistryProcess> {
        let Some(binary) = registry_binary() else {
            crate::skip(
                test,
                "docker-registry is not installed (apt-get install docker-registry)",
            );
            return None;
        };
        Some(RegistryProcess::start(&binary, dir, options))
    }

    fn start(binary: &Path, dir: &Path, options: &RegistryOptions) -> RegistryProcess {
        let dir = unique(dir.join("registry"));
        std::fs::create_dir_all(&dir).expect("registry dir");
        let mut auth = String::new();
        let mut token_service = None;
        if options.token {
            let service = crate::token_service::TokenService::start(&dir, &options.users);
            auth = service.registry_auth();
            token_service = Some(service);
        } else if !options.users.is_empty() {
            let htpasswd = dir.join("htpasswd");
            let users: Vec<(&str, &str)> = options
                .users
                .iter()
                .map(|(user, password)| (user.as_str(), password.as_str()))
                .collect();
            crate::server::write_htpasswd(&htpasswd, &users);
            auth = format!(
                "auth:\n  htpasswd:\n    realm: chartkit-test\n    path: {}\n",
                htpasswd.display()
            );
        }
        let (mut tls, mut ca_file, mut client_cert) = (String::new(), None, None);
        if options.tls {
            let files = test_pki(&dir);
            tls = format!(
                "  tls:\n    certificate: {}\n    key: {}\n",
                files.server_cert.display(),
                files.server_key.display()
            );
            ca_file = Some(files.ca);
            client_cert = Some((files.client_cert, files.client_key));
        }
        let proxy = options
            .proxy
            .as_ref()
            .map(|remote| format!("proxy:\n  remoteurl: {remote}\n"))
            .unwrap_or_default();
        let log = dir.join("registry.log");
        for _ in 0..10 {
            let port = free_port();
            let host = format!("127.0.0.1:{port}");
            let config = dir.join("config.yml");
            std::fs::write(
                &config,
                format!(
                    "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n{tls}{auth}{proxy}",
                    dir.join("data").display()
                ),
            )
            .expect("write registry config");
            let log_file = std::fs::File::create(&log).expect("registry log");
            let child = Command::new(binary)
                .arg("serve")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().expect("log"))
                .stderr(log_file)
                .spawn()
                .expect("start docker-registry");
            let mut process = RegistryProcess {
                child,
                host,
                ca_file: ca_file.clone(),
                client_cert: client_cert.clone(),
                dir: dir.clone(),
                token_service: None,
                log: log.clone(),
            };
            if process.wait_listening() {
                process.token_service = token_service;
                return process;
            }
            // The port was taken between choosing and binding: try another.
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
        panic!(
            "docker-registry did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    fn wait_listening(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if std::net::TcpStream::connect(&self.host).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// `oci://127.0.0.1:PORT/PATH`.
    pub fn oci(&self, path: &str) -> String {
        format!("oci://{}/{}", self.host, path.trim_start_matches('/'))
    }

    /// The registry's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Pushes an artifact the way `oras push --artifact-type TYPE REF FILE...` does (an
    /// OCI image manifest with `artifactType`, the empty config `{}`, one
    /// `application/vnd.oci.image.layer.v1.tar` layer per file titled with its name), over
    /// plain http with Basic auth when `user` is given. Returns the manifest's digest.
    pub fn push_artifact(
        &self,
        repository: &str,
        tag: &str,
        artifact_type: &str,
        files: &[(&str, &[u8])],
        user: Option<(&str, &str)>,
    ) -> String {
        let http = reqwest::blocking::Client::new();
        let base = format!("http://{}/v2/{repository}", self.host);
        let authed = |request: reqwest::blocking::RequestBuilder| match user {
            Some((name, password)) => request.basic_auth(name, Some(password)),
            None => request,
        };
        let digest_of = |bytes: &[u8]| {
            use sha2::Digest as _;
            format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
        };
        let push_blob = |bytes: &[u8]| {
            let digest = digest_of(bytes);
            let opened = authed(http.post(format!("{base}/blobs/uploads/")))
                .send()
                .expect("open an upload");
            assert_eq!(opened.status(), 202, "upload session: {:?}", opened.text());
            let location = opened.headers()["location"].to_str().unwrap().to_owned();
            let location = if location.starts_with('/') {
                format!("http://{}{location}", self.host)
            } else {
                location
            };
            let separator = if location.contains('?') { '&' } else { '?' };
            let done = authed(http.put(format!("{location}{separator}digest={digest}")))
                .header("content-type", "application/octet-stream")
                .body(bytes.to_vec())
                .send()
                .expect("upload a blob");
            assert_eq!(done.status(), 201, "blob upload: {:?}", done.text());
            digest
        };
        let config = push_blob(b"{}");
        let layers: Vec<serde_json::Value> = files
            .iter()
            .map(|(name, bytes)| {
                serde_json::json!({
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": push_blob(bytes),
                    "size": bytes.len(),
                    "annotations": {"org.opencontainers.image.title": name},
                })
            })
            .collect();
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": artifact_type,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": config, "size": 2, "data": "e30="},
            "layers": layers,
            "annotations": {"org.opencontainers.image.created": "2026-01-01T00:00:00Z"},
        });
        let bytes = serde_json::to_vec(&manifest).unwrap();
        let put = authed(http.put(format!("{base}/manifests/{tag}")))
            .header("content-type", "application/vnd.oci.image.manifest.v1+json")
            .body(bytes.clone())
            .send()
            .expect("push the manifest");
        assert_eq!(put.status(), 201, "manifest push: {:?}", put.text());
        digest_of(&bytes)
    }

    /// Stops the registry (its storage stays).
    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RegistryProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate it signed.
/// A test CA, a server certificate it signed for 127.0.0.1 and localhost, and a client
/// certificate it signed, as PEM files.
pub struct Pki {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

/// Writes [`Pki`]'s files into `dir`.
pub fn test_pki(dir: &Path) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "chartkit test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key"))
        .expect("CA certificate");
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().expect("key");
        let params = CertificateParams::new(names).expect("params");
        let cert = params.signed_by(&key, &ca).expect("certificate");
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(vec!["127.0.0.1".into(), "localhost".into()]);
    let (client_cert, client_key) = leaf(vec!["client".into()]);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write PKI file");
        path
    };
    Pki {
        ca: write("ca.pem", &ca.pem()),
        server_cert: write("server.pem", &server_cert),
        server_key: write("server-key.pem", &server_key),
        client_cert: write("client.pem", &client_cert),
        client_key: write("client-key.pem", &client_key),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn unique(path: PathBuf) -> PathBuf {
    let mut candidate = path.clone();
    let mut n = 1;
    while candidate.exists() {
        n += 1;
        candidate = PathBuf::from(format!("{}-{n}", path.display()));
    }
    candidate
}
