//! The network as a value: [`Network::Online`] with an HTTP client, or
//! [`Network::Offline`], where every operation that would open a connection fails with
//! [`ClientError::Offline`] instead. Nothing else in the crate decides whether it may
//! use the network.
//!
//! A `portforward://` URL is sent through the [`Tunnels`] the network was given: to a
//! local listener, with a client that ignores proxy settings (a proxy cannot reach
//! this machine's loopback), its failures named by the tunnel when it knows why.
//!
//! A URL of a scheme a `getter/v1` plugin serves is fetched by running the plugin
//! ([`Getters`]): its output is the body, read like any other; a scheme neither
//! chartkit nor a plugin serves is refused in helm's words.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::error::{ClientError, Result};
use crate::getter::{self, Getters};
use crate::settings::RepoEntry;
use crate::tunnel::{TunnelTarget, TunnelUrl, Tunnels, is_tunnel_url};

/// How many times a request through a tunnel is sent when its connection breaks: the
/// pod behind it may have gone away, and the tunnel's next connection goes to another.
/// Packages are checked against their digest and indexes parsed whole before use, so a
/// second try cannot mix two answers.
const TUNNEL_ATTEMPTS: usize = 3;

/// Online or offline, decided once per process.
pub enum Network {
    Online(Http),
    Offline,
}

impl Network {
    /// An online network with the given request timeout.
    pub fn online(timeout: Duration) -> Result<Network> {
        Ok(Network::Online(Http::new(timeout)?))
    }

    /// An online network that reaches `portforward://` repositories through `tunnels`
    /// (which it keeps, and so closes, when dropped).
    pub fn online_with_tunnels(timeout: Duration, tunnels: Arc<dyn Tunnels>) -> Result<Network> {
        let mut http = Http::new(timeout)?;
        http.tunnels = Some(tunnels);
        Ok(Network::Online(http))
    }

    /// The network with `getters` serving their URL schemes (offline, nothing is
    /// fetched, by plugins either).
    pub fn with_getters(self, getters: Getters) -> Network {
        match self {
            Network::Online(mut http) => {
                http.getters = getters;
                Network::Online(http)
            }
            Network::Offline => Network::Offline,
        }
    }

    pub fn is_offline(&self) -> bool {
        matches!(self, Network::Offline)
    }

    /// The HTTP client, or the offline error naming `missing` and the command `fetch`
    /// that would get it.
    pub fn http(&self, missing: impl FnOnce() -> (String, String)) -> Result<&Http> {
        match self {
            Network::Online(http) => Ok(http),
            Network::Offline => {
                let (missing, fetch) = missing();
                Err(ClientError::Offline { missing, fetch })
            }
        }
    }
}

/// The validators of a cached response, sent back as `If-None-Match` and
/// `If-Modified-Since` so an unchanged body is not sent again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// The answer to a GET.
#[derive(Debug)]
pub enum Fetched {
    /// 304: what the validators describe is current.
    NotModified,
    /// 200 with the body and its validators.
    Body {
        bytes: Vec<u8>,
        validators: Validators,
    },
}

/// How much of a body has arrived, and how much is expected (when the server said).
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Sync);

/// TLS settings that need a client of their own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TlsKey {
    ca_file: String,
    cert_file: String,
    key_file: String,
    insecure: bool,
}

/// One HTTP client per TLS setting (most repositories share the default one), made
/// when first needed and reused.
pub struct Http {
    timeout: Duration,
    default: reqwest::blocking::Client,
    custom: Mutex<HashMap<TlsKey, reqwest::blocking::Client>>,
    /// Declared after the clients, so their pooled connections to the tunnels' local
    /// listeners close before the tunnels do.
    tunnel_client: OnceLock<reqwest::blocking::Client>,
    tunnels: Option<Arc<dyn Tunnels>>,
    getters: Getters,
}

/// The tunnel a request went through, asked why a connection failed.
#[derive(Clone)]
struct Route {
    tunnels: Arc<dyn Tunnels>,
    target: TunnelTarget,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Route({})", self.target)
    }
}

impl Http {
    pub fn new(timeout: Duration) -> Result<Http> {
        let default = builder(timeout).build().map_err(|e| ClientError::Setup {
            url: "any repository".into(),
            reason: chain(&e),
        })?;
        Ok(Http {
            timeout,
            default,
            custom: Mutex::new(HashMap::new()),
            tunnel_client: OnceLock::new(),
            tunnels: None,
            getters: Getters::default(),
        })
    }

    /// The getter plugins this network runs for their schemes.
    pub fn getters(&self) -> &Getters {
        &self.getters
    }

    /// How many times a request to `url` is sent when its connection breaks: once,
    /// except through a tunnel ([`TUNNEL_ATTEMPTS`]).
    pub fn attempts(url: &str) -> usize {
        if is_tunnel_url(url) {
            TUNNEL_ATTEMPTS
        } else {
            1
        }
    }

    /// Where a request for `url` goes: the URL itself with `repo`'s client, or for a
    /// `portforward://` URL the tunnel's local address with the tunnel client.
    fn route(
        &self,
        url: &str,
        repo: &RepoEntry,
    ) -> Result<(String, reqwest::blocking::Client, Option<Route>)> {
        if !is_tunnel_url(url) {
            return Ok((url.to_owned(), self.client_for(repo, url)?, None));
        }
        let parsed = TunnelUrl::parse(url)?;
        let Some(tunnels) = &self.tunnels else {
            return Err(ClientError::Tunnel {
                url: url.to_owned(),
                reason: "this command has no Kubernetes connection to open port-forwards with"
                    .into(),
            });
        };
        let local = tunnels
            .open(&parsed.target)
            .map_err(|reason| ClientError::Tunnel {
                url: url.to_owned(),
                reason,
            })?;
        let client =
            match self.tunnel_client.get() {
                Some(client) => client.clone(),
                None => {
                    let client = builder(self.timeout).no_proxy().build().map_err(|e| {
                        ClientError::Setup {
                            url: url.to_owned(),
                            reason: chain(&e),
                        }
                    })?;
                    self.tunnel_client.get_or_init(|| client).clone()
                }
            };
        let route = Route {
            tunnels: Arc::clone(tunnels),
            target: parsed.target.clone(),
        };
        Ok((parsed.local_url(local), client, Some(route)))
    }

    /// The client for `repo`'s TLS settings (an OCI registry's too), for requests to `url`.
    pub(crate) fn client_for_entry(
        &self,
        repo: &RepoEntry,
        url: &str,
    ) -> Result<reqwest::blocking::Client> {
        self.client_for(repo, url)
    }

    fn client_for(&self, repo: &RepoEntry, url: &str) -> Result<reqwest::blocking::Client> {
        let key = TlsKey {
            ca_file: repo.ca_file.clone(),
            cert_file: repo.cert_file.clone(),
            key_file: repo.key_file.clone(),
            insecure: repo.insecure_skip_tls_verify,
        };
        if key.ca_file.is_empty() && key.cert_file.is_empty() && !key.insecure {
            return Ok(self.default.clone());
        }
        let mut custom = self.custom.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = custom.get(&key) {
            return Ok(client.clone());
        }
        let setup = |reason: String| ClientError::Setup {
            url: url.to_owned(),
            reason,
        };
        let mut builder = builder(self.timeout);
        if key.insecure || key.ca_file.is_empty() {
            if key.insecure {
                builder = builder.tls_danger_accept_invalid_certs(true);
            }
            if !key.cert_file.is_empty() {
                builder = builder.identity(pem_identity(&key).map_err(setup)?);
            }
        } else {
            let identity = if key.cert_file.is_empty() {
                None
            } else {
                Some(
                    read_identity(Path::new(&key.cert_file), Path::new(&key.key_file))
                        .map_err(setup)?,
                )
            };
            let roots = read_certs(Path::new(&key.ca_file)).map_err(setup)?;
            let config = crate::tls::client_config(roots, identity)
                .map_err(|e| setup(format!("cannot use `{}` as a CA file: {e}", key.ca_file)))?;
            builder = builder.tls_backend_preconfigured(config);
        }
        let client = builder.build().map_err(|e| setup(chain(&e)))?;
        custom.insert(key, client.clone());
        Ok(client)
    }

    /// GETs `url` for `repo`: with its basic auth or token when `credentials`, with
    /// `validators` as conditional headers, reporting the body's progress.
    /// Through a tunnel, a request whose connection broke is sent again
    /// ([`Http::attempts`]).
    pub fn get(
        &self,
        url: &str,
        repo: &RepoEntry,
        credentials: bool,
        validators: Option<&Validators>,
        progress: Option<Progress<'_>>,
    ) -> Result<Fetched> {
        let attempts = Http::attempts(url);
        let mut attempt = 1;
        loop {
            match self.get_once(url, repo, credentials, validators, progress) {
                Err(ClientError::Unreachable { .. }) if attempt < attempts => attempt += 1,
                result => return result,
            }
        }
    }

    fn get_once(
        &self,
        url: &str,
        repo: &RepoEntry,
        credentials: bool,
        validators: Option<&Validators>,
        progress: Option<Progress<'_>>,
    ) -> Result<Fetched> {
        match self.open(url, repo, credentials, validators)? {
            Opened::NotModified => Ok(Fetched::NotModified),
            Opened::Body(mut body) => {
                let expected = body.expected.unwrap_or(0).min(1 << 30) as usize;
                let mut bytes = Vec::with_capacity(expected);
                body.read_pieces(progress, |piece| {
                    bytes.extend_from_slice(piece);
                    Ok(())
                })?;
                Ok(Fetched::Body {
                    bytes,
                    validators: body.validators,
                })
            }
        }
    }

    /// [`Http::get`] up to the response's headers: the body is left to read piece by
    /// piece ([`Body::read_pieces`]), so a caller can use each piece as it arrives.
    pub fn open(
        &self,
        url: &str,
        repo: &RepoEntry,
        credentials: bool,
        validators: Option<&Validators>,
    ) -> Result<Opened> {
        if !getter::is_built_in(url) {
            let Some(plugin) = self.getters.serving(url) else {
                return Err(ClientError::UnsupportedScheme {
                    scheme: getter::scheme(url),
                });
            };
            let bytes = self.getters.get(plugin, url, repo, credentials)?;
            return Ok(Opened::Body(Box::new(Body {
                url: url.to_owned(),
                expected: Some(bytes.len() as u64),
                validators: Validators::default(),
                reader: Reader::Plugin(std::io::Cursor::new(bytes)),
                route: None,
                plugin: Some(plugin.metadata.name.clone()),
            })));
        }
        let (request_url, client, route) = self.route(url, repo)?;
        let mut request = client.get(&request_url);
        if credentials {
            if !repo.token.is_empty() {
                request = request.bearer_auth(&repo.token);
            } else if !repo.username.is_empty() || !repo.password.is_empty() {
                request = request.basic_auth(&repo.username, Some(&repo.password));
            }
        }
        if let Some(v) = validators {
            if let Some(etag) = &v.etag {
                request = request.header(reqwest::header::IF_NONE_MATCH, etag);
            }
            if let Some(date) = &v.last_modified {
                request = request.header(reqwest::header::IF_MODIFIED_SINCE, date);
            }
        }
        let response = request
            .send()
            .map_err(|e| transport_error(url, route.as_ref(), &e))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_MODIFIED && validators.is_some() {
            return Ok(Opened::NotModified);
        }
        if !status.is_success() {
            return Err(ClientError::Status {
                url: url.to_owned(),
                status: status.as_u16(),
            });
        }
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        let validators = Validators {
            etag: header(reqwest::header::ETAG),
            last_modified: header(reqwest::header::LAST_MODIFIED),
        };
        Ok(Opened::Body(Box::new(Body {
            url: url.to_owned(),
            expected: response.content_length(),
            validators,
            reader: Reader::Http(response),
            route,
            plugin: None,
        })))
    }
}

/// The answer to [`Http::open`].
#[derive(Debug)]
pub enum Opened {
    /// 304: what the validators describe is current.
    NotModified,
    /// 200, its body still to be read.
    Body(Box<Body>),
}

/// A response body still to be read.
#[derive(Debug)]
pub struct Body {
    /// The URL asked for (a `portforward://` one, not the tunnel's local address).
    url: String,
    reader: Reader,
    route: Option<Route>,
    /// The getter plugin that wrote the body, when one did.
    pub plugin: Option<String>,
    /// The response's validators.
    pub validators: Validators,
    /// The length the server announced, if it did.
    pub expected: Option<u64>,
}

impl Body {
    /// Reads the body to its end, handing each piece to `take` as it arrives and
    /// reporting progress; the body's length. An error from `take` stops the reading.
    pub fn read_pieces(
        &mut self,
        progress: Option<Progress<'_>>,
        mut take: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        let mut buf = vec![0u8; 256 * 1024];
        let mut received = 0u64;
        loop {
            let n = self
                .reader
                .read(&mut buf)
                .map_err(|e| transport_error(&self.url, self.route.as_ref(), &e))?;
            if n == 0 {
                return Ok(received);
            }
            take(&buf[..n])?;
            received += n as u64;
            if let Some(progress) = progress {
                progress(received, self.expected);
            }
        }
    }
}

/// Where a body is read from: a response, or what a getter plugin wrote.
#[derive(Debug)]
enum Reader {
    Http(reqwest::blocking::Response),
    Plugin(std::io::Cursor<Vec<u8>>),
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Reader::Http(response) => response.read(buf),
            Reader::Plugin(bytes) => bytes.read(buf),
        }
    }
}

/// A request that got no answer (or lost it on the way): through a tunnel that knows
/// why (no pod to forward to, nothing listening in it), the tunnel's reason.
fn transport_error(url: &str, route: Option<&Route>, e: &dyn std::error::Error) -> ClientError {
    if let Some(route) = route
        && let Some(reason) = route.tunnels.take_failure(&route.target)
    {
        return ClientError::Tunnel {
            url: url.to_owned(),
            reason,
        };
    }
    ClientError::Unreachable {
        url: url.to_owned(),
        reason: chain(e),
    }
}

fn builder(timeout: Duration) -> reqwest::blocking::ClientBuilder {
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .user_agent(concat!("chartkit/", env!("CARGO_PKG_VERSION")))
}

/// The PEM certificates of a CA file.
pub fn read_certs(path: &Path) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let pem = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("`{}` holds no usable PEM certificate: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("`{}` holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// A client certificate chain and key from PEM files.
fn read_identity(cert: &Path, key: &Path) -> Result<crate::tls::ClientIdentity, String> {
    use rustls::pki_types::PrivateKeyDer;
    use rustls::pki_types::pem::PemObject;
    let chain = read_certs(cert)?;
    if key.as_os_str().is_empty() {
        return Err(format!(
            "a --cert-file (`{}`) needs a --key-file",
            cert.display()
        ));
    }
    let pem = std::fs::read(key).map_err(|e| format!("cannot read `{}`: {e}", key.display()))?;
    let key = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| format!("`{}` holds no usable PEM private key: {e}", key.display()))?;
    Ok((chain, key))
}

/// reqwest's identity from the PEM certificate and key files, for servers verified
/// with the system's roots.
fn pem_identity(key: &TlsKey) -> Result<reqwest::Identity, String> {
    let read = |path: &str| std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"));
    if key.key_file.is_empty() {
        return Err(format!(
            "a --cert-file (`{}`) needs a --key-file",
            key.cert_file
        ));
    }
    let mut pem = read(&key.cert_file)?;
    pem.push(b'\n');
    pem.extend(read(&key.key_file)?);
    reqwest::Identity::from_pem(&pem).map_err(|e| chain(&e))
}

/// An error and its sources, each stated once.
pub(crate) use chartkit_oci::registry::chain;

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Tunnels that all lead to one local server, with a failure to report when set.
    struct FakeTunnels {
        local: SocketAddr,
        failure: Mutex<Option<String>>,
        opened: Mutex<Vec<TunnelTarget>>,
    }

    impl Tunnels for FakeTunnels {
        fn open(&self, target: &TunnelTarget) -> Result<SocketAddr, String> {
            self.opened.lock().unwrap().push(target.clone());
            Ok(self.local)
        }
        fn take_failure(&self, _: &TunnelTarget) -> Option<String> {
            self.failure.lock().unwrap().take()
        }
    }

    /// A server that answers `GET PATH` with 64 bytes, except that the first `broken`
    /// connections get the headers and half the body before the connection closes
    /// (`usize::MAX`: every connection). Returns its address and the paths asked for.
    fn server(broken: usize) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let paths = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&paths);
        let served = AtomicUsize::new(0);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                seen.lock()
                    .unwrap()
                    .push(line.split_whitespace().nth(1).unwrap_or("").to_owned());
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                }
                let mut stream = stream;
                let body = [b'x'; 64];
                let n = served.fetch_add(1, Ordering::SeqCst);
                let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n");
                if n < broken {
                    let _ = stream.write_all(&body[..32]);
                } else {
                    let _ = stream.write_all(&body);
                }
            }
        });
        (addr, paths)
    }

    fn tunnelled(local: SocketAddr, failure: Option<&str>) -> (Network, Arc<FakeTunnels>) {
        let tunnels = Arc::new(FakeTunnels {
            local,
            failure: Mutex::new(failure.map(str::to_owned)),
            opened: Mutex::new(Vec::new()),
        });
        let network =
            Network::online_with_tunnels(Duration::from_secs(10), tunnels.clone()).unwrap();
        (network, tunnels)
    }

    fn get(network: &Network, url: &str) -> Result<Fetched> {
        let Network::Online(http) = network else {
            unreachable!()
        };
        http.get(url, &RepoEntry::for_url(url), true, None, None)
    }

    #[test]
    fn a_tunnel_url_is_sent_to_the_local_listener_with_its_path() {
        let (local, paths) = server(0);
        let (network, tunnels) = tunnelled(local, None);
        let url = "portforward://infra/svc/charts:8879/stable/web-1.2.0.tgz?k=v";
        let Fetched::Body { bytes, .. } = get(&network, url).unwrap() else {
            panic!("not a body")
        };
        assert_eq!(bytes.len(), 64);
        assert_eq!(*paths.lock().unwrap(), ["/stable/web-1.2.0.tgz?k=v"]);
        assert_eq!(
            tunnels.opened.lock().unwrap()[0].to_string(),
            "infra/svc/charts:8879"
        );
    }

    #[test]
    fn a_broken_connection_through_a_tunnel_is_tried_again() {
        let (local, paths) = server(2);
        let (network, _) = tunnelled(local, None);
        let url = "portforward://infra/svc/charts:8879/a.tgz";
        let Fetched::Body { bytes, .. } = get(&network, url).unwrap() else {
            panic!("not a body")
        };
        assert_eq!(bytes.len(), 64);
        assert_eq!(paths.lock().unwrap().len(), 3);

        // Every try broken: the error names the portforward URL, not the local one.
        let (local, paths) = server(usize::MAX);
        let (network, _) = tunnelled(local, None);
        let error = get(&network, url).unwrap_err();
        assert!(
            matches!(&error, ClientError::Unreachable { url: u, .. } if u == url),
            "{error:?}"
        );
        assert_eq!(paths.lock().unwrap().len(), TUNNEL_ATTEMPTS);
    }

    #[test]
    fn the_tunnels_reason_is_the_error_and_is_not_tried_again() {
        let (local, paths) = server(usize::MAX);
        let reason = "no ready pod behind svc/charts in namespace infra";
        let (network, _) = tunnelled(local, Some(reason));
        let url = "portforward://infra/svc/charts:8879/index.yaml";
        let error = get(&network, url).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("cannot port-forward to {url}: {reason}")
        );
        assert_eq!(paths.lock().unwrap().len(), 1);
    }

    #[test]
    fn without_tunnels_or_online_a_tunnel_url_is_refused() {
        let network = Network::online(Duration::from_secs(1)).unwrap();
        let error = get(&network, "portforward://a/svc/b:80/index.yaml").unwrap_err();
        assert!(
            error.to_string().contains("no Kubernetes connection"),
            "{error}"
        );
        let error = get(&network, "portforward://a/svc/b/index.yaml").unwrap_err();
        assert!(error.to_string().contains("`svc/b` has no port"), "{error}");
    }
}
