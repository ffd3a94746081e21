//! Turning a loaded chart and a render into the pieces of a release record.

use std::fmt::Write as _;

use chartkit_release::{GoTime, model};
use chartkit_render::Rendered;

/// The chart as a release record keeps it, from the chart as dependency processing left
/// it: the top chart's own files, schema and lock, its metadata with only the enabled
/// dependencies (under their aliases, `enabled`, `import-values` in the long form), and
/// its values, which for a chart with dependencies hold every enabled subchart's
/// defaults and the imported values (helm stores no subcharts, so this is where `get
/// values --all` finds their defaults). `has_defaults`: whether the chart had values
/// before processing (a values.yaml, or `--reuse-values`' previous ones); without them
/// and without dependencies helm stores `null`.
pub fn chart_record(chart: &chartkit_chart::Chart, has_defaults: bool) -> model::Chart {
    let m = &chart.metadata;
    let files = |list: &[chartkit_chart::File]| {
        (!list.is_empty()).then(|| {
            list.iter()
                .map(|f| {
                    Some(model::File {
                        name: f.name.clone(),
                        data: Some(f.data.to_vec()),
                        mod_time: None,
                    })
                })
                .collect()
        })
    };
    model::Chart {
        metadata: Some(model::Metadata {
            name: m.name.clone(),
            home: m.home.clone(),
            sources: m.sources.clone(),
            version: m.version.clone(),
            description: m.description.clone(),
            keywords: m.keywords.clone(),
            maintainers: m
                .maintainers
                .iter()
                .map(|x| {
                    x.as_ref().map(|x| model::Maintainer {
                        name: x.name.clone(),
                        email: x.email.clone(),
                        url: x.url.clone(),
                    })
                })
                .collect(),
            icon: m.icon.clone(),
            api_version: m.api_version.clone(),
            condition: m.condition.clone(),
            tags: m.tags.clone(),
            app_version: m.app_version.clone(),
            deprecated: m.deprecated,
            annotations: m.annotations.clone(),
            kube_version: m.kube_version.clone(),
            dependencies: m
                .dependencies
                .iter()
                .map(|d| d.as_ref().map(dependency))
                .collect(),
            chart_type: m.chart_type.clone(),
        }),
        lock: chart.lock.as_ref().map(|l| model::Lock {
            generated: GoTime::parse(&l.generated).ok().flatten(),
            digest: l.digest.clone(),
            dependencies: Some(l.dependencies.iter().map(|d| Some(dependency(d))).collect()),
        }),
        // helm's loader appends to nil lists, so a chart without any stores `null`.
        templates: files(&chart.templates),
        // and leaves values nil when there is no values.yaml, unless dependency
        // processing replaced them (it does for any chart with an enabled dependency).
        values: (has_defaults || !chart.metadata.dependencies.is_empty())
            .then(|| chart.values.clone()),
        schema: chart.schema.as_ref().map(|s| s.to_vec()),
        schema_mod_time: None,
        files: files(&chart.files),
        mod_time: None,
    }
}

fn dependency(d: &chartkit_chart::Dependency) -> model::Dependency {
    model::Dependency {
        name: d.name.clone(),
        version: d.version.clone(),
        repository: d.repository.clone(),
        condition: d.condition.clone(),
        tags: d.tags.clone(),
        enabled: d.enabled,
        import_values: d.import_values.clone(),
        alias: d.alias.clone(),
    }
}

/// The release's manifest as helm stores it: each ordinary document in install order as
/// `---\n# Source: PATH\nDOCUMENT\n` (hooks and CRDs are kept elsewhere). With
/// `hide_secrets` (a dry run's `--hide-secret`), a v1 Secret's document is replaced by a
/// comment saying so, in helm's words.
pub fn release_manifest(rendered: &Rendered, hide_secrets: bool) -> String {
    let mut out = String::new();
    for m in &rendered.manifests {
        if hide_secrets && m.head.kind == "Secret" && m.head.api_version == "v1" {
            let _ = write!(
                out,
                "---\n# Source: {}\n# HIDDEN: The Secret output has been suppressed\n",
                m.name
            );
        } else {
            let _ = write!(out, "---\n# Source: {}\n{}\n", m.name, m.content);
        }
    }
    out
}

/// The hooks of a render as a record keeps them, with the policies from their
/// annotations.
pub fn hooks(rendered: &Rendered) -> Vec<Option<model::Hook>> {
    rendered
        .hooks
        .iter()
        .map(|h| {
            let annotations = chartkit_render::parse_head(&h.manifest)
                .ok()
                .and_then(|head| head.annotations)
                .unwrap_or_default();
            let list = |key: &str| -> Vec<String> {
                annotations
                    .get(key)
                    .map(|v| {
                        v.split(',')
                            .map(|p| p.trim().to_string())
                            .filter(|p| !p.is_empty())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            Some(model::Hook {
                name: h.name.clone(),
                kind: h.kind.clone(),
                path: h.path.clone(),
                manifest: h.manifest.clone(),
                // Helm 2's `test-success` is recorded as the `test` event it became.
                events: h
                    .events
                    .iter()
                    .map(|e| if e == "test-success" { "test" } else { e }.to_string())
                    .collect(),
                last_run: model::HookExecution::default(),
                weight: h.weight,
                delete_policies: list("helm.sh/hook-delete-policy"),
                output_log_policies: list("helm.sh/hook-output-log-policy"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(hook_annotations: &str) -> Rendered {
        let manifest = format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: h\n  annotations:\n{hook_annotations}"
        );
        Rendered {
            chart: chartkit_chart::Chart::default(),
            values: Default::default(),
            manifests: vec![chartkit_render::Manifest {
                name: "c/templates/cm.yaml".into(),
                content: "kind: ConfigMap".into(),
                head: Default::default(),
            }],
            hooks: vec![chartkit_render::Hook {
                name: "h".into(),
                kind: "Job".into(),
                path: "c/templates/h.yaml".into(),
                manifest,
                events: vec!["pre-install".into()],
                weight: 2,
            }],
            notes: String::new(),
            files: Default::default(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn delete_policies_come_from_the_annotation() {
        let r = rendered(
            "    helm.sh/hook: pre-install\n    helm.sh/hook-delete-policy: hook-succeeded, hook-failed\n",
        );
        let hook = hooks(&r).remove(0).unwrap();
        assert_eq!(hook.delete_policies, ["hook-succeeded", "hook-failed"]);
        assert_eq!(hook.weight, 2);
        assert!(hook.output_log_policies.is_empty());
    }

    #[test]
    fn a_chart_without_files_stores_none_as_helm_does() {
        let mut chart = chartkit_chart::Chart::default();
        chart
            .templates
            .push(chartkit_chart::File::new("templates/a.yaml", "a: 1"));
        let record = chart_record(&chart, false);
        assert_eq!(record.files, None);
        assert_eq!(record.templates.map(|t| t.len()), Some(1));
    }

    #[test]
    fn values_are_stored_when_the_chart_had_some_or_processing_made_them() {
        let mut chart = chartkit_chart::Chart::default();
        chart
            .values
            .insert("a".into(), chartkit_yaml::Value::Float(1.0));
        // No values.yaml and no dependency left: helm's nil.
        assert_eq!(chart_record(&chart, false).values, None);
        assert_eq!(chart_record(&chart, true).values.map(|v| v.len()), Some(1));
        // An enabled dependency: processing replaced the values with a map.
        chart
            .metadata
            .dependencies
            .push(Some(chartkit_chart::Dependency {
                name: "sub".into(),
                enabled: true,
                ..Default::default()
            }));
        let record = chart_record(&chart, false);
        assert_eq!(record.values.map(|v| v.len()), Some(1));
        let dependencies = record.metadata.unwrap().dependencies;
        assert!(dependencies[0].as_ref().is_some_and(|d| d.enabled));
    }

    #[test]
    fn manifest_is_stored_as_helm_writes_it() {
        let r = rendered("    helm.sh/hook: pre-install\n");
        assert_eq!(
            release_manifest(&r, false),
            "---\n# Source: c/templates/cm.yaml\nkind: ConfigMap\n"
        );
    }

    #[test]
    fn hidden_secrets_leave_only_their_source() {
        let mut r = rendered("    helm.sh/hook: pre-install\n");
        let secret = |api_version: &str| chartkit_render::Manifest {
            name: "c/templates/s.yaml".into(),
            content: "kind: Secret\ndata:\n  pw: aHVudGVyMg==".into(),
            head: chartkit_render::Head {
                api_version: api_version.into(),
                kind: "Secret".into(),
                name: "s".into(),
                annotations: None,
            },
        };
        r.manifests.push(secret("v1"));
        // Only core v1 Secrets are hidden, as in helm.
        r.manifests.push(secret("example.com/v1"));
        let text = release_manifest(&r, true);
        assert_eq!(
            text,
            "---\n# Source: c/templates/cm.yaml\nkind: ConfigMap\n\
             ---\n# Source: c/templates/s.yaml\n# HIDDEN: The Secret output has been suppressed\n\
             ---\n# Source: c/templates/s.yaml\nkind: Secret\ndata:\n  pw: aHVudGVyMg==\n"
        );
        assert!(release_manifest(&r, false).matches("aHVudGVyMg==").count() == 2);
    }
}
