//! Helm's chart manifests: what `helm push` writes, byte for byte, so that a package
//! pushed by helm and by chartkit has one manifest digest, and what a pull reads back.
//!
//! helm marshals an `ocispec.Manifest` with Go's `encoding/json`: fields in struct order,
//! empty ones left out (no top-level `mediaType`), annotation keys sorted, `<`, `>` and
//! `&` escaped. The config blob is `json.Marshal` of the chart's `Metadata` as its loader
//! left it. Layers are sorted by digest.

use std::collections::BTreeMap;

use chartkit_chart::{Dependency, Maintainer, Metadata};
use chartkit_yaml::gojson::{write_string, write_value};
use sha2::{Digest, Sha256};

use crate::error::OciError;

pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
pub const CHART_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
pub const PROV_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.provenance.v1.prov";
/// What charts pushed before Helm 3.7 used; still read.
pub const LEGACY_CHART_MEDIA_TYPE: &str = "application/tar+gzip";

/// A content descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    pub media_type: String,
    /// `sha256:<hex>`.
    pub digest: String,
    pub size: u64,
}

impl Descriptor {
    /// The descriptor of `bytes`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_owned(),
            digest: digest_of(bytes),
            size: bytes.len() as u64,
        }
    }

    fn write(&self, out: &mut String) {
        out.push_str("{\"mediaType\":");
        write_string(out, &self.media_type);
        out.push_str(",\"digest\":");
        write_string(out, &self.digest);
        out.push_str(&format!(",\"size\":{}}}", self.size));
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A chart's manifest, read from a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartManifest {
    pub config: Descriptor,
    pub chart: Descriptor,
    pub prov: Option<Descriptor>,
    pub annotations: BTreeMap<String, String>,
}

impl ChartManifest {
    /// Reads a manifest's bytes and finds Helm's config, chart and provenance layers in it,
    /// as helm's `processChartPull` does.
    pub fn parse(bytes: &[u8], reference: &str) -> Result<ChartManifest, OciError> {
        let not_a_chart = |reason: String| OciError::NotAChart {
            reference: reference.to_owned(),
            reason,
        };
        let json: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| not_a_chart(format!("its manifest is not JSON ({e})")))?;
        if let Some(media_type) = json.get("mediaType").and_then(|m| m.as_str())
            && media_type == INDEX_MEDIA_TYPE
        {
            return Err(not_a_chart(
                "it is an image index, not a chart manifest".to_owned(),
            ));
        }
        let descriptor = |value: &serde_json::Value| -> Option<Descriptor> {
            Some(Descriptor {
                media_type: value.get("mediaType")?.as_str()?.to_owned(),
                digest: value.get("digest")?.as_str()?.to_owned(),
                size: value.get("size")?.as_u64()?,
            })
        };
        let config = json
            .get("config")
            .and_then(descriptor)
            .filter(|d| d.media_type == CONFIG_MEDIA_TYPE)
            .ok_or_else(|| {
                not_a_chart(format!(
                    "could not load config with mediatype {CONFIG_MEDIA_TYPE}"
                ))
            })?;
        let mut chart = None;
        let mut prov = None;
        for layer in json
            .get("layers")
            .and_then(|l| l.as_array())
            .into_iter()
            .flatten()
        {
            let Some(d) = descriptor(layer) else { continue };
            match d.media_type.as_str() {
                CHART_MEDIA_TYPE | LEGACY_CHART_MEDIA_TYPE => chart = Some(d),
                PROV_MEDIA_TYPE => prov = Some(d),
                _ => {}
            }
        }
        let chart = chart.ok_or_else(|| {
            not_a_chart(format!(
                "manifest does not contain a layer with mediatype {CHART_MEDIA_TYPE}"
            ))
        })?;
        for d in std::iter::once(&config)
            .chain(Some(&chart))
            .chain(prov.as_ref())
        {
            if !crate::reference::valid_digest(&d.digest) {
                return Err(not_a_chart(format!(
                    "the layer {} has the digest {:?}, which is not a sha256",
                    d.media_type, d.digest
                )));
            }
        }
        let annotations = json
            .get("annotations")
            .and_then(|a| a.as_object())
            .map(|a| {
                a.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Ok(ChartManifest {
            config,
            chart,
            prov,
            annotations,
        })
    }
}

/// What `helm push` uploads for one package: the config blob, the layers and the
/// manifest, each with its bytes.
#[derive(Debug, Clone)]
pub struct HelmArtifact {
    pub config: Vec<u8>,
    pub manifest: Vec<u8>,
    /// `(descriptor, bytes)` of the config, chart and provenance blobs.
    pub blobs: Vec<(Descriptor, Vec<u8>)>,
    pub chart: Descriptor,
}

impl HelmArtifact {
    /// Helm's manifest for `package` (whose loaded metadata is `metadata`), with the
    /// `.prov` as a layer when given and `created` (RFC 3339, the package file's
    /// modification time in helm) as the creation annotation.
    pub fn new(
        metadata: &Metadata,
        package: Vec<u8>,
        prov: Option<Vec<u8>>,
        created: &str,
    ) -> HelmArtifact {
        let config = config_json(metadata).into_bytes();
        let config_descriptor = Descriptor::of(CONFIG_MEDIA_TYPE, &config);
        let chart = Descriptor::of(CHART_MEDIA_TYPE, &package);
        let mut layers = vec![(chart.clone(), package)];
        if let Some(prov) = prov {
            layers.push((Descriptor::of(PROV_MEDIA_TYPE, &prov), prov));
        }
        layers.sort_by(|a, b| a.0.digest.cmp(&b.0.digest));
        let annotations = annotations(metadata, created);
        let mut manifest = String::from("{\"schemaVersion\":2,\"config\":");
        config_descriptor.write(&mut manifest);
        manifest.push_str(",\"layers\":[");
        for (i, (d, _)) in layers.iter().enumerate() {
            if i > 0 {
                manifest.push(',');
            }
            d.write(&mut manifest);
        }
        manifest.push_str("],\"annotations\":");
        write_string_map(&mut manifest, &annotations);
        manifest.push('}');
        let mut blobs = vec![(config_descriptor, config.clone())];
        blobs.extend(layers);
        HelmArtifact {
            config,
            manifest: manifest.into_bytes(),
            blobs,
            chart,
        }
    }

    /// The manifest's digest.
    pub fn digest(&self) -> String {
        digest_of(&self.manifest)
    }
}

/// Helm's OCI annotations: description, title, version, url, created, source and
/// authors from Chart.yaml, then the chart's own annotations (which may not replace the
/// title or version).
pub fn annotations(metadata: &Metadata, created: &str) -> BTreeMap<String, String> {
    const PREFIX: &str = "org.opencontainers.image.";
    let mut map = BTreeMap::new();
    let mut add = |key: &str, value: &str| {
        if !value.trim().is_empty() {
            map.insert(format!("{PREFIX}{key}"), value.to_owned());
        }
    };
    add("description", &metadata.description);
    add("title", &metadata.name);
    add("version", &metadata.version);
    add("url", &metadata.home);
    add("created", created);
    if let Some(source) = metadata.sources.first() {
        add("source", source);
    }
    if !metadata.maintainers.is_empty() {
        let authors: Vec<String> = metadata
            .maintainers
            .iter()
            .map(|m| match m {
                Some(m) if !m.email.is_empty() => format!("{} ({})", m.name, m.email),
                Some(m) => m.name.clone(),
                None => String::new(),
            })
            .collect();
        add("authors", &authors.join(", "));
    }
    for (key, value) in &metadata.annotations {
        if key != &format!("{PREFIX}version") && key != &format!("{PREFIX}title") {
            map.insert(key.clone(), value.clone());
        }
    }
    map
}

/// A time as Go's `time.RFC3339` writes it in the local zone (`Z` for UTC).
pub fn rfc3339(time: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Go's `json.Marshal` of a chart's `Metadata` (every field `omitempty`).
pub fn config_json(m: &Metadata) -> String {
    let mut o = Obj::new();
    o.string("name", &m.name);
    o.string("home", &m.home);
    o.strings("sources", &m.sources);
    o.string("version", &m.version);
    o.string("description", &m.description);
    o.strings("keywords", &m.keywords);
    if !m.maintainers.is_empty() {
        let items: Vec<String> = m.maintainers.iter().map(maintainer_json).collect();
        o.raw("maintainers", &format!("[{}]", items.join(",")));
    }
    o.string("icon", &m.icon);
    o.string("apiVersion", &m.api_version);
    o.string("condition", &m.condition);
    o.string("tags", &m.tags);
    o.string("appVersion", &m.app_version);
    if m.deprecated {
        o.raw("deprecated", "true");
    }
    if !m.annotations.is_empty() {
        let mut map = String::new();
        write_string_map(&mut map, &m.annotations);
        o.raw("annotations", &map);
    }
    o.string("kubeVersion", &m.kube_version);
    if !m.dependencies.is_empty() {
        let items: Vec<String> = m.dependencies.iter().map(dependency_json).collect();
        o.raw("dependencies", &format!("[{}]", items.join(",")));
    }
    o.string("type", &m.chart_type);
    o.finish()
}

fn maintainer_json(m: &Option<Maintainer>) -> String {
    let Some(m) = m else {
        return "null".into();
    };
    let mut o = Obj::new();
    o.string("name", &m.name);
    o.string("email", &m.email);
    o.string("url", &m.url);
    o.finish()
}

fn dependency_json(d: &Option<Dependency>) -> String {
    let Some(d) = d else {
        return "null".into();
    };
    let mut o = Obj::new();
    o.always("name", &d.name);
    o.string("version", &d.version);
    o.always("repository", &d.repository);
    o.string("condition", &d.condition);
    o.strings("tags", &d.tags);
    if d.enabled {
        o.raw("enabled", "true");
    }
    if !d.import_values.is_empty() {
        let mut list = String::from("[");
        for (i, v) in d.import_values.iter().enumerate() {
            if i > 0 {
                list.push(',');
            }
            write_value(&mut list, v);
        }
        list.push(']');
        o.raw("import-values", &list);
    }
    o.string("alias", &d.alias);
    o.finish()
}

fn write_string_map(out: &mut String, map: &BTreeMap<String, String>) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, k);
        out.push(':');
        write_string(out, v);
    }
    out.push('}');
}

/// A JSON object written field by field in Go's order.
struct Obj(String);

impl Obj {
    fn new() -> Obj {
        Obj(String::from("{"))
    }
    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        write_string(&mut self.0, key);
        self.0.push(':');
    }
    fn raw(&mut self, key: &str, json: &str) {
        self.key(key);
        self.0.push_str(json);
    }
    fn always(&mut self, key: &str, value: &str) {
        self.key(key);
        write_string(&mut self.0, value);
    }
    fn string(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.always(key, value);
        }
    }
    fn strings(&mut self, key: &str, values: &[String]) {
        if values.is_empty() {
            return;
        }
        self.key(key);
        self.0.push('[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.0.push(',');
            }
            write_string(&mut self.0, v);
        }
        self.0.push(']');
    }
    fn finish(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata() -> Metadata {
        Metadata::from_yaml(
            "apiVersion: v2\nname: web\nversion: 0.1.0\ndescription: A Helm chart for Kubernetes\ntype: application\nappVersion: \"1.16.0\"\n",
        )
        .unwrap()
    }

    #[test]
    fn the_manifest_is_helms_byte_for_byte() {
        // What helm 4.1.4 pushed for `helm create web` packaged, its file dated
        // 2026-01-02T03:04:05Z (the config and package digests are that push's).
        let config = config_json(&metadata());
        assert_eq!(
            config,
            r#"{"name":"web","version":"0.1.0","description":"A Helm chart for Kubernetes","apiVersion":"v2","appVersion":"1.16.0","type":"application"}"#
        );
        assert_eq!(config.len(), 137);
        assert_eq!(
            digest_of(config.as_bytes()),
            "sha256:a0f762e9dd25f3914ec4565f2d2bea16c380786ebc1b3f847c480557e236008e"
        );
        let artifact = HelmArtifact::new(&metadata(), vec![0; 10], None, "2026-01-02T03:04:05Z");
        let manifest = String::from_utf8(artifact.manifest.clone()).unwrap();
        assert_eq!(
            manifest,
            format!(
                r#"{{"schemaVersion":2,"config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"sha256:a0f762e9dd25f3914ec4565f2d2bea16c380786ebc1b3f847c480557e236008e","size":137}},"layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"{}","size":10}}],"annotations":{{"org.opencontainers.image.created":"2026-01-02T03:04:05Z","org.opencontainers.image.description":"A Helm chart for Kubernetes","org.opencontainers.image.title":"web","org.opencontainers.image.version":"0.1.0"}}}}"#,
                digest_of(&[0; 10])
            )
        );
        let parsed = ChartManifest::parse(&artifact.manifest, "r/web:0.1.0").unwrap();
        assert_eq!(parsed.chart, artifact.chart);
        assert_eq!(parsed.prov, None);
    }

    #[test]
    fn chart_annotations_are_added_but_cannot_rename_the_chart() {
        let mut m = metadata();
        m.annotations
            .insert("org.opencontainers.image.title".into(), "other".into());
        m.annotations.insert(
            "org.opencontainers.image.description".into(),
            "<d & e>".into(),
        );
        m.annotations.insert("x".into(), "y".into());
        m.maintainers = vec![
            Some(Maintainer {
                name: "a".into(),
                email: "a@x".into(),
                url: String::new(),
            }),
            Some(Maintainer {
                name: "b".into(),
                ..Maintainer::default()
            }),
        ];
        let map = annotations(&m, "t");
        assert_eq!(map["org.opencontainers.image.title"], "web");
        assert_eq!(map["org.opencontainers.image.description"], "<d & e>");
        assert_eq!(map["org.opencontainers.image.authors"], "a (a@x), b");
        assert_eq!(map["x"], "y");
        let artifact = HelmArtifact::new(&m, vec![1], Some(b"prov".to_vec()), "t");
        let text = String::from_utf8(artifact.manifest).unwrap();
        assert!(text.contains(r#""\u003cd \u0026 e\u003e""#), "{text}");
        assert_eq!(artifact.blobs.len(), 3);
    }

    #[test]
    fn manifests_without_helms_layers_are_not_charts() {
        let error = ChartManifest::parse(br#"{"schemaVersion":2,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:00","size":1},"layers":[]}"#, "r/img:1").unwrap_err();
        assert!(
            error.to_string().contains("could not load config"),
            "{error}"
        );
    }
}
