//! Chart repositories on disk.
//!
//! - [`index_directory`]: `helm repo index DIR [--url] [--merge] [--json]`, in parallel,
//!   judging each package as Helm's loader does and skipping unchanged packages.
//! - [`IndexCache`]: an index.yaml with its compact form in chartkit's cache directory,
//!   rebuilt only when the index changes.

mod cache;
mod clock;
mod package;
mod repo_index;
mod stamp;
mod urljoin;

pub use cache::{
    CACHE_BUCKET, CacheError, CompactSource, FileSource, IndexCache, IndexDownload,
    compact_path_for,
};
pub use clock::{format_utc, now};
pub use package::read_package_metadata;
pub use repo_index::{IndexDirOptions, IndexDirReport, RepoIndexError, index_directory};
pub use urljoin::url_join;

/// Writes a file durably (temporary file, fsync, rename), as an `io::Error` naming the path.
pub(crate) fn write_durably(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    chartkit_durable::write(path, bytes)
        .map_err(|e| std::io::Error::new(e.source.kind(), e.to_string()))
}
