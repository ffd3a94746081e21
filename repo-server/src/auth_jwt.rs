//! ChartMuseum's scoped bearer auth (`--bearer-auth`): a request carries a JWT issued by
//! an outside authorization server, and the server only checks it.
//!
//! The rules are those of ChartMuseum's auth library (github.com/chartmuseum/auth on
//! golang-jwt v4):
//! - the token is what follows the first `bearer ` (any case) in the `Authorization`
//!   header, or the whole header when there is none;
//! - its signature must verify with the RSA key of `--auth-cert-path` (a certificate or a
//!   public key, PEM), by whichever RSA algorithm the token names (RS256/384/512,
//!   PS256/384/512); other algorithms cannot verify with an RSA key;
//! - `exp`, `iat` and `nbf`, when present and not 0, are checked against the current
//!   second without leeway, and must be numbers; `aud` and `iss` are not checked;
//! - the actions granted are what the search path (JMESPath, by default
//!   `access[?name=='repo' && type=='artifact-repository'].actions[]`) finds in the
//!   claims: a list that must hold the action (`pull` for reads, `push` for writes);
//! - anything else gets 401 with a challenge naming the realm, the service and the scope
//!   that was needed (`artifact-repository:repo:push`), which the client takes to the
//!   authorization server.
//!
//! ChartMuseum serves one repository here (no multi-tenant depth), which its library
//! names `repo`.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};

/// The access entries' `type` ChartMuseum grants on.
pub const ACCESS_ENTRY_TYPE: &str = "artifact-repository";
/// The name of the one repository served, as ChartMuseum's auth library names it.
pub const NAMESPACE: &str = "repo";
/// ChartMuseum's default `--auth-actions-search-path`, before its two variables are
/// replaced.
pub const DEFAULT_SEARCH_PATH: &str =
    "access[?name=='$NAMESPACE' && type=='$ACCESS_ENTRY_TYPE'].actions[]";

/// What a request asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reads: the index, packages, the API's GETs.
    Pull,
    /// Writes: uploads and deletes.
    Push,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Pull => "pull",
            Action::Push => "push",
        }
    }
}

/// The settings, as `--auth-jwt-*` (or ChartMuseum's `--auth-*`) give them.
#[derive(Debug, Clone)]
pub struct JwtOptions {
    /// Where clients get tokens (`--auth-realm`), named in the challenge.
    pub realm: String,
    /// The service tokens are issued for (`--auth-service`), named in the challenge.
    pub service: String,
    /// PEM certificate or RSA public key of the authorization server (`--auth-cert-path`).
    pub cert: PathBuf,
    /// A JMESPath expression for the actions granted (`--auth-actions-search-path`);
    /// `$NAMESPACE` and `$ACCESS_ENTRY_TYPE` are replaced first.
    pub search_path: Option<String>,
}

/// Why JWT auth cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    #[error("cannot read the token signing certificate `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` holds no RSA certificate or public key in PEM form: {message}")]
    Key { path: String, message: String },
    #[error("the actions search path `{expression}` is not a JMESPath expression: {message}")]
    SearchPath { expression: String, message: String },
    #[error("bearer auth needs {0}")]
    Missing(&'static str),
}

/// Checks ChartMuseum's bearer tokens.
pub struct JwtAuth {
    realm: String,
    service: String,
    key: DecodingKey,
    search: jmespath::Expression<'static>,
}

impl std::fmt::Debug for JwtAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuth")
            .field("realm", &self.realm)
            .field("service", &self.service)
            .field("search", &self.search.as_str())
            .finish_non_exhaustive()
    }
}

/// The RSA algorithms a token may name: those golang-jwt can verify with an RSA key.
const RSA_ALGORITHMS: [Algorithm; 6] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];

impl JwtAuth {
    /// Reads the key and compiles the search path. ChartMuseum refuses to start without
    /// a realm, a service or a key, and so does this.
    pub fn new(options: &JwtOptions) -> Result<JwtAuth, JwtError> {
        if options.realm.is_empty() {
            return Err(JwtError::Missing("a realm (where clients get tokens)"));
        }
        if options.service.is_empty() {
            return Err(JwtError::Missing("a service name"));
        }
        let path = options.cert.display().to_string();
        let pem = std::fs::read(&options.cert).map_err(|source| JwtError::Read {
            path: path.clone(),
            source,
        })?;
        let key = DecodingKey::from_rsa_pem(&pem).map_err(|e| JwtError::Key {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let template = options
            .search_path
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or(DEFAULT_SEARCH_PATH);
        let expression = template
            .replace("$NAMESPACE", NAMESPACE)
            .replace("$ACCESS_ENTRY_TYPE", ACCESS_ENTRY_TYPE);
        // ChartMuseum compiles it per request and so allows nothing when it is wrong;
        // refusing it at start says so once.
        let search = jmespath::compile(&expression).map_err(|e| JwtError::SearchPath {
            expression: template.to_owned(),
            message: e.to_string(),
        })?;
        Ok(JwtAuth {
            realm: options.realm.clone(),
            service: options.service.clone(),
            key,
            search,
        })
    }

    /// Whether the `Authorization` header's token grants `action`, at Unix second `now`.
    pub fn allows(&self, header: Option<&str>, action: Action, now: i64) -> bool {
        let token = token_of(header.unwrap_or(""));
        let Some(claims) = self.verified_claims(&token, now) else {
            return false;
        };
        let Ok(found) = self.search.search(&claims) else {
            return false;
        };
        match &*found {
            // golang-jwt hands ChartMuseum Go values, compared as `%v` text: only a
            // string can read `pull` or `push`.
            jmespath::Variable::Array(items) => items
                .iter()
                .any(|item| item.as_string().is_some_and(|s| s == action.as_str())),
            _ => false,
        }
    }

    /// The `WWW-Authenticate` value of a 401 for `action`.
    pub fn challenge(&self, action: Action) -> String {
        format!(
            "Bearer realm=\"{}\",service=\"{}\",scope=\"{ACCESS_ENTRY_TYPE}:{NAMESPACE}:{}\"",
            self.realm,
            self.service,
            action.as_str()
        )
    }

    /// The claims of a token whose signature verifies and whose times hold.
    fn verified_claims(&self, token: &str, now: i64) -> Option<serde_json::Value> {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.algorithms = RSA_ALGORITHMS.to_vec();
        // The time claims are checked below as golang-jwt checks them; the audience
        // and issuer are not checked at all.
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(token, &self.key, &validation).ok()?;
        let claims = data.claims;
        let object = claims.as_object()?;
        let holds = |name: &str, ok: fn(i64, i64) -> bool| match object.get(name) {
            None => true,
            Some(value) => value.as_f64().is_some_and(|seconds| {
                // A zero counts as absent; others are whole seconds (golang-jwt's
                // precision), compared with the current second.
                seconds == 0.0 || ok(now, seconds.trunc() as i64)
            }),
        };
        let fresh = holds("exp", |now, exp| now < exp)
            && holds("iat", |now, iat| now >= iat)
            && holds("nbf", |now, nbf| now >= nbf);
        fresh.then_some(claims)
    }
}

/// The current Unix second.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The token in an `Authorization` header as ChartMuseum's library takes it: the header
/// with its first `bearer ` (in any case) removed.
fn token_of(header: &str) -> String {
    let lower = header.to_ascii_lowercase();
    match lower.find("bearer ") {
        Some(at) => format!("{}{}", &header[..at], &header[at + "bearer ".len()..]),
        None => header.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_what_follows_bearer_in_any_case() {
        assert_eq!(token_of("Bearer abc"), "abc");
        assert_eq!(token_of("bEaReR abc"), "abc");
        assert_eq!(token_of("abc"), "abc");
        assert_eq!(token_of("Basic xyz"), "Basic xyz");
    }

    #[test]
    fn the_challenge_names_realm_service_and_scope() {
        let auth = JwtAuth {
            realm: "https://auth.example/token".to_owned(),
            service: "charts.example".to_owned(),
            key: DecodingKey::from_secret(b"unused").unwrap(),
            search: jmespath::compile("a").unwrap(),
        };
        assert_eq!(
            auth.challenge(Action::Push),
            "Bearer realm=\"https://auth.example/token\",service=\"charts.example\",scope=\"artifact-repository:repo:push\""
        );
    }

    #[test]
    fn setup_needs_a_realm_and_a_readable_key() {
        let dir = tempfile::tempdir().unwrap();
        let options = JwtOptions {
            realm: "r".to_owned(),
            service: "s".to_owned(),
            cert: dir.path().join("missing.pem"),
            search_path: None,
        };
        let error = JwtAuth::new(&options).unwrap_err();
        assert!(matches!(error, JwtError::Read { .. }), "{error}");
        assert!(error.to_string().contains("missing.pem"), "{error}");
        let no_realm = JwtOptions {
            realm: String::new(),
            ..options
        };
        assert!(matches!(
            JwtAuth::new(&no_realm).unwrap_err(),
            JwtError::Missing(_)
        ));
    }

    /// An RSA key made by openssl: its private key (PKCS#8 PEM) and a certificate for it.
    fn rsa_key(dir: &std::path::Path, name: &str) -> Option<(Vec<u8>, PathBuf)> {
        let key = dir.join(format!("{name}.key"));
        let cert = dir.join(format!("{name}.pem"));
        let made = std::process::Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args(["-subj", "/CN=auth", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .ok()?;
        assert!(made.status.success(), "{made:?}");
        Some((std::fs::read(&key).unwrap(), cert))
    }

    fn sign(key: &[u8], algorithm: Algorithm, claims: &serde_json::Value) -> String {
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(key).unwrap();
        jsonwebtoken::encode(&jsonwebtoken::Header::new(algorithm), claims, &key).unwrap()
    }

    fn access(name: &str, kind: &str, actions: &[&str]) -> serde_json::Value {
        serde_json::json!({"access": [{"type": kind, "name": name, "actions": actions}]})
    }

    #[test]
    fn tokens_grant_the_actions_of_their_access_entry_for_the_repo() {
        let dir = tempfile::tempdir().unwrap();
        let Some((private, cert)) = rsa_key(dir.path(), "auth") else {
            eprintln!("skipped: openssl is not available");
            return;
        };
        let auth = JwtAuth::new(&JwtOptions {
            realm: "https://auth.example/token".to_owned(),
            service: "charts".to_owned(),
            cert,
            search_path: None,
        })
        .unwrap();
        let now = now();
        let bearer = |claims: serde_json::Value| {
            format!("Bearer {}", sign(&private, Algorithm::RS256, &claims))
        };
        let pull = bearer(access("repo", ACCESS_ENTRY_TYPE, &["pull"]));
        assert!(auth.allows(Some(&pull), Action::Pull, now));
        assert!(!auth.allows(Some(&pull), Action::Push, now));
        let both = bearer(access("repo", ACCESS_ENTRY_TYPE, &["pull", "push"]));
        assert!(auth.allows(Some(&both), Action::Push, now));
        assert!(!auth.allows(
            Some(&bearer(access("other", ACCESS_ENTRY_TYPE, &["push"]))),
            Action::Push,
            now
        ));
        assert!(!auth.allows(
            Some(&bearer(access("repo", "repository", &["push"]))),
            Action::Push,
            now
        ));
        assert!(!auth.allows(None, Action::Pull, now));
        // Every RSA algorithm verifies with the key.
        for algorithm in [Algorithm::RS512, Algorithm::PS256] {
            let token = sign(
                &private,
                algorithm,
                &access("repo", ACCESS_ENTRY_TYPE, &["push"]),
            );
            assert!(
                auth.allows(Some(&format!("bearer {token}")), Action::Push, now),
                "{algorithm:?}"
            );
        }

        // Times: exp in the past, iat or nbf in the future, or a time that is not a number.
        let with = |extra: serde_json::Value| {
            let mut claims = access("repo", ACCESS_ENTRY_TYPE, &["push"]);
            claims
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            bearer(claims)
        };
        assert!(auth.allows(
            Some(&with(serde_json::json!({"exp": now + 60, "iat": now}))),
            Action::Push,
            now
        ));
        assert!(!auth.allows(
            Some(&with(serde_json::json!({"exp": now}))),
            Action::Push,
            now
        ));
        assert!(auth.allows(
            Some(&with(serde_json::json!({"exp": 0}))),
            Action::Push,
            now
        ));
        assert!(!auth.allows(
            Some(&with(serde_json::json!({"iat": now + 5}))),
            Action::Push,
            now
        ));
        assert!(!auth.allows(
            Some(&with(serde_json::json!({"nbf": now + 5}))),
            Action::Push,
            now
        ));
        assert!(!auth.allows(
            Some(&with(serde_json::json!({"exp": "tomorrow"}))),
            Action::Push,
            now
        ));

        // A token signed by another key, or with a shared secret, is worth nothing.
        let (other, _) = rsa_key(dir.path(), "other").unwrap();
        let forged = sign(
            &other,
            Algorithm::RS256,
            &access("repo", ACCESS_ENTRY_TYPE, &["push"]),
        );
        assert!(!auth.allows(Some(&format!("Bearer {forged}")), Action::Push, now));
        let hmac = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(Algorithm::HS256),
            &access("repo", ACCESS_ENTRY_TYPE, &["push"]),
            &jsonwebtoken::EncodingKey::from_secret(b"secret").unwrap(),
        )
        .unwrap();
        assert!(!auth.allows(Some(&format!("Bearer {hmac}")), Action::Push, now));
    }

    #[test]
    fn a_custom_search_path_decides_what_is_granted() {
        let dir = tempfile::tempdir().unwrap();
        let Some((private, cert)) = rsa_key(dir.path(), "auth") else {
            eprintln!("skipped: openssl is not available");
            return;
        };
        let auth = JwtAuth::new(&JwtOptions {
            realm: "r".to_owned(),
            service: "s".to_owned(),
            cert: cert.clone(),
            search_path: Some("permissions.\"$NAMESPACE\"".to_owned()),
        })
        .unwrap();
        let token = sign(
            &private,
            Algorithm::RS256,
            &serde_json::json!({"permissions": {"repo": ["push"]}}),
        );
        assert!(auth.allows(Some(&format!("Bearer {token}")), Action::Push, now()));
        assert!(!auth.allows(Some(&format!("Bearer {token}")), Action::Pull, now()));
        let error = JwtAuth::new(&JwtOptions {
            realm: "r".to_owned(),
            service: "s".to_owned(),
            cert,
            search_path: Some("access[?".to_owned()),
        })
        .unwrap_err();
        assert!(matches!(error, JwtError::SearchPath { .. }), "{error}");
    }
}
