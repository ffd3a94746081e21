//! Who may write (and, with `--auth-reads`, read): users from an htpasswd file with bcrypt
//! hashes, and bearer tokens from a file, one per line.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;

use base64::Engine;
use sha2::{Digest, Sha256};

/// Why an auth file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuthFileError {
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` line {line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
    #[error("`{path}` holds no {what}")]
    Empty { path: String, what: &'static str },
}

/// The configured credentials. Empty means no authentication.
#[derive(Debug, Default)]
pub struct Auth {
    users: HashMap<String, String>,
    /// SHA-256 of each token, so comparisons do not depend on secret bytes.
    tokens: HashSet<[u8; 32]>,
    /// SHA-256 of `user:password` pairs that matched, so bcrypt (deliberately slow) runs
    /// once per credential rather than once per request.
    verified: Mutex<HashSet<[u8; 32]>>,
}

/// The outcome of checking a request's `Authorization` header.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    /// No credentials were given.
    Missing,
    /// Credentials were given and are wrong.
    Denied,
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

impl Auth {
    pub fn is_enabled(&self) -> bool {
        !self.users.is_empty() || !self.tokens.is_empty()
    }

    pub fn has_users(&self) -> bool {
        !self.users.is_empty()
    }

    /// Reads an htpasswd file: `user:hash` lines with bcrypt hashes (`htpasswd -B`).
    pub fn add_htpasswd_file(&mut self, path: &Path) -> Result<(), AuthFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| AuthFileError::Read {
            path: shown.clone(),
            source,
        })?;
        let before = self.users.len();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |message: &str| AuthFileError::Line {
                path: shown.clone(),
                line: number + 1,
                message: message.to_owned(),
            };
            let (user, hash) = line
                .split_once(':')
                .ok_or_else(|| bad("expected `user:bcrypt-hash`"))?;
            if !(hash.starts_with("$2y$") || hash.starts_with("$2b$") || hash.starts_with("$2a$")) {
                return Err(bad(
                    "only bcrypt hashes are accepted; create entries with `htpasswd -B`",
                ));
            }
            self.users.insert(user.to_owned(), hash.to_owned());
        }
        if self.users.len() == before {
            return Err(AuthFileError::Empty {
                path: shown,
                what: "users",
            });
        }
        Ok(())
    }

    /// Reads bearer tokens, one per line (blank lines and `#` comments ignored).
    pub fn add_token_file(&mut self, path: &Path) -> Result<(), AuthFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| AuthFileError::Read {
            path: shown.clone(),
            source,
        })?;
        let before = self.tokens.len();
        for line in text.lines().map(str::trim) {
            if !line.is_empty() && !line.starts_with('#') {
                self.tokens.insert(sha256(line.as_bytes()));
            }
        }
        if self.tokens.len() == before {
            return Err(AuthFileError::Empty {
                path: shown,
                what: "tokens",
            });
        }
        Ok(())
    }

    /// Checks an `Authorization` header value.
    pub fn check(&self, header: Option<&str>) -> Decision {
        let Some(header) = header.map(str::trim) else {
            return Decision::Missing;
        };
        let (scheme, credentials) = header.split_once(' ').unwrap_or((header, ""));
        let credentials = credentials.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return if self.tokens.contains(&sha256(credentials.as_bytes())) {
                Decision::Allowed
            } else {
                Decision::Denied
            };
        }
        if !scheme.eq_ignore_ascii_case("basic") {
            return Decision::Denied;
        }
        let Some(pair) = base64::engine::general_purpose::STANDARD
            .decode(credentials)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
        else {
            return Decision::Denied;
        };
        let key = sha256(pair.as_bytes());
        if self
            .verified
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&key)
        {
            return Decision::Allowed;
        }
        let (user, password) = pair.split_once(':').unwrap_or((&pair, ""));
        let ok = self
            .users
            .get(user)
            .is_some_and(|hash| bcrypt::verify(password, hash).unwrap_or(false));
        if ok {
            self.verified
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key);
            Decision::Allowed
        } else {
            Decision::Denied
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(user: &str, password: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        )
    }

    #[test]
    fn htpasswd_users_and_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let htpasswd = dir.path().join("htpasswd");
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        std::fs::write(&htpasswd, format!("# users\nalice:{hash}\n")).unwrap();
        let tokens = dir.path().join("tokens");
        std::fs::write(&tokens, "tok-1\n\n").unwrap();
        let mut auth = Auth::default();
        auth.add_htpasswd_file(&htpasswd).unwrap();
        auth.add_token_file(&tokens).unwrap();
        assert_eq!(
            auth.check(Some(&basic("alice", "s3cret"))),
            Decision::Allowed
        );
        assert_eq!(
            auth.check(Some(&basic("alice", "s3cret"))),
            Decision::Allowed
        );
        assert_eq!(auth.check(Some(&basic("alice", "wrong"))), Decision::Denied);
        assert_eq!(auth.check(Some(&basic("bob", "s3cret"))), Decision::Denied);
        assert_eq!(auth.check(Some("Bearer tok-1")), Decision::Allowed);
        assert_eq!(auth.check(Some("Bearer tok-2")), Decision::Denied);
        assert_eq!(auth.check(None), Decision::Missing);
    }

    #[test]
    fn non_bcrypt_htpasswd_lines_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let htpasswd = dir.path().join("htpasswd");
        std::fs::write(&htpasswd, "alice:$apr1$abc$def\n").unwrap();
        let err = Auth::default().add_htpasswd_file(&htpasswd).unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        assert!(err.to_string().contains("htpasswd -B"), "{err}");
    }
}
