//! The rules, in the order `helm lint` runs them: Chart.yaml, values, templates,
//! dependencies, CRDs.

use std::path::Path;

use chartkit_chart::archive::Limits;
use chartkit_chart::{Chart, Decoding, FieldErrorKind, LoadOptions, Metadata, load_dir};
use chartkit_version::Version;
use chartkit_yaml::{NodeKind, parse_node};

use crate::{LintOptions, Message, Severity};

/// The lint's messages, and what Helm logs while linting (`warning: skipped value for
/// X: Not a table.`), in Helm's words.
pub(crate) struct Findings(pub(crate) Vec<Message>, pub(crate) Vec<String>);

impl Findings {
    pub(crate) fn add(&mut self, severity: Severity, path: &str, text: impl Into<String>) {
        self.0.push(Message {
            severity,
            path: path.to_owned(),
            text: text.into(),
        });
    }

    /// Records `result`'s error, if any; returns whether the rule passed.
    fn check(&mut self, severity: Severity, path: &str, result: Result<(), String>) -> bool {
        match result {
            Ok(()) => true,
            Err(text) => {
                self.add(severity, path, text);
                false
            }
        }
    }
}

/// Lints the chart unpacked or checked out at `dir`; `label` is how the user named it.
pub fn lint_chart_dir(dir: &Path, label: &Path, options: &LintOptions) -> Vec<Message> {
    lint_chart_dir_logged(dir, label, options).0
}

/// [`lint_chart_dir`], with what Helm logs while linting the chart (see
/// [`crate::Report::warnings`]).
pub fn lint_chart_dir_logged(
    dir: &Path,
    label: &Path,
    options: &LintOptions,
) -> (Vec<Message>, Vec<String>) {
    let mut findings = Findings(Vec::new(), Vec::new());
    let addon = crate::addon::is_addon_dir(dir);
    if addon {
        crate::addon::metadata(&mut findings, dir, label);
    } else {
        chart_file(&mut findings, dir, label, &options.limits);
    }
    // An addon has no values.yaml nor templates/: KubeVela renders its CUE and YAML with
    // parameter.cue, not Helm.
    if !addon {
        values(&mut findings, dir, options);
        crate::templates::templates(&mut findings, dir, options);
    }
    let loaded = load_dir(
        dir,
        &LoadOptions {
            limits: options.limits,
            ..LoadOptions::default()
        },
    );
    // An addon that does not load has had its metadata's problems reported already.
    if addon && loaded.is_err() {
        return (findings.0, findings.1);
    }
    dependencies(&mut findings, &loaded, label);
    crds(&mut findings, dir, &loaded);
    (findings.0, findings.1)
}

pub(crate) const CHART_YAML: &str = "Chart.yaml";
fn chart_file(findings: &mut Findings, dir: &Path, label: &Path, limits: &Limits) {
    let path = dir.join(CHART_YAML);
    if path.is_dir() {
        findings.add(
            Severity::Error,
            CHART_YAML,
            "should be a file, not a directory",
        );
        return;
    }
    let text = match read_chart_text(&path, limits) {
        Ok(None) => return,
        Ok(Some(text)) => text
            .strip_prefix('\u{feff}')
            .map(str::to_owned)
            .unwrap_or(text),
        Err(e) => {
            findings.add(
                Severity::Error,
                CHART_YAML,
                format!("unable to parse YAML\n\topen {}: {e}", path.display()),
            );
            return;
        }
    };
    chart_text(findings, &text, label, CHART_YAML);
}

/// Helm's Chart.yaml rules over its text; `file` is the name findings carry.
pub(crate) fn chart_text(findings: &mut Findings, text: &str, label: &Path, file: &str) {
    let metadata = match Metadata::from_yaml(text) {
        Ok(metadata) => metadata,
        Err(e) => {
            findings.add(
                Severity::Error,
                file,
                format!("unable to parse YAML\n\t{e}"),
            );
            return;
        }
    };
    if let Err(detail) = strict_parse(text) {
        findings.add(
            Severity::Warning,
            file,
            format!("failed to strictly parse chart metadata file\n\t{detail}"),
        );
    }
    findings.check(Severity::Error, file, chart_name(&metadata));
    findings.check(Severity::Error, file, api_version(&metadata));
    findings.check(Severity::Error, file, string_typed(text, "version"));
    findings.check(Severity::Error, file, version(&metadata));
    findings.check(Severity::Error, file, string_typed(text, "appVersion"));
    findings.check(Severity::Error, file, maintainers(&metadata));
    findings.check(Severity::Error, file, sources(&metadata));
    if metadata.icon.is_empty() {
        findings.add(Severity::Info, file, "icon is recommended");
    } else if !is_request_url(&metadata.icon) {
        findings.add(
            Severity::Error,
            file,
            format!("invalid icon URL '{}'", metadata.icon),
        );
    }
    if !metadata.chart_type.is_empty() && metadata.api_version != "v2" {
        findings.add(
            Severity::Error,
            file,
            format!(
                "chart type is not valid in apiVersion '{}'. It is valid in apiVersion 'v2'",
                metadata.api_version
            ),
        );
    }
    if !metadata.dependencies.is_empty() && metadata.api_version != "v2" {
        findings.add(
            Severity::Error,
            file,
            format!(
                "dependencies are not valid in the Chart file with apiVersion '{}'. They are valid in apiVersion 'v2'",
                metadata.api_version
            ),
        );
    }
    if Version::parse_strict(&metadata.version).is_err() {
        findings.add(
            Severity::Warning,
            file,
            format!("version '{}' is not a valid SemVerV2", metadata.version),
        );
    }
    // Helm 2 required the directory to carry the chart's name; Helm 3+ dropped the rule,
    // so it is only a hint here (and never fails `--strict`).
    if label.is_dir() {
        let dir_name = label
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if let Some(dir_name) = dir_name
            && !metadata.name.is_empty()
            && dir_name != metadata.name
        {
            findings.add(
                Severity::Info,
                file,
                format!(
                    "chart name '{}' does not match its directory '{dir_name}'",
                    metadata.name
                ),
            );
        }
    }
}

/// What Helm's strict parse of Chart.yaml (`yaml.UnmarshalStrict`) refuses: a repeated key,
/// else the first unknown field. Type errors are the lenient parse's to report.
fn strict_parse(text: &str) -> Result<(), String> {
    let Ok(node) = parse_node(text) else {
        return Ok(());
    };
    let Err(error) = Metadata::default().decode(&node, Decoding::STRICT) else {
        return Ok(());
    };
    match error.kind {
        FieldErrorKind::UnknownField { key } => Err(format!("unknown field {key:?}")),
        FieldErrorKind::DuplicateKey { key } => Err(format!(
            "line {}: key {key:?} already set in map",
            error.line
        )),
        _ => Ok(()),
    }
}

fn chart_name(metadata: &Metadata) -> Result<(), String> {
    let name = &metadata.name;
    if name.is_empty() {
        return Err("name is required".into());
    }
    if name.contains('/') {
        return Err(format!("chart name {name:?} is invalid"));
    }
    Ok(())
}

fn api_version(metadata: &Metadata) -> Result<(), String> {
    match metadata.api_version.as_str() {
        "" => Err("apiVersion is required. The value must be either \"v1\" or \"v2\"".into()),
        "v1" | "v2" => Ok(()),
        other => Err(format!(
            "apiVersion '{other}' is not valid. The value must be either \"v1\" or \"v2\""
        )),
    }
}

/// Helm checks the raw YAML type: an unquoted `version: 1.0` is a float to it.
fn string_typed(text: &str, key: &str) -> Result<(), String> {
    let Ok(node) = parse_node(text) else {
        return Ok(());
    };
    let Some(value) = node.get(key) else {
        return Ok(());
    };
    let type_name = match &value.kind {
        NodeKind::Str(_) => return Ok(()),
        NodeKind::Null => "<nil>",
        NodeKind::Bool(_) => "bool",
        NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) => "float64",
        NodeKind::Seq(_) => "[]interface {}",
        NodeKind::Map(_) => "map[string]interface {}",
    };
    Err(format!(
        "{key} should be of type string but it's of type {type_name}"
    ))
}

fn version(metadata: &Metadata) -> Result<(), String> {
    if metadata.version.is_empty() {
        return Err("version is required".into());
    }
    let version = Version::parse(&metadata.version)
        .map_err(|_| format!("version '{}' is not a valid SemVer", metadata.version))?;
    let floor = Version::new(0, 0, 0, "0", "");
    if version <= floor {
        return Err(format!(
            "version {version} is less than or equal to 0.0.0-0"
        ));
    }
    Ok(())
}

fn maintainers(metadata: &Metadata) -> Result<(), String> {
    for maintainer in &metadata.maintainers {
        let Some(maintainer) = maintainer else {
            return Err("a maintainer entry is empty".into());
        };
        if maintainer.name.is_empty() {
            return Err("each maintainer requires a name".into());
        }
        if !maintainer.email.is_empty() && !is_email(&maintainer.email) {
            return Err(format!(
                "invalid email '{}' for maintainer '{}'",
                maintainer.email, maintainer.name
            ));
        }
        if !maintainer.url.is_empty() && !is_url(&maintainer.url) {
            return Err(format!(
                "invalid url '{}' for maintainer '{}'",
                maintainer.url, maintainer.name
            ));
        }
    }
    Ok(())
}

fn sources(metadata: &Metadata) -> Result<(), String> {
    for source in &metadata.sources {
        if !is_request_url(source) {
            return Err(format!("invalid source URL '{source}'"));
        }
    }
    Ok(())
}

fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && !text.chars().any(char::is_whitespace)
        && !domain.starts_with('.')
        && !domain.ends_with('.')
}

/// Loose URL check in the spirit of govalidator's `IsURL`: a scheme is optional.
fn is_url(text: &str) -> bool {
    if text.len() >= 2083 || text.chars().any(char::is_whitespace) || text.starts_with('.') {
        return false;
    }
    let rest = text.split_once("://").map_or(text, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or(host);
    let host = host.split(':').next().unwrap_or(host);
    !host.is_empty() && (host.contains('.') || host == "localhost")
}

/// An absolute URL with a scheme, as Go's `url.ParseRequestURI` plus a scheme check.
fn is_request_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok && !rest.is_empty() && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Reads a chart file for a rule, or `None` when it is beyond the per-file limit: loading
/// the chart reports that, and reading it here first would cost its whole size in
/// memory (a 200 MiB values.yaml took 800 MiB to parse before the limit was reported).
fn read_chart_file(path: &Path, limits: &Limits) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    if file.metadata()?.len() > limits.max_file_size {
        return Ok(None);
    }
    let mut data = Vec::new();
    file.take(limits.max_file_size + 1).read_to_end(&mut data)?;
    Ok(Some(data))
}

/// [`read_chart_file`] for text.
fn read_chart_text(path: &Path, limits: &Limits) -> std::io::Result<Option<String>> {
    read_chart_file(path, limits)?
        .map(|data| {
            String::from_utf8(data).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                )
            })
        })
        .transpose()
}

fn values(findings: &mut Findings, dir: &Path, options: &LintOptions) {
    const VALUES: &str = "values.yaml";
    let path = dir.join(VALUES);
    let text = match read_chart_text(&path, &options.limits) {
        Ok(Some(text)) => text,
        Ok(None) => return,
        Err(_) => {
            findings.add(Severity::Info, VALUES, "file does not exist");
            return;
        }
    };
    let values = match chartkit_yaml::parse_values(text.strip_prefix('\u{feff}').unwrap_or(&text)) {
        Ok(values) => values,
        Err(e) => {
            findings.add(
                Severity::Error,
                VALUES,
                format!("unable to parse YAML: {}", e.helm_message()),
            );
            return;
        }
    };
    // Helm checks only the top chart here, with the user's values over values.yaml,
    // coalesced (and what coalescing notices logged) before it looks for a schema.
    let mut merged = chartkit_yaml::Map::new();
    chartkit_values::coalesce_tables(&mut merged, options.values.clone(), &mut findings.1);
    chartkit_values::coalesce_tables(&mut merged, values, &mut findings.1);
    let Ok(Some(schema)) = read_chart_file(&dir.join("values.schema.json"), &options.limits) else {
        return;
    };
    if schema.is_empty() {
        return;
    }
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(&schema) {
        findings.add(
            Severity::Error,
            VALUES,
            format!("values.schema.json is not valid JSON: {e}"),
        );
        return;
    }
    if options.skip_schema_validation {
        return;
    }
    if let Err(report) = chartkit_values::schema::validate_single(&merged, &schema) {
        findings.add(Severity::Error, VALUES, report);
    }
}

fn dependencies(
    findings: &mut Findings,
    loaded: &Result<Chart, chartkit_chart::LoadError>,
    label: &Path,
) {
    let chart = match loaded {
        Ok(chart) => chart,
        Err(e) => {
            // Keep every line of the error (its hint too) indented under the finding.
            let detail = e.to_string().replace('\n', "\n\t");
            findings.add(
                Severity::Error,
                "",
                format!("unable to load chart\n\t{detail}"),
            );
            return;
        }
    };
    let label = label.display().to_string();
    let declared: Vec<&str> = chart
        .metadata
        .dependencies()
        .map(|d| d.name.as_str())
        .collect();
    let present: Vec<&str> = chart.dependencies.iter().map(Chart::name).collect();
    let undeclared: Vec<&str> = present
        .iter()
        .copied()
        .filter(|p| !declared.contains(p))
        .collect();
    if !undeclared.is_empty() {
        findings.add(
            Severity::Error,
            &label,
            format!(
                "chart metadata is missing these dependencies: {}",
                undeclared.join(",")
            ),
        );
    }
    let mut seen = std::collections::HashSet::new();
    let shadowed: Vec<&str> = chart
        .metadata
        .dependencies()
        .map(|d| d.effective_name())
        .filter(|name| !seen.insert(*name))
        .collect();
    if !shadowed.is_empty() {
        findings.add(
            Severity::Error,
            &label,
            format!(
                "multiple dependencies with name or alias: {}",
                shadowed.join(",")
            ),
        );
    }
    let missing: Vec<&str> = declared
        .iter()
        .copied()
        .filter(|d| !present.contains(d))
        .collect();
    if !missing.is_empty() {
        findings.add(
            Severity::Warning,
            &label,
            format!(
                "chart directory is missing these dependencies: {}",
                missing.join(",")
            ),
        );
    }
}

fn crds(findings: &mut Findings, dir: &Path, loaded: &Result<Chart, chartkit_chart::LoadError>) {
    let crds_dir = dir.join("crds");
    if !crds_dir.exists() {
        return;
    }
    if !crds_dir.is_dir() {
        findings.add(Severity::Error, "crds/", "not a directory");
        return;
    }
    let Ok(chart) = loaded else { return };
    for (_, file) in chart.crds() {
        let path = file.name.as_str();
        let documents = match chartkit_yaml::parse_documents(&file.text()) {
            Ok(documents) => documents,
            Err(e) => {
                findings.add(Severity::Error, path, format!("unable to parse YAML: {e}"));
                return;
            }
        };
        for document in documents {
            match &document.kind {
                NodeKind::Null => continue,
                NodeKind::Map(_) => {}
                _ => {
                    findings.add(
                        Severity::Error,
                        path,
                        format!(
                            "unable to parse YAML: a CRD document must be a map, found {}",
                            document.kind_name()
                        ),
                    );
                    return;
                }
            }
            let field = |name: &str| {
                document
                    .get(name)
                    .and_then(|n| n.to_go_string())
                    .unwrap_or_default()
            };
            if !field("apiVersion").starts_with("apiextensions.k8s.io") {
                findings.add(
                    Severity::Error,
                    path,
                    "apiVersion is not in 'apiextensions.k8s.io'",
                );
            }
            if field("kind") != "CustomResourceDefinition" {
                findings.add(
                    Severity::Error,
                    path,
                    "object kind is not 'CustomResourceDefinition'",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint_files(files: &[(&str, &str)]) -> Vec<String> {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("demo");
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        lint_chart_dir(&dir, &dir, &LintOptions::default())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_good_chart_only_gets_the_icon_hint() {
        let messages = lint_files(&[
            ("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n"),
            ("values.yaml", "a: 1\n"),
            ("templates/a.yaml", "kind: A\nmetadata:\n  name: a\n"),
        ]);
        assert_eq!(messages, ["[INFO] Chart.yaml: icon is recommended"]);
    }

    #[test]
    fn chart_yaml_problems_match_helm_wording() {
        let messages = lint_files(&[
            (
                "Chart.yaml",
                "apiVersion: v3\nname: demo/x\nversion: 1.0\nicon: not-a-url\nsources: [nope]\nmaintainers: [{email: a@b.c}]\nextra: 1\n",
            ),
            ("templates/a.yaml", "kind: A\n"),
        ]);
        for expected in [
            "[WARNING] Chart.yaml: failed to strictly parse chart metadata file\n\tunknown field \"extra\"",
            "[ERROR] Chart.yaml: chart name \"demo/x\" is invalid",
            "[ERROR] Chart.yaml: apiVersion 'v3' is not valid. The value must be either \"v1\" or \"v2\"",
            "[ERROR] Chart.yaml: version should be of type string but it's of type float64",
            "[ERROR] Chart.yaml: each maintainer requires a name",
            "[ERROR] Chart.yaml: invalid source URL 'nope'",
            "[ERROR] Chart.yaml: invalid icon URL 'not-a-url'",
            "[WARNING] Chart.yaml: version '1' is not a valid SemVerV2",
            "[INFO] values.yaml: file does not exist",
        ] {
            assert!(
                messages.iter().any(|m| m == expected),
                "missing {expected:?} in {messages:#?}"
            );
        }
    }

    /// Output of helm v4.1.4 for the same charts: repeated keys are reported before unknown
    /// fields, and a null maintainer is a lint error of its own besides failing the load.
    #[test]
    fn strict_parse_and_null_maintainers_match_helm() {
        let messages = lint_files(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: demo\nversion: 1.0.0\nicon: https://x/i.png\ndescription: a\ndescription: b\nextra: 1\n",
            ),
            ("templates/a.yaml", "kind: A\n"),
        ]);
        assert_eq!(
            messages[0],
            "[WARNING] Chart.yaml: failed to strictly parse chart metadata file\n\tline 6: key \"description\" already set in map"
        );
        let messages = lint_files(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: demo\nversion: 1.0.0\nicon: https://x/i.png\nmaintainers:\n- name: a\n- ~\n",
            ),
            ("templates/a.yaml", "kind: A\n"),
        ]);
        let joined = messages.join("\n");
        assert!(
            joined.contains("[ERROR] Chart.yaml: a maintainer entry is empty"),
            "{joined}"
        );
        assert!(
            joined.contains(
                "[ERROR] : unable to load chart\n\t`"
            ) && joined.contains(
                "Chart.yaml`: validation: maintainers must not contain empty or null nodes\n\thint: "
            ),
            "{joined}"
        );
    }

    #[test]
    fn dependency_and_crd_rules() {
        let messages = lint_files(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: demo\nversion: 0.1.0\nicon: https://i\ndependencies: [{name: db, version: 1.x, repository: https://r}]\n",
            ),
            ("values.yaml", "a: 1\n"),
            (
                "charts/extra/Chart.yaml",
                "apiVersion: v2\nname: extra\nversion: 0.1.0\n",
            ),
            ("crds/bad.yaml", "apiVersion: v1\nkind: ConfigMap\n"),
        ]);
        let joined = messages.join("\n");
        assert!(
            joined.contains("chart metadata is missing these dependencies: extra"),
            "{joined}"
        );
        assert!(
            joined.contains("[WARNING] templates/: directory does not exist"),
            "{joined}"
        );
        assert!(
            joined.contains("chart directory is missing these dependencies: db"),
            "{joined}"
        );
        assert!(
            joined.contains("[ERROR] crds/bad.yaml: apiVersion is not in 'apiextensions.k8s.io'"),
            "{joined}"
        );
        assert!(
            joined.contains("[ERROR] crds/bad.yaml: object kind is not 'CustomResourceDefinition'"),
            "{joined}"
        );
    }
}
