//! Who may write (and, with `--auth-reads`, read): users from an htpasswd file with bcrypt
//! hashes, and bearer tokens from a file, one per line.
//!
//! bcrypt is slow on purpose (about a quarter of a second at cost 12), so a password check
//! must neither block the async workers nor say, by how long it took, whether the user
//! exists:
//! - checks run on the blocking pool, at most `cores - 1` at once (at least one), so the
//!   runtime always has a core for other requests; at most 16 per running check wait, and
//!   beyond that the answer is [`Decision::Busy`] (503 with `Retry-After`) rather than a
//!   queue that grows without bound;
//! - an unknown user's password is checked against a hash of a random password made at
//!   start with the highest cost in the htpasswd file, so it takes as long as a known
//!   user's wrong password;
//! - a successful check is remembered for a minute under an HMAC (with a key made at
//!   start) of the credentials, so a client's repeated requests pay bcrypt once; wrong
//!   passwords are never remembered, and concurrent checks of the same credentials share
//!   one bcrypt run.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};

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
    #[error("cannot hash the password of user `{user}`: {message}")]
    Hash { user: String, message: String },
}

/// bcrypt's cost for a password given in plain text.
const PLAIN_USER_COST: u32 = 10;

/// How long a successful password check is remembered.
const VERIFIED_FOR: Duration = Duration::from_secs(60);
/// How many successful checks are remembered at once.
const VERIFIED_CAPACITY: usize = 1024;
/// Checks that may wait, per check that may run, before new ones are refused as busy.
const WAITING_PER_RUNNING: usize = 16;

/// The configured credentials. Empty means no authentication.
pub struct Auth {
    users: HashMap<String, String>,
    /// SHA-256 of each token, so comparisons do not depend on secret bytes.
    tokens: HashSet<[u8; 32]>,
    /// A bcrypt hash of a random password at the highest cost among the users' hashes,
    /// checked for unknown users so that they take as long as a wrong password.
    dummy_hash: Option<(u32, String)>,
    verified: Verified,
    hashing: Hashing,
    /// Checks running now, by credentials, so concurrent requests with the same
    /// credentials wait for one bcrypt run instead of each queueing their own.
    running: Mutex<HashMap<[u8; 32], Arc<OnceCell<bool>>>>,
    /// bcrypt runs so far.
    bcrypt_runs: AtomicUsize,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Neither hashes nor keys belong in logs.
        f.debug_struct("Auth")
            .field("users", &self.users.len())
            .field("tokens", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

impl Default for Auth {
    fn default() -> Auth {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Auth::with_hashing_threads(cores.saturating_sub(1).max(1))
    }
}

/// The outcome of checking a request's `Authorization` header.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    /// No credentials were given.
    Missing,
    /// Credentials were given and are wrong.
    Denied,
    /// Too many password checks are waiting; the client should try again shortly.
    Busy,
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The cost field of a bcrypt hash (`$2b$12$...`).
fn bcrypt_cost(hash: &str) -> Option<u32> {
    hash.split('$').nth(2)?.parse().ok()
}

impl Auth {
    /// No credentials yet; at most `threads` password checks run at once.
    pub fn with_hashing_threads(threads: usize) -> Auth {
        let threads = threads.max(1);
        Auth {
            users: HashMap::new(),
            tokens: HashSet::new(),
            dummy_hash: None,
            verified: Verified::new(VERIFIED_FOR, VERIFIED_CAPACITY),
            hashing: Hashing {
                permits: Arc::new(Semaphore::new(threads)),
                waiting: AtomicUsize::new(0),
                max_waiting: threads * WAITING_PER_RUNNING,
            },
            running: Mutex::new(HashMap::new()),
            bcrypt_runs: AtomicUsize::new(0),
        }
    }

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
        self.make_dummy_hash();
        Ok(())
    }

    /// Adds one user whose password is given in plain text (ChartMuseum's
    /// `--basic-auth-user`/`--basic-auth-pass`). It is kept only as a bcrypt hash, so it
    /// is checked as an htpasswd user is; the cost is bcrypt's lowest that is still slow
    /// to guess, since the hash never leaves memory.
    pub fn add_plain_user(&mut self, user: &str, password: &str) -> Result<(), AuthFileError> {
        let hash = bcrypt::hash(password, PLAIN_USER_COST).map_err(|e| AuthFileError::Hash {
            user: user.to_owned(),
            message: e.to_string(),
        })?;
        self.users.insert(user.to_owned(), hash);
        self.make_dummy_hash();
        Ok(())
    }

    /// Hashes a random password at the highest cost in use (once per cost; at cost 12 this
    /// is a quarter of a second at start).
    fn make_dummy_hash(&mut self) {
        let cost = self
            .users
            .values()
            .filter_map(|hash| bcrypt_cost(hash))
            .max()
            .unwrap_or(bcrypt::DEFAULT_COST)
            .clamp(4, 31);
        if self
            .dummy_hash
            .as_ref()
            .is_some_and(|(made, _)| *made == cost)
        {
            return;
        }
        let password: [u8; 32] = rand::random();
        if let Ok(hash) = bcrypt::hash(password, cost) {
            self.dummy_hash = Some((cost, hash));
        }
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

    /// Checks an `Authorization` header value. Password checks run off the async workers.
    pub async fn check(&self, header: Option<&str>) -> Decision {
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
        let tag = self.verified.tag(pair.as_bytes());
        if self.verified.contains(&tag, Instant::now()) {
            return Decision::Allowed;
        }
        let (user, password) = pair.split_once(':').unwrap_or((&pair, ""));
        let check = Arc::clone(
            self.running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(tag)
                .or_default(),
        );
        let outcome = check
            .get_or_try_init(|| self.verify_password(user, password))
            .await
            .copied();
        {
            let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            if running.get(&tag).is_some_and(|c| Arc::ptr_eq(c, &check)) {
                running.remove(&tag);
            }
        }
        match outcome {
            Ok(true) => {
                self.verified.insert(tag, Instant::now());
                Decision::Allowed
            }
            Ok(false) => Decision::Denied,
            Err(Busy) => Decision::Busy,
        }
    }

    /// One bcrypt run on the blocking pool: against the user's hash, or the dummy hash
    /// for an unknown user (whose answer is always no).
    async fn verify_password(&self, user: &str, password: &str) -> Result<bool, Busy> {
        let (known, hash) = match (self.users.get(user), &self.dummy_hash) {
            (Some(hash), _) => (true, hash.clone()),
            (None, Some((_, dummy))) => (false, dummy.clone()),
            (None, None) => return Ok(false),
        };
        let permit = self.hashing.acquire().await?;
        self.bcrypt_runs.fetch_add(1, Ordering::Relaxed);
        let password = password.to_owned();
        // The permit moves into the blocking task: if the request is abandoned, bcrypt
        // still runs to the end, and must go on counting against the limit until it does.
        let matched = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            bcrypt::verify(password, &hash).unwrap_or(false)
        })
        .await
        .unwrap_or(false);
        Ok(known && matched)
    }
}

/// Too many password checks are already waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Busy;

/// The bound on password checks: how many run, and how many may wait.
struct Hashing {
    permits: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
}

/// Counts a waiting check until dropped.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Hashing {
    async fn acquire(&self) -> Result<OwnedSemaphorePermit, Busy> {
        if let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Busy);
        }
        let _waiting = Waiting(&self.waiting);
        Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| Busy)
    }
}

/// Successful checks, by HMAC-SHA256 of the credentials under a key made at start, with
/// when each stops counting. Bounded: when full, expired entries go first, then the
/// one closest to expiring.
struct Verified {
    key: [u8; 32],
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<[u8; 32], Instant>>,
}

impl Verified {
    fn new(ttl: Duration, capacity: usize) -> Verified {
        Verified {
            key: rand::random(),
            ttl,
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn tag(&self, credentials: &[u8]) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .expect("HMAC takes a key of any length");
        mac.update(credentials);
        mac.finalize().into_bytes().into()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Instant>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn contains(&self, tag: &[u8; 32], now: Instant) -> bool {
        let mut entries = self.lock();
        match entries.get(tag) {
            Some(expires) if *expires > now => true,
            Some(_) => {
                entries.remove(tag);
                false
            }
            None => false,
        }
    }

    fn insert(&self, tag: [u8; 32], now: Instant) {
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&tag) {
            entries.retain(|_, expires| *expires > now);
            if entries.len() >= self.capacity
                && let Some(soonest) = entries
                    .iter()
                    .min_by_key(|(_, expires)| **expires)
                    .map(|(tag, _)| *tag)
            {
                entries.remove(&soonest);
            }
        }
        entries.insert(tag, now + self.ttl);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
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

    #[tokio::test]
    async fn htpasswd_users_and_tokens() {
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
            auth.check(Some(&basic("alice", "s3cret"))).await,
            Decision::Allowed
        );
        assert_eq!(
            auth.check(Some(&basic("alice", "s3cret"))).await,
            Decision::Allowed
        );
        assert_eq!(
            auth.check(Some(&basic("alice", "wrong"))).await,
            Decision::Denied
        );
        assert_eq!(
            auth.check(Some(&basic("bob", "s3cret"))).await,
            Decision::Denied
        );
        assert_eq!(auth.check(Some("Bearer tok-1")).await, Decision::Allowed);
        assert_eq!(auth.check(Some("Bearer tok-2")).await, Decision::Denied);
        assert_eq!(auth.check(None).await, Decision::Missing);
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

    fn users(lines: &[(&str, &str, u32)]) -> (tempfile::TempDir, Auth) {
        let dir = tempfile::tempdir().unwrap();
        let htpasswd = dir.path().join("htpasswd");
        let text: String = lines
            .iter()
            .map(|(user, password, cost)| {
                format!("{user}:{}\n", bcrypt::hash(password, *cost).unwrap())
            })
            .collect();
        std::fs::write(&htpasswd, text).unwrap();
        let mut auth = Auth::with_hashing_threads(1);
        auth.add_htpasswd_file(&htpasswd).unwrap();
        (dir, auth)
    }

    #[tokio::test]
    async fn unknown_users_are_checked_against_a_dummy_hash_of_the_highest_cost() {
        let (_dir, auth) = users(&[("alice", "a", 4), ("bob", "b", 5)]);
        let (cost, dummy) = auth.dummy_hash.as_ref().unwrap();
        assert_eq!(*cost, 5);
        assert_eq!(bcrypt_cost(dummy), Some(5));
        assert_eq!(
            auth.check(Some(&basic("mallory", "a"))).await,
            Decision::Denied
        );
        assert_eq!(auth.bcrypt_runs.load(Ordering::Relaxed), 1);
        // A known user's wrong password costs the same one run.
        assert_eq!(
            auth.check(Some(&basic("alice", "wrong"))).await,
            Decision::Denied
        );
        assert_eq!(auth.bcrypt_runs.load(Ordering::Relaxed), 2);
    }

    #[tokio::test]
    async fn successes_are_remembered_and_failures_are_not() {
        let (_dir, auth) = users(&[("alice", "a", 4)]);
        for _ in 0..3 {
            assert_eq!(
                auth.check(Some(&basic("alice", "a"))).await,
                Decision::Allowed
            );
        }
        assert_eq!(auth.bcrypt_runs.load(Ordering::Relaxed), 1);
        for _ in 0..3 {
            assert_eq!(
                auth.check(Some(&basic("alice", "b"))).await,
                Decision::Denied
            );
        }
        assert_eq!(auth.bcrypt_runs.load(Ordering::Relaxed), 4);
        assert_eq!(auth.verified.len(), 1);
    }

    #[tokio::test]
    async fn concurrent_checks_of_the_same_credentials_share_one_bcrypt_run() {
        let (_dir, auth) = users(&[("alice", "a", 4)]);
        let header = basic("alice", "a");
        let decisions = futures::future::join_all((0..4).map(|_| auth.check(Some(&header)))).await;
        assert!(
            decisions.iter().all(|d| *d == Decision::Allowed),
            "{decisions:?}"
        );
        assert_eq!(auth.bcrypt_runs.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn remembered_checks_expire() {
        let verified = Verified::new(Duration::from_secs(60), 8);
        let tag = verified.tag(b"alice:a");
        let start = Instant::now();
        verified.insert(tag, start);
        assert!(verified.contains(&tag, start + Duration::from_secs(59)));
        assert!(!verified.contains(&tag, start + Duration::from_secs(60)));
        assert_eq!(verified.len(), 0, "an expired entry is dropped when seen");
    }

    #[test]
    fn remembered_checks_are_bounded() {
        let verified = Verified::new(Duration::from_secs(60), 3);
        let start = Instant::now();
        let tags: Vec<[u8; 32]> = (0..4u8).map(|i| verified.tag(&[i])).collect();
        for (i, tag) in tags.iter().enumerate() {
            verified.insert(*tag, start + Duration::from_secs(i as u64));
        }
        assert_eq!(verified.len(), 3);
        // The one closest to expiring made room.
        let now = start + Duration::from_secs(4);
        assert!(!verified.contains(&tags[0], now));
        assert!(tags[1..].iter().all(|tag| verified.contains(tag, now)));
        // Expired entries go first.
        let later = start + Duration::from_secs(62);
        verified.insert(verified.tag(b"new"), later);
        assert_eq!(verified.len(), 2);
    }

    #[test]
    fn the_tag_depends_on_the_key() {
        let one = Verified::new(Duration::from_secs(60), 8);
        let two = Verified::new(Duration::from_secs(60), 8);
        assert_eq!(one.tag(b"alice:a"), one.tag(b"alice:a"));
        assert_ne!(one.tag(b"alice:a"), two.tag(b"alice:a"));
        assert_ne!(one.tag(b"alice:a"), sha256(b"alice:a"));
    }

    #[tokio::test]
    async fn a_full_queue_of_password_checks_is_refused_not_grown() {
        let hashing = Hashing {
            permits: Arc::new(Semaphore::new(1)),
            waiting: AtomicUsize::new(0),
            max_waiting: 1,
        };
        let running = hashing.acquire().await.unwrap();
        let waiting = hashing.acquire();
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        assert_eq!(hashing.acquire().await.unwrap_err(), Busy);
        drop(running);
        assert!(waiting.await.is_ok());
        assert_eq!(hashing.waiting.load(Ordering::Relaxed), 0);
    }
}
