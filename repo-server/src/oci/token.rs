//! The token flow OCI clients expect (docker-registry's token authentication): with
//! credentials configured, a `/v2/` request without a usable token gets 401 and
//! `WWW-Authenticate: Bearer realm="…/v2/token",service="…",scope="repository:NAME:ACTIONS"`;
//! the client asks `GET /v2/token?service=…&scope=…` with its Basic credentials (or a
//! bearer token from `--bearer-token-file`, or nothing) and sends the token it gets back.
//!
//! A token is `PAYLOAD.MAC`: the base64url of `{"sub","exp","access":[…]}` and its
//! HMAC-SHA256. The key is kept in the storage (`.oci-token-key`, made with an exclusive
//! create when the first token is issued), so every replica over the same storage accepts
//! every replica's tokens. Tokens last five minutes and grant, per repository, what was asked for and
//! allowed: everything to a user or a configured token, `pull` to anyone when reads need
//! no credentials (anonymous tokens, as public registries hand out), nothing else.
//!
//! Basic credentials and configured bearer tokens sent directly are still accepted
//! everywhere, so clients that send them up front (and ChartMuseum's API) work as before.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::error::{Code, OciError};
use crate::api::AppState;
use crate::auth::Decision;
use crate::storage::{Storage, StorageError, WriteMode};

/// How long a token is good for (docker-registry's default too).
pub const LIFETIME: Duration = Duration::from_secs(300);
const KEY_FILE: &str = ".oci-token-key";
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Signs and checks tokens. The key is read (or made) when first needed, so a server
/// whose clients never ask for a token writes nothing.
pub struct Tokens {
    key: tokio::sync::OnceCell<Vec<u8>>,
    storage: Option<std::sync::Arc<dyn Storage>>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens")
    }
}

/// One repository's granted actions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Access {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub actions: Vec<String>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Claims {
    sub: String,
    exp: u64,
    access: Vec<Access>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Tokens {
    pub fn with_key(key: Vec<u8>) -> Tokens {
        Tokens {
            key: tokio::sync::OnceCell::new_with(Some(key)),
            storage: None,
        }
    }

    /// Tokens with the key every replica over `storage` shares.
    pub fn in_storage(storage: std::sync::Arc<dyn Storage>) -> Tokens {
        Tokens {
            key: tokio::sync::OnceCell::new(),
            storage: Some(storage),
        }
    }

    /// The key: read, or (`create`) made and stored by whichever replica comes first.
    /// `None` when there is none yet and none may be made (no token was ever issued).
    async fn key(&self, create: bool) -> Result<Option<&[u8]>, StorageError> {
        if let Some(key) = self.key.get() {
            return Ok(Some(key));
        }
        let Some(storage) = &self.storage else {
            return Ok(None);
        };
        let stored = match storage.get(KEY_FILE).await? {
            Some(key) => key.to_vec(),
            None if !create => return Ok(None),
            None => {
                let key = hex::encode(rand::random::<[u8; 32]>());
                match storage
                    .put(KEY_FILE, Bytes::from(key.clone()), WriteMode::Create)
                    .await
                {
                    Ok(_) => key.into_bytes(),
                    Err(StorageError::AlreadyExists { .. }) => {
                        storage.get(KEY_FILE).await?.unwrap_or_default().to_vec()
                    }
                    Err(error) => return Err(error),
                }
            }
        };
        Ok(Some(self.key.get_or_init(|| async { stored }).await))
    }

    fn mac(key: &[u8], payload: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key");
        mac.update(payload.as_bytes());
        mac
    }

    pub async fn issue(
        &self,
        subject: &str,
        access: Vec<Access>,
        expires: u64,
    ) -> Result<String, StorageError> {
        let key = self.key(true).await?.unwrap_or_default();
        let claims = Claims {
            sub: subject.to_owned(),
            exp: expires,
            access,
        };
        let payload = B64.encode(serde_json::to_vec(&claims).unwrap_or_default());
        let mac = B64.encode(Self::mac(key, &payload).finalize().into_bytes());
        Ok(format!("{payload}.{mac}"))
    }

    /// The access a token grants, if it is one of ours and has not expired.
    pub async fn check(&self, token: &str, at: u64) -> Option<Vec<Access>> {
        let (payload, mac) = token.split_once('.')?;
        let given = B64.decode(mac).ok()?;
        let key = self.key(false).await.ok()??;
        Self::mac(key, payload).verify_slice(&given).ok()?;
        let claims: Claims = serde_json::from_slice(&B64.decode(payload).ok()?).ok()?;
        (claims.exp > at).then_some(claims.access)
    }
}

/// What a request needs: an action on a repository (`None` for `/v2/` and `_catalog`).
pub fn needed(method: &Method, path: &str) -> (Option<String>, &'static str) {
    let action = match *method {
        Method::GET | Method::HEAD => "pull",
        Method::DELETE => "delete",
        _ => "push",
    };
    let rest = path.strip_prefix("/v2/").unwrap_or("");
    let repository = super::parse_path(rest).map(|(name, _)| name.to_owned());
    (repository, action)
}

fn grants(access: &[Access], repository: Option<&str>, action: &str) -> bool {
    let Some(repository) = repository else {
        // The version check and the catalog: any token of ours will do.
        return true;
    };
    access.iter().any(|a| {
        a.kind == "repository"
            && a.name == repository
            && a.actions.iter().any(|granted| {
                granted == action
                    || granted == "*"
                    // Deleting is part of pushing for clients that ask only for push.
                    || (action == "delete" && granted == "push")
            })
    })
}

/// The 401 that starts the flow, naming what the request needs.
pub fn challenge(
    state: &AppState,
    host: &str,
    repository: Option<&str>,
    action: &str,
    message: &str,
    insufficient: bool,
) -> Response {
    let scheme = if state.registry.tls { "https" } else { "http" };
    let mut value = format!("Bearer realm=\"{scheme}://{host}/v2/token\",service=\"{host}\"");
    if let Some(repository) = repository {
        let actions = if action == "pull" {
            "pull"
        } else {
            "pull,push"
        };
        let actions = if action == "delete" {
            "delete"
        } else {
            actions
        };
        value.push_str(&format!(",scope=\"repository:{repository}:{actions}\""));
    }
    if insufficient {
        value.push_str(",error=\"insufficient_scope\"");
    }
    let mut response = OciError::new(Code::Unauthorized, message).into_response();
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Whether a `/v2/` request may go on: `None` when it may, else the answer. The token
/// endpoint checks its own credentials.
pub async fn authorize(
    state: &AppState,
    method: &Method,
    authorization: Option<&str>,
    path: &str,
    host: &str,
) -> Option<Response> {
    let auth = &state.policy.auth;
    if !auth.is_enabled() || path == "/v2/token" {
        return None;
    }
    let (repository, action) = needed(method, path);
    let base = path == "/v2" || path == "/v2/";
    let bearer = authorization
        .and_then(|h| h.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let access = match (bearer, state.registry.tokens.as_ref()) {
        (Some(token), Some(tokens)) => tokens.check(token, now()).await,
        _ => None,
    };
    if let Some(access) = access {
        if grants(&access, repository.as_deref(), action) {
            return None;
        }
        return Some(challenge(
            state,
            host,
            repository.as_deref(),
            action,
            "the token does not grant this",
            true,
        ));
    }
    // Reads need nothing unless --auth-reads; the version check asks anyway, so that
    // clients learn where tokens come from (anonymous ones included).
    if action == "pull" && !state.policy.auth_reads && !base {
        return None;
    }
    let message = match auth.check(authorization).await {
        Decision::Allowed => return None,
        Decision::Missing => {
            "authentication required: log in, or send basic auth or a bearer token"
        }
        Decision::Denied => "invalid credentials",
        Decision::Busy => {
            let mut error = OciError::new(
                Code::TooManyRequests,
                "too many password checks are waiting; try again shortly",
            )
            .with_status(StatusCode::SERVICE_UNAVAILABLE);
            error.retry_after = Some(1);
            return Some(error.into_response());
        }
    };
    Some(challenge(
        state,
        host,
        repository.as_deref(),
        action,
        message,
        false,
    ))
}

/// The actions of `scope` (`repository:NAME:ACTIONS`) that may be granted.
fn requested(scope: &str) -> Option<Access> {
    let (kind, rest) = scope.split_once(':')?;
    let (name, actions) = rest.rsplit_once(':')?;
    Some(Access {
        kind: kind.to_owned(),
        name: name.to_owned(),
        actions: actions
            .split(',')
            .filter(|a| matches!(*a, "pull" | "push" | "delete" | "*"))
            .map(str::to_owned)
            .collect(),
    })
}

/// `GET /v2/token`: a token for the scopes asked, as far as the credentials allow.
pub async fn endpoint(State(state): State<AppState>, request: Request) -> Response {
    let Some(tokens) = state.registry.tokens.as_ref() else {
        return OciError::new(
            Code::Unsupported,
            "this server needs no tokens: it was started without credentials",
        )
        .with_status(StatusCode::NOT_FOUND)
        .into_response();
    };
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let (subject, everything) = match authorization {
        None => (String::new(), false),
        Some(header) => match state.policy.auth.check(Some(header)).await {
            Decision::Allowed => (user_of(header), true),
            Decision::Busy => {
                let mut error = OciError::new(
                    Code::TooManyRequests,
                    "too many password checks are waiting; try again shortly",
                )
                .with_status(StatusCode::SERVICE_UNAVAILABLE);
                error.retry_after = Some(1);
                return error.into_response();
            }
            Decision::Missing | Decision::Denied => {
                let mut response =
                    OciError::new(Code::Unauthorized, "invalid credentials").into_response();
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"chartkit\""),
                );
                return response;
            }
        },
    };
    if !everything && state.policy.auth_reads {
        let mut response = OciError::new(
            Code::Unauthorized,
            "this server needs credentials for every request: send basic auth",
        )
        .into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"chartkit\""),
        );
        return response;
    }
    let query = request.uri().query().unwrap_or("");
    let access: Vec<Access> = super::query_pairs(query)
        .into_iter()
        .filter(|(key, _)| key == "scope")
        .flat_map(|(_, value)| {
            value
                // Scopes are joined with spaces, which a form encoding writes as `+`.
                .split([' ', '+'])
                .filter_map(requested)
                .collect::<Vec<_>>()
        })
        .filter(|a| a.kind == "repository")
        .map(|mut a| {
            if !everything {
                a.actions.retain(|action| action == "pull");
            }
            a
        })
        .collect();
    let issued = now();
    let token = match tokens
        .issue(&subject, access, issued + LIFETIME.as_secs())
        .await
    {
        Ok(token) => token,
        Err(error) => return OciError::from(error).into_response(),
    };
    let body = serde_json::json!({
        "token": token,
        "access_token": token,
        "expires_in": LIFETIME.as_secs(),
        "issued_at": crate::repository::created_time(SystemTime::now()).as_str(),
    })
    .to_string();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The user of Basic credentials (the token's subject); a bearer token's holder has no
/// name.
fn user_of(header: &str) -> String {
    header
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .and_then(|(_, encoded)| {
            base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .ok()
        })
        .and_then(|pair| {
            let pair = String::from_utf8(pair).ok()?;
            Some(
                pair.split_once(':')
                    .map_or(pair.clone(), |(user, _)| user.to_owned()),
            )
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_verify_expire_and_cannot_be_altered() {
        let tokens = Tokens::with_key(b"key".to_vec());
        let access = vec![Access {
            kind: "repository".into(),
            name: "charts/web".into(),
            actions: vec!["pull".into()],
        }];
        let token = tokens.issue("", access.clone(), 100).await.unwrap();
        assert_eq!(tokens.check(&token, 99).await, Some(access.clone()));
        assert_eq!(tokens.check(&token, 100).await, None);
        let other = Tokens::with_key(b"other".to_vec());
        assert!(other.check(&token, 0).await.is_none());
        let (payload, mac) = token.split_once('.').unwrap();
        let widened = B64.encode(
            String::from_utf8(B64.decode(payload).unwrap())
                .unwrap()
                .replace("\"pull\"", "\"push\""),
        );
        assert!(tokens.check(&format!("{widened}.{mac}"), 0).await.is_none());
        assert!(grants(&access, Some("charts/web"), "pull"));
        assert!(!grants(&access, Some("charts/web"), "push"));
        assert!(!grants(&access, Some("charts/api"), "pull"));
    }

    #[tokio::test]
    async fn the_key_is_made_with_the_first_token_and_shared_through_the_storage() {
        let dir = tempfile::tempdir().unwrap();
        let storage: std::sync::Arc<dyn Storage> =
            std::sync::Arc::new(crate::storage::LocalStorage::open(dir.path()).unwrap());
        let (a, b) = (
            Tokens::in_storage(std::sync::Arc::clone(&storage)),
            Tokens::in_storage(std::sync::Arc::clone(&storage)),
        );
        assert!(a.check("e30.AAAA", 0).await.is_none());
        assert!(storage.get(KEY_FILE).await.unwrap().is_none());
        let token = a.issue("ci", Vec::new(), u64::MAX).await.unwrap();
        assert_eq!(b.check(&token, 0).await, Some(Vec::new()));
    }

    #[test]
    fn scopes_are_read_as_docker_writes_them() {
        assert_eq!(
            requested("repository:charts/web:pull,push,bogus"),
            Some(Access {
                kind: "repository".into(),
                name: "charts/web".into(),
                actions: vec!["pull".into(), "push".into()],
            })
        );
        assert_eq!(requested("nonsense"), None);
        assert_eq!(
            needed(&Method::PUT, "/v2/charts/web/manifests/1.0.0"),
            (Some("charts/web".to_owned()), "push")
        );
        assert_eq!(needed(&Method::GET, "/v2/"), (None, "pull"));
    }
}
