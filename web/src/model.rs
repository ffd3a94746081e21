//! What the pages show, as plain data the server fills in from its repository. The same
//! structs serialise to the JSON the pages' routes answer scripts with (`Accept:
//! application/json`), so the page and its JSON cannot drift apart.

use serde::Serialize;

/// The server as the pages name it in install commands.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Site {
    /// The repository's name in `helm repo add NAME URL`.
    pub repo_name: String,
    /// The repository's address as clients reach it (`https://charts.example.com`).
    pub repo_url: String,
    /// `oci://HOST/PATH` when the server answers OCI clients too.
    pub oci_base: Option<String>,
    /// The path the pages are under (`--context-path`, a tenant's `/ORG/REPO`), without a
    /// trailing slash; empty at the root. Every link to a page of this server starts with it.
    pub base_path: String,
}

/// One chart in the list: its newest version's metadata.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChartSummary {
    pub name: String,
    pub latest_version: String,
    pub app_version: Option<String>,
    pub description: String,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Maintainer>,
    pub deprecated: bool,
    /// Whether the newest version has a provenance file.
    pub signed: bool,
    pub version_count: usize,
    pub icon: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Maintainer {
    pub name: String,
    pub email: Option<String>,
    pub url: Option<String>,
}

/// A version of a chart as the version list shows it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VersionSummary {
    pub version: String,
    pub app_version: Option<String>,
    /// RFC 3339, as the index's `created`.
    pub created: Option<String>,
    pub provenance: Provenance,
    /// Download address of the package, relative to the server.
    pub package_url: String,
}

/// What is known of a version's signature.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Provenance {
    #[default]
    Unsigned,
    /// A `.prov` file exists; no keyring was given to check it.
    Signed { signer: Option<String> },
    /// Checked against the server's keyring.
    Verified { signer: String },
    /// Checked and refused, with the reason in words.
    Invalid { reason: String },
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    /// Whether the dependency's chart is on this server, so the page links to it.
    pub on_this_server: bool,
}

/// One version of a chart in full, for its page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChartDetail {
    pub name: String,
    pub version: String,
    pub app_version: Option<String>,
    pub description: String,
    pub home: Option<String>,
    pub sources: Vec<String>,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Maintainer>,
    pub deprecated: bool,
    pub dependencies: Vec<Dependency>,
    /// README.md as found in the package (Markdown).
    pub readme: Option<String>,
    /// values.yaml as found in the package.
    pub values_yaml: Option<String>,
    /// values.schema.json, parsed; `None` when absent or not JSON.
    pub values_schema: Option<serde_json::Value>,
    /// Paths under `templates/`.
    pub templates: Vec<String>,
    /// Every version of the chart, newest first.
    pub versions: Vec<VersionSummary>,
}

impl ChartDetail {
    /// The provenance of the version this page shows.
    pub fn provenance(&self) -> Provenance {
        self.versions
            .iter()
            .find(|v| v.version == self.version)
            .map(|v| v.provenance.clone())
            .unwrap_or_default()
    }
}

/// One version's files as the comparison needs them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VersionFiles {
    pub version: String,
    pub values_yaml: String,
    /// `(path, content)` of every template.
    pub templates: Vec<(String, String)>,
}
