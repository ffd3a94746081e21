//! Blob upload sessions: chunks appended in order to a temporary file with the digest
//! computed as they arrive, bounded in size (the server's upload limit), in number, and
//! in idle time; a session abandoned by its client is removed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::error::{Code, OciError};

/// Upload sessions open at once, across all repositories.
pub const MAX_SESSIONS: usize = 256;
/// A session that receives nothing for this long is dropped.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// One upload in progress.
pub struct Session {
    /// The repository it was started in (`charts/NAME`).
    pub repository: String,
    path: PathBuf,
    file: tokio::fs::File,
    hasher: Sha256,
    pub size: u64,
    touched: Instant,
}

impl Session {
    /// Appends a chunk.
    pub async fn append(&mut self, chunk: &[u8]) -> Result<(), OciError> {
        self.file.write_all(chunk).await.map_err(|e| {
            tracing::error!(path = %self.path.display(), error = %e, "cannot write an upload chunk");
            OciError::new(Code::Unknown, "the server could not store the chunk")
        })?;
        self.hasher.update(chunk);
        self.size += chunk.len() as u64;
        self.touched = Instant::now();
        Ok(())
    }

    /// The digest of everything received.
    pub fn digest(&self) -> String {
        format!("sha256:{}", hex::encode(self.hasher.clone().finalize()))
    }

    /// Everything received.
    pub async fn contents(&mut self) -> Result<Vec<u8>, OciError> {
        let _ = self.file.flush().await;
        tokio::fs::read(&self.path).await.map_err(|e| {
            tracing::error!(path = %self.path.display(), error = %e, "cannot read an upload back");
            OciError::new(Code::Unknown, "the server could not read the upload back")
        })
    }

    /// `Range` of the bytes received, as the spec writes it (`0-0` for none yet).
    pub fn range(&self) -> String {
        format!("0-{}", self.size.saturating_sub(1))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

type Shared = Arc<tokio::sync::Mutex<Session>>;

/// The open sessions, by id.
pub struct Uploads {
    dir: tempfile::TempDir,
    /// Held (with its `flock`) while the server runs, so a server starting later can tell
    /// this directory from one a killed server left.
    _lock: std::fs::File,
    sessions: Mutex<HashMap<String, Shared>>,
    max_sessions: usize,
    idle: Duration,
}

const DIR_PREFIX: &str = "chartkit-oci-uploads-";
const LOCK_FILE: &str = ".lock";

impl Uploads {
    /// Sessions kept under a new temporary directory (removed with the server), after
    /// removing the directories of servers that were killed (no one holds their lock).
    pub fn new(max_sessions: usize, idle: Duration) -> std::io::Result<Uploads> {
        Uploads::new_in(&std::env::temp_dir(), max_sessions, idle)
    }

    pub fn new_in(parent: &Path, max_sessions: usize, idle: Duration) -> std::io::Result<Uploads> {
        for removed in remove_abandoned_dirs(parent) {
            tracing::info!(dir = %removed.display(), "removed the upload directory of a server that did not stop cleanly");
        }
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in(parent)?;
        let lock = std::fs::File::create(dir.path().join(LOCK_FILE))?;
        lock.lock()?;
        Ok(Uploads {
            dir,
            _lock: lock,
            sessions: Mutex::new(HashMap::new()),
            max_sessions,
            idle,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Shared>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a session for `repository`, after dropping abandoned ones.
    pub async fn start(&self, repository: &str) -> Result<String, OciError> {
        self.sweep();
        let id = hex::encode(rand::random::<[u8; 16]>());
        let path = self.dir.path().join(&id);
        let file = tokio::fs::File::create(&path).await.map_err(|e| {
            tracing::error!(path = %path.display(), error = %e, "cannot start an upload");
            OciError::new(Code::Unknown, "the server could not start the upload")
        })?;
        let session = Session {
            repository: repository.to_owned(),
            path,
            file,
            hasher: Sha256::new(),
            size: 0,
            touched: Instant::now(),
        };
        let mut sessions = self.lock();
        if sessions.len() >= self.max_sessions {
            return Err(OciError::new(
                Code::TooManyRequests,
                format!(
                    "{} uploads are already in progress; finish or cancel one, or retry shortly",
                    self.max_sessions
                ),
            ));
        }
        sessions.insert(id.clone(), Arc::new(tokio::sync::Mutex::new(session)));
        Ok(id)
    }

    /// The session `id`; the caller checks it belongs to the repository in the URL with
    /// [`owned_by`] once it holds the session.
    pub fn get(&self, repository: &str, id: &str) -> Result<Shared, OciError> {
        self.lock().get(id).cloned().ok_or_else(|| {
            OciError::new(
                Code::BlobUploadUnknown,
                format!("no upload {id} in progress in {repository}"),
            )
        })
    }

    /// Ends a session (finished, cancelled or failed); its file goes with it.
    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Drops sessions idle longer than the timeout (not those in use right now); how many.
    pub fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut sessions = self.lock();
        let before = sessions.len();
        sessions.retain(|_, session| match session.try_lock() {
            Ok(session) => now.duration_since(session.touched) < self.idle,
            Err(_) => true,
        });
        before - sessions.len()
    }

    pub fn count(&self) -> usize {
        self.lock().len()
    }
}

/// Removes the upload directories under `parent` whose server is gone: their lock is
/// free (a live server holds it), or, without a lock file (a server killed between making
/// the directory and locking), untouched for an hour.
fn remove_abandoned_dirs(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(DIR_PREFIX)
            || !entry.file_type().is_ok_and(|t| t.is_dir())
        {
            continue;
        }
        let path = entry.path();
        let abandoned = match std::fs::File::open(path.join(LOCK_FILE)) {
            Ok(lock) => lock.try_lock().is_ok(),
            Err(_) => entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age > Duration::from_secs(3600)),
        };
        if abandoned && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Refuses a session used through another repository's URL.
pub fn owned_by(session: &Session, repository: &str, id: &str) -> Result<(), OciError> {
    if session.repository == repository {
        Ok(())
    } else {
        Err(OciError::new(
            Code::BlobUploadUnknown,
            format!("no upload {id} in progress in {repository}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_are_bounded_and_idle_ones_removed() {
        let uploads = Uploads::new(2, Duration::from_millis(50)).unwrap();
        let a = uploads.start("charts/a").await.unwrap();
        uploads.start("charts/a").await.unwrap();
        let refused = uploads.start("charts/a").await.unwrap_err();
        assert_eq!(refused.code, Code::TooManyRequests);
        {
            let session = uploads.get("charts/a", &a).unwrap();
            let mut session = session.lock().await;
            session.append(b"abc").await.unwrap();
            assert_eq!(session.range(), "0-2");
            assert_eq!(session.contents().await.unwrap(), b"abc");
            assert_eq!(session.digest(), chartkit_oci::manifest::digest_of(b"abc"));
            assert!(owned_by(&session, "charts/b", &a).is_err());
        }
        tokio::time::sleep(Duration::from_millis(80)).await;
        // Both idle past the timeout: starting a new one sweeps them.
        uploads.start("charts/a").await.unwrap();
        assert_eq!(uploads.count(), 1);
        // The session's file and the lock.
        assert_eq!(std::fs::read_dir(uploads.dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_killed_servers_directory_is_removed_and_a_live_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        let live = Uploads::new_in(parent.path(), 4, IDLE_TIMEOUT).unwrap();
        // What a SIGKILL leaves: the directory with a session's file, its lock released.
        let killed = parent.path().join(format!("{DIR_PREFIX}killed"));
        std::fs::create_dir(&killed).unwrap();
        std::fs::write(killed.join(LOCK_FILE), b"").unwrap();
        std::fs::write(killed.join("0123"), b"partial upload").unwrap();
        let next = Uploads::new_in(parent.path(), 4, IDLE_TIMEOUT).unwrap();
        assert!(!killed.exists());
        assert!(live.dir.path().exists());
        assert!(next.dir.path().exists());
    }
}
