//! Chart repositories on disk.
//!
//! - [`index_directory`]: `helm repo index DIR [--url] [--merge] [--json]`, in parallel,
//!   reading only Chart.yaml from each package and skipping unchanged packages.
//! - [`IndexCache`]: a downloaded index.yaml with its compact form beside it, rebuilt only
//!   when the index's digest changes.

mod atomic;
mod cache;
mod clock;
mod package;
mod repo_index;
mod urljoin;

pub use atomic::write_atomically;
pub use cache::{CacheError, FileSource, IndexCache, compact_path_for};
pub use clock::now;
pub use package::{PackageError, read_package_metadata};
pub use repo_index::{IndexDirOptions, IndexDirReport, RepoIndexError, index_directory};
pub use urljoin::url_join;
