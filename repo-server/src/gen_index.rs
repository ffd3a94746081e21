//! ChartMuseum's `--gen-index`: the repository's index read from the storage and written
//! out once, without serving, as the server would serve it.

use std::sync::Arc;

use chartkit_chart::archive::Limits;

use crate::metrics::Metrics;
use crate::repository::{PackageRules, Repository, UrlStyle};
use crate::storage::{Storage, StorageError};

/// What the index is made from and how it is written.
pub struct GenIndex {
    pub storage: Arc<dyn Storage>,
    /// `--url`: absolute chart URLs under this base.
    pub url: Option<String>,
    pub limits: Limits,
    pub max_index_entry_size: usize,
    /// `--json-index`.
    pub json: bool,
    /// `--context-path`, for the JSON index's `serverInfo`.
    pub context_path: String,
}

/// The index of every usable package in the storage, and the packages left out with why.
pub async fn generate(options: GenIndex) -> Result<(Vec<u8>, Vec<(String, String)>), StorageError> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let rules = PackageRules {
        limits: options.limits,
        max_entry_size: options.max_index_entry_size,
        concurrent_checks: cores,
    };
    let repo = Arc::new(Repository::new(
        options.storage,
        UrlStyle { base: options.url },
        rules,
        Arc::new(Metrics::default()),
    ));
    let report = repo.sync().await?;
    let text = if options.json {
        crate::index_json::render(
            &repo.charts(),
            &crate::index_json::generated_now(),
            &options.context_path,
        )
        .into_bytes()
    } else {
        let repo = Arc::clone(&repo);
        tokio::task::spawn_blocking(move || repo.index().text())
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    };
    Ok((text, report.skipped))
}
