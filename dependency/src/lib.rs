//! A chart's dependencies: what `Chart.yaml` (or `requirements.yaml`) asks for, the
//! versions repositories offer, `Chart.lock` in Helm's format and digest, the packages
//! vendored into `charts/`, and mirrors of repositories for networks without one.

pub mod list;
pub mod lockfile;
pub mod manager;
pub mod mirror;
pub mod reference;
pub mod resolve;

pub use list::{Listing, Row, Status, list};
pub use lockfile::{declares_dependencies, generated_now, lock_file_name, requested, write_lock};
