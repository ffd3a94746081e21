//! Finding the repositories a multi-tenant server's storage already holds: at `--depth N`
//! every path of N directories (key prefixes) is one, whether or not it has been asked
//! for since the server started, so that listings over all of them (the registry's
//! catalog) are complete at start and stay so as the periodic sync finds new ones.
//!
//! It costs one listing of subdirectories per directory above depth N, the listing the
//! sync of a repository does for its files.

use std::sync::Arc;

use crate::names::is_safe;
use crate::storage::{Storage, StorageError};

/// Every `ORG/REPO` path `depth` directories deep under `storage`, sorted. Names a
/// request could not reach (hidden, or with characters the router refuses) are skipped.
pub async fn repository_paths(
    storage: &Arc<dyn Storage>,
    depth: usize,
) -> Result<Vec<String>, StorageError> {
    let mut level: Vec<String> = vec![String::new()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for path in &level {
            let scoped = if path.is_empty() {
                Arc::clone(storage)
            } else {
                storage.scoped(path)?
            };
            for dir in scoped.list_dirs().await? {
                if !is_safe(&dir) {
                    continue;
                }
                next.push(if path.is_empty() {
                    dir
                } else {
                    format!("{path}/{dir}")
                });
            }
        }
        level = next;
    }
    level.retain(|path| !path.is_empty());
    level.sort();
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::LocalStorage;

    #[tokio::test]
    async fn paths_are_the_directories_at_the_depth() {
        let dir = tempfile::tempdir().unwrap();
        for path in [
            "org1/repo1",
            "org1/repo2",
            "org2/repo1",
            "org3",
            ".hidden/repo",
        ] {
            std::fs::create_dir_all(dir.path().join(path)).unwrap();
        }
        std::fs::write(dir.path().join("org1/file.tgz"), b"").unwrap();
        std::fs::write(dir.path().join("org2/repo1/a-1.0.0.tgz"), b"").unwrap();
        let storage: Arc<dyn Storage> = Arc::new(LocalStorage::open(dir.path()).unwrap());
        assert_eq!(
            repository_paths(&storage, 2).await.unwrap(),
            ["org1/repo1", "org1/repo2", "org2/repo1"]
        );
        assert_eq!(
            repository_paths(&storage, 1).await.unwrap(),
            ["org1", "org2", "org3"]
        );
        assert!(repository_paths(&storage, 3).await.unwrap().is_empty());
    }
}
