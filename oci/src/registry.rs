//! The distribution API as a chart client needs it: tags (with paging), manifests and
//! blobs (GET, HEAD, uploads), behind Basic or Bearer authentication learned from the
//! registry's challenge. Every byte read is checked against the digest it was asked by.
//!
//! The HTTP client is handed in (built by the caller with `--ca-file`,
//! `--cert-file`/`--key-file` or `--insecure-skip-tls-verify`), so TLS is configured in
//! one place for repositories and registries alike.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::blocking::{RequestBuilder, Response};
use reqwest::{Method, StatusCode, header};

use crate::auth::{AuthState, Challenge, Credentials, scope};
use crate::error::OciError;
use crate::manifest::{
    DOCKER_MANIFEST_MEDIA_TYPE, INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, digest_of,
};

/// The largest manifest read (as oras-go's limit): a chart's manifest is a few hundred bytes.
const MAX_MANIFEST: u64 = 4 * 1024 * 1024;

/// Blobs at least this large are asked for before they are uploaded; smaller ones (a
/// chart's config, most charts) cost less to send than a round trip to ask.
const ASK_BEFORE_UPLOADING: u64 = 1024 * 1024;

/// One registry, as one command talks to it.
pub struct Registry {
    http: reqwest::blocking::Client,
    /// `HOST[:PORT]`.
    pub host: String,
    plain_http: bool,
    credentials: Option<Credentials>,
    auth: Mutex<AuthState>,
    /// The registry answered a monolithic upload by opening a session instead.
    monolithic_refused: AtomicBool,
    /// Held while a token is asked for.
    token_fetch: Mutex<()>,
}

/// A manifest as fetched.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    /// `sha256:` of the bytes (checked against the header and the reference).
    pub digest: String,
}

impl Registry {
    /// A client of `host` over `http` (`plain_http`: `http://`, helm's `--plain-http`).
    pub fn new(
        http: reqwest::blocking::Client,
        host: &str,
        plain_http: bool,
        credentials: Option<Credentials>,
    ) -> Registry {
        Registry {
            http,
            host: host.to_owned(),
            plain_http,
            credentials,
            auth: Mutex::new(AuthState::default()),
            monolithic_refused: AtomicBool::new(false),
            token_fetch: Mutex::new(()),
        }
    }

    fn base(&self) -> String {
        format!(
            "{}://{}/v2/",
            if self.plain_http { "http" } else { "https" },
            self.host
        )
    }

    /// `GET /v2/`: whether the registry accepts these credentials (helm's login check).
    pub fn ping(&self) -> Result<(), OciError> {
        let url = self.base();
        let response = self.send(Method::GET, &url, None, &|r| r)?;
        self.expect(response, &url, "the registry", &[StatusCode::OK])
            .map(drop)
    }

    /// Every tag of `repository`, following the registry's `Link` pages.
    pub fn tags(&self, repository: &str) -> Result<Vec<String>, OciError> {
        let mut tags = Vec::new();
        let mut url = format!("{}{repository}/tags/list", self.base());
        let scope = scope(repository, false);
        let what = format!("repository {repository}");
        for _ in 0..10_000 {
            let response = self.send(Method::GET, &url, Some(&scope), &|r| r)?;
            let response = self.expect(response, &url, &what, &[StatusCode::OK])?;
            let next = response
                .headers()
                .get(header::LINK)
                .and_then(|v| v.to_str().ok())
                .and_then(next_link);
            let body = read_limited(response, &url, MAX_MANIFEST)?;
            let json: serde_json::Value =
                serde_json::from_slice(&body).map_err(|e| OciError::Status {
                    url: url.clone(),
                    status: 200,
                    detail: format!("the tag list is not JSON: {e}"),
                })?;
            tags.extend(
                json.get("tags")
                    .and_then(|t| t.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_owned)),
            );
            match next {
                Some(link) => {
                    url = reqwest::Url::parse(&url)
                        .and_then(|u| u.join(&link))
                        .map(|u| u.to_string())
                        .map_err(|e| OciError::Status {
                            url: url.clone(),
                            status: 200,
                            detail: format!("its next page link `{link}` is not a URL: {e}"),
                        })?;
                }
                None => return Ok(tags),
            }
        }
        Ok(tags)
    }

    /// The manifest `reference` (a tag or a digest) names, checked against the digest
    /// it was asked by and against the one the registry says it sent.
    pub fn manifest(&self, repository: &str, reference: &str) -> Result<Fetched, OciError> {
        let url = format!("{}{repository}/manifests/{reference}", self.base());
        let what = format!("{repository}:{reference}").replace(":sha256:", "@sha256:");
        let response = self.send(Method::GET, &url, Some(&scope(repository, false)), &|r| {
            r.header(header::ACCEPT, accept_manifests())
        })?;
        let response = self.expect(
            response,
            &url,
            &format!("manifest {what}"),
            &[StatusCode::OK],
        )?;
        let announced = content_digest(&response);
        let bytes = read_limited(response, &url, MAX_MANIFEST)?;
        let digest = digest_of(&bytes);
        let expected = if reference.starts_with("sha256:") {
            Some(reference.to_owned())
        } else {
            announced
        };
        if let Some(expected) = expected
            && expected != digest
        {
            return Err(OciError::DigestMismatch {
                reference: format!("{}/{what}", self.host),
                what: "the manifest".into(),
                expected,
                actual: digest,
            });
        }
        Ok(Fetched { bytes, digest })
    }

    /// The digest a tag points at (`HEAD`), or `None` when the tag does not exist.
    pub fn manifest_digest(&self, repository: &str, tag: &str) -> Result<Option<String>, OciError> {
        let url = format!("{}{repository}/manifests/{tag}", self.base());
        let response = self.send(Method::HEAD, &url, Some(&scope(repository, false)), &|r| {
            r.header(header::ACCEPT, accept_manifests())
        })?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let response = self.expect(
            response,
            &url,
            &format!("manifest {repository}:{tag}"),
            &[StatusCode::OK],
        )?;
        Ok(content_digest(&response))
    }

    /// The blob `digest` of `repository`, checked against it.
    pub fn blob(&self, repository: &str, digest: &str, what: &str) -> Result<Vec<u8>, OciError> {
        let url = format!("{}{repository}/blobs/{digest}", self.base());
        let response = self.send(Method::GET, &url, Some(&scope(repository, false)), &|r| r)?;
        let response = self.expect(
            response,
            &url,
            &format!("{what} {digest} of {repository}"),
            &[StatusCode::OK],
        )?;
        let bytes = read_limited(response, &url, u64::MAX)?;
        let actual = digest_of(&bytes);
        if actual != digest {
            return Err(OciError::DigestMismatch {
                reference: format!("{}/{repository}", self.host),
                what: what.to_owned(),
                expected: digest.to_owned(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// Whether the repository already holds blob `digest`.
    pub fn has_blob(&self, repository: &str, digest: &str) -> Result<bool, OciError> {
        let url = format!("{}{repository}/blobs/{digest}", self.base());
        let response = self.send(Method::HEAD, &url, Some(&scope(repository, true)), &|r| r)?;
        match response.status() {
            StatusCode::OK => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            _ => self
                .expect(response, &url, &format!("blob {digest}"), &[StatusCode::OK])
                .map(|_| true),
        }
    }

    /// Uploads `bytes` as blob `digest`. A large blob is first asked for (`HEAD`): the
    /// question costs less than sending it again. The upload is monolithic (one `POST`
    /// with `?digest=` and the body, which the distribution spec allows and zot and
    /// `chartkit serve` take); a registry that answers it `202` without taking the body
    /// (distribution 2.8 does) gets it again by `PUT` to the session it opened, and
    /// this client's later uploads open their session empty.
    pub fn push_blob(&self, repository: &str, digest: &str, bytes: &[u8]) -> Result<(), OciError> {
        if bytes.len() as u64 >= ASK_BEFORE_UPLOADING && self.has_blob(repository, digest)? {
            return Ok(());
        }
        let scope = scope(repository, true);
        let monolithic = !self.monolithic_refused.load(Ordering::Relaxed);
        let mut url = reqwest::Url::parse(&format!("{}{repository}/blobs/uploads/", self.base()))
            .map_err(|e| OciError::Status {
            url: format!("{}{repository}/blobs/uploads/", self.base()),
            status: 0,
            detail: format!("not a URL: {e}"),
        })?;
        if monolithic {
            url.query_pairs_mut().append_pair("digest", digest);
        }
        let url = url.to_string();
        let response = self.send(Method::POST, &url, Some(&scope), &|r| match monolithic {
            true => r
                .header(header::CONTENT_TYPE, "application/octet-stream")
                .body(bytes.to_vec()),
            false => r.header(header::CONTENT_LENGTH, 0),
        })?;
        let what = format!("repository {repository}");
        let accepted = [StatusCode::ACCEPTED, StatusCode::CREATED];
        let response = self.expect(response, &url, &what, &accepted)?;
        if response.status() == StatusCode::CREATED {
            return Ok(());
        }
        if monolithic {
            self.monolithic_refused.store(true, Ordering::Relaxed);
        }
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| OciError::Status {
                url: url.clone(),
                status: 202,
                detail: "the upload was started without a Location to send it to".into(),
            })?;
        let mut upload = reqwest::Url::parse(&url)
            .and_then(|u| u.join(location))
            .map_err(|e| OciError::Status {
                url: url.clone(),
                status: 202,
                detail: format!("its upload location `{location}` is not a URL: {e}"),
            })?;
        upload.query_pairs_mut().append_pair("digest", digest);
        let upload = upload.to_string();
        let response = self.send(Method::PUT, &upload, Some(&scope), &|r| {
            r.header(header::CONTENT_TYPE, "application/octet-stream")
                .body(bytes.to_vec())
        })?;
        self.expect(response, &upload, &what, &[StatusCode::CREATED])
            .map(drop)
    }

    /// Puts `manifest` under `tag`; the digest the registry stored it as.
    pub fn push_manifest(
        &self,
        repository: &str,
        tag: &str,
        manifest: &[u8],
    ) -> Result<String, OciError> {
        let url = format!("{}{repository}/manifests/{tag}", self.base());
        let response = self.send(Method::PUT, &url, Some(&scope(repository, true)), &|r| {
            r.header(header::CONTENT_TYPE, MANIFEST_MEDIA_TYPE)
                .body(manifest.to_vec())
        })?;
        let response = self.expect(
            response,
            &url,
            &format!("repository {repository}"),
            &[StatusCode::CREATED],
        )?;
        let digest = digest_of(manifest);
        match content_digest(&response) {
            Some(stored) if stored != digest => Err(OciError::DigestMismatch {
                reference: format!("{}/{repository}:{tag}", self.host),
                what: "the manifest stored".into(),
                expected: digest,
                actual: stored,
            }),
            _ => Ok(digest),
        }
    }

    /// Sends a request built by `build`, with what the client knows of the registry's
    /// authentication; a 401 is answered once (Basic credentials, or a token from the
    /// service the challenge names) and the request sent again.
    fn send(
        &self,
        method: Method,
        url: &str,
        scope: Option<&str>,
        build: &dyn Fn(RequestBuilder) -> RequestBuilder,
    ) -> Result<Response, OciError> {
        // Whether this request carried the Basic credentials: another thread's request
        // may have learned the challenge meanwhile, and a 401 to a request sent before
        // that is no refusal of the credentials.
        let (sent_basic, sent_token) = {
            let auth = self.auth.lock().unwrap_or_else(|e| e.into_inner());
            (
                auth.basic,
                auth.tokens.get(scope.unwrap_or_default()).cloned(),
            )
        };
        let response = self.send_once(method.clone(), url, scope, build)?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(Challenge::parse);
        let refused = |response: Response| OciError::Unauthorized {
            registry: self.host.clone(),
            had_credentials: self.credentials.is_some(),
            reason: error_detail(response),
        };
        match challenge {
            Some(Challenge::Basic) => {
                if sent_basic || self.credentials.is_none() {
                    return Err(refused(response));
                }
                self.auth.lock().unwrap_or_else(|e| e.into_inner()).basic = true;
            }
            Some(Challenge::Bearer {
                realm,
                service,
                scope: challenged,
            }) => {
                // One token request at a time: concurrent requests (a push's blobs)
                // challenged together share the token the first one gets.
                let _one_at_a_time = self.token_fetch.lock().unwrap_or_else(|e| e.into_inner());
                let current = (self.auth.lock().unwrap_or_else(|e| e.into_inner()).tokens)
                    .get(scope.unwrap_or_default())
                    .cloned();
                if current.is_none() || current == sent_token {
                    // What the request needs and what the command will need next (a
                    // push is challenged for `pull` on its first HEAD), in one token.
                    let mut scopes: Vec<String> = scope.map(str::to_owned).into_iter().collect();
                    scopes.extend(challenged.filter(|c| Some(c.as_str()) != scope));
                    let token = self.token(&realm, service.as_deref(), &scopes)?;
                    let mut auth = self.auth.lock().unwrap_or_else(|e| e.into_inner());
                    auth.bearer = Some((realm, service));
                    auth.tokens
                        .insert(scope.unwrap_or_default().to_owned(), token);
                }
            }
            _ => return Err(refused(response)),
        }
        let response = self.send_once(method, url, scope, build)?;
        if response.status() == StatusCode::UNAUTHORIZED {
            return Err(refused(response));
        }
        Ok(response)
    }

    fn send_once(
        &self,
        method: Method,
        url: &str,
        scope: Option<&str>,
        build: &dyn Fn(RequestBuilder) -> RequestBuilder,
    ) -> Result<Response, OciError> {
        let mut request = build(self.http.request(method, url));
        {
            let auth = self.auth.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(token) = auth.tokens.get(scope.unwrap_or_default()) {
                request = request.bearer_auth(token);
            } else if auth.basic
                && let Some(c) = &self.credentials
            {
                request = request.basic_auth(&c.username, Some(&c.password));
            }
        }
        request.send().map_err(|e| OciError::Unreachable {
            url: url.to_owned(),
            reason: chain(&e),
        })
    }

    /// A token from `realm` for `scopes`, with the credentials (or anonymously).
    fn token(
        &self,
        realm: &str,
        service: Option<&str>,
        scopes: &[String],
    ) -> Result<String, OciError> {
        let bad = |reason: String| OciError::Token {
            realm: realm.to_owned(),
            reason,
        };
        let mut url = reqwest::Url::parse(realm).map_err(|e| bad(format!("not a URL: {e}")))?;
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = service {
                query.append_pair("service", service);
            }
            for scope in scopes {
                query.append_pair("scope", scope);
            }
        }
        let mut request = self.http.get(url.clone());
        if let Some(c) = &self.credentials {
            request = request.basic_auth(&c.username, Some(&c.password));
        }
        let response = request.send().map_err(|e| OciError::Unreachable {
            url: realm.to_owned(),
            reason: chain(&e),
        })?;
        match response.status() {
            StatusCode::OK => {}
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                return Err(OciError::Unauthorized {
                    registry: self.host.clone(),
                    had_credentials: self.credentials.is_some(),
                    reason: format!("its token service {realm} refused them"),
                });
            }
            status => {
                return Err(bad(format!("it answered {}", status.as_u16())));
            }
        }
        let body = read_limited(response, realm, MAX_MANIFEST)?;
        let json: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| bad(format!("its answer is not JSON: {e}")))?;
        json.get("token")
            .or_else(|| json.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| bad("its answer has no `token`".into()))
    }

    /// The response if its status is one of `ok`, else the error it means.
    fn expect(
        &self,
        response: Response,
        url: &str,
        what: &str,
        ok: &[StatusCode],
    ) -> Result<Response, OciError> {
        let status = response.status();
        if ok.contains(&status) {
            return Ok(response);
        }
        Err(match status {
            StatusCode::NOT_FOUND => OciError::NotFound {
                registry: self.host.clone(),
                what: what.to_owned(),
            },
            StatusCode::FORBIDDEN => OciError::Denied {
                registry: self.host.clone(),
                what: what.to_owned(),
                reason: error_detail(response),
            },
            StatusCode::UNAUTHORIZED => OciError::Unauthorized {
                registry: self.host.clone(),
                had_credentials: self.credentials.is_some(),
                reason: error_detail(response),
            },
            _ => OciError::Status {
                url: url.to_owned(),
                status: status.as_u16(),
                detail: error_detail(response),
            },
        })
    }
}

/// The manifest types a chart client accepts (an index is refused after reading).
fn accept_manifests() -> String {
    [
        MANIFEST_MEDIA_TYPE,
        INDEX_MEDIA_TYPE,
        DOCKER_MANIFEST_MEDIA_TYPE,
    ]
    .join(", ")
}

fn content_digest(response: &Response) -> Option<String> {
    response
        .headers()
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The distribution error body's messages, or the status's reason.
fn error_detail(response: Response) -> String {
    let status = response.status();
    let body = response.bytes().map(|b| b.to_vec()).unwrap_or_default();
    let messages: Vec<String> = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|json| {
            json.get("errors").and_then(|e| e.as_array()).map(|errors| {
                errors
                    .iter()
                    .filter_map(|e| {
                        let code = e.get("code").and_then(|c| c.as_str()).unwrap_or_default();
                        let message = e.get("message").and_then(|m| m.as_str())?;
                        Some(if code.is_empty() {
                            message.to_owned()
                        } else {
                            format!("{message} ({code})")
                        })
                    })
                    .collect()
            })
        })
        .unwrap_or_default();
    if messages.is_empty() {
        format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or_default()
        )
        .trim()
        .to_owned()
    } else {
        messages.join("; ")
    }
}

/// The target of a `Link: <URL>; rel="next"` header.
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        params.contains("rel=\"next\"").then(|| {
            target
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_owned()
        })
    })
}

fn read_limited(response: Response, url: &str, limit: u64) -> Result<Vec<u8>, OciError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    response
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| OciError::Unreachable {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
    if bytes.len() as u64 > limit {
        return Err(OciError::Status {
            url: url.to_owned(),
            status: 200,
            detail: format!("the answer is larger than {limit} bytes"),
        });
    }
    Ok(bytes)
}

/// An error and its sources, each stated once (the repository client words its HTTP
/// errors with this too).
pub fn chain(error: &dyn std::error::Error) -> String {
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

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A registry behind a token service, as public registries are: `/v2/...` answers
    /// 401 with a Bearer challenge unless the request carries the token, which `/token`
    /// gives for alice's password (or anonymously for pulls when `anonymous`). Tags come
    /// in two pages. Returns the address and the number of tokens issued.
    fn token_registry(anonymous: bool) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let issued = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&issued);
        let realm = format!("http://{addr}/token");
        let uses = AtomicUsize::new(0);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let mut authorization = String::new();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    if let Some(v) = header.to_ascii_lowercase().strip_prefix("authorization: ") {
                        authorization = v.trim().to_owned();
                    }
                }
                let (status, headers, body) = if path.starts_with("/token") {
                    // base64("alice:secret")
                    let good = authorization == "basic ywxpy2u6c2vjcmv0";
                    if good || (anonymous && authorization.is_empty()) {
                        let n = count.fetch_add(1, Ordering::SeqCst);
                        (200, String::new(), format!("{{\"token\":\"t{n}\"}}"))
                    } else {
                        (401, String::new(), String::new())
                    }
                } else if !authorization.starts_with("bearer t")
                    || uses.fetch_add(1, Ordering::SeqCst) >= 2
                {
                    // A token serves two requests, then it has expired.
                    uses.store(0, Ordering::SeqCst);
                    (
                        401,
                        format!("WWW-Authenticate: Bearer realm=\"{realm}\",service=\"test\",scope=\"repository:charts/web:pull\"\r\n"),
                        r#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#.to_owned(),
                    )
                } else if path == "/v2/charts/web/tags/list" {
                    (
                        200,
                        "Link: </v2/charts/web/tags/list?last=1.0.0&n=1>; rel=\"next\"\r\n"
                            .to_owned(),
                        r#"{"name":"charts/web","tags":["1.0.0"]}"#.to_owned(),
                    )
                } else if path.starts_with("/v2/charts/web/tags/list?last=1.0.0") {
                    (
                        200,
                        String::new(),
                        r#"{"name":"charts/web","tags":["1.1.0_b"]}"#.to_owned(),
                    )
                } else {
                    (404, String::new(), String::new())
                };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (addr, issued)
    }

    fn client(addr: &str, credentials: Option<(&str, &str)>) -> Registry {
        let http = reqwest::blocking::Client::builder()
            .no_proxy()
            .build()
            .unwrap();
        Registry::new(
            http,
            addr,
            true,
            credentials.map(|(u, p)| Credentials {
                username: u.into(),
                password: p.into(),
            }),
        )
    }

    #[test]
    fn a_bearer_token_is_reused_until_it_expires_and_pages_are_followed() {
        let (addr, issued) = token_registry(false);
        let registry = client(&addr, Some(("alice", "secret")));
        // Two pages: two requests with one token.
        assert_eq!(registry.tags("charts/web").unwrap(), ["1.0.0", "1.1.0_b"]);
        assert_eq!(issued.load(Ordering::SeqCst), 1);
        // The token has expired: the registry's 401 gets a new one, once.
        assert_eq!(registry.tags("charts/web").unwrap().len(), 2);
        assert_eq!(issued.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn anonymous_tokens_serve_public_repositories() {
        let (addr, issued) = token_registry(true);
        let registry = client(&addr, None);
        assert_eq!(registry.tags("charts/web").unwrap().len(), 2);
        assert_eq!(issued.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_token_service_refusing_the_password_is_a_clear_error() {
        let (addr, _) = token_registry(false);
        let error = client(&addr, Some(("alice", "wrong")))
            .tags("charts/web")
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{addr} refused the credentials given for it: its token service http://{addr}/token refused them"
            )
        );
        let error = client(&addr, None).tags("charts/web").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("refused the request without credentials"),
            "{error}"
        );
    }

    /// A registry that records each request (`METHOD PATH BODY-LENGTH`) and takes
    /// monolithic uploads when `monolithic`, else opens a session as distribution 2.8
    /// does (202, the body ignored) and takes the body by PUT.
    fn upload_registry(monolithic: bool) -> (String, Arc<Mutex<Vec<String>>>) {
        use std::io::Read;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let mut words = line.split_whitespace();
                let method = words.next().unwrap_or("").to_owned();
                let path = words.next().unwrap_or("").to_owned();
                let mut length = 0;
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length: ") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                log.lock()
                    .unwrap()
                    .push(format!("{method} {path} {length}"));
                let (status, headers) = match method.as_str() {
                    "POST" if monolithic && path.contains("digest=") => (201, String::new()),
                    "POST" => (
                        202,
                        "Location: /v2/charts/web/blobs/uploads/session\r\n".to_owned(),
                    ),
                    "PUT" => (201, String::new()),
                    _ => (404, String::new()),
                };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\n{headers}Content-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
        });
        (addr, seen)
    }

    #[test]
    fn blobs_go_up_in_one_request_where_the_registry_takes_it_and_by_session_where_not() {
        let config = b"{}".as_slice();
        let chart = b"chart bytes".as_slice();
        let digests = [digest_of(config), digest_of(chart)];

        let (addr, seen) = upload_registry(true);
        let registry = client(&addr, None);
        registry
            .push_blob("charts/web", &digests[0], config)
            .unwrap();
        registry
            .push_blob("charts/web", &digests[1], chart)
            .unwrap();
        // Small blobs are not asked for first: one POST each, with the body.
        assert_eq!(
            *seen.lock().unwrap(),
            [
                format!(
                    "POST /v2/charts/web/blobs/uploads/?digest={} 2",
                    digests[0].replace(':', "%3A")
                ),
                format!(
                    "POST /v2/charts/web/blobs/uploads/?digest={} 11",
                    digests[1].replace(':', "%3A")
                ),
            ]
        );

        // distribution 2.8 opens a session instead: the body goes again by PUT, and the
        // next upload opens its session empty.
        let (addr, seen) = upload_registry(false);
        let registry = client(&addr, None);
        registry
            .push_blob("charts/web", &digests[0], config)
            .unwrap();
        registry
            .push_blob("charts/web", &digests[1], chart)
            .unwrap();
        let session = "/v2/charts/web/blobs/uploads/session?digest=";
        assert_eq!(
            *seen.lock().unwrap(),
            [
                format!(
                    "POST /v2/charts/web/blobs/uploads/?digest={} 2",
                    digests[0].replace(':', "%3A")
                ),
                format!("PUT {session}{} 2", digests[0].replace(':', "%3A")),
                "POST /v2/charts/web/blobs/uploads/ 0".to_owned(),
                format!("PUT {session}{} 11", digests[1].replace(':', "%3A")),
            ]
        );
    }

    #[test]
    fn link_headers_give_the_next_page() {
        assert_eq!(
            next_link(r#"</v2/a/tags/list?last=b&n=2>; rel="next""#).as_deref(),
            Some("/v2/a/tags/list?last=b&n=2")
        );
        assert_eq!(next_link(r#"</x>; rel="prev""#), None);
    }
}
