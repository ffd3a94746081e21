//! Garbage collection of the registry's files: blobs no manifest references (left by a
//! deleted chart version, an abandoned push, a manifest whose tag moved on and was deleted),
//! manifests kept for chart versions that are gone, referrer records of manifests that are
//! gone, and abandoned upload sessions.
//!
//! It runs at start and every `--oci-gc-interval`, on every replica (deletions are
//! idempotent). A file younger than `--oci-gc-grace` is never removed, nor a blob this
//! replica saw asked for within it: a push uploads its blobs (or finds them with HEAD)
//! before the manifest that references them, and that manifest may arrive later. A push
//! through another replica that finds an old unreferenced blob with HEAD just as this
//! replica removes it fails its manifest PUT with MANIFEST_BLOB_UNKNOWN (every blob is
//! checked before a manifest is stored) and pushes again; nothing half-referenced is
//! acknowledged.
//!
//! What is garbage is decided by [`garbage`], a pure function of an [`Inventory`].

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use chartkit_oci::manifest;

use super::content;
use crate::api::AppState;
use crate::storage::StorageError;

/// When the collector runs and what it spares.
#[derive(Debug, Clone, Copy)]
pub struct GcSettings {
    /// Time between runs (the first is at start).
    pub interval: Duration,
    /// Files younger than this are kept whatever references them.
    pub grace: Duration,
}

impl Default for GcSettings {
    fn default() -> GcSettings {
        GcSettings {
            interval: Duration::from_secs(600),
            grace: Duration::from_secs(3600),
        }
    }
}

/// Blobs asked for recently (HEAD, GET, mount): a push that found one may be about to
/// reference it, however old the file is.
#[derive(Default)]
pub struct RecentBlobs {
    seen: Mutex<HashMap<String, Instant>>,
}

impl RecentBlobs {
    pub fn touch(&self, hex: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(hex.to_owned(), Instant::now());
    }

    /// The blobs seen within `grace`; older sightings are forgotten.
    fn within(&self, grace: Duration) -> HashSet<String> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.retain(|_, at| at.elapsed() < grace);
        seen.keys().cloned().collect()
    }
}

/// What one run removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GcReport {
    /// Files removed from the storage.
    pub removed: Vec<String>,
    /// Upload sessions dropped.
    pub sessions: usize,
}

/// Everything the decision needs, gathered from the storage.
#[derive(Debug, Default)]
pub struct Inventory {
    /// The registry's hidden files (`.oci-*`) with their ages.
    pub files: Vec<(String, Duration)>,
    /// The contents of the files that may be manifests or records: small blobs, stored
    /// manifests, tag records.
    pub contents: HashMap<String, Bytes>,
    /// The chart versions in the index: name, version, package digest (hex).
    pub versions: Vec<(String, String, String)>,
}

/// Blobs larger than this are layers, never read as possible manifests.
const MAX_DOCUMENT: u64 = super::MAX_MANIFEST_SIZE as u64;

/// The digests (hex) a manifest's bytes reference: config, layers, manifests of an index.
/// A `subject` is not owned by its referrer, so it is not among them.
fn references(bytes: &[u8]) -> Vec<String> {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return Vec::new();
    };
    if json.get("schemaVersion").and_then(|v| v.as_u64()) != Some(2) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut descriptors: Vec<&serde_json::Value> = json.get("config").into_iter().collect();
    for key in ["layers", "manifests"] {
        descriptors.extend(
            json.get(key)
                .and_then(|l| l.as_array())
                .into_iter()
                .flatten(),
        );
    }
    for descriptor in descriptors {
        if let Some(hex) = descriptor
            .get("digest")
            .and_then(|d| d.as_str())
            .and_then(content::sha256_hex)
        {
            found.push(hex.to_owned());
        }
    }
    found
}

/// The chart layer (hex) of a chart manifest's bytes.
fn chart_layer(bytes: &[u8]) -> Option<String> {
    let json = serde_json::from_slice::<serde_json::Value>(bytes).ok()?;
    if json.pointer("/config/mediaType")?.as_str()? != manifest::CONFIG_MEDIA_TYPE {
        return None;
    }
    json.get("layers")?
        .as_array()?
        .iter()
        .find(|l| l.get("mediaType").and_then(|m| m.as_str()) == Some(manifest::CHART_MEDIA_TYPE))
        .and_then(|l| l.get("digest")?.as_str())
        .and_then(content::sha256_hex)
        .map(str::to_owned)
}

/// The files to remove: those older than `grace` that nothing live needs. Live are the
/// manifests of the chart versions in the index (stored, and kept by digest while their
/// chart layer is a version's package), artifacts' manifests named by a tag or a referrer
/// record, and everything those reference, transitively. Blobs in `recent` are spared.
pub fn garbage(inventory: &Inventory, grace: Duration, recent: &HashSet<String>) -> Vec<String> {
    let blob_hex = |name: &str| name.strip_prefix(".oci-blob-sha256-").map(str::to_owned);
    let packages: HashSet<&str> = inventory.versions.iter().map(|v| v.2.as_str()).collect();
    let live_manifests: HashSet<String> = inventory
        .versions
        .iter()
        .map(|(name, version, _)| content::manifest_name(name, version))
        .collect();
    let mut roots: Vec<String> = Vec::new();
    for (name, _) in &inventory.files {
        let text = inventory.contents.get(name);
        if live_manifests.contains(name) {
            if let Some(bytes) = text {
                let digest = manifest::digest_of(bytes);
                roots.extend(content::sha256_hex(&digest).map(str::to_owned));
            }
        } else if name.starts_with(".oci-tag~") {
            if let Some(bytes) = text {
                let digest = String::from_utf8_lossy(bytes).trim().to_owned();
                roots.extend(content::sha256_hex(&digest).map(str::to_owned));
            }
        } else if name.starts_with(".oci-referrer~") {
            roots.extend(name.rsplit('~').next().map(str::to_owned));
        } else if let (Some(hex), Some(bytes)) = (blob_hex(name), text)
            && chart_layer(bytes).is_some_and(|layer| packages.contains(layer.as_str()))
        {
            roots.push(hex);
        }
    }
    // Stored manifests reference their blobs directly too (one written for a chart that
    // came another way may not be kept by digest yet).
    let mut live: HashSet<String> = HashSet::new();
    let mut work: Vec<String> = roots;
    for name in &live_manifests {
        if let Some(bytes) = inventory.contents.get(name) {
            work.extend(references(bytes));
        }
    }
    while let Some(hex) = work.pop() {
        if !live.insert(hex.clone()) {
            continue;
        }
        if let Some(bytes) = inventory.contents.get(&content::blob_name(&hex)) {
            work.extend(references(bytes));
        }
    }
    let present: HashSet<String> = inventory
        .files
        .iter()
        .filter_map(|(name, _)| blob_hex(name))
        .collect();
    inventory
        .files
        .iter()
        .filter(|(_, age)| *age >= grace)
        .filter(|(name, _)| {
            if let Some(hex) = blob_hex(name) {
                !live.contains(&hex) && !recent.contains(&hex)
            } else if name.starts_with(".oci-manifest-") {
                !live_manifests.contains(name)
            } else if name.starts_with(".oci-referrer~") {
                name.rsplit('~')
                    .next()
                    .is_none_or(|hex| !present.contains(hex))
            } else {
                false
            }
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Gathers the inventory from the storage and the index.
async fn inventory(state: &AppState) -> Result<Inventory, StorageError> {
    let storage = state.repo.storage();
    let now = SystemTime::now();
    let mut inventory = Inventory::default();
    for info in storage.list_hidden(".oci-").await? {
        let document = !info.name.starts_with(".oci-blob-") || info.size <= MAX_DOCUMENT;
        if document
            && !info.name.starts_with(".oci-referrer~")
            && let Some(bytes) = storage.get(&info.name).await?
        {
            inventory.contents.insert(info.name.clone(), bytes);
        }
        let age = now.duration_since(info.modified).unwrap_or_default();
        inventory.files.push((info.name, age));
    }
    for (name, versions) in state.repo.charts() {
        for version in versions {
            inventory.versions.push((
                name.clone(),
                version.version().to_owned(),
                version.digest.clone(),
            ));
        }
    }
    Ok(inventory)
}

/// One run: abandoned upload sessions, then unreferenced files.
pub async fn collect(state: &AppState) -> Result<GcReport, StorageError> {
    let registry = &state.registry;
    let sessions = registry.uploads.sweep();
    let inventory = inventory(state).await?;
    let recent = registry.recent.within(registry.gc.grace);
    let storage = state.repo.storage();
    let mut report = GcReport {
        sessions,
        ..GcReport::default()
    };
    for name in garbage(&inventory, registry.gc.grace, &recent) {
        if storage.delete(&name).await? {
            report.removed.push(name);
        }
    }
    if sessions > 0 || !report.removed.is_empty() {
        tracing::info!(
            files = report.removed.len(),
            upload_sessions = sessions,
            "registry garbage collected"
        );
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> String {
        content::sha256_hex(&manifest::digest_of(text.as_bytes()))
            .unwrap()
            .to_owned()
    }

    fn chart_manifest(config: &str, layer: &str) -> String {
        serde_json::json!({
            "schemaVersion": 2,
            "config": {"mediaType": manifest::CONFIG_MEDIA_TYPE, "digest": format!("sha256:{}", hex(config)), "size": config.len()},
            "layers": [{"mediaType": manifest::CHART_MEDIA_TYPE, "digest": format!("sha256:{}", hex(layer)), "size": layer.len()}],
        })
        .to_string()
    }

    struct Files(Inventory);

    impl Files {
        fn add(&mut self, name: &str, bytes: &str, age: u64) -> &mut Files {
            self.0
                .files
                .push((name.to_owned(), Duration::from_secs(age)));
            self.0
                .contents
                .insert(name.to_owned(), Bytes::from(bytes.to_owned()));
            self
        }

        fn blob(&mut self, bytes: &str, age: u64) -> &mut Files {
            self.add(&content::blob_name(&hex(bytes)), bytes, age)
        }
    }

    #[test]
    fn unreferenced_old_blobs_and_manifests_go_shared_and_young_ones_stay() {
        let mut files = Files(Inventory::default());
        // web 1.0.0 is in the index; web 2.0.0 was deleted.
        let live = chart_manifest("config-1", "package-1");
        let gone = chart_manifest("config-2", "package-2");
        files
            .0
            .versions
            .push(("web".into(), "1.0.0".into(), hex("package-1")));
        files
            .add(".oci-manifest-web-1.0.0.json", &live, 100)
            .add(".oci-manifest-web-2.0.0.json", &gone, 100)
            .blob(&live, 100)
            .blob(&gone, 100)
            .blob("config-1", 100)
            .blob("config-2", 100)
            // An abandoned push's layer, old, and a push in flight's, young.
            .blob("abandoned", 100)
            .blob("in-flight", 1)
            // Found with HEAD a moment ago by a push about to reference it.
            .blob("headed", 100);
        // An artifact tagged, sharing the deleted version's config blob.
        let artifact = serde_json::json!({
            "schemaVersion": 2,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": format!("sha256:{}", hex("config-2")), "size": 8},
            "layers": [],
        })
        .to_string();
        files
            .blob(&artifact, 100)
            .add(
                ".oci-tag~web~sbom",
                &format!("sha256:{}", hex(&artifact)),
                100,
            )
            .add(
                &format!(".oci-referrer~web~{}~{}", hex(&live), "0".repeat(64)),
                "",
                100,
            );
        let recent = HashSet::from([hex("headed")]);
        let mut removed = garbage(&files.0, Duration::from_secs(10), &recent);
        removed.sort();
        let mut expected = vec![
            ".oci-manifest-web-2.0.0.json".to_owned(),
            content::blob_name(&hex(&gone)),
            content::blob_name(&hex("abandoned")),
            format!(".oci-referrer~web~{}~{}", hex(&live), "0".repeat(64)),
        ];
        expected.sort();
        assert_eq!(removed, expected);
    }

    #[test]
    fn references_skip_the_subject() {
        let text = serde_json::json!({
            "schemaVersion": 2,
            "config": {"digest": format!("sha256:{}", "a".repeat(64))},
            "layers": [{"digest": format!("sha256:{}", "b".repeat(64))}],
            "subject": {"digest": format!("sha256:{}", "c".repeat(64))},
        })
        .to_string();
        assert_eq!(
            references(text.as_bytes()),
            vec!["a".repeat(64), "b".repeat(64)]
        );
    }
}
