//! Where the registry's content lives: in the repository's own storage, so both faces
//! read one store.
//!
//! - A chart layer *is* the package `NAME-VERSION.tgz` (and a provenance layer its
//!   `.prov`), so a pushed chart is in index.yaml and a ChartMuseum upload can be pulled.
//! - Other blobs (config blobs, layers not yet part of a chart) are `.oci-blob-sha256-HEX`.
//! - A chart version's manifest is `.oci-manifest-NAME-VERSION.json`: the bytes a client
//!   pushed, or, for a chart that came another way, Helm's manifest built for it once and
//!   kept, so its digest does not change.
//!
//! Hidden names keep these out of the repository's listing (both backends skip dot
//! files), and flat names work on a directory and in a bucket alike.

use bytes::Bytes;
use chartkit_index::ChartVersion;
use chartkit_oci::manifest::{self, ChartManifest, HelmArtifact};

use crate::api::AppState;
use crate::storage::{StorageError, WriteMode};

/// The hex of a `sha256:` digest, or `None` when it is not one.
pub fn sha256_hex(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(hex)
}

pub fn blob_name(hex: &str) -> String {
    format!(".oci-blob-sha256-{hex}")
}

pub fn manifest_name(name: &str, version: &str) -> String {
    format!(".oci-manifest-{name}-{version}.json")
}

/// The record of an artifact's tag (with `--oci-artifacts`): its manifest digest. `~` is
/// in neither names nor tags, so one chart's prefix is not another's.
pub fn artifact_tag_name(name: &str, tag: &str) -> String {
    format!(".oci-tag~{name}~{tag}")
}

/// The referrers API's record of a manifest (`hex`) whose subject is `subject`.
pub fn referrer_name(name: &str, subject: &str, hex: &str) -> String {
    format!(".oci-referrer~{name}~{subject}~{hex}")
}

/// Whether `tag` is one the spec allows: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
pub fn valid_tag(tag: &str) -> bool {
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The tags of artifacts stored beside a chart.
pub async fn artifact_tags(state: &AppState, name: &str) -> Result<Vec<String>, StorageError> {
    let prefix = format!(".oci-tag~{name}~");
    Ok(state
        .repo
        .storage()
        .list_hidden(&prefix)
        .await?
        .into_iter()
        .filter_map(|info| info.name.strip_prefix(&prefix).map(str::to_owned))
        .collect())
}

/// A version as a tag: OCI tags have no `+`, so helm writes `_`.
pub fn tag_of(version: &str) -> String {
    version.replace('+', "_")
}

pub fn version_of(tag: &str) -> String {
    tag.replace('_', "+")
}

/// A stored blob by digest: one written by an upload, else a package or provenance of
/// `chart`. Every read is checked against the digest, so a file changed behind the
/// server's back is not served as the blob.
pub async fn find_blob(
    state: &AppState,
    chart: &str,
    digest: &str,
) -> Result<Option<Bytes>, StorageError> {
    let Some(hex) = sha256_hex(digest) else {
        return Ok(None);
    };
    let storage = state.repo.storage();
    if let Some(data) = storage.get(&blob_name(hex)).await?
        && manifest::digest_of(&data) == digest
    {
        // Whoever asked (a push's HEAD or mount, a manifest's check) may be about to
        // reference it: garbage collection spares it for a while.
        state.registry.recent.touch(hex);
        return Ok(Some(data));
    }
    for version in state.repo.chart(chart).unwrap_or_default() {
        if version.digest == hex
            && let Some(file) = state.repo.file_of(chart, version.version())
            && let Some(data) = storage.get(&file).await?
            && manifest::digest_of(&data) == digest
        {
            return Ok(Some(data));
        }
    }
    Ok(None)
}

/// Stores a blob whose digest the caller has checked; storing one already there is a
/// success (it is the same content).
pub async fn put_blob(state: &AppState, hex: &str, data: Bytes) -> Result<(), StorageError> {
    match state
        .repo
        .storage()
        .put(&blob_name(hex), data, WriteMode::Create)
        .await
    {
        Ok(_) | Err(StorageError::AlreadyExists { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}

/// The manifest of a chart version in the index: the one stored for it while its chart
/// layer is still the package, else Helm's manifest built from the package (and its
/// `.prov`) and stored, so the next request, on any replica, gets the same bytes.
pub async fn chart_manifest(
    state: &AppState,
    name: &str,
    version: &str,
) -> Result<Option<Bytes>, StorageError> {
    let Some(entry) = state.repo.chart_version(name, version) else {
        return Ok(None);
    };
    let storage = state.repo.storage();
    let stored_name = manifest_name(name, version);
    let stored = storage.get(&stored_name).await?;
    if let Some(bytes) = &stored
        && describes(bytes, &entry)
    {
        return Ok(stored);
    }
    let Some(file) = state.repo.file_of(name, version) else {
        return Ok(None);
    };
    let Some(package) = storage.get(&file).await? else {
        return Ok(None);
    };
    let prov = match storage.get(&format!("{file}.prov")).await? {
        Some(text) => {
            let signs =
                chartkit_signing::Sha256Digest::from_hex(&entry.digest).is_some_and(|digest| {
                    crate::upload::check_provenance(&text).is_ok_and(|p| p.signs(&digest))
                });
            signs.then(|| text.to_vec())
        }
        None => None,
    };
    let artifact = HelmArtifact::new(&entry.metadata, package.to_vec(), prov, &created(&entry));
    // The config and provenance blobs first: a manifest is stored only when all it
    // names can be read.
    for (descriptor, bytes) in &artifact.blobs {
        if descriptor.digest != artifact.chart.digest
            && let Some(hex) = sha256_hex(&descriptor.digest)
        {
            put_blob(state, hex, Bytes::from(bytes.clone())).await?;
        }
    }
    let manifest = Bytes::from(artifact.manifest);
    // Exclusive unless the stored one is stale, so two replicas building it at once
    // agree on one.
    let mode = if stored.is_some() {
        WriteMode::Overwrite
    } else {
        WriteMode::Create
    };
    match storage.put(&stored_name, manifest.clone(), mode).await {
        Ok(_) => Ok(Some(manifest)),
        Err(StorageError::AlreadyExists { .. }) => match storage.get(&stored_name).await? {
            Some(theirs) if describes(&theirs, &entry) => Ok(Some(theirs)),
            _ => Ok(Some(manifest)),
        },
        Err(error) => Err(error),
    }
}

/// Whether a stored manifest's chart layer is this version's package.
fn describes(bytes: &[u8], entry: &ChartVersion) -> bool {
    ChartManifest::parse(bytes, entry.name())
        .is_ok_and(|m| sha256_hex(&m.chart.digest) == Some(entry.digest.as_str()))
}

/// The creation annotation of a built manifest: the package's time in the index, to the
/// second, as Go's RFC 3339 writes it.
fn created(entry: &ChartVersion) -> String {
    let Some(time) = entry.created.as_ref().filter(|t| !t.is_zero()) else {
        return "1970-01-01T00:00:00Z".to_owned();
    };
    let text = time.as_str();
    match (text.find('.'), text.find('Z')) {
        (Some(dot), Some(zone)) if dot < zone => format!("{}{}", &text[..dot], &text[zone..]),
        _ => text.to_owned(),
    }
}

/// The tags of a chart in the index and of artifacts beside it, in lexical order (as the
/// spec asks); `None` when there are neither.
pub async fn tags(state: &AppState, name: &str) -> Result<Option<Vec<String>>, StorageError> {
    let mut tags: Vec<String> = state
        .repo
        .chart(name)
        .unwrap_or_default()
        .iter()
        .map(|v| tag_of(v.version()))
        .collect();
    if state.registry.artifacts {
        tags.extend(artifact_tags(state, name).await?);
    }
    if tags.is_empty() {
        return Ok(None);
    }
    tags.sort();
    tags.dedup();
    Ok(Some(tags))
}

/// An artifact's manifest by digest: kept as a blob, and not a chart's (those are found
/// through their chart).
pub async fn artifact_manifest(
    state: &AppState,
    digest: &str,
) -> Result<Option<Bytes>, StorageError> {
    let Some(hex) = sha256_hex(digest) else {
        return Ok(None);
    };
    let Some(bytes) = state.repo.storage().get(&blob_name(hex)).await? else {
        return Ok(None);
    };
    let is_artifact = serde_json::from_slice::<serde_json::Value>(&bytes).is_ok_and(|json| {
        json.get("schemaVersion").and_then(|v| v.as_u64()) == Some(2)
            && json.pointer("/config/mediaType").and_then(|v| v.as_str())
                != Some(manifest::CONFIG_MEDIA_TYPE)
            && (json.get("layers").is_some() || json.get("manifests").is_some())
    });
    Ok((is_artifact && manifest::digest_of(&bytes) == digest).then_some(bytes))
}

/// The manifest a reference (tag or digest) names, with its digest.
pub async fn resolve(
    state: &AppState,
    name: &str,
    reference: &str,
) -> Result<Option<(Bytes, String)>, StorageError> {
    if let Some(hex) = sha256_hex(reference) {
        // Every manifest acknowledged is kept by digest too, so one replaced under its tag
        // (the same chart pushed again) still resolves while its chart is here.
        if let Some(bytes) = state.repo.storage().get(&blob_name(hex)).await?
            && manifest::digest_of(&bytes) == reference
            && ChartManifest::parse(&bytes, name).is_ok_and(|m| {
                let layer = sha256_hex(&m.chart.digest).unwrap_or_default();
                state
                    .repo
                    .chart(name)
                    .unwrap_or_default()
                    .iter()
                    .any(|v| v.digest == layer)
            })
        {
            return Ok(Some((bytes, reference.to_owned())));
        }
        for version in state.repo.chart(name).unwrap_or_default() {
            if let Some(bytes) = chart_manifest(state, name, version.version()).await?
                && manifest::digest_of(&bytes) == reference
            {
                return Ok(Some((bytes, reference.to_owned())));
            }
        }
        if state.registry.artifacts {
            return Ok(artifact_manifest(state, reference)
                .await?
                .map(|bytes| (bytes, reference.to_owned())));
        }
        return Ok(None);
    }
    if state.registry.artifacts && valid_tag(reference) {
        let record = artifact_tag_name(name, reference);
        if let Some(digest) = state.repo.storage().get(&record).await? {
            let digest = String::from_utf8_lossy(&digest).trim().to_owned();
            if let Some(bytes) = artifact_manifest(state, &digest).await? {
                return Ok(Some((bytes, digest)));
            }
        }
    }
    Ok(chart_manifest(state, name, &version_of(reference))
        .await?
        .map(|bytes| {
            let digest = manifest::digest_of(&bytes);
            (bytes, digest)
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_and_tags() {
        let hex = "a".repeat(64);
        assert_eq!(sha256_hex(&format!("sha256:{hex}")), Some(hex.as_str()));
        assert_eq!(sha256_hex(&format!("sha256:{}", "A".repeat(64))), None);
        assert_eq!(sha256_hex("sha512:00"), None);
        assert_eq!(sha256_hex("sha256:../x"), None);
        assert_eq!(tag_of("1.0.0+build.1"), "1.0.0_build.1");
        assert_eq!(version_of("1.0.0_build.1"), "1.0.0+build.1");
    }
}
