//! A file's identity stamp: what tells chartkit a file is unchanged without reading it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How recent a file time must be for its stamp to be distrusted: coarse file system clocks
/// (a kernel tick, or seconds on some network file systems) can give two writes in this
/// window the same time.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// A fingerprint of the file's device, inode, modification and change times. The change
/// time cannot be set back by `touch`, and any write or rename moves it, so together with
/// the size an equal stamp means an unchanged file. 0 means "do not trust": the file
/// changed so recently that a second write in the same clock tick would leave every time
/// as it is (the case git calls racy), so its content must be checked.
pub(crate) fn file_stamp(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let racy = [
        (meta.mtime(), meta.mtime_nsec()),
        (meta.ctime(), meta.ctime_nsec()),
    ]
    .iter()
    .any(|&(secs, nanos)| {
        let at = Duration::new(secs.max(0) as u64, nanos.clamp(0, 999_999_999) as u32);
        now.saturating_sub(at) < RACY_WINDOW
    });
    if racy {
        return 0;
    }
    file_stamp_of_new_file(meta)
}

/// The stamp of a file chartkit has just created by renaming a new file into place: its
/// inode is new, so no earlier content can share its identity even within one clock tick.
pub(crate) fn file_stamp_of_new_file(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut hash = Sha256::new();
    for value in [
        meta.dev(),
        meta.ino(),
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
    ] {
        hash.update(value.to_le_bytes());
    }
    let digest = hash.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // 0 means "untrusted", so a real stamp never takes that value.
    u64::from_le_bytes(first).max(1)
}
