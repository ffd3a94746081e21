//! A registry token service for tests, as Docker Hub and GHCR run one: `GET
//! /token?service=S&scope=repository:NAME:ACTIONS` answers a JWT (ES256, its certificate in
//! `x5c`) that the distribution registry's `auth.token` checks against the certificate
//! given as its `rootcertbundle`. Known users (Basic auth) get what they ask for; anonymous
//! callers get `pull` only; a wrong password gets 401. It counts the tokens it issued.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use rcgen::{CertificateParams, KeyPair, SigningKey};

pub const SERVICE: &str = "chartkit-test-registry";
pub const ISSUER: &str = "chartkit-test-token-service";

/// A running token service (its thread lives as long as the test process).
pub struct TokenService {
    /// `http://127.0.0.1:PORT/token`.
    pub realm: String,
    /// The signing certificate, for the registry's `rootcertbundle`.
    pub root_cert: PathBuf,
    /// Tokens issued so far.
    pub issued: Arc<AtomicUsize>,
}

impl TokenService {
    pub fn start(dir: &Path, users: &[(String, String)]) -> TokenService {
        let key = KeyPair::generate().expect("token signing key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, ISSUER);
        let cert = params.self_signed(&key).expect("token certificate");
        let root_cert = dir.join("token-root.pem");
        std::fs::write(&root_cert, cert.pem()).expect("write token certificate");
        let x5c = base64::engine::general_purpose::STANDARD.encode(cert.der());
        let listener = TcpListener::bind("127.0.0.1:0").expect("token service port");
        let realm = format!("http://{}/token", listener.local_addr().unwrap());
        let issued = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&issued);
        let users: Vec<String> = users
            .iter()
            .map(|(u, p)| {
                format!(
                    "basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
                )
            })
            .collect();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().expect("stream"));
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let mut authorization = String::new();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':')
                        && name.eq_ignore_ascii_case("authorization")
                    {
                        let value = value.trim();
                        // The scheme's case is free, the credentials' is not.
                        authorization = match value.split_once(' ') {
                            Some((scheme, rest)) => {
                                format!("{} {rest}", scheme.to_ascii_lowercase())
                            }
                            None => value.to_owned(),
                        };
                    }
                }
                let user = users.iter().position(|u| *u == authorization);
                let (status, body) = if !authorization.is_empty() && user.is_none() {
                    (401, r#"{"details":"wrong credentials"}"#.to_owned())
                } else {
                    let scopes: Vec<String> = reqwest::Url::parse(&format!("http://x{target}"))
                        .map(|u| {
                            u.query_pairs()
                                .filter(|(k, _)| k == "scope")
                                .map(|(_, v)| v.into_owned())
                                .collect()
                        })
                        .unwrap_or_default();
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    let token = jwt(&key, &x5c, &scopes, user.is_some(), n);
                    (200, format!("{{\"token\":\"{token}\",\"expires_in\":300}}"))
                };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        TokenService {
            realm,
            root_cert,
            issued,
        }
    }

    /// The registry configuration's `auth:` section for this service.
    pub fn registry_auth(&self) -> String {
        format!(
            "auth:\n  token:\n    realm: {}\n    service: {SERVICE}\n    issuer: {ISSUER}\n    rootcertbundle: {}\n",
            self.realm,
            self.root_cert.display()
        )
    }
}

/// A signed token granting `scopes` (pull only when `known` is false).
fn jwt(key: &KeyPair, x5c: &str, scopes: &[String], known: bool, n: usize) -> String {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let access: Vec<serde_json::Value> = scopes
        .iter()
        .filter_map(|scope| {
            let mut parts = scope.splitn(3, ':');
            let (kind, name, actions) = (parts.next()?, parts.next()?, parts.next()?);
            let actions: Vec<&str> = actions
                .split(',')
                .filter(|a| known || *a == "pull")
                .collect();
            Some(serde_json::json!({"type": kind, "name": name, "actions": actions}))
        })
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let header = serde_json::json!({"typ": "JWT", "alg": "ES256", "x5c": [x5c]});
    let claims = serde_json::json!({
        "iss": ISSUER,
        "sub": if known { "user" } else { "" },
        "aud": SERVICE,
        "exp": now + 300,
        "nbf": now - 10,
        "iat": now,
        "jti": format!("token-{n}"),
        "access": access,
    });
    let signing_input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let der = key.sign(signing_input.as_bytes()).expect("sign token");
    format!("{signing_input}.{}", b64(&raw_signature(&der)))
}

/// An ECDSA signature's DER `SEQUENCE { r, s }` as JWS wants it: r and s, 32 bytes each.
fn raw_signature(der: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    // 0x30 len, then two INTEGERs (0x02 len bytes).
    let mut at = 2;
    for _ in 0..2 {
        assert_eq!(der[at], 0x02, "an ECDSA signature is two integers");
        let len = der[at + 1] as usize;
        let mut int = &der[at + 2..at + 2 + len];
        while int.len() > 32 && int[0] == 0 {
            int = &int[1..];
        }
        out.extend(std::iter::repeat_n(0, 32 - int.len()));
        out.extend_from_slice(int);
        at += 2 + len;
    }
    out
}
