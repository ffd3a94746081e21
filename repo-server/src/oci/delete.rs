//! `DELETE` of manifests and blobs (202 Accepted, as the spec answers).
//!
//! A chart version's manifest *is* the chart version on this face: deleting it (by its
//! tag, which is the version, or by its digest) removes the version from the repository
//! through the same code as `DELETE /api/charts/NAME/VERSION`, so index.yaml loses it at
//! once. Anything else goes alone: a manifest whose tag has moved on (kept by digest), an
//! artifact's manifest with its tags and referrer records, an artifact's tag, a blob no
//! chart version is made of. What they referenced is left for garbage collection, which
//! knows whether another manifest still needs it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chartkit_oci::manifest::{self, ChartManifest};

use super::content;
use super::error::{Code, OciError};
use crate::api::AppState;

fn accepted() -> Response {
    StatusCode::ACCEPTED.into_response()
}

/// `DELETE /v2/NAME/manifests/REFERENCE`.
pub async fn manifest(
    state: &AppState,
    repository: &str,
    chart: &str,
    reference: &str,
) -> Result<Response, OciError> {
    let unknown = || {
        OciError::new(
            Code::ManifestUnknown,
            format!("{repository} has no manifest {reference}"),
        )
    };
    let storage = state.repo.storage();
    let Some(hex) = content::sha256_hex(reference) else {
        // A tag: a chart version's, else (with --oci-artifacts) an artifact's.
        let version = content::version_of(reference);
        if crate::publish::remove_version(state, chart, &version).await? {
            return Ok(accepted());
        }
        if state.registry.artifacts
            && content::valid_tag(reference)
            && storage
                .delete(&content::artifact_tag_name(chart, reference))
                .await?
        {
            return Ok(accepted());
        }
        return Err(unknown());
    };
    for entry in state.repo.chart(chart).unwrap_or_default() {
        if let Some(bytes) = content::chart_manifest(state, chart, entry.version()).await?
            && manifest::digest_of(&bytes) == reference
        {
            crate::publish::remove_version(state, chart, entry.version()).await?;
            storage.delete(&content::blob_name(hex)).await?;
            return Ok(accepted());
        }
    }
    let kept = storage.get(&content::blob_name(hex)).await?;
    let is_charts = kept.as_ref().is_some_and(|bytes| {
        manifest::digest_of(bytes) == reference && ChartManifest::parse(bytes, chart).is_ok()
    });
    if is_charts && content::resolve(state, chart, reference).await?.is_some() {
        // An earlier manifest of a version pushed again: the version keeps its current one.
        storage.delete(&content::blob_name(hex)).await?;
        return Ok(accepted());
    }
    if state.registry.artifacts
        && content::artifact_manifest(state, reference)
            .await?
            .is_some()
    {
        // Its tags and its place among its subject's referrers go first, so nothing
        // names it once it is gone.
        for tag in content::artifact_tags(state, chart).await? {
            let record = content::artifact_tag_name(chart, &tag);
            if let Some(digest) = storage.get(&record).await?
                && String::from_utf8_lossy(&digest).trim() == reference
            {
                storage.delete(&record).await?;
            }
        }
        let referrers = storage
            .list_hidden(&format!(".oci-referrer~{chart}~"))
            .await?;
        for record in referrers {
            if record.name.ends_with(&format!("~{hex}")) {
                storage.delete(&record.name).await?;
            }
        }
        storage.delete(&content::blob_name(hex)).await?;
        return Ok(accepted());
    }
    Err(unknown())
}

/// `DELETE /v2/NAME/blobs/DIGEST`.
pub async fn blob(state: &AppState, chart: &str, digest: &str) -> Result<Response, OciError> {
    let Some(hex) = content::sha256_hex(digest) else {
        return Err(OciError::new(
            Code::DigestInvalid,
            format!("{digest} is not a sha256 digest"),
        ));
    };
    if state
        .repo
        .storage()
        .delete(&content::blob_name(hex))
        .await?
    {
        return Ok(accepted());
    }
    if content::find_blob(state, chart, digest).await?.is_some() {
        return Err(OciError::new(
            Code::Denied,
            format!(
                "{digest} is a chart version's package; delete the version's manifest (or DELETE /api/charts/{chart}/VERSION) instead"
            ),
        ));
    }
    Err(OciError::new(
        Code::BlobUnknown,
        format!("blob {digest} is not known"),
    ))
}
