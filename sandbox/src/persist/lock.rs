//! One sandbox per data directory: an advisory lock on `DIR/lock`, held while the sandbox
//! runs and released by the kernel when the process ends however it ends, so a crash
//! leaves no stale lock behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::Path;

use super::PersistError;

/// The lock file's name; it holds the owner's process id, for the error a second sandbox
/// gets.
pub const LOCK_FILE: &str = "lock";

/// Holds the directory's lock until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// Takes the lock of `dir`, or fails at once when another process (or another sandbox in
/// this one) holds it.
pub fn acquire(dir: &Path) -> Result<DirLock, PersistError> {
    let path = dir.join(LOCK_FILE);
    let io = |source| PersistError::Io {
        path: path.clone(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty());
            return Err(PersistError::Locked {
                path: dir.to_path_buf(),
                holder,
            });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    file.set_len(0).map_err(io)?;
    write!(file, "{}", std::process::id()).map_err(io)?;
    Ok(DirLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path()).unwrap();
        let err = acquire(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("in use by another sandbox"), "{text}");
        assert!(text.contains(&std::process::id().to_string()), "{text}");
        drop(first);
        acquire(dir.path()).unwrap();
    }
}
