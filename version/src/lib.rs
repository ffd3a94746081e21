//! Chart versions as Helm's semver library (Masterminds/semver v3) parses and orders them.

mod version;

pub use version::{Version, VersionError};
