//! The network as a value: [`Network::Online`] with an HTTP client, or
//! [`Network::Offline`], where every operation that would open a connection fails with
//! [`ClientError::Offline`] instead. Nothing else in the crate decides whether it may
//! use the network.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use crate::error::{ClientError, Result};
use crate::settings::RepoEntry;

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
        })
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
    pub fn get(
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
        let client = self.client_for(repo, url)?;
        let mut request = client.get(url);
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
        let response = request.send().map_err(|e| unreachable(url, &e))?;
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
            response,
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
    url: String,
    response: reqwest::blocking::Response,
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
                .response
                .read(&mut buf)
                .map_err(|e| unreachable(&self.url, &e))?;
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

/// A request that got no answer (or lost it on the way).
fn unreachable(url: &str, e: &dyn std::error::Error) -> ClientError {
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
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut messages: Vec<String> = Vec::new();
    let mut source = Some(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        // reqwest and hyper wrap the cause in messages that only repeat the URL the
        // caller states already, or say nothing ("client error (Connect)").
        let wrapper =
            text.starts_with("error sending request for url") || text.starts_with("client error (");
        if !wrapper && !messages.iter().any(|m| m.contains(&text)) {
            messages.push(text);
        }
        source = cause.source();
    }
    messages.join(": ")
}
