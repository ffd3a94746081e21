//! Judging a chart package as `helm repo index` does: the whole archive is read with
//! Helm's entry rules and the chart loaded as Helm's loader loads it, so a package is
//! indexed exactly when Helm would index it. Only the files the loader reads are kept in
//! memory (see [`chartkit_chart::archive::Retain::LoaderFiles`]).

use chartkit_chart::{LoadError, LoadOptions, Metadata};

/// Loads a packaged chart (`.tgz` bytes) as Helm's indexer does and returns its validated
/// metadata, or why Helm would skip it. `origin` names the package in errors; `options`
/// are [`LoadOptions::for_index`], with a shared memory budget where loads run at once.
pub fn read_package_metadata(
    bytes: &[u8],
    origin: &str,
    options: &LoadOptions,
) -> Result<Metadata, LoadError> {
    chartkit_chart::load_archive(bytes, origin, options).map(|chart| chart.metadata)
}
