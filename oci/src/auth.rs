//! Registry authentication: the `WWW-Authenticate` challenge a registry answers with, and
//! what the client remembers between requests (the scheme, and Bearer tokens by scope),
//! so that one command asks a token service once per repository and action.

use std::collections::HashMap;

/// Credentials for a registry.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, ***)", self.username)
    }
}

/// A parsed `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
    Other(String),
}

impl Challenge {
    /// Reads `Basic realm="x"` or `Bearer realm="...",service="...",scope="..."`.
    pub fn parse(header: &str) -> Challenge {
        let header = header.trim();
        let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return Challenge::Basic;
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Challenge::Other(scheme.to_owned());
        }
        let params = parameters(rest);
        Challenge::Bearer {
            realm: params.get("realm").cloned().unwrap_or_default(),
            service: params.get("service").cloned(),
            scope: params.get("scope").cloned(),
        }
    }
}

/// `key="value", key=value` pairs (quoted values may hold commas and `\"`).
fn parameters(text: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=')).collect();
        if key.is_empty() || chars.next() != Some('=') {
            return map;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            value = std::iter::from_fn(|| chars.next_if(|c| *c != ',')).collect();
        }
        map.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
}

/// What a client learned about a registry's authentication.
#[derive(Debug, Default)]
pub(crate) struct AuthState {
    /// The registry asked for Basic auth: send the credentials with every request.
    pub basic: bool,
    /// The token service, once a Bearer challenge named it.
    pub bearer: Option<(String, Option<String>)>,
    /// Tokens by the scope they were issued for.
    pub tokens: HashMap<String, String>,
}

/// `repository:NAME:ACTIONS`.
pub fn scope(repository: &str, push: bool) -> String {
    format!(
        "repository:{repository}:{}",
        if push { "pull,push" } else { "pull" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read() {
        assert_eq!(
            Challenge::parse("Basic realm=\"basic-realm\""),
            Challenge::Basic
        );
        assert_eq!(
            Challenge::parse(
                r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#
            ),
            Challenge::Bearer {
                realm: "https://auth.example/token".into(),
                service: Some("registry.example".into()),
                scope: Some("repository:a/b:pull,push".into()),
            }
        );
        assert_eq!(
            Challenge::parse("bearer realm=http://t/x, error=\"invalid_token\""),
            Challenge::Bearer {
                realm: "http://t/x".into(),
                service: None,
                scope: None
            }
        );
        assert_eq!(
            Challenge::parse("Negotiate"),
            Challenge::Other("Negotiate".into())
        );
    }

    #[test]
    fn credentials_do_not_print_the_password() {
        let c = Credentials {
            username: "u".into(),
            password: "secret".into(),
        };
        assert!(!format!("{c:?}").contains("secret"));
    }
}
