//! The index file model, field for field what Helm 4 reads and writes.

use std::collections::BTreeMap;

use chartkit_version::Version;
use chartkit_yaml::Value;

use crate::ChartMetadata;
use crate::gotime::GoTime;

/// `apiVersion` Helm writes.
pub const API_VERSION_V1: &str = "v1";

/// A chart repository index (`index.yaml`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexFile {
    pub api_version: String,
    /// `None` is Go's zero time.
    pub generated: Option<GoTime>,
    /// Chart name to its versions, newest first once sorted.
    pub entries: BTreeMap<String, Vec<ChartVersion>>,
    pub public_keys: Vec<String>,
    /// Free-form extensions (`annotations:`); the only place chartkit puts its own keys, since
    /// Helm and KubeVela refuse unknown keys anywhere else.
    pub annotations: BTreeMap<String, String>,
    /// ChartMuseum's `serverInfo`; read and carried, never produced by chartkit.
    pub server_info: Option<BTreeMap<String, Value>>,
}

/// One version of a chart in the index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartVersion {
    pub metadata: ChartMetadata,
    /// `None` writes `urls: null`, as Helm does for an entry without the key.
    pub urls: Option<Vec<String>>,
    pub created: Option<GoTime>,
    pub removed: bool,
    pub digest: String,
    /// Helm 2 fields, accepted and carried so a strict reader keeps working.
    pub checksum: String,
    pub engine: String,
    pub tiller_version: String,
    pub url: String,
}

impl ChartVersion {
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    pub fn version(&self) -> &str {
        &self.metadata.version
    }

    /// The parsed version; entries that fail to parse never survive loading.
    pub fn parsed_version(&self) -> Option<Version> {
        Version::parse(&self.metadata.version).ok()
    }
}

impl IndexFile {
    /// An empty index as `helm repo index` starts one.
    pub fn new(generated: GoTime) -> IndexFile {
        IndexFile {
            api_version: API_VERSION_V1.to_owned(),
            generated: Some(generated),
            ..IndexFile::default()
        }
    }

    /// Sorts every chart's versions newest first, exactly as Helm's `SortEntries` does
    /// (Go's unstable sort, so even ties land where Helm puts them).
    pub fn sort_entries(&mut self) {
        for versions in self.entries.values_mut() {
            crate::gosort::sort_newest_first(versions);
        }
    }

    /// Helm's `Has`: true when [`crate::select::get`] finds something for `version`.
    pub fn has(&self, name: &str, version: &str) -> bool {
        self.entries
            .get(name)
            .is_some_and(|versions| crate::select::get(versions, version).is_ok())
    }

    /// Helm's `Merge`: adds each entry of `other` whose name and version this index does not
    /// already have. Leaves the index unsorted, like Helm.
    pub fn merge(&mut self, other: &IndexFile) {
        for versions in other.entries.values() {
            for version in versions {
                if !self.has(version.name(), version.version()) {
                    self.entries
                        .entry(version.name().to_owned())
                        .or_default()
                        .push(version.clone());
                }
            }
        }
    }

    /// Number of chart versions across all names.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.values().all(Vec::is_empty)
    }
}
