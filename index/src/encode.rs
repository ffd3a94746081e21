//! Writing an index exactly as Helm does: `yaml.Marshal` (JSON field rules, then go-yaml v2
//! with sorted keys) or `json.MarshalIndent` with two spaces. Output depends only on the
//! index, so it is deterministic.

use chartkit_yaml::Value;

use crate::gotime::ZERO_TIME;
use crate::model::{ChartVersion, IndexFile};
use crate::{ChartMetadata, Dependency, Maintainer};

/// A JSON value with object keys in output order (struct fields in declaration order, map
/// keys sorted), which is what Go's encoder produces.
#[derive(Debug, Clone, PartialEq)]
enum Out {
    Null,
    Bool(bool),
    Str(String),
    Value(Value),
    Seq(Vec<Out>),
    Obj(Vec<(String, Out)>),
}

struct Fields(Vec<(String, Out)>);

impl Fields {
    fn new() -> Fields {
        Fields(Vec::new())
    }
    fn put(&mut self, key: &str, value: Out) {
        self.0.push((key.to_owned(), value));
    }
    fn text(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.put(key, Out::Str(value.to_owned()));
        }
    }
    fn list(&mut self, key: &str, values: &[String]) {
        if !values.is_empty() {
            self.put(key, strings(values));
        }
    }
    fn flag(&mut self, key: &str, value: bool) {
        if value {
            self.put(key, Out::Bool(true));
        }
    }
}

fn strings(values: &[String]) -> Out {
    Out::Seq(values.iter().map(|s| Out::Str(s.clone())).collect())
}

fn sorted_strings<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a String)>) -> Out {
    let mut pairs: Vec<_> = pairs.into_iter().collect();
    pairs.sort();
    Out::Obj(
        pairs
            .into_iter()
            .map(|(k, v)| (k.clone(), Out::Str(v.clone())))
            .collect(),
    )
}

fn maintainer(m: &Option<Maintainer>) -> Out {
    let Some(m) = m else { return Out::Null };
    let mut f = Fields::new();
    f.text("name", &m.name);
    f.text("email", &m.email);
    f.text("url", &m.url);
    Out::Obj(f.0)
}

fn dependency(d: &Option<Dependency>) -> Out {
    let Some(d) = d else { return Out::Null };
    let mut f = Fields::new();
    f.put("name", Out::Str(d.name.clone()));
    f.text("version", &d.version);
    f.put("repository", Out::Str(d.repository.clone()));
    f.text("condition", &d.condition);
    f.list("tags", &d.tags);
    f.flag("enabled", d.enabled);
    if !d.import_values.is_empty() {
        f.put(
            "import-values",
            Out::Seq(d.import_values.iter().cloned().map(Out::Value).collect()),
        );
    }
    f.text("alias", &d.alias);
    Out::Obj(f.0)
}

fn metadata_fields(m: &ChartMetadata, f: &mut Fields) {
    f.text("name", &m.name);
    f.text("home", &m.home);
    f.list("sources", &m.sources);
    f.text("version", &m.version);
    f.text("description", &m.description);
    f.list("keywords", &m.keywords);
    if !m.maintainers.is_empty() {
        f.put(
            "maintainers",
            Out::Seq(m.maintainers.iter().map(maintainer).collect()),
        );
    }
    f.text("icon", &m.icon);
    f.text("apiVersion", &m.api_version);
    f.text("condition", &m.condition);
    f.text("tags", &m.tags);
    f.text("appVersion", &m.app_version);
    f.flag("deprecated", m.deprecated);
    if !m.annotations.is_empty() {
        f.put("annotations", sorted_strings(&m.annotations));
    }
    f.text("kubeVersion", &m.kube_version);
    if !m.dependencies.is_empty() {
        f.put(
            "dependencies",
            Out::Seq(m.dependencies.iter().map(dependency).collect()),
        );
    }
    f.text("type", &m.chart_type);
}

fn entry(v: &ChartVersion) -> Out {
    let mut f = Fields::new();
    metadata_fields(&v.metadata, &mut f);
    f.put("urls", v.urls.as_deref().map_or(Out::Null, strings));
    f.put(
        "created",
        Out::Str(
            v.created
                .as_ref()
                .map_or(ZERO_TIME, |t| t.as_str())
                .to_owned(),
        ),
    );
    f.flag("removed", v.removed);
    f.text("digest", &v.digest);
    f.text("checksum", &v.checksum);
    f.text("engine", &v.engine);
    f.text("tillerVersion", &v.tiller_version);
    f.text("url", &v.url);
    Out::Obj(f.0)
}

fn index(i: &IndexFile) -> Out {
    let mut f = Fields::new();
    if let Some(info) = i.server_info.as_ref().filter(|m| !m.is_empty()) {
        f.put("serverInfo", Out::Value(Value::Map(info.clone())));
    }
    f.put("apiVersion", Out::Str(i.api_version.clone()));
    f.put(
        "generated",
        Out::Str(
            i.generated
                .as_ref()
                .map_or(ZERO_TIME, |t| t.as_str())
                .to_owned(),
        ),
    );
    f.put(
        "entries",
        Out::Obj(
            i.entries
                .iter()
                .map(|(name, versions)| {
                    (name.clone(), Out::Seq(versions.iter().map(entry).collect()))
                })
                .collect(),
        ),
    );
    f.list("publicKeys", &i.public_keys);
    if !i.annotations.is_empty() {
        f.put("annotations", sorted_strings(&i.annotations));
    }
    Out::Obj(f.0)
}

fn to_value(out: Out) -> Value {
    match out {
        Out::Null => Value::Null,
        Out::Bool(b) => Value::Bool(b),
        Out::Str(s) => Value::String(s),
        Out::Value(v) => v,
        Out::Seq(items) => Value::Seq(items.into_iter().map(to_value).collect()),
        Out::Obj(pairs) => Value::Map(pairs.into_iter().map(|(k, v)| (k, to_value(v))).collect()),
    }
}

/// The index as `helm repo index` writes index.yaml.
pub fn to_yaml(i: &IndexFile) -> String {
    chartkit_yaml::to_yaml(&to_value(index(i)))
}

/// One chart's part of index.yaml: `  NAME:` and its versions, as [`to_yaml`] writes them
/// under `entries:`, without the final newline. index.yaml is `apiVersion: v1`,
/// `entries:`, each chart's part followed by a newline in go-yaml's key order
/// ([`chartkit_yaml::compare_keys`]), then `generated: ...`; a server can keep each
/// chart's part and re-render only the charts that change.
pub fn chart_entries_yaml(name: &str, versions: &[ChartVersion]) -> String {
    let mut map = chartkit_yaml::Map::new();
    map.insert(
        name.to_owned(),
        to_value(Out::Seq(versions.iter().map(entry).collect())),
    );
    chartkit_yaml::to_yaml_nested_map(&map, 2)
}

/// The index as `helm repo index --json` writes it (no trailing newline, like Go).
pub fn to_json(i: &IndexFile) -> String {
    let mut out = String::new();
    write_json(&mut out, &index(i), 0);
    out
}

/// One entry as compact JSON, the form the cache stores.
pub fn entry_to_json(v: &ChartVersion) -> String {
    let mut out = String::new();
    write_entry_json(&mut out, v);
    out
}

/// [`entry_to_json`], appended to `out`. Every entry of every index read goes through
/// this, so it writes the fields straight from the model, where the general writer first
/// builds a tree holding a copy of each text; the bytes are the same (a test compares
/// them).
pub(crate) fn write_entry_json(out: &mut String, v: &ChartVersion) {
    let m = &v.metadata;
    let mut entry = JsonObject::open(out);
    entry.text("name", &m.name);
    entry.text("home", &m.home);
    entry.list("sources", &m.sources);
    entry.text("version", &m.version);
    entry.text("description", &m.description);
    entry.list("keywords", &m.keywords);
    if !m.maintainers.is_empty() {
        let out = entry.key("maintainers");
        write_items(out, &m.maintainers, |out, maintainer| {
            let mut fields = JsonObject::open(out);
            fields.text("name", &maintainer.name);
            fields.text("email", &maintainer.email);
            fields.text("url", &maintainer.url);
            fields.close();
        });
    }
    entry.text("icon", &m.icon);
    entry.text("apiVersion", &m.api_version);
    entry.text("condition", &m.condition);
    entry.text("tags", &m.tags);
    entry.text("appVersion", &m.app_version);
    entry.flag("deprecated", m.deprecated);
    if !m.annotations.is_empty() {
        // A BTreeMap: already in the sorted order Go writes a map in.
        let mut annotations = JsonObject::open(entry.key("annotations"));
        for (key, value) in &m.annotations {
            chartkit_yaml::gojson::write_string(annotations.key(key), value);
        }
        annotations.close();
    }
    entry.text("kubeVersion", &m.kube_version);
    if !m.dependencies.is_empty() {
        let out = entry.key("dependencies");
        write_items(out, &m.dependencies, |out, d| {
            let mut fields = JsonObject::open(out);
            chartkit_yaml::gojson::write_string(fields.key("name"), &d.name);
            fields.text("version", &d.version);
            chartkit_yaml::gojson::write_string(fields.key("repository"), &d.repository);
            fields.text("condition", &d.condition);
            fields.list("tags", &d.tags);
            fields.flag("enabled", d.enabled);
            if !d.import_values.is_empty() {
                let out = fields.key("import-values");
                out.push('[');
                for (i, value) in d.import_values.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    chartkit_yaml::gojson::write_value(out, value);
                }
                out.push(']');
            }
            fields.text("alias", &d.alias);
            fields.close();
        });
    }
    entry.text("type", &m.chart_type);
    match &v.urls {
        Some(urls) => write_strings(entry.key("urls"), urls),
        None => entry.key("urls").push_str("null"),
    }
    let created = v.created.as_ref().map_or(ZERO_TIME, |t| t.as_str());
    chartkit_yaml::gojson::write_string(entry.key("created"), created);
    entry.flag("removed", v.removed);
    entry.text("digest", &v.digest);
    entry.text("checksum", &v.checksum);
    entry.text("engine", &v.engine);
    entry.text("tillerVersion", &v.tiller_version);
    entry.text("url", &v.url);
    entry.close();
}

/// A JSON object written member by member, leaving out what Go's `omitempty` leaves out.
struct JsonObject<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> JsonObject<'a> {
    fn open(out: &'a mut String) -> JsonObject<'a> {
        out.push('{');
        JsonObject { out, empty: true }
    }

    /// Starts a member: its value is written next, to what this returns.
    fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        chartkit_yaml::gojson::write_string(self.out, key);
        self.out.push(':');
        self.out
    }

    fn text(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            chartkit_yaml::gojson::write_string(self.key(key), value);
        }
    }

    fn list(&mut self, key: &str, values: &[String]) {
        if !values.is_empty() {
            write_strings(self.key(key), values);
        }
    }

    fn flag(&mut self, key: &str, value: bool) {
        if value {
            self.key(key).push_str("true");
        }
    }

    fn close(self) {
        self.out.push('}');
    }
}

fn write_strings(out: &mut String, values: &[String]) {
    out.push('[');
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        chartkit_yaml::gojson::write_string(out, value);
    }
    out.push(']');
}

/// A list whose items may be null.
fn write_items<T>(out: &mut String, items: &[Option<T>], mut write: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match item {
            Some(item) => write(out, item),
            None => out.push_str("null"),
        }
    }
    out.push(']');
}

fn indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn write_json(out: &mut String, value: &Out, level: usize) {
    match value {
        Out::Seq(items) if !items.is_empty() => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                indent(out, level + 1);
                write_json(out, item, level + 1);
            }
            indent(out, level);
            out.push(']');
        }
        Out::Obj(pairs) if !pairs.is_empty() => {
            out.push('{');
            for (n, (key, item)) in pairs.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                indent(out, level + 1);
                chartkit_yaml::gojson::write_string(out, key);
                out.push_str(": ");
                write_json(out, item, level + 1);
            }
            indent(out, level);
            out.push('}');
        }
        Out::Value(v) => write_json(out, &from_value(v), level),
        other => write_json_compact(out, other),
    }
}

fn from_value(v: &Value) -> Out {
    match v {
        Value::Map(map) => Out::Obj(
            map.iter()
                .map(|(k, v)| (k.clone(), from_value(v)))
                .collect(),
        ),
        Value::Seq(items) => Out::Seq(items.iter().map(from_value).collect()),
        other => Out::Value(other.clone()),
    }
}

fn write_json_compact(out: &mut String, value: &Out) {
    match value {
        Out::Null => out.push_str("null"),
        Out::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Out::Str(s) => chartkit_yaml::gojson::write_string(out, s),
        Out::Value(v @ (Value::Seq(_) | Value::Map(_))) => write_json_compact(out, &from_value(v)),
        Out::Value(v) => chartkit_yaml::gojson::write_value(out, v),
        Out::Seq(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_json_compact(out, item);
            }
            out.push(']');
        }
        Out::Obj(pairs) => {
            out.push('{');
            for (n, (key, item)) in pairs.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                chartkit_yaml::gojson::write_string(out, key);
                out.push(':');
                write_json_compact(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general writer, through the tree: what entries were written with before
    /// [`write_entry_json`].
    fn through_tree(v: &ChartVersion) -> String {
        let mut out = String::new();
        write_json_compact(&mut out, &entry(v));
        out
    }

    #[test]
    fn entries_are_written_as_the_general_writer_writes_them() {
        let text = "apiVersion: v1\nentries:\n  full:\n  - apiVersion: v2\n    name: full\n    home: h\n    sources: [s, \"<t>\"]\n    version: 1.0.0\n    description: \"d \\\" \\n é \\u2028\"\n    keywords: [k]\n    maintainers: [{name: n, email: e, url: u}, {name: only}]\n    icon: i\n    appVersion: 1.10\n    deprecated: true\n    annotations: {x: y, a: \"&\"}\n    kubeVersion: '>=1.20'\n    dependencies: [{name: d, version: 1.x, repository: r, condition: c, tags: [t], enabled: true, import-values: [a, {child: c, parent: p}, 1.5, [x]], alias: al}]\n    type: library\n    urls: []\n    created: 2024-01-01T00:00:00.5+01:00\n    removed: true\n    digest: x\n    checksum: c\n    engine: gotpl\n    tillerVersion: '>2'\n    url: u\n  bare:\n  - {name: bare, version: 0.1.0}\n  - {name: bare, version: 0.2.0, urls: [a, b], maintainers: [], dependencies: []}\n";
        let loaded = crate::parse_index(text.as_bytes(), "t").unwrap();
        let mut count = 0;
        for versions in loaded.index.entries.values() {
            for v in versions {
                assert_eq!(entry_to_json(v), through_tree(v));
                count += 1;
            }
        }
        assert_eq!(count, 3, "{:?}", loaded.warnings);
        // What no valid entry has, but the model can hold: null and empty items.
        let mut odd = ChartVersion::default();
        odd.metadata.maintainers = vec![None, Some(Maintainer::default())];
        odd.metadata.dependencies = vec![None, Some(Dependency::default())];
        for v in [ChartVersion::default(), odd] {
            assert_eq!(entry_to_json(&v), through_tree(&v));
        }
    }
}
