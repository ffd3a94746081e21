//! Downloaded indexes in the cache: `repository/<key>-index.yaml` as the server sent it,
//! `repository/<key>-index.json` with the validators (ETag, Last-Modified) and when it
//! was last confirmed current, and the compact form in chartkit-repo's index cache.
//!
//! A configured repository's key is its name (Helm's layout); a repository known only by
//! URL gets `url-<16 hex of the URL's sha256>`. A named repository also gets helm's
//! `repository/<name>-charts.txt` (its chart names, which helm's completion reads).
//!
//! By default the directory is helm's own, which helm writes too: an index with no
//! record of ours, or one changed since we recorded it (`helm repo update` rewrote it),
//! is used as it is, with no validators and the file's modification time as the time it
//! was last confirmed.

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
    /// helm's chart name list; `None` for a repository known only by URL.
    pub charts: Option<PathBuf>,
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
            charts: (!entry.is_unnamed()).then(|| index_dir.join(format!("{key}-charts.txt"))),
        }
    }

    /// What is known about the index of `url` in the cache: our record when it describes
    /// the file as it is now; for a file we did not write (helm did), no validators and
    /// its modification time; `None` when there is no index, or our record says it came
    /// from another URL.
    pub fn read_meta(&self, url: &str) -> Option<IndexMeta> {
        let on_disk = std::fs::metadata(&self.index).ok()?;
        let modified = modified_nanos(&on_disk);
        let foreign = || IndexMeta {
            url: url.to_owned(),
            validators: Validators::default(),
            checked: modified / 1_000_000_000,
        };
        let Some(json) = std::fs::read_to_string(&self.meta)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        else {
            return Some(foreign());
        };
        let text_of = |k: &str| json.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let recorded_modified = json.get("indexModified").and_then(|v| v.as_u64());
        if recorded_modified.is_some_and(|m| m != modified) {
            return Some(foreign());
        }
        let meta = IndexMeta {
            url: text_of("url")?,
            validators: Validators {
                etag: text_of("etag"),
                last_modified: text_of("lastModified"),
            },
            checked: json.get("checked").and_then(|v| v.as_u64()).unwrap_or(0),
        };
        (meta.url.trim_end_matches('/') == url.trim_end_matches('/')).then_some(meta)
    }

    /// Writes helm's `<name>-charts.txt`: one chart name a line (sorted; helm's order is
    /// its map's). Nothing for a repository known only by URL.
    pub fn write_charts<'a>(
        &self,
        names: impl Iterator<Item = &'a str>,
    ) -> Result<(), chartkit_durable::WriteError> {
        let Some(path) = &self.charts else {
            return Ok(());
        };
        let mut names: Vec<&str> = names.collect();
        names.sort_unstable();
        let text: String = names.iter().map(|n| format!("{n}\n")).collect();
        chartkit_durable::write(path, text.as_bytes())
    }

    /// Removes the index, its metadata and its compact form (kept under `cache_home`);
    /// files already gone are fine. On failure, the path that could not be removed.
    pub fn remove(&self, cache_home: &Path) -> Result<(), (PathBuf, std::io::Error)> {
        let compact = chartkit_repo::compact_path_for(cache_home, &self.index);
        for path in [
            Some(&compact),
            Some(&self.index),
            Some(&self.meta),
            self.charts.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err((path.clone(), e));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Records `meta` for the index file as it is now (its modification time too, so a
    /// later rewrite by helm is noticed).
    pub fn write_meta(&self, meta: &IndexMeta) -> Result<(), chartkit_durable::WriteError> {
        let modified = std::fs::metadata(&self.index)
            .map(|m| modified_nanos(&m))
            .ok();
        let json = serde_json::json!({
            "url": meta.url,
            "etag": meta.validators.etag,
            "lastModified": meta.validators.last_modified,
            "checked": meta.checked,
            "indexModified": modified,
        });
        chartkit_durable::write(&self.meta, format!("{json}\n").as_bytes())
    }
}

/// A file's modification time in nanoseconds since the epoch (0 when unknown).
fn modified_nanos(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
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
    fn an_index_helm_wrote_or_rewrote_is_used_without_validators() {
        let dir = tempfile::tempdir().unwrap();
        let entry = RepoEntry {
            name: "st".into(),
            url: "http://h/charts".into(),
            ..RepoEntry::default()
        };
        let files = IndexFiles::of(dir.path(), &entry);
        assert_eq!(files.read_meta(&entry.url), None, "no index at all");
        std::fs::write(&files.index, "apiVersion: v1\nentries: {}\n").unwrap();
        let helms = files.read_meta(&entry.url).unwrap();
        assert_eq!(helms.validators, Validators::default());
        assert!(helms.checked > 0);
        let ours = IndexMeta {
            url: entry.url.clone(),
            validators: Validators {
                etag: Some("\"e1\"".into()),
                last_modified: None,
            },
            checked: 7,
        };
        files.write_meta(&ours).unwrap();
        assert_eq!(files.read_meta(&entry.url), Some(ours));
        assert_eq!(files.read_meta("http://other"), None);
        // helm rewrites the file: our validators no longer describe it.
        let later = std::time::SystemTime::now() + Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&files.index)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let rewritten = files.read_meta(&entry.url).unwrap();
        assert_eq!(rewritten.validators, Validators::default());
        files.write_charts(["web", "db"].into_iter()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("st-charts.txt")).unwrap(),
            "db\nweb\n"
        );
    }

    #[test]
    fn unnamed_repositories_are_keyed_by_url() {
        let a = IndexFiles::of(Path::new("/c"), &RepoEntry::for_url("http://x/"));
        let b = IndexFiles::of(Path::new("/c"), &RepoEntry::for_url("http://x"));
        assert_eq!(a.index, b.index);
        assert!(a.index.to_str().unwrap().starts_with("/c/url-"));
    }
}
