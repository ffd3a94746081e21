//! How much the repository may hold, as ChartMuseum bounds it: a ceiling on stored objects
//! (`--max-storage-objects`), a number of versions kept per chart (`--per-chart-limit`),
//! and how many packages a sync reads at once (`--index-limit`).

use axum::http::StatusCode;

use crate::api::AppState;
use crate::error::ApiError;
use crate::storage::WriteMode;

/// The repository's bounds; `None` is ChartMuseum's 0, no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepositoryLimits {
    /// Objects (packages and provenance files) the storage may hold; an upload that would
    /// store a new one past this is refused with 507, as ChartMuseum refuses it.
    pub max_objects: Option<usize>,
    /// Versions kept of each chart: after an upload, the versions uploaded longest ago are
    /// deleted until this many are left.
    pub per_chart: Option<usize>,
    /// Packages a sync with the storage reads and judges at once.
    pub index_reads: Option<usize>,
}

/// ChartMuseum's words for a full repository (its `507 Insufficient Storage`).
const STORAGE_LIMIT_REACHED: &str = "repo has reached storage limit";

/// Refuses an upload that would store more objects than `--max-storage-objects` allows.
/// `files` are the objects the upload writes; one already stored and replaced (`mode` is
/// an overwrite) takes no room, as ChartMuseum still lets a full repository replace a file.
pub(crate) fn check_room(
    state: &AppState,
    files: &[&str],
    mode: WriteMode,
) -> Result<(), ApiError> {
    let Some(max) = state.policy.limits.max_objects else {
        return Ok(());
    };
    let repo = &state.repo;
    let held = repo.object_count();
    let new = files
        .iter()
        .filter(|file| {
            let stored = repo.has_package(file) || repo.has_provenance(file);
            !(stored && mode == WriteMode::Overwrite)
        })
        .count();
    if new > 0 && held + new > max {
        return Err(ApiError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            format!(
                "{STORAGE_LIMIT_REACHED}: it holds {held} of the {max} objects --max-storage-objects allows, so {} is not stored",
                files.join(" and ")
            ),
        ));
    }
    Ok(())
}

/// After `name` `version` was stored, deletes the versions of `name` uploaded longest ago
/// until `--per-chart-limit` are left (ChartMuseum deletes the one modified longest ago
/// before each upload past the limit). The version just stored is always kept. A version
/// that cannot be deleted now is left for the next upload to try again.
pub(crate) async fn keep_newest_versions(state: &AppState, name: &str, version: &str) {
    let Some(keep) = state.policy.limits.per_chart else {
        return;
    };
    let mut stored = state.repo.versions_by_age(name);
    if stored.len() <= keep {
        return;
    }
    // Oldest first; the version just uploaded goes last whatever the storage's clock said.
    // Uploads a few milliseconds apart can carry the same modification time (file systems
    // stamp with a coarse clock), so the order this replica learnt of them breaks the tie.
    stored.sort_by_key(|(v, modified, seq)| (v == version, *modified, *seq));
    let excess = stored.len() - keep.max(1);
    for (old, _, _) in stored.into_iter().take(excess) {
        match crate::publish::remove_version(state, name, &old).await {
            Ok(_) => {
                tracing::info!(chart = %name, version = %old, keep, "deleted beyond --per-chart-limit")
            }
            Err(error) => {
                tracing::warn!(chart = %name, version = %old, error = %error.message, "could not delete a version beyond --per-chart-limit; trying again at the next upload")
            }
        }
    }
}
