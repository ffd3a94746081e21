//! Chart versions and version ranges as Helm's semver library (Masterminds/semver v3.4.0)
//! parses, orders and matches them.

mod range;
mod version;

pub use range::{RangeError, VersionRange};
pub use version::{Version, VersionError};
