//! kube-rs errors in words a person can read, naming the server that could not be
//! reached.
//!
//! kube's own `Display` is written for logs: an API error prints the whole `Status`
//! with Rust's `Debug` (`ApiError: ... (Status { status: Some(Failure), ...`), a refused
//! connection says `ServiceError: client error (Connect)` without the address, and a
//! certificate rustls refused comes out as `Other(OtherError(CaUsedAsEndEntity))`. Every
//! place chartkit turns a [`kube::Error`] into text goes through [`describe`] instead,
//! and the client [`connect`](crate::connect) builds wraps transport failures in
//! [`RequestFailed`], which knows the request's method and full URL, as helm's errors
//! name them (`Get "https://127.0.0.1:6443/version": ... connection refused`).

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower::BoxError;

/// One sentence for a kube-rs error: the API server's own message for an API error, the
/// method, URL and cause for a request that never got an answer.
pub fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => {
            if status.message.is_empty() {
                format!("the API server answered {} {}", status.code, status.reason)
            } else {
                status.message.clone()
            }
        }
        kube::Error::Service(inner) => match inner.downcast_ref::<RequestFailed>() {
            Some(failed) => failed.to_string(),
            None => transport(inner.as_ref()),
        },
        kube::Error::HyperError(inner) => transport(inner),
        kube::Error::SerdeError(inner) => {
            format!("the API server's answer could not be read: {inner}")
        }
        kube::Error::Auth(inner) => format!("cannot authenticate to the API server: {inner}"),
        other => other.to_string(),
    }
}

/// [`describe`] or [`describe_watch`] for an error of unknown type that is one of
/// those, for callers walking a chain of sources.
pub fn words_for(error: &(dyn StdError + 'static)) -> Option<String> {
    if let Some(kube) = as_kube(error) {
        return Some(describe(kube));
    }
    error
        .downcast_ref::<kube::runtime::watcher::Error>()
        .map(describe_watch)
}

/// [`hint`] for an error of unknown type that is a kube-rs error.
pub fn hint_for(error: &(dyn StdError + 'static)) -> Option<String> {
    hint(as_kube(error)?)
}

/// The kube-rs error, whether it is the source itself or boxed (an error holding
/// `#[source] Box<kube::Error>` hands out the box).
fn as_kube<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a kube::Error> {
    error.downcast_ref::<kube::Error>().or_else(|| {
        error
            .downcast_ref::<Box<kube::Error>>()
            .map(|boxed| &**boxed)
    })
}

/// One sentence for a failed watch (or a wait built on one).
pub fn describe_watch(error: &kube::runtime::watcher::Error) -> String {
    use kube::runtime::watcher::Error as W;
    match error {
        W::InitialListFailed(e) | W::WatchStartFailed(e) | W::WatchFailed(e) => describe(e),
        W::WatchError(status) => status.message.clone(),
        W::NoResourceVersion => error.to_string(),
    }
}

/// Whether a failed watch is a request that got no answer.
pub fn watch_is_unreachable(error: &kube::runtime::watcher::Error) -> bool {
    use kube::runtime::watcher::Error as W;
    match error {
        W::InitialListFailed(e) | W::WatchStartFailed(e) | W::WatchFailed(e) => is_unreachable(e),
        _ => false,
    }
}

/// Whether the error is a request that got no answer (the server is down, refused the
/// connection or the TLS handshake), rather than an answer saying no.
pub fn is_unreachable(error: &kube::Error) -> bool {
    match error {
        kube::Error::Service(inner) => inner.is::<RequestFailed>(),
        kube::Error::HyperError(_) => true,
        _ => false,
    }
}

/// Whether the server closed the connection in the middle of the request (a broken pipe
/// or a reset), as a server does that refuses a body too large before reading it.
pub fn was_cut_off(error: &kube::Error) -> bool {
    match error {
        kube::Error::Service(inner) => inner
            .downcast_ref::<RequestFailed>()
            .is_some_and(|failed| failed.cause == Cause::CutOff),
        _ => false,
    }
}

/// What to try when the server could not be reached, if the cause says.
pub fn hint(error: &kube::Error) -> Option<String> {
    if let kube::Error::Api(status) = error {
        let details = status.details.as_ref()?;
        return (status.code == 404 && details.kind == "namespaces").then(|| {
            format!(
                "create the namespace first (`kubectl create namespace {}`), or pass --create-namespace",
                details.name
            )
        });
    }
    let kube::Error::Service(inner) = error else {
        return None;
    };
    let failed = inner.downcast_ref::<RequestFailed>()?;
    let words: &str = match failed.cause {
        Cause::Refused | Cause::Unreachable | Cause::CutOff => {
            "check that the API server is running and that the kubeconfig's server address (or --kube-apiserver) is right"
        }
        Cause::CaAsServerCertificate => {
            "give the API server a certificate of its own signed by that CA (Go's TLS accepts a trusted CA certificate as the server's, rustls does not)"
        }
        Cause::UnknownAuthority => {
            "put the CA that signed the server's certificate in the kubeconfig's certificate-authority-data, or pass --kube-ca-file"
        }
        Cause::WrongName => {
            "connect by a name the certificate lists, or pass --kube-tls-server-name"
        }
        Cause::Other => return None,
    };
    Some(words.to_string())
}

/// A request that got no answer: its method, full URL and why.
#[derive(Debug)]
pub struct RequestFailed {
    method: http::Method,
    url: String,
    cause: Cause,
    words: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Refused,
    Unreachable,
    /// The server closed the connection while the request was being sent or answered.
    CutOff,
    UnknownAuthority,
    CaAsServerCertificate,
    WrongName,
    Other,
}

impl RequestFailed {
    fn new(method: http::Method, url: String, error: &(dyn StdError + 'static)) -> RequestFailed {
        let (cause, mut words) = classify(error);
        if cause == Cause::Refused {
            // Go's words, which name the address dialled.
            words = format!("dial tcp {}: connect: connection refused", address(&url));
        }
        RequestFailed {
            method,
            url,
            cause,
            words,
        }
    }
}

/// helm's form: `kubernetes cluster unreachable: Get "URL": cause`.
impl fmt::Display for RequestFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let method = self.method.as_str();
        // Go's net/http names the method as `Get`, `Post`...
        let mut go_method = method[..1].to_string();
        go_method.push_str(&method[1..].to_ascii_lowercase());
        write!(
            f,
            "kubernetes cluster unreachable: {go_method} \"{}\": {}",
            self.url, self.words
        )
    }
}

impl StdError for RequestFailed {}

/// `host:port` of a URL, the port filled in from the scheme.
fn address(url: &str) -> String {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return url.to_string();
    };
    let host = uri.host().unwrap_or("");
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    format!("{host}:{port}")
}

/// Words for a transport failure with no request to name.
fn transport(error: &(dyn StdError + 'static)) -> String {
    format!("kubernetes cluster unreachable: {}", classify(error).1)
}

/// The deepest cause worth naming in a chain of hyper, hyper-util, io and rustls errors,
/// in words.
fn classify(error: &(dyn StdError + 'static)) -> (Cause, String) {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    let mut last_words = None;
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            // An io error may carry a rustls error, or another io error that does.
            if let Some(inner) = io.get_ref() {
                if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                    return tls_words(tls);
                }
                if inner.is::<std::io::Error>() {
                    current = Some(inner);
                    continue;
                }
            }
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    (Cause::Refused, "connection refused".to_string())
                }
                std::io::ErrorKind::TimedOut => {
                    (Cause::Unreachable, "connection timed out".to_string())
                }
                std::io::ErrorKind::ConnectionReset => (
                    Cause::CutOff,
                    "the server closed the connection".to_string(),
                ),
                std::io::ErrorKind::BrokenPipe => (Cause::CutOff, "Broken pipe".to_string()),
                _ => (Cause::Unreachable, strip_os_code(&io.to_string())),
            };
        }
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return tls_words(tls);
        }
        // hyper-util's legacy client says only `client error (Connect)`; its source
        // says what happened.
        if error.source().is_none() {
            last_words = Some(error.to_string());
        }
        current = error.source();
    }
    let words = last_words.unwrap_or_else(|| error.to_string());
    let words = if words == "operation timed out" || words.contains("deadline has elapsed") {
        "the request timed out".to_string()
    } else {
        words
    };
    (Cause::Other, words)
}

/// `Connection refused (os error 111)` → `Connection refused`.
fn strip_os_code(text: &str) -> String {
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// A TLS failure in the words of Go's `crypto/tls` and `crypto/x509` where they have
/// one, since those are what helm and kubectl users search for.
fn tls_words(error: &rustls::Error) -> (Cause, String) {
    use rustls::CertificateError as C;
    let rustls::Error::InvalidCertificate(certificate) = error else {
        return (Cause::Other, format!("TLS handshake failed: {error}"));
    };
    let verify = "tls: failed to verify certificate";
    match certificate {
        C::UnknownIssuer => (
            Cause::UnknownAuthority,
            format!("{verify}: x509: certificate signed by unknown authority"),
        ),
        C::NotValidForNameContext { .. } => (Cause::WrongName, format!("{verify}: {certificate}")),
        C::NotValidForName => (
            Cause::WrongName,
            format!("{verify}: the certificate is not valid for the server's name"),
        ),
        C::Expired | C::ExpiredContext { .. } => (
            Cause::Other,
            format!("{verify}: x509: certificate has expired or is not yet valid"),
        ),
        C::NotValidYet | C::NotValidYetContext { .. } => (
            Cause::Other,
            format!("{verify}: x509: certificate has expired or is not yet valid"),
        ),
        C::BadSignature => (
            Cause::Other,
            format!("{verify}: the certificate's signature is not valid"),
        ),
        C::Other(other) => match other.0.downcast_ref::<webpki::Error>() {
            Some(webpki::Error::CaUsedAsEndEntity) => (
                Cause::CaAsServerCertificate,
                format!(
                    "{verify}: the server presented a CA certificate (basic constraints CA:TRUE) as its own, which rustls refuses"
                ),
            ),
            Some(webpki::Error::UnknownIssuer) => (
                Cause::UnknownAuthority,
                format!("{verify}: x509: certificate signed by unknown authority"),
            ),
            _ => (
                Cause::Other,
                format!("{verify}: the server's certificate was refused"),
            ),
        },
        _ => (
            Cause::Other,
            format!("{verify}: the server's certificate was refused"),
        ),
    }
}

/// A tower layer for the kube client's stack that turns a request's transport error into
/// a [`RequestFailed`] naming the method and full URL (the server from the kubeconfig
/// plus the request's path).
#[derive(Clone)]
pub struct NameTheServer {
    server: String,
}

impl NameTheServer {
    pub fn new(server: &str) -> NameTheServer {
        NameTheServer {
            server: server.trim_end_matches('/').to_string(),
        }
    }
}

impl<S> tower::Layer<S> for NameTheServer {
    type Service = NamingService<S>;

    fn layer(&self, inner: S) -> NamingService<S> {
        NamingService {
            inner,
            server: self.server.clone(),
        }
    }
}

#[derive(Clone)]
pub struct NamingService<S> {
    inner: S,
    server: String,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B, R> tower::Service<http::Request<B>> for NamingService<S>
where
    S: tower::Service<http::Request<B>, Response = R>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = R;
    type Error = BoxError;
    type Future = BoxFuture<Result<R, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method().clone();
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/");
        let url = format!("{}{path}", self.server);
        let response = self.inner.call(request);
        Box::pin(async move {
            response.await.map_err(|error| {
                let error: BoxError = error.into();
                // kube's own errors (auth, request building) are already words.
                if error.is::<kube::Error>() {
                    return error;
                }
                Box::new(RequestFailed::new(method, url, error.as_ref())) as BoxError
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_are_the_servers_message_without_debug_text() {
        let status =
            kube::core::Status::failure("namespaces \"nope\" not found", "NotFound").with_code(404);
        let error = kube::Error::Api(Box::new(status));
        assert_eq!(describe(&error), "namespaces \"nope\" not found");
        assert!(
            error.to_string().contains("Status {"),
            "kube's own text changed"
        );
    }

    #[test]
    fn a_refused_connection_names_the_method_url_and_cause() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let failed = RequestFailed::new(
            http::Method::GET,
            "https://127.0.0.1:1/version".to_string(),
            &io,
        );
        let error = kube::Error::Service(Box::new(failed));
        assert_eq!(
            describe(&error),
            "kubernetes cluster unreachable: Get \"https://127.0.0.1:1/version\": dial tcp 127.0.0.1:1: connect: connection refused"
        );
        assert!(is_unreachable(&error));
        assert!(hint(&error).is_some());
    }

    #[test]
    fn certificates_rustls_refuses_are_described_in_words() {
        let other = rustls::OtherError(std::sync::Arc::new(webpki::Error::CaUsedAsEndEntity));
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other));
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        let (cause, words) = classify(&io);
        assert_eq!(cause, Cause::CaAsServerCertificate);
        assert!(!words.contains("OtherError"), "{words}");
        let unknown = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, unknown);
        assert_eq!(
            classify(&io).1,
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        );
    }
}
