use chartkit_yaml::Map;

use crate::file::File;
use crate::lock::Lock;
use crate::metadata::Metadata;

pub const CHART_FILE: &str = "Chart.yaml";
pub const VALUES_FILE: &str = "values.yaml";
pub const SCHEMA_FILE: &str = "values.schema.json";

/// A loaded chart: metadata, default values, templates, other files and subcharts.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub metadata: Metadata,
    /// Chart.lock (v2) or requirements.lock (v1).
    pub lock: Option<Lock>,
    /// Default values from values.yaml (empty when there is none).
    pub values: Map,
    /// values.schema.json, unparsed.
    pub schema: Option<bytes::Bytes>,
    /// Files under `templates/`.
    pub templates: Vec<File>,
    /// Everything that is not Chart.yaml, values, schema, a lock, a template or a subchart.
    pub files: Vec<File>,
    /// Subcharts from `charts/`, as directories or archives, in name order.
    pub dependencies: Vec<Chart>,
    /// Every file as it was read, for `show values`/`show readme` and packaging.
    pub raw: Vec<File>,
    /// What Helm logs while loading (symbolic links followed) and what chartkit warns of
    /// (deprecated layouts), as lines of Helm's log (`chartkit_yaml::goslog`).
    pub warnings: Vec<String>,
}

impl Chart {
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// A raw file by name (e.g. values.yaml with its comments).
    pub fn raw_file(&self, name: &str) -> Option<&File> {
        self.raw.iter().find(|f| f.name == name)
    }

    /// The README as `helm show readme` finds it: the first top-level file named
    /// `README.md`, `README.txt` or `README`, in any capitalisation.
    pub fn readme(&self) -> Option<&File> {
        self.files.iter().find(|f| {
            ["readme.md", "readme.txt", "readme"]
                .iter()
                .any(|n| f.name.eq_ignore_ascii_case(n))
        })
    }

    /// CRD files (`crds/*.yaml|yml|json`) of this chart and all subcharts, with their paths
    /// relative to the top chart (`parent/charts/sub/crds/x.yaml`).
    pub fn crds(&self) -> Vec<(String, &File)> {
        let mut out = Vec::new();
        self.collect_crds(self.name().to_owned(), &mut out);
        out
    }

    fn collect_crds<'a>(&'a self, path: String, out: &mut Vec<(String, &'a File)>) {
        for file in &self.files {
            let lower = file.name.to_ascii_lowercase();
            if file.name.starts_with("crds/")
                && (lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json"))
            {
                out.push((format!("{path}/{}", file.name), file));
            }
        }
        for dependency in &self.dependencies {
            dependency.collect_crds(format!("{path}/charts/{}", dependency.name()), out);
        }
    }
}
