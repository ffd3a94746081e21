//! Helm's template lint rule: render the chart in lint mode (with the user's values over
//! the defaults), then check each `.yaml` template's output: indentation, YAML, object
//! names, deprecated APIs, workload selectors and `List` annotations.

use std::collections::BTreeMap;
use std::path::Path;

use chartkit_chart::{LoadOptions, load_dir};
use chartkit_render::{RenderError, RenderOptions, prepare_logged, render_outputs_logged};
use chartkit_yaml::{Node, NodeKind};

use crate::{Findings, LintOptions, Severity};

const TEMPLATES: &str = "templates/";

pub(crate) fn templates(findings: &mut Findings, dir: &Path, options: &LintOptions) {
    let templates_dir = dir.join("templates");
    if !templates_dir.exists() {
        findings.add(Severity::Warning, TEMPLATES, "directory does not exist");
        return;
    }
    if !templates_dir.is_dir() {
        findings.add(Severity::Error, TEMPLATES, "not a directory");
        return;
    }
    let chart = match load_dir(
        dir,
        &LoadOptions {
            limits: options.limits,
            ..LoadOptions::default()
        },
    ) {
        Ok(chart) => chart,
        Err(e) => {
            findings.add(
                Severity::Error,
                TEMPLATES,
                crate::helm_errors::load(&e, dir, &options.limits),
            );
            return;
        }
    };
    // Each of Helm's loads logs what it meets (symbolic links).
    findings.1.extend(chart.warnings.iter().cloned());
    let render_options = RenderOptions {
        release_name: "test-release".into(),
        namespace: options.namespace.clone(),
        kube_version: options.kube_version.clone().unwrap_or_default(),
        skip_schema_validation: options.skip_schema_validation,
        lint_mode: true,
        memory_limit: options.memory_limit,
        ..Default::default()
    };
    let root_templates: Vec<(String, String)> = chart
        .templates
        .iter()
        .map(|t| (t.name.clone(), format!("{}/{}", chart.name(), t.name)))
        .collect();
    // Helm's rule coalesces the prepared values once more before rendering (which drops
    // the nulls the first pass kept from the chart's defaults), logging what coalescing
    // notices each time, and validates the schemas against the second pass.
    let unchecked = RenderOptions {
        skip_schema_validation: true,
        ..render_options.clone()
    };
    let rendered = prepare_logged(chart, &options.values, &unchecked, &mut findings.1).and_then(
        |(chart, values)| {
            let values = chartkit_values::coalesce_values(&chart, &values, &mut findings.1)
                .map_err(|e| RenderError::Chart(e.to_string()))?;
            if !options.skip_schema_validation {
                chartkit_values::validate_chart_values(&chart, &values)
                    .map_err(|report| RenderError::Schema(go_schema_errors(&chart, report)))?;
            }
            // Rendering logs too (unknown hooks and the like), as helm's engine does.
            let outputs = render_outputs_logged(&chart, &values, &render_options, &mut findings.1)?;
            Ok(outputs
                .into_iter()
                .map(|(name, output)| (name, output.into_text_lossy()))
                .collect())
        },
    );
    let files = match rendered {
        Ok(files) => files,
        // Helm's lint gives up silently when dependencies or coalescing fail.
        Err(RenderError::Values(_)) => return,
        Err(e) => {
            findings.add(Severity::Error, TEMPLATES, e.to_string());
            return;
        }
    };
    check_outputs(findings, &root_templates, &files, options);
}

/// The validation report with each schema that is not JSON described as Helm's schema
/// reader describes it (`unexpected EOF`), not as serde_json does.
fn go_schema_errors(chart: &chartkit_chart::Chart, mut report: String) -> String {
    if let Some(schema) = &chart.schema
        && let Err(theirs) = serde_json::from_slice::<serde_json::Value>(schema)
        && let Some(ours) = crate::helm_errors::schema_json(schema)
    {
        report = report.replacen(
            &format!("{}:\n{theirs}", chart.name()),
            &format!("{}:\n{ours}", chart.name()),
            1,
        );
    }
    chart
        .dependencies
        .iter()
        .fold(report, |report, sub| go_schema_errors(sub, report))
}

fn check_outputs(
    findings: &mut Findings,
    templates: &[(String, String)],
    files: &BTreeMap<String, String>,
    options: &LintOptions,
) {
    for (name, full) in templates {
        let extension = Path::new(name)
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        if !matches!(extension.as_str(), ".yaml" | ".yml" | ".tpl" | ".txt") {
            findings.add(
                Severity::Error,
                name,
                format!("file extension '{extension}' not valid. Valid extensions are .yaml, .yml, .tpl, or .txt"),
            );
        }
        if !matches!(extension.to_ascii_lowercase().as_str(), ".yaml" | ".yml") {
            continue;
        }
        let Some(content) = files.get(full) else {
            continue;
        };
        if content.trim().is_empty() {
            continue;
        }
        if let Some(line) = content.lines().find(|l| !l.trim().is_empty())
            && (line.starts_with(' ') || line.starts_with('\t'))
        {
            findings.add(
                Severity::Warning,
                name,
                format!("document starts with an illegal indent: {line:?}, which may cause parsing problems"),
            );
        }
        for head in heads(content) {
            let head = match head {
                Ok(Some(head)) => head,
                Ok(None) => continue,
                Err(e) => {
                    // Helm's rule stops at the first unreadable document, for every
                    // template that follows too.
                    findings.add(Severity::Error, name, format!("unable to parse YAML: {e}"));
                    return;
                }
            };
            if let Err(text) = validate_name(&head.kind, &head.name) {
                findings.add(Severity::Warning, name, text);
            }
            if let Some(text) = deprecation(&head.api_version, &head.kind, options) {
                findings.add(Severity::Warning, name, text);
            }
            // Helm looks for the selector in the whole file, not in the object's document.
            if matches!(
                head.kind.as_str(),
                "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet"
            ) && !(content.contains("matchLabels") || content.contains("matchExpressions"))
            {
                findings.add(
                    Severity::Error,
                    name,
                    format!(
                        "a {} must contain matchLabels or matchExpressions, and {:?} does not",
                        head.kind, head.name
                    ),
                );
            }
            if head.kind == "List" && list_has_resource_policy(content) {
                findings.add(
                    Severity::Error,
                    name,
                    "annotation 'helm.sh/resource-policy' within List objects are ignored",
                );
            }
        }
    }
}

/// The fields of an object Helm's lint rules read (its `k8sYamlStruct`).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct K8sHead {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) name: String,
}

/// Each document of a rendered file (or a CRD file) as Kubernetes' `YAMLOrJSONDecoder`
/// reads it into Helm's `k8sYamlStruct`: `None` for an empty one, and the error that stops it.
///
/// A file starting with `{` is first read as a stream of JSON values. When a value fails
/// before two have been read, the decoder goes back to the end of the last good one and
/// reads the rest as YAML documents instead; if that fails too, the JSON error is the one
/// reported (so `json: offset N: ...`), and if nothing is left, no error is.
pub(crate) fn heads(content: &str) -> Vec<Result<Option<K8sHead>, String>> {
    let mut out = Vec::new();
    let mut rest = content;
    let mut json_error = None;
    if crate::json_stream::is_json(content) {
        let mut read = 0;
        let mut consumed = 0;
        for value in crate::json_stream::values(content) {
            let failure = match value {
                Ok(text) => {
                    let node = chartkit_yaml::parse_documents(text)
                        .ok()
                        .and_then(|nodes| nodes.into_iter().next());
                    match node.map(|node| k8s_head(&node, true)) {
                        Some(Err(e)) => e,
                        head => {
                            out.push(Ok(head.and_then(Result::ok).flatten()));
                            read += 1;
                            // Where this value ends in `content`.
                            consumed =
                                text.as_ptr() as usize - content.as_ptr() as usize + text.len();
                            continue;
                        }
                    }
                }
                Err(e) => e,
            };
            if read > 1 {
                // An unambiguous JSON stream: the decoder's own error, without the
                // offset the first reading adds.
                out.push(Err(crate::helm_errors::bare_json_error(&failure)));
                return out;
            }
            json_error = Some(failure);
            rest = skip_to_line_end(&content[consumed..]);
            break;
        }
        if json_error.is_none() {
            return out;
        }
    }
    for document in kubernetes_documents(rest) {
        let head = document.and_then(|text| {
            let node = chartkit_yaml::parse_documents(&text)
                .map_err(|e| crate::helm_errors::yaml_syntax(&e))?
                .into_iter()
                .next();
            match node {
                Some(node) => {
                    // Turning YAML into JSON refuses keys JSON cannot have (a map, say).
                    node.to_value()
                        .map_err(|e| crate::helm_errors::yaml_syntax(&e))?;
                    k8s_head(&node, false)
                }
                None => Ok(None),
            }
        });
        match head {
            Ok(head) => {
                json_error = None;
                out.push(Ok(head));
            }
            Err(e) => {
                out.push(Err(json_error.take().unwrap_or(e)));
                return out;
            }
        }
    }
    out
}

/// The decoder's `consumeWhitespace`: white space dropped up to and including the first
/// line break.
fn skip_to_line_end(text: &str) -> &str {
    for (i, c) in text.char_indices() {
        if c == '\n' {
            return &text[i + 1..];
        }
        if !c.is_whitespace() {
            return &text[i..];
        }
    }
    ""
}

/// Decodes a document into Helm's `k8sYamlStruct` with `encoding/json`'s rules and
/// words: keys matched without regard to case, in the order Go meets them (sorted, for
/// YAML turned into JSON), the first wrongly typed field named. From YAML, a number or
/// boolean given for a string is turned into its text first (sigs.k8s.io/yaml does).
fn k8s_head(node: &Node, json: bool) -> Result<Option<K8sHead>, String> {
    let prefix = if json {
        "json:"
    } else {
        "error unmarshaling JSON: while decoding JSON: json:"
    };
    let kind_of = |node: &Node| match node.kind {
        NodeKind::Null => "null",
        NodeKind::Bool(_) => "bool",
        NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) => "number",
        NodeKind::Str(_) => "string",
        NodeKind::Seq(_) => "array",
        NodeKind::Map(_) => "object",
    };
    let wrong = |node: &Node, field: &str, go_type: &str| {
        format!(
            "{prefix} cannot unmarshal {} into Go struct field {field} of type {go_type}",
            kind_of(node)
        )
    };
    let string = |node: &Node, field: &str| -> Result<Option<String>, String> {
        match &node.kind {
            NodeKind::Null => Ok(None),
            NodeKind::Str(s) => Ok(Some(s.clone())),
            NodeKind::Seq(_) | NodeKind::Map(_) => Err(wrong(node, field, "string")),
            _ if json => Err(wrong(node, field, "string")),
            _ => Ok(node.to_go_string()),
        }
    };
    let fields = |pairs: &[(Node, Node)]| -> Vec<(String, Node)> {
        let mut keyed: Vec<(String, Node)> = pairs
            .iter()
            .filter_map(|(k, v)| Some((k.as_map_key()?, v.clone())))
            .collect();
        if !json {
            // A map turned into JSON has each key once (the last wins), sorted.
            keyed.reverse();
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            keyed.dedup_by(|a, b| a.0 == b.0);
        }
        keyed
    };
    let pairs = match &node.kind {
        NodeKind::Null => return Ok(None),
        NodeKind::Map(pairs) => pairs,
        _ => {
            return Err(format!(
                "{prefix} cannot unmarshal {} into Go value of type rules.k8sYamlStruct",
                kind_of(node)
            ));
        }
    };
    let mut head = K8sHead::default();
    for (key, value) in fields(pairs) {
        if key.eq_ignore_ascii_case("apiVersion") {
            if let Some(text) = string(&value, "k8sYamlStruct.apiVersion")? {
                head.api_version = text;
            }
        } else if key.eq_ignore_ascii_case("kind") {
            if let Some(text) = string(&value, "k8sYamlStruct.Kind")? {
                head.kind = text;
            }
        } else if key.eq_ignore_ascii_case("metadata") {
            let meta = match &value.kind {
                NodeKind::Null => continue,
                NodeKind::Map(meta) => meta,
                _ => {
                    return Err(wrong(
                        &value,
                        "k8sYamlStruct.Metadata",
                        "rules.k8sYamlMetadata",
                    ));
                }
            };
            for (key, value) in fields(meta) {
                if key.eq_ignore_ascii_case("name") {
                    if let Some(text) = string(&value, "k8sYamlMetadata.Metadata.Name")? {
                        head.name = text;
                    }
                } else if key.eq_ignore_ascii_case("namespace") {
                    string(&value, "k8sYamlMetadata.Metadata.Namespace")?;
                }
            }
        }
    }
    Ok(Some(head))
}

/// Kubernetes' YAML reader: documents split at lines starting with `---`, which may only
/// be followed by a comment.
fn kubernetes_documents(content: &str) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in content.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                out.push(Err(format!("invalid Yaml document separator: {rest}")));
                return out;
            }
            if !current.is_empty() {
                out.push(Ok(std::mem::take(&mut current)));
            }
            continue;
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        out.push(Ok(current));
    }
    out
}

/// Whether a List's items carry `helm.sh/resource-policy`. Helm reads the items from the
/// whole file as one YAML document, which is its first.
fn list_has_resource_policy(content: &str) -> bool {
    let Ok(documents) = chartkit_yaml::parse_documents(content) else {
        return false;
    };
    let Some(items) = documents.first().and_then(|node| node.get("items")) else {
        return false;
    };
    let NodeKind::Seq(items) = &items.kind else {
        return false;
    };
    items.iter().any(|item| {
        item.get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get("helm.sh/resource-policy"))
            .is_some()
    })
}

const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_LABEL: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn is_label(text: &str, first_alpha: bool) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && (if first_alpha {
            bytes[0].is_ascii_lowercase()
        } else {
            bytes[0] != b'-'
        })
        && bytes[bytes.len() - 1] != b'-'
}

/// Helm's object name check: the Kubernetes name rules of the object's kind.
fn validate_name(kind: &str, name: &str) -> Result<(), String> {
    let mut problems: Vec<String> = Vec::new();
    match kind.to_ascii_lowercase().as_str() {
        "service" => {
            if name.len() > 63 {
                problems.push("must be no more than 63 characters".into());
            }
            if !is_label(name, true) {
                problems.push(DNS1035_LABEL.into());
            }
        }
        "namespace" => {
            if name.len() > 63 {
                problems.push("must be no more than 63 characters".into());
            }
            if !is_label(name, false) {
                problems.push(DNS1123_LABEL.into());
            }
        }
        "certificatesigningrequest" => {}
        "role" | "clusterrole" | "rolebinding" | "clusterrolebinding" => {
            if name == "." {
                problems.push("may not be '.'".into());
            } else if name == ".." {
                problems.push("may not be '..'".into());
            }
            if name.contains('/') {
                problems.push("may not contain '/'".into());
            }
            if name.contains('%') {
                problems.push("may not contain '%'".into());
            }
        }
        _ => {
            if name.len() > 253 {
                problems.push("must be no more than 253 characters".into());
            }
            if !name.split('.').all(|l| is_label(l, false)) {
                problems.push(DNS1123_SUBDOMAIN.into());
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let errors: Vec<String> = problems
        .iter()
        .map(|p| format!("metadata.name: Invalid value: {name:?}: {p}"))
        .collect();
    let joined = if errors.len() == 1 {
        errors[0].clone()
    } else {
        format!("[{}]", errors.join(", "))
    };
    Err(format!(
        "object name does not conform to Kubernetes naming requirements: {name:?}: {joined}"
    ))
}

/// A Kubernetes version as (major, minor).
type Release = (u32, u32);

/// API versions Kubernetes deprecated: (group/version, kind, deprecated in, removed in,
/// replacement).
const DEPRECATED: &[(&str, &str, Release, Release, &str)] = &[
    (
        "extensions/v1beta1",
        "DaemonSet",
        (1, 8),
        (1, 16),
        "apps/v1 DaemonSet",
    ),
    (
        "extensions/v1beta1",
        "Deployment",
        (1, 8),
        (1, 16),
        "apps/v1 Deployment",
    ),
    (
        "extensions/v1beta1",
        "ReplicaSet",
        (1, 8),
        (1, 16),
        "apps/v1 ReplicaSet",
    ),
    (
        "extensions/v1beta1",
        "NetworkPolicy",
        (1, 9),
        (1, 16),
        "networking.k8s.io/v1 NetworkPolicy",
    ),
    (
        "extensions/v1beta1",
        "PodSecurityPolicy",
        (1, 11),
        (1, 16),
        "policy/v1beta1 PodSecurityPolicy",
    ),
    (
        "extensions/v1beta1",
        "Ingress",
        (1, 14),
        (1, 22),
        "networking.k8s.io/v1 Ingress",
    ),
    (
        "apps/v1beta1",
        "Deployment",
        (1, 8),
        (1, 16),
        "apps/v1 Deployment",
    ),
    (
        "apps/v1beta1",
        "StatefulSet",
        (1, 8),
        (1, 16),
        "apps/v1 StatefulSet",
    ),
    (
        "apps/v1beta1",
        "ControllerRevision",
        (1, 8),
        (1, 16),
        "apps/v1 ControllerRevision",
    ),
    (
        "apps/v1beta2",
        "DaemonSet",
        (1, 9),
        (1, 16),
        "apps/v1 DaemonSet",
    ),
    (
        "apps/v1beta2",
        "Deployment",
        (1, 9),
        (1, 16),
        "apps/v1 Deployment",
    ),
    (
        "apps/v1beta2",
        "ReplicaSet",
        (1, 9),
        (1, 16),
        "apps/v1 ReplicaSet",
    ),
    (
        "apps/v1beta2",
        "StatefulSet",
        (1, 9),
        (1, 16),
        "apps/v1 StatefulSet",
    ),
    (
        "apps/v1beta2",
        "ControllerRevision",
        (1, 9),
        (1, 16),
        "apps/v1 ControllerRevision",
    ),
    (
        "policy/v1beta1",
        "PodDisruptionBudget",
        (1, 21),
        (1, 25),
        "policy/v1 PodDisruptionBudget",
    ),
    ("policy/v1beta1", "PodSecurityPolicy", (1, 21), (1, 25), ""),
    (
        "batch/v1beta1",
        "CronJob",
        (1, 21),
        (1, 25),
        "batch/v1 CronJob",
    ),
    (
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        (1, 22),
        (1, 25),
        "autoscaling/v2 HorizontalPodAutoscaler",
    ),
    (
        "autoscaling/v2beta2",
        "HorizontalPodAutoscaler",
        (1, 23),
        (1, 26),
        "autoscaling/v2 HorizontalPodAutoscaler",
    ),
    (
        "networking.k8s.io/v1beta1",
        "Ingress",
        (1, 19),
        (1, 22),
        "networking.k8s.io/v1 Ingress",
    ),
    (
        "networking.k8s.io/v1beta1",
        "IngressClass",
        (1, 19),
        (1, 22),
        "networking.k8s.io/v1 IngressClass",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "Role",
        (1, 17),
        (1, 22),
        "rbac.authorization.k8s.io/v1 Role",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole",
        (1, 17),
        (1, 22),
        "rbac.authorization.k8s.io/v1 ClusterRole",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "RoleBinding",
        (1, 17),
        (1, 22),
        "rbac.authorization.k8s.io/v1 RoleBinding",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRoleBinding",
        (1, 17),
        (1, 22),
        "rbac.authorization.k8s.io/v1 ClusterRoleBinding",
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        (1, 16),
        (1, 22),
        "apiextensions.k8s.io/v1 CustomResourceDefinition",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
        (1, 16),
        (1, 22),
        "admissionregistration.k8s.io/v1 MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
        (1, 16),
        (1, 22),
        "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration",
    ),
    (
        "scheduling.k8s.io/v1beta1",
        "PriorityClass",
        (1, 14),
        (1, 22),
        "scheduling.k8s.io/v1 PriorityClass",
    ),
    (
        "storage.k8s.io/v1beta1",
        "StorageClass",
        (1, 19),
        (1, 22),
        "storage.k8s.io/v1 StorageClass",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        (1, 24),
        (1, 27),
        "storage.k8s.io/v1 CSIStorageCapacity",
    ),
    (
        "discovery.k8s.io/v1beta1",
        "EndpointSlice",
        (1, 21),
        (1, 25),
        "discovery.k8s.io/v1 EndpointSlice",
    ),
    (
        "node.k8s.io/v1beta1",
        "RuntimeClass",
        (1, 22),
        (1, 25),
        "node.k8s.io/v1 RuntimeClass",
    ),
    (
        "coordination.k8s.io/v1beta1",
        "Lease",
        (1, 19),
        (1, 22),
        "coordination.k8s.io/v1 Lease",
    ),
];

/// Helm's deprecation warning for an object, for the linted Kubernetes version.
fn deprecation(api_version: &str, kind: &str, options: &LintOptions) -> Option<String> {
    if api_version.is_empty() || kind.is_empty() {
        return None;
    }
    let (_, _, deprecated, removed, replacement) = DEPRECATED
        .iter()
        .find(|(v, k, ..)| *v == api_version && *k == kind)?;
    let (major, minor) = match &options.kube_version {
        Some(k) => (k.major.parse().unwrap_or(1), k.minor.parse().unwrap_or(35)),
        None => (1, 35),
    };
    if (major, minor) < *deprecated {
        return None;
    }
    let mut text = format!(
        "{api_version} {kind} is deprecated in v{}.{}+, unavailable in v{}.{}+",
        deprecated.0, deprecated.1, removed.0, removed.1
    );
    if !replacement.is_empty() {
        text.push_str(&format!("; use {replacement}"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_by_kind() {
        assert!(validate_name("Deployment", "web-1.example").is_ok());
        assert!(validate_name("Service", "1web").is_err());
        assert!(validate_name("Role", "Web:Admin").is_ok());
        assert_eq!(
            validate_name("ConfigMap", "").unwrap_err(),
            format!(
                "object name does not conform to Kubernetes naming requirements: \"\": metadata.name: Invalid value: \"\": {DNS1123_SUBDOMAIN}"
            )
        );
    }

    #[test]
    fn deprecations_name_the_replacement() {
        let options = LintOptions::default();
        assert_eq!(
            deprecation("policy/v1beta1", "PodDisruptionBudget", &options).unwrap(),
            "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; use policy/v1 PodDisruptionBudget"
        );
        assert!(deprecation("policy/v1", "PodDisruptionBudget", &options).is_none());
    }

    #[test]
    fn documents_split_at_separator_lines() {
        let docs = kubernetes_documents("a: 1\n---\n--- # c\nb: 2\n");
        assert_eq!(docs, vec![Ok("a: 1\n".to_owned()), Ok("b: 2\n".to_owned())]);
        assert!(kubernetes_documents("---x\n")[0].is_err());
    }
}
