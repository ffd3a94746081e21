//! Changing the repository: uploading a package (alone or with its provenance), a
//! provenance on its own, and deleting a version.
//!
//! A package and its `.prov` are one unit:
//! - The `.prov` is written first and the package second, so once a package is in storage
//!   (where every replica's listing finds it) its `.prov` is there too. If the package
//!   cannot be written, the `.prov` is put back as it was.
//! - A `.prov` is stored only for the exact bytes it signs, whatever the signature policy;
//!   one sent before its package (as ChartMuseum allows) is stored as it is, and judged
//!   when the package comes: a package it does not sign replaces it as a stale one.
//! - A package replaced without a new `.prov` loses its old one, which no longer matches.
//! - A `.prov` is served only while it matches its package (see `api::chart_file`), so a
//!   pair left inconsistent by a crash or by another tool is never served as if it were
//!   good.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::api::AppState;
use crate::error::{ApiError, json};
use crate::names::{self, FileKind};
use crate::repository::{NewEntry, created_time};
use crate::storage::{ObjectInfo, Storage, StorageError, WriteMode};
use crate::upload::{self, CheckedPackage, CheckedProvenance};
use crate::upload_body;

/// How many uploads are read and checked at once, and how long one waits for its turn.
#[derive(Debug)]
pub struct UploadSlots {
    slots: Arc<Semaphore>,
    wait: Duration,
}

impl UploadSlots {
    pub fn new(concurrent: usize, wait: Duration) -> UploadSlots {
        UploadSlots {
            slots: Arc::new(Semaphore::new(concurrent.max(1))),
            wait,
        }
    }

    /// A turn to upload, waiting up to the configured time; a burst beyond that gets 503
    /// rather than growing the server's memory.
    pub(crate) async fn acquire(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        match tokio::time::timeout(self.wait, Arc::clone(&self.slots).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many uploads in progress; retry shortly",
            )
            .retry_after(5)),
        }
    }
}

/// `force`: the request asked for `?force`, which ChartMuseum lets replace a stored
/// version unless `--disable-force-overwrite`.
fn write_mode(state: &AppState, force: bool) -> WriteMode {
    if state.policy.allow_overwrite || (force && state.policy.force_overwrite) {
        WriteMode::Overwrite
    } else {
        WriteMode::Create
    }
}

pub async fn upload_chart(State(state): State<AppState>, request: Request) -> Response {
    let outcome = store_chart(&state, request).await;
    state.metrics.upload(outcome.is_ok());
    match outcome {
        Ok(()) => json(StatusCode::CREATED, r#"{"saved":true}"#.to_owned()),
        Err(error) => error.into_response(),
    }
}

/// Whether the query has a `force` parameter, with or without a value (ChartMuseum looks
/// only for the key).
fn asks_force(uri: &axum::http::Uri) -> bool {
    uri.query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some("force"))
    })
}

async fn store_chart(state: &AppState, request: Request) -> Result<(), ApiError> {
    let _turn = state.policy.uploads.acquire().await?;
    let (head, body) = request.into_parts();
    let force = asks_force(&head.uri);
    let body = upload_body::read_body(&head.headers, body, state.policy.max_upload_size).await?;
    let parts = upload::parts(&head.headers, body, "chart", &state.policy.form_fields).await?;
    let Some((sent_name, data)) = parts.chart else {
        // ChartMuseum's form upload takes a `prov` field alone, as POST /api/prov does.
        if let Some((_, prov)) = parts.prov {
            return publish_provenance(state, prov, force).await;
        }
        return Err(ApiError::bad_request(
            "no chart in the request: send the package as the body, or as a multipart `chart` field",
        ));
    };
    let prov = parts.prov.map(|(_, prov)| prov);
    publish_package(state, data, sent_name.as_deref(), prov, None, force)
        .await
        .map(drop)
}

/// Judges a package (and the `.prov` sent with it) and stores both as one unit: what
/// ChartMuseum's upload and an OCI push of a chart have in common. The caller holds an
/// upload turn. With `expected` (a push to `NAME:VERSION`), a package of another chart or
/// version is refused before anything is written.
pub(crate) async fn publish_package(
    state: &AppState,
    data: Bytes,
    sent_name: Option<&str>,
    prov: Option<Bytes>,
    expected: Option<&(String, String)>,
    force: bool,
) -> Result<CheckedPackage, ApiError> {
    if data.is_empty() {
        return Err(ApiError::bad_request(
            "the request body is empty; send a chart package (.tgz)",
        ));
    }
    // The same judgement as the storage sync's, so what is stored is indexed.
    let entry = state
        .repo
        .check_package(data.clone(), None, SystemTime::now())
        .await
        .map_err(|refusal| {
            if refusal.busy {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, refusal.message).retry_after(5)
            } else {
                ApiError::bad_request(format!("not a valid chart package: {}", refusal.message))
            }
        })?;
    let package = upload::check_package(data, entry, sent_name)?;
    if let Some((name, version)) = expected
        && (&package.name != name || &package.version != version)
    {
        return Err(ApiError::bad_request(format!(
            "the chart layer is {} {}, but the manifest's config says {name} {version}",
            package.name, package.version
        )));
    }
    let provenance = match prov {
        Some(prov) => {
            let provenance = upload::check_provenance(&prov)?;
            if provenance.package_file != package.file {
                return Err(ApiError::bad_request(format!(
                    "the provenance file is for {}, not {}",
                    provenance.package_file, package.file
                )));
            }
            provenance.require_match(&package.digest)?;
            Some(provenance)
        }
        None => None,
    };
    let storage = state.repo.storage();
    if let Some(keyring) = &state.policy.require_signature {
        let stored;
        let signed_by = match &provenance {
            Some(p) => p,
            None => {
                let prov_file = format!("{}.prov", package.file);
                let text = storage.get(&prov_file).await?.ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "this server requires signed charts: upload {} together with its provenance (a multipart `prov` field, or `chartkit push --prov`)",
                        package.file
                    ))
                })?;
                stored = upload::check_provenance(&text)?;
                &stored
            }
        };
        upload::verify(signed_by, &package.digest, keyring)?;
    }
    let mode = write_mode(state, force);
    if mode == WriteMode::Create && state.repo.has_package(&package.file) {
        return Err(StorageError::AlreadyExists {
            name: package.file.clone(),
        }
        .into());
    }
    let prov_file = provenance.as_ref().map(|p| p.file.clone());
    let writes: Vec<&str> = std::iter::once(package.file.as_str())
        .chain(prov_file.as_deref())
        .collect();
    crate::limits::check_room(state, &writes, mode)?;
    let (info, prov_info) = match provenance {
        Some(provenance) => write_pair(state, &package, provenance, mode).await?,
        None => {
            let info = storage
                .put(&package.file, package.data.clone(), mode)
                .await?;
            drop_stale_provenance(state, &package).await;
            (info, None)
        }
    };
    if let Some(prov_info) = prov_info {
        state.repo.insert_provenance(prov_info);
    }
    let mut version = package.entry.clone();
    version.created = Some(created_time(info.modified));
    tracing::info!(chart = %package.name, version = %package.version, "chart stored");
    state.repo.insert_package(NewEntry { version, info });
    crate::limits::keep_newest_versions(state, &package.name, &package.version).await;
    Ok(package)
}

/// Writes a package and its provenance as one unit: the `.prov` first, then the package;
/// if the package cannot be written, the `.prov` is put back as it was.
async fn write_pair(
    state: &AppState,
    package: &CheckedPackage,
    provenance: CheckedProvenance,
    mode: WriteMode,
) -> Result<(ObjectInfo, Option<ObjectInfo>), ApiError> {
    let storage = state.repo.storage();
    let previous = storage.get(&provenance.file).await?;
    if mode == WriteMode::Create
        && let Some(existing) = &previous
        && existing[..] != *provenance.text.as_bytes()
    {
        // Another `.prov` without its package: an upload of this version in flight on
        // this or another replica, or one that was interrupted. Replacing it could
        // separate another upload's pair, so the client retries (or deletes it).
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "{} is stored without its package: another upload of {} is in progress or was interrupted; retry, or remove it with DELETE /api/charts/{}/{}",
                provenance.file, package.file, package.name, package.version
            ),
        ));
    }
    let prov_info = storage
        .put(
            &provenance.file,
            Bytes::from(provenance.text.clone()),
            WriteMode::Overwrite,
        )
        .await?;
    match storage.put(&package.file, package.data.clone(), mode).await {
        Ok(info) => Ok((info, Some(prov_info))),
        Err(error) => {
            let restored = match previous {
                Some(old) => storage
                    .put(&provenance.file, old, WriteMode::Overwrite)
                    .await
                    .map(drop),
                None => storage.delete(&provenance.file).await.map(drop),
            };
            if let Err(restore_error) = restored {
                // Left as it is, the `.prov` is not served: it matches no package.
                tracing::error!(file = %provenance.file, error = %restore_error, "could not undo a provenance write after the package write failed");
            }
            Err(error.into())
        }
    }
}

/// After a package is stored without a `.prov`, removes a `.prov` left from before that
/// does not sign it (the old version's, when a package is replaced).
async fn drop_stale_provenance(state: &AppState, package: &CheckedPackage) {
    let storage = state.repo.storage();
    let prov_file = format!("{}.prov", package.file);
    let stale = match storage.get(&prov_file).await {
        Ok(Some(text)) => {
            upload::check_provenance(&text).map_or(true, |p| !p.signs(&package.digest))
        }
        Ok(None) => false,
        Err(error) => {
            tracing::warn!(file = %prov_file, %error, "could not check for a stale provenance file");
            false
        }
    };
    if stale {
        match storage.delete(&prov_file).await {
            Ok(_) => {
                state.repo.forget_provenance(&prov_file);
                tracing::info!(file = %prov_file, "removed a provenance file that no longer matches its package");
            }
            Err(error) => {
                tracing::warn!(file = %prov_file, %error, "could not remove a stale provenance file; it is not served")
            }
        }
    }
}

pub async fn upload_provenance(State(state): State<AppState>, request: Request) -> Response {
    match store_provenance(&state, request).await {
        Ok(()) => json(StatusCode::CREATED, r#"{"saved":true}"#.to_owned()),
        Err(error) => error.into_response(),
    }
}

async fn store_provenance(state: &AppState, request: Request) -> Result<(), ApiError> {
    let _turn = state.policy.uploads.acquire().await?;
    let (head, body) = request.into_parts();
    let force = asks_force(&head.uri);
    let body = upload_body::read_body(&head.headers, body, state.policy.max_upload_size).await?;
    let parts = upload::parts(&head.headers, body, "prov", &state.policy.form_fields).await?;
    let (_, data) = parts.prov.ok_or_else(|| {
        ApiError::bad_request(
            "no provenance in the request: send the .prov as the body, or as a multipart `prov` field",
        )
    })?;
    publish_provenance(state, data, force).await
}

/// Stores the provenance of a package in the repository. The caller holds an upload turn.
async fn publish_provenance(state: &AppState, data: Bytes, force: bool) -> Result<(), ApiError> {
    let provenance = upload::check_provenance(&data)?;
    let Some(digest) = state
        .repo
        .package_digest(&provenance.package_file)
        .and_then(|hex| chartkit_signing::Sha256Digest::from_hex(&hex))
    else {
        return store_provenance_ahead(state, provenance, force).await;
    };
    provenance.require_match(&digest)?;
    if let Some(keyring) = &state.policy.require_signature {
        upload::verify(&provenance, &digest, keyring)?;
    }
    let storage = state.repo.storage();
    let text = Bytes::from(provenance.text.clone());
    crate::limits::check_room(state, &[&provenance.file], write_mode(state, force))?;
    let info = match storage
        .put(&provenance.file, text.clone(), write_mode(state, force))
        .await
    {
        Ok(info) => info,
        Err(StorageError::AlreadyExists { name }) => {
            // A `.prov` that no longer matches the package is replaced; a good one is
            // kept unless the server allows overwrites.
            let current = storage.get(&provenance.file).await?;
            let still_good = current
                .as_deref()
                .and_then(|t| upload::check_provenance(t).ok())
                .is_some_and(|p| p.signs(&digest));
            if still_good {
                return Err(StorageError::AlreadyExists { name }.into());
            }
            storage
                .put(&provenance.file, text, WriteMode::Overwrite)
                .await?
        }
        Err(error) => return Err(error.into()),
    };
    state.repo.insert_provenance(info);
    Ok(())
}

/// A `.prov` sent before its package, which ChartMuseum takes and stores as it is. It is
/// not served until the package it signs is stored (see `api::chart_file`), and that
/// upload checks it: against the package's digest, and with `--require-signature` against
/// the keyring. A package that does not match it replaces it as any stale `.prov`.
async fn store_provenance_ahead(
    state: &AppState,
    provenance: CheckedProvenance,
    force: bool,
) -> Result<(), ApiError> {
    let mode = write_mode(state, force);
    crate::limits::check_room(state, &[&provenance.file], mode)?;
    let info = state
        .repo
        .storage()
        .put(&provenance.file, Bytes::from(provenance.text), mode)
        .await?;
    tracing::info!(file = %info.name, "provenance stored ahead of its package");
    state.repo.insert_provenance(info);
    Ok(())
}

pub async fn delete_version(
    State(state): State<AppState>,
    Path((name, version)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    // `--disable-delete` is answered before this (in `api::guard`), as ChartMuseum
    // answers a route it did not register.
    if remove_version(&state, &name, &version).await? {
        return Ok(json(StatusCode::OK, r#"{"deleted":true}"#.to_owned()));
    }
    // ChartMuseum deletes the file NAME-VERSION.tgz, so a script that split a file name at
    // its last dash (`a-0.1.0-SNAPSHOT` `1` for a-0.1.0-SNAPSHOT-1.tgz) still deletes it.
    let file = format!("{name}-{version}.tgz");
    if let Some((indexed_name, indexed_version)) = state.repo.entry_of_file(&file)
        && remove_version(&state, &indexed_name, &indexed_version).await?
    {
        return Ok(json(StatusCode::OK, r#"{"deleted":true}"#.to_owned()));
    }
    // Not in the index; a `.prov` stored without its package (an interrupted upload) can
    // still be removed, so that the version can be uploaded again.
    if remove_orphan_provenance(state.repo.storage().as_ref(), &name, &version).await? {
        return Ok(json(StatusCode::OK, r#"{"deleted":true}"#.to_owned()));
    }
    Err(ApiError::not_found(format!(
        "chart {name} version {version} not found"
    )))
}

/// Removes a chart version: what `DELETE /api/charts/NAME/VERSION` and a registry DELETE
/// of its manifest have in common. The package goes first: once it is gone the version is
/// gone, even if removing the `.prov` or the registry's manifest then fails (neither is
/// served without its package, and garbage collection removes what is left). `false` when
/// the version is not in the index.
pub(crate) async fn remove_version(
    state: &AppState,
    name: &str,
    version: &str,
) -> Result<bool, ApiError> {
    let storage = state.repo.storage();
    let Some(file) = state.repo.file_of(name, version) else {
        return Ok(false);
    };
    storage.delete(&file).await?;
    state.repo.remove_package(&file);
    storage.delete(&format!("{file}.prov")).await?;
    storage
        .delete(&crate::oci::content::manifest_name(name, version))
        .await?;
    tracing::info!(chart = %name, %version, "chart version deleted");
    Ok(true)
}

async fn remove_orphan_provenance(
    storage: &dyn Storage,
    name: &str,
    version: &str,
) -> Result<bool, ApiError> {
    let package_file = names::package_file(name, version);
    if names::classify(&package_file) != Some(FileKind::Package) {
        return Ok(false);
    }
    let prov_file = format!("{package_file}.prov");
    let Some(text) = storage.get(&prov_file).await? else {
        return Ok(false);
    };
    // The `.prov` names its own chart and version; only that one is removed.
    let names_this_version = upload::check_provenance(&text)
        .is_ok_and(|p| p.chart == (name.to_owned(), version.to_owned()));
    if !names_this_version || storage.get(&package_file).await?.is_some() {
        return Ok(false);
    }
    storage.delete(&prov_file).await?;
    Ok(true)
}

#[cfg(test)]
#[path = "publish_tests.rs"]
pub(crate) mod tests;
