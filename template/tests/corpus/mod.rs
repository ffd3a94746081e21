//! Reading chart packages from the shared corpus: every template of a chart and of its
//! bundled subcharts, named as Helm names them (`chart/charts/sub/templates/x.yaml`).

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

/// The shared corpus: `CHARTKIT_CORPUS`, default `../shared/corpus` beside the workspace.
pub fn root() -> PathBuf {
    std::env::var_os("CHARTKIT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"))
}

/// The corpus's chart packages directory.
pub fn charts_dir() -> PathBuf {
    root().join("charts")
}

/// The corpus packages, if the corpus is present.
pub fn packages() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(charts_dir()) {
        Ok(dir) => dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

/// A file of a chart package: its path inside the archive and its bytes.
pub struct Entry {
    pub path: String,
    pub data: Vec<u8>,
}

fn read_tgz(bytes: &[u8]) -> Vec<Entry> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut out = Vec::new();
    let Ok(entries) = archive.entries() else {
        return out;
    };
    for entry in entries.flatten() {
        let mut entry = entry;
        let Ok(path) = entry.path().map(|p| p.to_string_lossy().into_owned()) else {
            continue;
        };
        let mut data = Vec::new();
        if entry.read_to_end(&mut data).is_ok() {
            out.push(Entry { path, data });
        }
    }
    out
}

/// All files of a package, with bundled subchart packages (`charts/*.tgz`) expanded in
/// place (`parent/charts/sub/...`).
pub fn files(tgz: &Path) -> Vec<Entry> {
    let bytes = std::fs::read(tgz).expect("read package");
    expand(read_tgz(&bytes), "")
}

fn expand(entries: Vec<Entry>, prefix: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for e in entries {
        let full = format!("{prefix}{}", e.path);
        let parts: Vec<&str> = e.path.split('/').collect();
        if e.path.ends_with(".tgz") && parts.len() == 3 && parts[1] == "charts" {
            let parent = format!("{prefix}{}/charts/", parts[0]);
            out.extend(expand(read_tgz(&e.data), &parent));
        } else {
            out.push(Entry {
                path: full,
                data: e.data,
            });
        }
    }
    out
}

/// Whether a path is a template file (`<chart>/templates/...` or a subchart's).
pub fn is_template(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.len() >= 3 && parts[parts.len() - 2..].len() == 2 && {
        let mut i = 1;
        let mut ok = false;
        while i < parts.len() {
            if parts[i] == "templates" && i + 1 < parts.len() {
                ok = true;
                break;
            }
            if parts[i] == "charts" && i + 2 < parts.len() {
                i += 2;
                continue;
            }
            break;
        }
        ok
    }
}

/// The templates of a package as (name, text) pairs.
pub fn templates(tgz: &Path) -> Vec<(String, String)> {
    files(tgz)
        .into_iter()
        .filter(|e| is_template(&e.path))
        .map(|e| (e.path, String::from_utf8_lossy(&e.data).into_owned()))
        .collect()
}

use chartkit_template::objects::{Capabilities, Files, HelmVersion};
use chartkit_template::{Entries, MapKind, Value};

/// One chart of a package (the root or a bundled subchart).
pub struct Chart {
    /// Helm's name prefix for the chart's templates, e.g. `parent/charts/sub`.
    pub path: String,
    pub metadata: chartkit_yaml::Node,
    pub values: chartkit_yaml::Map,
    pub files: Vec<(String, Vec<u8>)>,
    pub templates: Vec<(String, String)>,
}

/// Splits a package's files into its charts.
pub fn charts(entries: &[Entry]) -> Vec<Chart> {
    let mut roots: Vec<String> = entries
        .iter()
        .filter_map(|e| e.path.strip_suffix("/Chart.yaml").map(str::to_owned))
        .collect();
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    let owner = |path: &str| -> Option<String> {
        roots
            .iter()
            .find(|r| path.starts_with(&format!("{r}/")))
            .cloned()
    };
    let mut out = Vec::new();
    for root in &roots {
        let mine: Vec<&Entry> = entries
            .iter()
            .filter(|e| owner(&e.path).as_deref() == Some(root.as_str()))
            .collect();
        let get = |name: &str| {
            mine.iter()
                .find(|e| e.path == format!("{root}/{name}"))
                .map(|e| String::from_utf8_lossy(&e.data).into_owned())
        };
        let metadata = chartkit_yaml::parse_node(&get("Chart.yaml").unwrap_or_default())
            .unwrap_or_else(|_| chartkit_yaml::parse_node("{}").expect("empty map"));
        let values = chartkit_yaml::parse_values(&get("values.yaml").unwrap_or_default())
            .unwrap_or_default();
        let templates = mine
            .iter()
            .filter(|e| e.path.starts_with(&format!("{root}/templates/")))
            .map(|e| {
                (
                    e.path.clone(),
                    String::from_utf8_lossy(&e.data).into_owned(),
                )
            })
            .collect();
        let files = mine
            .iter()
            .filter(|e| {
                let rel = &e.path[root.len() + 1..];
                !rel.starts_with("templates/")
                    && rel != "Chart.yaml"
                    && rel != "values.yaml"
                    && rel != "values.schema.json"
                    && rel != "Chart.lock"
            })
            .map(|e| (e.path[root.len() + 1..].to_owned(), e.data.clone()))
            .collect();
        out.push(Chart {
            path: root.clone(),
            metadata,
            values,
            files,
            templates,
        });
    }
    out
}

/// The API versions `helm template` 4.1.4 assumes without a cluster.
pub const DEFAULT_API_VERSIONS: &str = "v1 admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1alpha1 admissionregistration.k8s.io/v1beta1 internal.apiserver.k8s.io/v1alpha1 apps/v1 apps/v1beta1 apps/v1beta2 authentication.k8s.io/v1 authentication.k8s.io/v1alpha1 authentication.k8s.io/v1beta1 authorization.k8s.io/v1 authorization.k8s.io/v1beta1 autoscaling/v1 autoscaling/v2 autoscaling/v2beta1 autoscaling/v2beta2 batch/v1 batch/v1beta1 certificates.k8s.io/v1 certificates.k8s.io/v1beta1 certificates.k8s.io/v1alpha1 coordination.k8s.io/v1alpha2 coordination.k8s.io/v1beta1 coordination.k8s.io/v1 discovery.k8s.io/v1 discovery.k8s.io/v1beta1 events.k8s.io/v1 events.k8s.io/v1beta1 extensions/v1beta1 flowcontrol.apiserver.k8s.io/v1 flowcontrol.apiserver.k8s.io/v1beta1 flowcontrol.apiserver.k8s.io/v1beta2 flowcontrol.apiserver.k8s.io/v1beta3 networking.k8s.io/v1 networking.k8s.io/v1beta1 node.k8s.io/v1 node.k8s.io/v1alpha1 node.k8s.io/v1beta1 policy/v1 policy/v1beta1 rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1beta1 rbac.authorization.k8s.io/v1alpha1 resource.k8s.io/v1 resource.k8s.io/v1beta2 resource.k8s.io/v1beta1 resource.k8s.io/v1alpha3 scheduling.k8s.io/v1alpha1 scheduling.k8s.io/v1beta1 scheduling.k8s.io/v1 storage.k8s.io/v1beta1 storage.k8s.io/v1 storage.k8s.io/v1alpha1 storagemigration.k8s.io/v1beta1 apiextensions.k8s.io/v1beta1 apiextensions.k8s.io/v1";

/// Helm's default capabilities for `helm template` 4.1.4.
pub fn capabilities() -> Value {
    capabilities_for("v1.35.0", &[])
}

/// Capabilities for `--kube-version` and extra `--api-versions`.
pub fn capabilities_for(kube_version: &str, extra_api_versions: &[&str]) -> Value {
    let trimmed = kube_version.trim_start_matches('v');
    let mut parts = trimmed.split('.');
    let major = parts.next().unwrap_or("1").to_owned();
    let minor = parts.next().unwrap_or("0").to_owned();
    let mut api_versions: Vec<String> =
        DEFAULT_API_VERSIONS.split(' ').map(str::to_owned).collect();
    api_versions.extend(extra_api_versions.iter().map(|s| s.to_string()));
    Capabilities {
        kube_version: format!("v{trimmed}"),
        kube_normalized_version: format!("v{trimmed}"),
        kube_major: major,
        kube_minor: minor,
        api_versions,
        helm_version: HelmVersion {
            version: "v4.1.4".into(),
            git_commit: "05fa37973dc9e42b76e1d2883494c87174b6074f".into(),
            git_tree_state: "clean".into(),
            go_version: "go1.25.9".into(),
            kube_client_version: "v1.35".into(),
        },
    }
    .into_value()
}

/// `.Chart` as Helm 4 exposes it: the metadata under Go field names.
pub fn chart_metadata(node: &chartkit_yaml::Node, is_root: bool) -> Value {
    let mut m = Entries::new();
    let fields = [
        ("name", "Name"),
        ("version", "Version"),
        ("appVersion", "AppVersion"),
        ("apiVersion", "APIVersion"),
        ("description", "Description"),
        ("home", "Home"),
        ("icon", "Icon"),
        ("type", "Type"),
        ("kubeVersion", "KubeVersion"),
        ("condition", "Condition"),
        ("tags", "Tags"),
    ];
    for (yaml, go) in fields {
        let text = node
            .get(yaml)
            .and_then(|n| n.to_go_string())
            .unwrap_or_default();
        m.insert(go.into(), Value::string(text));
    }
    for (yaml, go) in [
        ("keywords", "Keywords"),
        ("sources", "Sources"),
        ("maintainers", "Maintainers"),
        ("dependencies", "Dependencies"),
    ] {
        let v = node
            .get(yaml)
            .and_then(|n| n.to_value().ok())
            .map(|d| Value::from_data(&d))
            .unwrap_or_else(|| Value::list(Vec::new()));
        m.insert(go.into(), v);
    }
    let annotations = node
        .get("annotations")
        .and_then(|n| n.to_value().ok())
        .map(|d| Value::from_data(&d))
        .unwrap_or_else(Value::empty_map);
    m.insert("Annotations".into(), annotations);
    m.insert("Deprecated".into(), Value::Bool(false));
    m.insert("IsRoot".into(), Value::Bool(is_root));
    Value::map(m)
}

/// Points the shared top-level data at the template about to render, as Helm does by
/// setting `vals["Template"]` on the map all of a chart's templates share.
pub fn set_template(data: &Value, chart: &Chart, template: &str) {
    if let Value::Map(m) = data {
        let mut tmpl = Entries::new();
        tmpl.insert("Name".into(), Value::str(template));
        tmpl.insert(
            "BasePath".into(),
            Value::string(format!("{}/templates", chart.path)),
        );
        m.borrow_mut()
            .insert("Template".into(), Value::map_of(MapKind::Values, tmpl));
    }
}

/// The top-level data Helm passes to a chart's templates (values not coalesced: each
/// chart sees its own defaults).
pub fn render_data(chart: &Chart, is_root: bool, template: &str) -> Value {
    render_data_with(chart, is_root, template, capabilities())
}

/// Like [`render_data`], with the given capabilities.
pub fn render_data_with(chart: &Chart, is_root: bool, template: &str, caps: Value) -> Value {
    let mut top = Entries::new();
    top.insert("Values".into(), Value::values_from_data(&chart.values));
    top.insert("Chart".into(), chart_metadata(&chart.metadata, is_root));
    let mut release = Entries::new();
    release.insert("Name".into(), Value::str("rel"));
    release.insert("Namespace".into(), Value::str("ns"));
    release.insert("IsInstall".into(), Value::Bool(true));
    release.insert("IsUpgrade".into(), Value::Bool(false));
    release.insert("Revision".into(), Value::Int(1));
    release.insert("Service".into(), Value::str("Helm"));
    top.insert("Release".into(), Value::map(release));
    top.insert("Capabilities".into(), caps);
    top.insert("Files".into(), Files::new(chart.files.clone()).into_value());
    top.insert("Subcharts".into(), Value::empty_map());
    let mut tmpl = Entries::new();
    tmpl.insert("Name".into(), Value::str(template));
    tmpl.insert(
        "BasePath".into(),
        Value::string(format!("{}/templates", chart.path)),
    );
    top.insert("Template".into(), Value::map_of(MapKind::Values, tmpl));
    Value::map_of(MapKind::Values, top)
}
