//! A release record as Helm 4 stores it (`pkg/release/v1`, with the chart of
//! `pkg/chart/v2`): every field Helm's JSON carries, read as Go's decoder reads it and
//! written in Go's field order with Go's empty-field rules, so a record helm wrote comes
//! back out byte for byte.

use std::collections::BTreeMap;

use chartkit_yaml::{Map, Value};
use serde_json::Value as Json;

use crate::json::{FieldTypeError, Fields, Obj};
use crate::status::Status;
use crate::time::GoTime;

/// One revision of a release.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Release {
    pub name: String,
    /// Go's pointer: `None` is a record without `info`.
    pub info: Option<Info>,
    pub chart: Option<Chart>,
    /// The user-supplied values; `None` is Go's nil map (`get values` prints `null`).
    pub config: Option<Map>,
    pub manifest: String,
    pub hooks: Vec<Option<Hook>>,
    /// The revision, from 1.
    pub version: i64,
    pub namespace: String,
    /// Not in the JSON: the storage object's labels (see the drivers for which).
    pub labels: BTreeMap<String, String>,
    /// `csa`, `ssa`, or empty for a record from before Helm 4 (client-side apply).
    pub apply_method: String,
}

/// What happened to a revision and when.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Info {
    pub first_deployed: Option<GoTime>,
    pub last_deployed: Option<GoTime>,
    pub deleted: Option<GoTime>,
    pub description: String,
    pub status: Status,
    pub notes: String,
    /// Objects of the release read from the cluster, grouped by `version/Kind`; only
    /// `status` fills this, it is never stored.
    pub resources: BTreeMap<String, Vec<Json>>,
}

/// A hook of the release (a template with `helm.sh/hook`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hook {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub manifest: String,
    pub events: Vec<String>,
    pub last_run: HookExecution,
    pub weight: i64,
    pub delete_policies: Vec<String>,
    pub output_log_policies: Vec<String>,
}

/// The last run of a hook.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookExecution {
    pub started_at: Option<GoTime>,
    pub completed_at: Option<GoTime>,
    /// `Unknown`, `Running`, `Succeeded`, `Failed`, or empty when never run.
    pub phase: String,
}

/// The chart as the release stored it: its own files only (Helm does not serialise
/// subcharts into a record).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chart {
    pub metadata: Option<Metadata>,
    pub lock: Option<Lock>,
    /// `None` is Go's nil slice (`null`), distinct from an empty list.
    pub templates: Option<Vec<Option<File>>>,
    pub values: Option<Map>,
    pub schema: Option<Vec<u8>>,
    /// Always written, zero or not (its tag's `omitempty` does nothing for a struct).
    pub schema_mod_time: Option<GoTime>,
    pub files: Option<Vec<Option<File>>>,
    pub mod_time: Option<GoTime>,
}

/// A file of the chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct File {
    pub name: String,
    pub data: Option<Vec<u8>>,
    pub mod_time: Option<GoTime>,
}

/// Chart.yaml as stored in a record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    pub name: String,
    pub home: String,
    pub sources: Vec<String>,
    pub version: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Option<Maintainer>>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: BTreeMap<String, String>,
    pub kube_version: String,
    pub dependencies: Vec<Option<Dependency>>,
    pub chart_type: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    pub import_values: Vec<Value>,
    pub alias: String,
}

/// Chart.lock as stored in a record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lock {
    pub generated: Option<GoTime>,
    pub digest: String,
    pub dependencies: Option<Vec<Option<Dependency>>>,
}

impl Release {
    /// A record from its JSON, as Go's `json.Unmarshal` fills `release.Release`.
    pub fn from_json(bytes: &[u8]) -> Result<Release, RecordJsonError> {
        let json: Json =
            serde_json::from_slice(bytes).map_err(|e| RecordJsonError::Syntax(e.to_string()))?;
        Ok(Release::decode(&json)?)
    }

    fn decode(json: &Json) -> Result<Release, FieldTypeError> {
        let f = Fields::of("Release", json)?;
        let hooks = match f.array("hooks")? {
            None => Vec::new(),
            Some(items) => items
                .iter()
                .map(optional(Hook::decode))
                .collect::<Result<_, _>>()?,
        };
        Ok(Release {
            name: f.string("name")?,
            info: f.get("info").map(Info::decode).transpose()?,
            chart: f.get("chart").map(Chart::decode).transpose()?,
            config: f.values("config")?,
            manifest: f.string("manifest")?,
            hooks,
            version: f.int("version")?,
            namespace: f.string("namespace")?,
            labels: BTreeMap::new(),
            apply_method: f.string("apply_method")?,
        })
    }

    /// The record as Go's `json.Marshal` writes it.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    pub(crate) fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.string_nonempty("name", &self.name);
        if let Some(info) = &self.info {
            info.write(o.key("info"));
        }
        if let Some(chart) = &self.chart {
            chart.write(o.key("chart"));
        }
        if self.config.as_ref().is_some_and(|c| !c.is_empty()) {
            o.values("config", &self.config);
        }
        o.string_nonempty("manifest", &self.manifest);
        if !self.hooks.is_empty() {
            let out = o.key("hooks");
            write_list(out, &self.hooks, Hook::write);
        }
        if self.version != 0 {
            o.int("version", self.version);
        }
        o.string_nonempty("namespace", &self.namespace);
        o.string_nonempty("apply_method", &self.apply_method);
        o.end();
    }

    /// The status, empty when the record has no info.
    pub fn status(&self) -> Status {
        self.info
            .as_ref()
            .map(|i| i.status.clone())
            .unwrap_or_default()
    }

    /// When the revision was last deployed (zero without info).
    pub fn last_deployed(&self) -> Option<GoTime> {
        self.info.as_ref().and_then(|i| i.last_deployed)
    }

    /// The stored metadata, when the record has a chart with metadata.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.chart.as_ref().and_then(|c| c.metadata.as_ref())
    }

    /// `NAME-VERSION` of the chart, or helm's `MISSING` for a record without metadata.
    pub fn chart_label(&self) -> String {
        match self.metadata() {
            Some(m) => format!("{}-{}", m.name, m.version),
            None => "MISSING".to_owned(),
        }
    }

    /// The chart's appVersion, or helm's `MISSING` for a record without metadata.
    pub fn app_version_label(&self) -> String {
        match self.metadata() {
            Some(m) => m.app_version.clone(),
            None => "MISSING".to_owned(),
        }
    }
}

/// A release's JSON that helm could not read either.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordJsonError {
    #[error("{0}")]
    Syntax(String),
    #[error(transparent)]
    Field(#[from] FieldTypeError),
}

fn optional<T>(
    decode: fn(&Json) -> Result<T, FieldTypeError>,
) -> impl Fn(&Json) -> Result<Option<T>, FieldTypeError> {
    move |item| {
        if item.is_null() {
            Ok(None)
        } else {
            decode(item).map(Some)
        }
    }
}

fn write_list<T>(out: &mut String, items: &[Option<T>], write: fn(&T, &mut String)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match item {
            Some(item) => write(item, out),
            None => out.push_str("null"),
        }
    }
    out.push(']');
}

impl Info {
    fn decode(json: &Json) -> Result<Info, FieldTypeError> {
        let f = Fields::of("Info", json)?;
        let mut resources = BTreeMap::new();
        if let Some(value) = f.get("resources") {
            let Json::Object(map) = value else {
                return Err(f.error("resources", value, "map[string][]runtime.Object"));
            };
            for (kind, objects) in map {
                let list = match objects {
                    Json::Array(items) => items.clone(),
                    Json::Null => Vec::new(),
                    other => return Err(f.error("resources", other, "[]runtime.Object")),
                };
                resources.insert(kind.clone(), list);
            }
        }
        Ok(Info {
            first_deployed: f.time("first_deployed")?,
            last_deployed: f.time("last_deployed")?,
            deleted: f.time("deleted")?,
            description: f.string("description")?,
            status: Status::parse(&f.string("status")?),
            notes: f.string("notes")?,
            resources,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.time_nonzero("first_deployed", &self.first_deployed);
        o.time_nonzero("last_deployed", &self.last_deployed);
        o.time_nonzero("deleted", &self.deleted);
        o.string_nonempty("description", &self.description);
        o.string_nonempty("status", self.status.as_str());
        o.string_nonempty("notes", &self.notes);
        if !self.resources.is_empty() {
            let out = o.key("resources");
            out.push('{');
            for (i, (kind, objects)) in self.resources.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                chartkit_yaml::gojson::write_string(out, kind);
                out.push(':');
                out.push('[');
                for (j, object) in objects.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    crate::json::write_json(out, object);
                }
                out.push(']');
            }
            out.push('}');
        }
        o.end();
    }
}

impl Hook {
    fn decode(json: &Json) -> Result<Hook, FieldTypeError> {
        let f = Fields::of("Hook", json)?;
        Ok(Hook {
            name: f.string("name")?,
            kind: f.string("kind")?,
            path: f.string("path")?,
            manifest: f.string("manifest")?,
            events: f.strings("events")?,
            last_run: HookExecution::decode(f.get("last_run").unwrap_or(&Json::Null))?,
            weight: f.int("weight")?,
            delete_policies: f.strings("delete_policies")?,
            output_log_policies: f.strings("output_log_policies")?,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.string_nonempty("name", &self.name);
        o.string_nonempty("kind", &self.kind);
        o.string_nonempty("path", &self.path);
        o.string_nonempty("manifest", &self.manifest);
        if !self.events.is_empty() {
            o.strings("events", &self.events);
        }
        self.last_run.write(o.key("last_run"));
        if self.weight != 0 {
            o.int("weight", self.weight);
        }
        if !self.delete_policies.is_empty() {
            o.strings("delete_policies", &self.delete_policies);
        }
        if !self.output_log_policies.is_empty() {
            o.strings("output_log_policies", &self.output_log_policies);
        }
        o.end();
    }
}

impl HookExecution {
    fn decode(json: &Json) -> Result<HookExecution, FieldTypeError> {
        let f = Fields::of("HookExecution", json)?;
        Ok(HookExecution {
            started_at: f.time("started_at")?,
            completed_at: f.time("completed_at")?,
            phase: f.string("phase")?,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.time_nonzero("started_at", &self.started_at);
        o.time_nonzero("completed_at", &self.completed_at);
        o.string("phase", &self.phase);
        o.end();
    }
}

impl Chart {
    fn decode(json: &Json) -> Result<Chart, FieldTypeError> {
        let f = Fields::of("Chart", json)?;
        let files = |name: &str| -> Result<Option<Vec<Option<File>>>, FieldTypeError> {
            f.array(name)?
                .map(|items| items.iter().map(optional(File::decode)).collect())
                .transpose()
        };
        Ok(Chart {
            metadata: f.get("metadata").map(Metadata::decode).transpose()?,
            lock: f.get("lock").map(Lock::decode).transpose()?,
            templates: files("templates")?,
            values: f.values("values")?,
            schema: f.bytes("schema")?,
            schema_mod_time: f.time("schemamodtime")?,
            files: files("files")?,
            mod_time: f.time("modtime")?,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        match &self.metadata {
            Some(m) => m.write(o.key("metadata")),
            None => o.raw("metadata", "null"),
        }
        match &self.lock {
            Some(l) => l.write(o.key("lock")),
            None => o.raw("lock", "null"),
        }
        write_files(o.key("templates"), &self.templates);
        o.values("values", &self.values);
        o.bytes("schema", &self.schema);
        o.time("schemamodtime", &self.schema_mod_time);
        write_files(o.key("files"), &self.files);
        o.time_nonzero("modtime", &self.mod_time);
        o.end();
    }
}

fn write_files(out: &mut String, files: &Option<Vec<Option<File>>>) {
    match files {
        Some(files) => write_list(out, files, File::write),
        None => out.push_str("null"),
    }
}

impl File {
    fn decode(json: &Json) -> Result<File, FieldTypeError> {
        let f = Fields::of("File", json)?;
        Ok(File {
            name: f.string("name")?,
            data: f.bytes("data")?,
            mod_time: f.time("modtime")?,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.string("name", &self.name);
        o.bytes("data", &self.data);
        o.time_nonzero("modtime", &self.mod_time);
        o.end();
    }
}

impl Metadata {
    fn decode(json: &Json) -> Result<Metadata, FieldTypeError> {
        let f = Fields::of("Metadata", json)?;
        let maintainers = match f.array("maintainers")? {
            None => Vec::new(),
            Some(items) => items
                .iter()
                .map(optional(Maintainer::decode))
                .collect::<Result<_, _>>()?,
        };
        Ok(Metadata {
            name: f.string("name")?,
            home: f.string("home")?,
            sources: f.strings("sources")?,
            version: f.string("version")?,
            description: f.string("description")?,
            keywords: f.strings("keywords")?,
            maintainers,
            icon: f.string("icon")?,
            api_version: f.string("apiVersion")?,
            condition: f.string("condition")?,
            tags: f.string("tags")?,
            app_version: f.string("appVersion")?,
            deprecated: f.bool("deprecated")?,
            annotations: f.string_map("annotations")?,
            kube_version: f.string("kubeVersion")?,
            dependencies: decode_dependencies(&f)?.unwrap_or_default(),
            chart_type: f.string("type")?,
        })
    }

    /// Go's `json.Marshal` of the metadata.
    pub fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.string_nonempty("name", &self.name);
        o.string_nonempty("home", &self.home);
        if !self.sources.is_empty() {
            o.strings("sources", &self.sources);
        }
        o.string_nonempty("version", &self.version);
        o.string_nonempty("description", &self.description);
        if !self.keywords.is_empty() {
            o.strings("keywords", &self.keywords);
        }
        if !self.maintainers.is_empty() {
            write_list(o.key("maintainers"), &self.maintainers, Maintainer::write);
        }
        o.string_nonempty("icon", &self.icon);
        o.string_nonempty("apiVersion", &self.api_version);
        o.string_nonempty("condition", &self.condition);
        o.string_nonempty("tags", &self.tags);
        o.string_nonempty("appVersion", &self.app_version);
        if self.deprecated {
            o.raw("deprecated", "true");
        }
        if !self.annotations.is_empty() {
            o.string_map("annotations", &self.annotations);
        }
        o.string_nonempty("kubeVersion", &self.kube_version);
        if !self.dependencies.is_empty() {
            write_list(o.key("dependencies"), &self.dependencies, Dependency::write);
        }
        o.string_nonempty("type", &self.chart_type);
        o.end();
    }
}

fn decode_dependencies(f: &Fields<'_>) -> Result<Option<Vec<Option<Dependency>>>, FieldTypeError> {
    f.array("dependencies")?
        .map(|items| items.iter().map(optional(Dependency::decode)).collect())
        .transpose()
}

impl Maintainer {
    fn decode(json: &Json) -> Result<Maintainer, FieldTypeError> {
        let f = Fields::of("Maintainer", json)?;
        Ok(Maintainer {
            name: f.string("name")?,
            email: f.string("email")?,
            url: f.string("url")?,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.string_nonempty("name", &self.name);
        o.string_nonempty("email", &self.email);
        o.string_nonempty("url", &self.url);
        o.end();
    }
}

impl Dependency {
    fn decode(json: &Json) -> Result<Dependency, FieldTypeError> {
        let f = Fields::of("Dependency", json)?;
        let import_values = match f.array("import-values")? {
            None => Vec::new(),
            Some(items) => items
                .iter()
                .map(chartkit_values::strvals::from_json)
                .collect(),
        };
        Ok(Dependency {
            name: f.string("name")?,
            version: f.string("version")?,
            repository: f.string("repository")?,
            condition: f.string("condition")?,
            tags: f.strings("tags")?,
            enabled: f.bool("enabled")?,
            import_values,
            alias: f.string("alias")?,
        })
    }

    /// Go's `json.Marshal` of a dependency.
    pub fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.string("name", &self.name);
        o.string_nonempty("version", &self.version);
        o.string("repository", &self.repository);
        o.string_nonempty("condition", &self.condition);
        if !self.tags.is_empty() {
            o.strings("tags", &self.tags);
        }
        if self.enabled {
            o.raw("enabled", "true");
        }
        if !self.import_values.is_empty() {
            let out = o.key("import-values");
            out.push('[');
            for (i, v) in self.import_values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                chartkit_yaml::gojson::write_value(out, v);
            }
            out.push(']');
        }
        o.string_nonempty("alias", &self.alias);
        o.end();
    }
}

impl Lock {
    fn decode(json: &Json) -> Result<Lock, FieldTypeError> {
        let f = Fields::of("Lock", json)?;
        Ok(Lock {
            generated: f.time("generated")?,
            digest: f.string("digest")?,
            dependencies: decode_dependencies(&f)?,
        })
    }

    fn write(&self, out: &mut String) {
        let mut o = Obj::start(out);
        o.time("generated", &self.generated);
        o.string("digest", &self.digest);
        match &self.dependencies {
            Some(deps) => write_list(o.key("dependencies"), deps, Dependency::write),
            None => o.raw("dependencies", "null"),
        }
        o.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record in the shape helm 4.1 writes (fields, order and empty-field rules as
    /// `json.Marshal` produces them), with every kind of field filled.
    const RECORD: &str = r#"{"name":"web","info":{"first_deployed":"2026-05-01T10:00:00.123456789Z","last_deployed":"2026-05-01T10:05:00.5+02:00","description":"Upgrade complete","status":"deployed","notes":"Visit \u003chttp://x\u003e \u0026 enjoy\n"},"chart":{"metadata":{"name":"podinfo","home":"https://x","sources":["https://s"],"version":"6.5.0","description":"d","keywords":["k"],"maintainers":[{"name":"m","email":"e@x"}],"apiVersion":"v2","appVersion":"6.5.0","annotations":{"a":"1","b":"2"},"kubeVersion":"\u003e=1.23.0-0","dependencies":[{"name":"sub","version":"1.x","repository":"","condition":"sub.enabled","enabled":true,"import-values":["x",{"child":"a","parent":"b"}]}],"type":"application"},"lock":{"generated":"2026-01-01T00:00:00Z","digest":"sha256:ab","dependencies":[{"name":"sub","version":"1.2.3","repository":"https://r"}]},"templates":[{"name":"templates/a.yaml","data":"YTogMQo=","modtime":"2026-04-01T01:02:03Z"}],"values":{"big":1e+21,"n":1.5,"nested":{"list":[1,"two",null,true]},"replicas":1},"schema":null,"schemamodtime":"0001-01-01T00:00:00Z","files":[{"name":"README.md","data":""}],"modtime":"2026-04-01T01:02:03Z"},"config":{"replicaCount":2},"manifest":"---\n# Source: a\nkind: X\n","hooks":[{"name":"t","kind":"Pod","path":"templates/t.yaml","manifest":"kind: Pod","events":["test"],"last_run":{"started_at":"2026-05-01T10:06:00Z","completed_at":"2026-05-01T10:06:01Z","phase":"Succeeded"},"weight":-5,"delete_policies":["before-hook-creation"]},{"name":"u","last_run":{"phase":""}}],"version":3,"namespace":"apps","apply_method":"ssa"}"#;

    #[test]
    fn round_trips_byte_for_byte() {
        let rel = Release::from_json(RECORD.as_bytes()).unwrap();
        assert_eq!(rel.to_json(), RECORD);
        assert_eq!(rel.status(), Status::Deployed);
        assert_eq!(rel.chart_label(), "podinfo-6.5.0");
        let values = rel.chart.as_ref().unwrap().values.as_ref().unwrap();
        assert_eq!(values["replicas"], Value::Float(1.0));
    }

    #[test]
    fn empty_and_nil_stay_apart() {
        let rel = Release::from_json(
            br#"{"name":"a","chart":{"metadata":null,"lock":null,"templates":[],"values":{},"schema":"","schemamodtime":"0001-01-01T00:00:00Z","files":null}}"#,
        )
        .unwrap();
        let chart = rel.chart.as_ref().unwrap();
        assert_eq!(chart.templates, Some(vec![]));
        assert_eq!(chart.files, None);
        assert_eq!(chart.schema, Some(vec![]));
        assert_eq!(
            rel.to_json(),
            r#"{"name":"a","chart":{"metadata":null,"lock":null,"templates":[],"values":{},"schema":"","schemamodtime":"0001-01-01T00:00:00Z","files":null}}"#
        );
    }

    #[test]
    fn reads_as_go_does() {
        // Empty-string times are zero (Helm 4's Info and HookExecution decoders), keys
        // match without regard to case, and the later of two matching keys wins.
        let rel = Release::from_json(
            br#"{"NAME":"x","name":"y","info":{"first_deployed":"","status":"failed"},"Version":2,"config":{}}"#,
        )
        .unwrap();
        assert_eq!(rel.name, "y");
        assert_eq!(rel.version, 2);
        assert_eq!(rel.info.as_ref().unwrap().first_deployed, None);
        assert_eq!(rel.config, Some(Map::new()));
        // An empty config is left out, as `omitempty` leaves out an empty map.
        assert_eq!(
            rel.to_json(),
            r#"{"name":"y","info":{"status":"failed"},"version":2}"#
        );
    }

    #[test]
    fn type_errors_name_the_field() {
        let err = Release::from_json(br#"{"name":"a","version":"2"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "json: cannot unmarshal string into Go struct field Release.version of type int"
        );
        assert!(Release::from_json(b"{").is_err());
    }
}
