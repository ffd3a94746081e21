//! Durable file writes: temporary file in the target's directory, fsync, rename, and an
//! fsync of the directory so the rename itself survives a crash.
//!
//! Every temporary file is named `.chartkit-*.tmp` and holds an exclusive `flock` for as
//! long as its writer lives. A process that dies without running destructors (killed,
//! or aborted when memory ran out) loses the lock with its file descriptors, so
//! [`remove_abandoned`] can tell its leftovers from another process's writes in
//! progress and remove them.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A write that failed, naming the file.
#[derive(Debug)]
pub struct WriteError {
    pub path: PathBuf,
    pub source: io::Error,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write `{}`: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Options for new files.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Unix permission bits for the new file; `None` means 0o644, what Helm gives packages
    /// and indexes. Secrets use 0o600. The temporary file has the mode from the start, so
    /// the content is never readable more widely.
    pub mode: Option<u32>,
}

/// Writes one file durably; readers see the old content or the whole new content.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_all(&[(path.to_path_buf(), bytes)], Options::default())
}

/// Writes one file durably with the given options.
pub fn write_with(path: &Path, bytes: &[u8], options: Options) -> Result<(), WriteError> {
    write_all(&[(path.to_path_buf(), bytes)], options)
}

/// Writes several files durably; their directories must exist. Their syncs run concurrently, then each is renamed into
/// place and every directory involved is synced once.
pub fn write_all<B: AsRef<[u8]> + Sync>(
    files: &[(PathBuf, B)],
    options: Options,
) -> Result<(), WriteError> {
    let error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError { path, source }
    };
    let mut staged = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let dir = parent_dir(path);
        let mut builder = tempfile::Builder::new();
        builder.prefix(".chartkit-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(
                options.mode.unwrap_or(0o644),
            ));
        }
        let mut temp = builder.tempfile_in(dir).map_err(error(path))?;
        hold(&temp).map_err(error(path))?;
        temp.write_all(bytes.as_ref()).map_err(error(path))?;
        staged.push((path, temp));
    }
    // The sync is a wait for the disk; overlapping the waits is what makes batches fast.
    let failure = std::thread::scope(|scope| {
        let chunk_size = staged.len().div_ceil(16).max(1);
        let workers: Vec<_> = staged
            .chunks(chunk_size)
            .enumerate()
            .map(|(chunk, temps)| {
                scope.spawn(move || {
                    for (offset, (_, temp)) in temps.iter().enumerate() {
                        temp.as_file()
                            .sync_all()
                            .map_err(|e| (chunk * chunk_size + offset, e))?;
                    }
                    Ok::<(), (usize, io::Error)>(())
                })
            })
            .collect();
        workers
            .into_iter()
            .find_map(|worker| worker.join().ok().and_then(Result::err))
    });
    if let Some((index, source)) = failure {
        return Err(WriteError {
            path: files[index].0.clone(),
            source,
        });
    }
    let mut dirs = BTreeSet::new();
    for (path, temp) in staged {
        temp.persist(path).map_err(|e| WriteError {
            path: path.clone(),
            source: e.error,
        })?;
        dirs.insert(parent_dir(path).to_path_buf());
    }
    for dir in dirs {
        // Not every platform can open a directory for syncing; the data is already safe.
        if let Ok(handle) = std::fs::File::open(&dir) {
            let _ = handle.sync_all();
        }
    }
    Ok(())
}

/// Writes a cache file: a temporary file renamed into place, without waiting for the
/// disk. Only for files whose readers check what they read (blobs in a content store
/// keyed by their digest) or take a torn file for a missing one: after a crash such a
/// file is fetched again, so a sync there is a wait for nothing. Readers still see the
/// old content or the whole new content.
pub fn write_cache(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let error = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".chartkit-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut temp = builder.tempfile_in(parent_dir(path)).map_err(error)?;
    hold(&temp).map_err(error)?;
    temp.write_all(bytes).map_err(error)?;
    temp.persist(path).map_err(|e| error(e.error))?;
    Ok(())
}

/// Marks a temporary file as being written by this process: an exclusive lock that the
/// kernel drops with the process, however it ends.
fn hold(temp: &tempfile::NamedTempFile) -> io::Result<()> {
    match temp.as_file().try_lock() {
        Ok(()) => Ok(()),
        // A file system without locks (some network ones): the file is still written
        // safely, it just cannot be told from an abandoned one later, which the age
        // rule of [`remove_abandoned`] covers.
        Err(std::fs::TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => Ok(()),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(io::Error::other("a new temporary file is locked already"))
        }
    }
}

/// How old an unlocked temporary file must be before [`remove_abandoned`] removes it:
/// a writer creates its file and locks it a moment later, and this covers the moment.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Removes the temporary files (`.chartkit-*.tmp`) in `dir` that no process is writing:
/// those left by a process that was killed or aborted before it could remove them
/// (a download that ran out of memory left a 2 GiB one behind). A file whose writer is
/// alive holds its lock and is left alone, as is one created in the last few seconds.
/// Returns the files removed; a directory that cannot be read removes nothing, and a
/// file that cannot be removed is skipped (both are only untidy, never wrong).
pub fn remove_abandoned(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(".chartkit-") && name.ends_with(".tmp")) {
            continue;
        }
        let path = entry.path();
        if is_abandoned(&path) && std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Whether the temporary file at `path` is old enough and not locked by a live writer.
fn is_abandoned(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let age = meta
        .modified()
        .ok()
        .and_then(|m| m.elapsed().ok())
        .unwrap_or_default();
    if age < ABANDONED_AFTER {
        return false;
    }
    match file.try_lock() {
        // Nobody holds it; the lock goes with `file` when this returns.
        Ok(()) => true,
        Err(std::fs::TryLockError::WouldBlock) => false,
        // Without locks, age alone decides: an hour without a write is no live download.
        Err(std::fs::TryLockError::Error(_)) => age > std::time::Duration::from_secs(3600),
    }
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A file written and synced under a temporary name beside its target, not yet in place:
/// [`Staged::commit`] renames it over the target; dropped uncommitted, it is removed and
/// the target is untouched. This lets a caller write while it is still deciding whether
/// the content is good (a downloaded index being parsed), or write a file in pieces as
/// they are made ([`Staged::create`]).
#[derive(Debug)]
pub struct Staged {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
    /// Whether something may have been written since the last sync.
    unsynced: bool,
}

/// Writes and syncs `bytes` for `path` (whose directory must exist), without putting them
/// in place yet.
pub fn stage(path: &Path, bytes: &[u8]) -> Result<Staged, WriteError> {
    let mut staged = Staged::create(path)?;
    staged
        .file()
        .write_all(bytes)
        .map_err(|e| staged.error(e))?;
    staged.sync()?;
    Ok(staged)
}

impl Staged {
    /// An empty staged file for `path` (whose directory must exist), mode 0o644, to be
    /// written through [`Staged::file`].
    pub fn create(path: &Path) -> Result<Staged, WriteError> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(".chartkit-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let temp = builder
            .tempfile_in(parent_dir(path))
            .map_err(|source| WriteError {
                path: path.to_path_buf(),
                source,
            })?;
        hold(&temp).map_err(|source| WriteError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Staged {
            path: path.to_path_buf(),
            temp,
            unsynced: false,
        })
    }

    /// The file, to write (sequentially or at offsets) and read back; what is written
    /// through it is synced by [`Staged::sync`] or [`Staged::commit`].
    pub fn file(&mut self) -> &std::fs::File {
        self.unsynced = true;
        self.temp.as_file()
    }

    /// The target path this file will be put at.
    pub fn target(&self) -> &Path {
        &self.path
    }

    /// An I/O error on this file, naming its target.
    pub fn error(&self, source: io::Error) -> WriteError {
        WriteError {
            path: self.path.clone(),
            source,
        }
    }

    /// Syncs what was written so far (the wait for the disk can so be taken early, on
    /// another thread).
    pub fn sync(&mut self) -> Result<(), WriteError> {
        self.temp
            .as_file()
            .sync_all()
            .map_err(|source| WriteError {
                path: self.path.clone(),
                source,
            })?;
        self.unsynced = false;
        Ok(())
    }

    /// Syncs the file if needed, renames it over its target and syncs the directory.
    pub fn commit(mut self) -> Result<(), WriteError> {
        if self.unsynced {
            self.sync()?;
        }
        let Staged { path, temp, .. } = self;
        temp.persist(&path).map_err(|e| WriteError {
            path: path.clone(),
            source: e.error,
        })?;
        if let Ok(handle) = std::fs::File::open(parent_dir(&path)) {
            let _ = handle.sync_all();
        }
        Ok(())
    }
}

/// Puts staged files in place in their order (each synced first if it was not), then
/// syncs each directory involved once: a batch of files written on several threads pays
/// one directory sync, not one per file.
pub fn commit_all(staged: Vec<Staged>) -> Result<(), WriteError> {
    let mut dirs = BTreeSet::new();
    for mut file in staged {
        if file.unsynced {
            file.sync()?;
        }
        let Staged { path, temp, .. } = file;
        temp.persist(&path).map_err(|e| WriteError {
            path: path.clone(),
            source: e.error,
        })?;
        dirs.insert(parent_dir(&path).to_path_buf());
    }
    for dir in dirs {
        if let Ok(handle) = std::fs::File::open(&dir) {
            let _ = handle.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_whole_files_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        write(&a, b"first").unwrap();
        write(&a, b"second").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"second");
        let files: Vec<(PathBuf, Vec<u8>)> = (0..40)
            .map(|i| (dir.path().join(format!("f{i}")), vec![i as u8; 10]))
            .collect();
        write_all(&files, Options::default()).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("f39")).unwrap(),
            vec![39u8; 10]
        );
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(leftovers, 0);
    }

    #[test]
    fn staged_files_go_in_place_in_order_and_cache_writes_replace_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.tgz");
        // Two staged writes of one target: the later one in the list wins.
        let staged = vec![
            stage(&a, b"first").unwrap(),
            stage(&dir.path().join("b.tgz"), b"b").unwrap(),
            stage(&a, b"second").unwrap(),
        ];
        assert!(!a.exists());
        commit_all(staged).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"second");
        assert_eq!(std::fs::read(dir.path().join("b.tgz")).unwrap(), b"b");
        write_cache(&a, b"cached").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"cached");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn secret_files_get_their_mode_from_the_start() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("secret.asc");
        write_with(&key, b"secret", Options { mode: Some(0o600) }).unwrap();
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        let err = write(&dir.path().join("file/inner.txt"), b"x").unwrap_err();
        assert!(err.to_string().contains("file/inner.txt"), "{err}");
    }

    #[test]
    fn staged_files_take_effect_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.yaml");
        write(&index, b"old").unwrap();
        drop(stage(&index, b"refused").unwrap());
        assert_eq!(std::fs::read(&index).unwrap(), b"old");
        let staged = stage(&index, b"new").unwrap();
        assert_eq!(std::fs::read(&index).unwrap(), b"old");
        staged.commit().unwrap();
        assert_eq!(std::fs::read(&index).unwrap(), b"new");
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "no temporary file is left");
    }

    #[test]
    fn abandoned_temporary_files_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("index.yaml");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
        // As a killed run leaves it: the name, no lock.
        let abandoned = dir.path().join(".chartkit-killed.tmp");
        std::fs::write(&abandoned, b"half an index").unwrap();
        // Just created by a writer that has not locked it yet.
        let fresh = dir.path().join(".chartkit-fresh.tmp");
        std::fs::write(&fresh, b"x").unwrap();
        // Not ours.
        let other = dir.path().join("other.tmp");
        std::fs::write(&other, b"x").unwrap();
        let mut live = Staged::create(&target).unwrap();
        live.file().write_all(b"still coming").unwrap();
        for path in [&abandoned, &other, live.temp.path()] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let removed = remove_abandoned(dir.path());
        assert_eq!(removed, vec![abandoned.clone()]);
        assert!(!abandoned.exists());
        assert!(fresh.exists() && other.exists());
        live.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"still coming");
        assert!(remove_abandoned(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn files_staged_in_pieces_are_whole_once_committed() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("cache.bin");
        write(&target, b"old").unwrap();
        let mut staged = Staged::create(&target).unwrap();
        assert_eq!(staged.target(), target);
        staged.file().write_all_at(b"....body", 0).unwrap();
        staged.file().write_all_at(b"head", 0).unwrap();
        staged.sync().unwrap();
        staged.file().write_all_at(b"tail", 8).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        staged.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"headbodytail");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
        drop(Staged::create(&target).unwrap());
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "a staged file dropped leaves nothing");
    }
}
