//! Downloaded indexes in the cache: `repository/<key>-index.yaml` as the server sent it,
//! `repository/<key>-index.json` with the validators (ETag, Last-Modified) and when it
//! was last confirmed current, and the compact form in chartkit-repo's index cache.
//!
//! A configured repository's key is its name (Helm's layout); a repository known only by
//! URL gets `url-<16 hex of the URL's sha256>`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::network::Validators;
use crate::settings::RepoEntry;

/// What the cache records about a downloaded index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexMeta {
    /// The repository URL the index came from; a repository re-added under the same
    /// name with another URL does not reuse it.
    pub url: String,
    pub validators: Validators,
    /// Seconds since the epoch when the server last confirmed it (200 or 304).
    pub checked: u64,
}

/// The cache files of one repository's index.
pub struct IndexFiles {
    pub index: PathBuf,
    pub meta: PathBuf,
}

impl IndexFiles {
    pub fn of(index_dir: &Path, entry: &RepoEntry) -> IndexFiles {
        let key = if entry.is_unnamed() {
            let digest = Sha256::digest(entry.url.trim_end_matches('/').as_bytes());
            format!("url-{}", &hex::encode(digest)[..16])
        } else {
            entry.name.clone()
        };
        IndexFiles {
            index: index_dir.join(format!("{key}-index.yaml")),
            meta: index_dir.join(format!("{key}-index.json")),
        }
    }

    /// The recorded metadata, if it describes an index from `url` that is still there.
    pub fn read_meta(&self, url: &str) -> Option<IndexMeta> {
        let text = std::fs::read_to_string(&self.meta).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        let text_of = |k: &str| json.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let meta = IndexMeta {
            url: text_of("url")?,
            validators: Validators {
                etag: text_of("etag"),
                last_modified: text_of("lastModified"),
            },
            checked: json.get("checked").and_then(|v| v.as_u64()).unwrap_or(0),
        };
        (meta.url.trim_end_matches('/') == url.trim_end_matches('/') && self.index.exists())
            .then_some(meta)
    }

    /// Removes the index, its metadata and its compact form (kept under `cache_home`);
    /// files already gone are fine. On failure, the path that could not be removed.
    pub fn remove(&self, cache_home: &Path) -> Result<(), (PathBuf, std::io::Error)> {
        let compact = chartkit_repo::compact_path_for(cache_home, &self.index);
        for path in [&compact, &self.index, &self.meta] {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err((path.clone(), e));
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub fn write_meta(&self, meta: &IndexMeta) -> Result<(), chartkit_durable::WriteError> {
        let json = serde_json::json!({
            "url": meta.url,
            "etag": meta.validators.etag,
            "lastModified": meta.validators.last_modified,
            "checked": meta.checked,
        });
        chartkit_durable::write(&self.meta, format!("{json}\n").as_bytes())
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long ago `checked` was.
pub fn age_of(checked: u64) -> Duration {
    Duration::from_secs(now_secs().saturating_sub(checked))
}

/// A duration as people say it: `40 seconds`, `3 minutes`, `5 hours`, `2 days`.
pub fn human_age(age: Duration) -> String {
    let secs = age.as_secs();
    let (n, unit) = match secs {
        0..120 => (secs, "second"),
        120..7200 => (secs / 60, "minute"),
        7200..172_800 => (secs / 3600, "hour"),
        _ => (secs / 86_400, "day"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(human_age(Duration::from_secs(1)), "1 second");
        assert_eq!(human_age(Duration::from_secs(59)), "59 seconds");
        assert_eq!(human_age(Duration::from_secs(600)), "10 minutes");
        assert_eq!(human_age(Duration::from_secs(3 * 3600)), "3 hours");
        assert_eq!(human_age(Duration::from_secs(3 * 86_400)), "3 days");
    }

    #[test]
    fn unnamed_repositories_are_keyed_by_url() {
        let a = IndexFiles::of(Path::new("/c"), &RepoEntry::for_url("http://x/"));
        let b = IndexFiles::of(Path::new("/c"), &RepoEntry::for_url("http://x"));
        assert_eq!(a.index, b.index);
        assert!(a.index.to_str().unwrap().starts_with("/c/url-"));
    }
}
