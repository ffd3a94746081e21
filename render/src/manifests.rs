//! Helm's manifest sorter: rendered files split into documents, each document's head
//! (`apiVersion`, `kind`, `metadata.name`, `metadata.annotations`) read as Helm reads it,
//! hooks separated by their `helm.sh/hook` annotation, and both lists put in install
//! order by kind.

use std::collections::BTreeMap;

use chartkit_template::Output;
use chartkit_yaml::{Node, NodeKind};

/// Helm 4's install order. Kinds not listed come after these, alphabetically.
pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Helm's removal order. Not the exact reverse of [`INSTALL_ORDER`]: validating webhooks
/// go before mutating ones so that neither blocks the removal of the other, and services
/// go early, before the workloads behind them.
pub const UNINSTALL_ORDER: &[&str] = &[
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "Ingress",
    "IngressClass",
    "Service",
    "CronJob",
    "Job",
    "StatefulSet",
    "HorizontalPodAutoscaler",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "DaemonSet",
    "RoleBindingList",
    "RoleBinding",
    "RoleList",
    "Role",
    "ClusterRoleBindingList",
    "ClusterRoleBinding",
    "ClusterRoleList",
    "ClusterRole",
    "CustomResourceDefinition",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ConfigMap",
    "SecretList",
    "Secret",
    "ServiceAccount",
    "PodDisruptionBudget",
    "PodSecurityPolicy",
    "LimitRange",
    "ResourceQuota",
    "NetworkPolicy",
    "Namespace",
    "PriorityClass",
];

const HOOK_ANNOTATION: &str = "helm.sh/hook";
const HOOK_WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";

/// Hook events Helm knows; documents naming any other event are dropped.
const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// The fields of a document Helm looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// `None` when the document has no metadata or no annotations.
    pub annotations: Option<BTreeMap<String, String>>,
}

/// An ordinary document: the template it came from and its trimmed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub name: String,
    pub content: String,
    pub head: Head,
}

/// A hook document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub manifest: String,
    pub events: Vec<String>,
    pub weight: i64,
}

impl Hook {
    pub fn is_test(&self) -> bool {
        self.events
            .iter()
            .any(|e| e == "test" || e == "test-success")
    }
}

/// Helm's `SplitManifests`: documents separated by `---` at the start of a line (with
/// anything after the dashes on that line dropped into the next document), trimmed,
/// empty ones skipped.
///
/// Helm splits with the Go regexp `(?:^|\s*\n)---\s*`; compiling a regex cost more than
/// the rest of a small chart's sort, so this scans for the same leftmost matches: a
/// `\n---` (or `---` at the very start), widened back over the whitespace before it and
/// forward over the whitespace after it. `\s` in Go is ASCII whitespace only.
pub fn split_manifests(text: &str) -> Vec<String> {
    let text = text.trim();
    split_ranges(text.as_bytes())
        .into_iter()
        // The separators are ASCII, so every range is on character boundaries.
        .map(|(start, end)| &text[start..end])
        .filter(|d| !d.is_empty())
        .map(|d| d.trim().to_owned())
        .collect()
}

/// [`split_manifests`] of output that is not text (Go splits bytes): the same
/// separators, which are ASCII; white space is trimmed as ASCII.
fn split_manifest_bytes(text: &[u8]) -> Vec<&[u8]> {
    let text = text.trim_ascii();
    split_ranges(text)
        .into_iter()
        .map(|(start, end)| text[start..end].trim_ascii())
        .filter(|d| !d.is_empty())
        .collect()
}

fn is_go_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0c' | b'\r')
}

/// The byte ranges of the documents of trimmed text, empty ones included.
fn split_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let skip_space = |mut at: usize| {
        while at < bytes.len() && is_go_space(bytes[at]) {
            at += 1;
        }
        at
    };
    let mut pieces = Vec::new();
    let mut piece_start = 0;
    let mut search = 0;
    if bytes.starts_with(b"---") {
        piece_start = skip_space(3);
        search = piece_start;
    }
    while let Some(found) = memchr::memmem::find(&bytes[search..], b"\n---") {
        let newline = search + found;
        let mut match_start = newline;
        while match_start > search && is_go_space(bytes[match_start - 1]) {
            match_start -= 1;
        }
        pieces.push((piece_start, match_start));
        piece_start = skip_space(newline + 4);
        search = piece_start;
    }
    pieces.push((piece_start, bytes.len()));
    pieces
}

/// Helm's `SortManifests`: files in path order (partials and blank files skipped), each
/// split into documents; hooks and ordinary documents each sorted by kind. Documents
/// naming a hook event Helm does not know are dropped, with Helm's notice added to
/// `warnings`.
///
/// Output that is not text is read as go-yaml reads it: a document that is neither UTF-8
/// nor UTF-16 is a YAML error, as in Helm (binary file contents written into a
/// template's output without `b64enc`).
pub fn sort_manifests(
    files: &BTreeMap<String, Output>,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Hook>, Vec<Manifest>), String> {
    let mut documents: Vec<(&String, Result<String, String>)> = Vec::new();
    for (path, content) in files {
        let base = path.rsplit('/').next().unwrap_or(path);
        if base.starts_with('_') {
            continue;
        }
        match content {
            Output::Text(text) => {
                if text.trim().is_empty() {
                    continue;
                }
                documents.extend(split_manifests(text).into_iter().map(|d| (path, Ok(d))));
            }
            Output::Binary(bytes) => {
                documents.extend(split_manifest_bytes(bytes).into_iter().map(|d| {
                    let text = chartkit_template::go_yaml_decode(d)
                        .map(|text| text.into_owned())
                        .map_err(|problem| {
                            format!("error converting YAML to JSON: yaml: {problem}")
                        });
                    (path, text)
                }));
            }
        }
    }
    let heads = parse_heads(&documents);
    let mut hooks = Vec::new();
    let mut generic = Vec::new();
    for ((path, document), head) in documents.into_iter().zip(heads) {
        let head = head.map_err(|e| format!("YAML parse error on {path}: {e}"))?;
        let document = document.unwrap_or_default();
        let hook_types = head
            .annotations
            .as_ref()
            .and_then(|a| a.get(HOOK_ANNOTATION))
            .cloned();
        let Some(hook_types) = hook_types else {
            generic.push(Manifest {
                name: path.clone(),
                content: document,
                head,
            });
            continue;
        };
        let mut events = Vec::new();
        let mut unknown = false;
        for event in hook_types.split(',') {
            let event = event.trim().to_ascii_lowercase();
            if !HOOK_EVENTS.contains(&event.as_str()) {
                unknown = true;
                break;
            }
            events.push(event);
        }
        if unknown {
            warnings.push(chartkit_values::golog::info(
                "skipping unknown hooks",
                &[("hookTypes", &hook_types)],
            ));
            continue;
        }
        let weight = head
            .annotations
            .as_ref()
            .and_then(|a| a.get(HOOK_WEIGHT_ANNOTATION))
            .and_then(|w| go_atoi(w))
            .unwrap_or(0);
        hooks.push(Hook {
            name: head.name.clone(),
            kind: head.kind.clone(),
            path: path.clone(),
            manifest: document,
            events,
            weight,
        });
    }
    generic.sort_by(|a, b| kind_order(&a.head.kind, &b.head.kind));
    hooks.sort_by(|a, b| kind_order(&a.kind, &b.kind));
    Ok((hooks, generic))
}

/// Every document is parsed in full (Helm rejects invalid YAML anywhere in it), which is
/// most of the time spent on charts with large CRDs or many objects; the documents are
/// independent, so big outputs are parsed on all cores. Results keep the input order, so
/// the first error reported is the one Helm reports.
fn parse_heads(documents: &[(&String, Result<String, String>)]) -> Vec<Result<Head, String>> {
    use rayon::prelude::*;
    // Below this, starting the thread pool costs more than it saves.
    const PARALLEL_BYTES: usize = 256 * 1024;
    let head = |document: &Result<String, String>| match document {
        Ok(text) => parse_head(text),
        Err(problem) => Err(problem.clone()),
    };
    let total: usize = documents
        .iter()
        .map(|(_, d)| d.as_ref().map_or(0, String::len))
        .sum();
    if total < PARALLEL_BYTES {
        return documents.iter().map(|(_, d)| head(d)).collect();
    }
    documents.par_iter().map(|(_, d)| head(d)).collect()
}

/// `strconv.Atoi`.
fn go_atoi(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.strip_prefix('+').unwrap_or(text).parse().ok()
}

/// Helm's `lessByKind` as an ordering: known kinds by install order, unknown kinds after
/// them alphabetically; equal kinds keep their order (the sort is stable).
pub fn kind_order(a: &str, b: &str) -> std::cmp::Ordering {
    kind_order_in(INSTALL_ORDER, a, b)
}

/// [`kind_order`] for removal: Helm's uninstall order.
pub fn uninstall_kind_order(a: &str, b: &str) -> std::cmp::Ordering {
    kind_order_in(UNINSTALL_ORDER, a, b)
}

fn kind_order_in(order: &[&str], a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let position = |k: &str| order.iter().position(|o| *o == k);
    match (position(a), position(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Reads a document's head as `sigs.k8s.io/yaml` decodes it into Helm's `SimpleHead`:
/// scalars are accepted for string fields, lists and maps are not.
pub fn parse_head(document: &str) -> Result<Head, String> {
    // The head is at most three levels deep: the document, metadata, annotations.
    let node = chartkit_yaml::parse_first_document(document, 3).map_err(|e| e.helm_message())?;
    if let Some(error) = node.json_key_error() {
        return Err(error.helm_message());
    }
    let pairs = match &node.kind {
        NodeKind::Null => return Ok(Head::default()),
        NodeKind::Map(pairs) => pairs,
        _ => {
            return Err(json_error(format!(
                "cannot unmarshal {} into Go value of type util.SimpleHead",
                json_kind(&node)
            )));
        }
    };
    let mut head = Head::default();
    let field = |key: &str| -> Option<&Node> {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k.as_map_key().as_deref() == Some(key))
            .map(|(_, v)| v)
    };
    head.api_version = string_field(field("apiVersion"), "SimpleHead.apiVersion")?;
    head.kind = string_field(field("kind"), "SimpleHead.kind")?;
    let Some(metadata) = field("metadata") else {
        return Ok(head);
    };
    let meta_pairs = match &metadata.kind {
        NodeKind::Null => return Ok(head),
        NodeKind::Map(pairs) => pairs,
        _ => {
            return Err(json_error(format!(
                "cannot unmarshal {} into Go struct field SimpleHead.metadata of type struct {{ Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }}",
                json_kind(metadata)
            )));
        }
    };
    let meta_field = |key: &str| -> Option<&Node> {
        meta_pairs
            .iter()
            .rev()
            .find(|(k, _)| k.as_map_key().as_deref() == Some(key))
            .map(|(_, v)| v)
    };
    if let Some(annotations) = meta_field("annotations") {
        match &annotations.kind {
            NodeKind::Null => {}
            NodeKind::Map(entries) => {
                let mut map = BTreeMap::new();
                for (k, v) in entries {
                    let value = string_field(Some(v), ".metadata.annotations")?;
                    map.insert(k.as_map_key().unwrap_or_default(), value);
                }
                if !map.is_empty() {
                    head.annotations = Some(map);
                }
            }
            _ => {
                return Err(json_error(format!(
                    "cannot unmarshal {} into Go struct field .metadata.annotations of type map[string]string",
                    json_kind(annotations)
                )));
            }
        }
    }
    head.name = string_field(meta_field("name"), ".metadata.name")?;
    Ok(head)
}

fn string_field(node: Option<&Node>, field: &str) -> Result<String, String> {
    let Some(node) = node else {
        return Ok(String::new());
    };
    match &node.kind {
        NodeKind::Null => Ok(String::new()),
        NodeKind::Seq(_) | NodeKind::Map(_) => Err(json_error(format!(
            "cannot unmarshal {} into Go struct field {field} of type string",
            json_kind(node)
        ))),
        _ => Ok(node.to_go_string().unwrap_or_default()),
    }
}

fn json_error(text: String) -> String {
    format!("error unmarshaling JSON: while decoding JSON: json: {text}")
}

fn json_kind(node: &Node) -> &'static str {
    match node.kind {
        NodeKind::Null => "null",
        NodeKind::Bool(_) => "bool",
        NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) => "number",
        NodeKind::Str(_) => "string",
        NodeKind::Seq(_) => "array",
        NodeKind::Map(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_helm() {
        assert_eq!(
            split_manifests("\n---\na: 1\n---\nb: 2\n--- # c\nd: 3\n"),
            ["a: 1", "b: 2", "# c\nd: 3"]
        );
        // A separator's trailing whitespace swallows the newline the next one needs, so
        // Go's regexp (and Helm) keep the second `---` in the document.
        assert_eq!(
            split_manifests("a: 1\n---\n\n---\nb: 2\n"),
            ["a: 1", "---\nb: 2"]
        );
        assert_eq!(split_manifests("a: |\n  ---\n"), ["a: |\n  ---"]);
        assert!(split_manifests("  \n").is_empty());
    }

    /// The hand-written splitter against Go's separator regexp (with Go's ASCII `\s`),
    /// on generated text made of the characters that matter to it.
    #[test]
    fn split_manifests_agrees_with_helms_separator_regexp() {
        let go_regexp = regex::Regex::new(r"(?:^|[\t\n\x0C\r ]*\n)---[\t\n\x0C\r ]*").unwrap();
        let by_regexp = |text: &str| -> Vec<String> {
            go_regexp
                .split(text.trim())
                .filter(|d| !d.is_empty())
                .map(|d| d.trim().to_owned())
                .collect()
        };
        let alphabet = [
            "-", "-", "-", "\n", "\n", " ", "\t", "\r", "\x0c", "\x0b", "a", "\u{a0}",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(state % 24) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            assert_eq!(split_manifests(&text), by_regexp(&text), "{text:?}");
        }
    }

    #[test]
    fn heads_accept_scalars_and_refuse_structures() {
        let head =
            parse_head("apiVersion: 1\nkind: Pod\nmetadata:\n  name: 2\n  annotations: {a: 1}\n")
                .unwrap();
        assert_eq!(head.api_version, "1");
        assert_eq!(head.name, "2");
        assert_eq!(head.annotations.unwrap()["a"], "1");
        assert_eq!(
            parse_head("kind: [a]").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field SimpleHead.kind of type string"
        );
        assert_eq!(
            parse_head("- a").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type util.SimpleHead"
        );
        assert_eq!(
            parse_head("metadata: {annotations: x}").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field .metadata.annotations of type map[string]string"
        );
        assert_eq!(parse_head("# only a comment").unwrap(), Head::default());
    }

    #[test]
    fn kinds_sort_in_install_order_then_alphabetically() {
        let mut kinds = vec![
            "Zeta",
            "Deployment",
            "",
            "ValidatingWebhookConfiguration",
            "Namespace",
            "Alpha",
        ];
        kinds.sort_by(|a, b| kind_order(a, b));
        assert_eq!(
            kinds,
            [
                "Namespace",
                "Deployment",
                "ValidatingWebhookConfiguration",
                "",
                "Alpha",
                "Zeta"
            ]
        );
    }

    #[test]
    fn hooks_are_separated_and_unknown_hooks_dropped() {
        let mut files = BTreeMap::new();
        files.insert(
            "c/templates/a.yaml".to_owned(),
            Output::Text("kind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: post-install, test\n---\nkind: Service\n---\nkind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: nonsense\n".to_owned()),
        );
        files.insert(
            "c/templates/_p.tpl".to_owned(),
            Output::Text("kind: X".to_owned()),
        );
        let mut warnings = Vec::new();
        let (hooks, manifests) = sort_manifests(&files, &mut warnings).unwrap();
        assert_eq!(
            warnings,
            ["level=INFO msg=\"skipping unknown hooks\" hookTypes=nonsense"]
        );
        assert_eq!(hooks.len(), 1);
        assert!(hooks[0].is_test());
        assert_eq!(manifests.len(), 1);
        assert_eq!(manifests[0].head.kind, "Service");
    }

    #[test]
    fn install_order_is_helms() {
        let mut kinds = vec![
            "Deployment",
            "Zeta",
            "Service",
            "Alpha",
            "Namespace",
            "ConfigMap",
            "Service",
            "CustomResourceDefinition",
        ];
        let tagged: Vec<(usize, &str)> = kinds.iter().copied().enumerate().collect();
        let mut sorted = tagged.clone();
        sorted.sort_by(|a, b| kind_order(a.1, b.1));
        assert_eq!(
            sorted,
            [
                (4, "Namespace"),
                (5, "ConfigMap"),
                (7, "CustomResourceDefinition"),
                (2, "Service"),
                (6, "Service"),
                (0, "Deployment"),
                (3, "Alpha"),
                (1, "Zeta"),
            ]
        );
        kinds.sort_by(|a, b| uninstall_kind_order(a, b));
        assert_eq!(
            kinds,
            [
                "Service",
                "Service",
                "Deployment",
                "CustomResourceDefinition",
                "ConfigMap",
                "Namespace",
                "Alpha",
                "Zeta"
            ]
        );
    }

    #[test]
    fn uninstall_removes_validating_webhooks_before_mutating_ones() {
        let mut kinds = [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ];
        kinds.sort_by(|a, b| uninstall_kind_order(a, b));
        assert_eq!(kinds[0], "ValidatingWebhookConfiguration");
        kinds.sort_by(|a, b| kind_order(a, b));
        assert_eq!(kinds[0], "MutatingWebhookConfiguration");
    }
}
