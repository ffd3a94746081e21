//! The repository behaviours' settings: limits, metrics, the Artifact Hub file and the
//! write timeout, as ChartMuseum reads them and `chartkit serve` takes them.

use super::*;

fn read_env(pairs: &[(&str, &str)]) -> Result<Personality, ChartMuseumError> {
    let mut env: Vec<(&str, &str)> = vec![("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/d")];
    env.extend_from_slice(pairs);
    let map: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    read(&[], &move |name: &str| map.get(name).cloned())
}

fn args_of(pairs: &[(&str, &str)]) -> String {
    read_env(pairs).unwrap().serve_args.join(" ")
}

#[test]
fn limits_map_to_serves_flags_and_zero_is_no_limit() {
    let args = args_of(&[
        ("MAX_STORAGE_OBJECTS", "100"),
        ("PER_CHART_LIMIT", "5"),
        ("INDEX_LIMIT", "4"),
    ]);
    assert!(args.contains("--max-storage-objects 100"), "{args}");
    assert!(args.contains("--per-chart-limit 5"), "{args}");
    assert!(args.contains("--index-limit 4"), "{args}");
    let args = args_of(&[
        ("MAX_STORAGE_OBJECTS", "0"),
        ("PER_CHART_LIMIT", "-1"),
        ("INDEX_LIMIT", "0"),
    ]);
    assert!(
        !args.contains("limit") && !args.contains("objects"),
        "{args}"
    );
    // ChartMuseum's indexer cannot start with a negative limit.
    let error = read_env(&[("INDEX_LIMIT", "-2")]).unwrap_err().to_string();
    assert_eq!(error, "INDEX_LIMIT is `-2`, not a whole number, 0 or more");
}

#[test]
fn metrics_are_served_with_enable_metrics_only() {
    assert!(args_of(&[]).contains("--disable-metrics"));
    let enabled = read_env(&[("ENABLE_METRICS", "true")]).unwrap();
    assert!(!enabled.serve_args.contains(&"--disable-metrics".to_owned()));
    // ChartMuseum's /metrics asks for no credentials.
    assert!(
        enabled
            .serve_args
            .contains(&"--metrics-without-auth".to_owned())
    );
    assert!(enabled.warnings.is_empty());
    // The Helm chart's DISABLE_METRICS is deprecated and read by nothing but the warning.
    let both = read_env(&[("ENABLE_METRICS", "true"), ("DISABLE_METRICS", "true")]).unwrap();
    assert!(!both.serve_args.contains(&"--disable-metrics".to_owned()));
    assert_eq!(
        both.warnings,
        ["The configuration option disable-metrics has been deprecated"]
    );
    let off = read_env(&[("DISABLE_METRICS", "true")]).unwrap();
    assert!(off.serve_args.contains(&"--disable-metrics".to_owned()));
}

#[test]
fn the_artifact_hub_id_is_the_root_repositorys() {
    assert!(
        args_of(&[("ARTIFACT_HUB_REPO_ID", "abc-123")]).contains("--artifact-hub-repo-id abc-123 ")
    );
    assert!(
        args_of(&[("ARTIFACT_HUB_REPO_ID", "=abc-123")])
            .contains("--artifact-hub-repo-id abc-123 ")
    );
    let error = read_env(&[("ARTIFACT_HUB_REPO_ID", "org/repo=abc")])
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("ARTIFACT_HUB_REPO_ID = `org/repo=abc` is not supported: `org/repo=` names a tenant's repository"),
        "{error}"
    );
}

#[test]
fn a_write_timeout_is_accepted_unless_shorter_than_chartmuseums() {
    for accepted in ["30", "300", "0", "-1"] {
        read_env(&[("WRITE_TIMEOUT", accepted)]).unwrap();
    }
    let error = read_env(&[("WRITE_TIMEOUT", "10")])
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "WRITE_TIMEOUT = `10` is not supported: chartkit never cuts a response short"
        ),
        "{error}"
    );
}

#[test]
fn settings_chartkit_already_honours_are_accepted_at_any_value() {
    let p = read_env(&[
        ("DISABLE_STATEFILES", "true"),
        ("STORAGE_TIMESTAMP_TOLERANCE", "1s"),
        ("ENFORCE_SEMVER2", "true"),
    ])
    .unwrap();
    assert_eq!(
        p.warnings,
        ["The configuration option enforce-semver2 has been deprecated"]
    );
    assert!(args_of(&[("JSON_INDEX", "true")]).contains("--json-index"));
    assert!(!args_of(&[("JSON_INDEX", "false")]).contains("--json-index"));
}

#[test]
fn form_field_names_are_passed_on_when_not_the_usual_ones() {
    let args = args_of(&[
        ("CHART_POST_FORM_FIELD_NAME", "package"),
        ("PROV_POST_FORM_FIELD_NAME", "prov"),
    ]);
    assert!(args.contains("--chart-form-field package"), "{args}");
    assert!(!args.contains("--prov-form-field"), "{args}");
}

#[test]
fn gen_index_is_taken() {
    assert!(read_env(&[("GEN_INDEX", "true")]).unwrap().gen_index);
    assert!(!read_env(&[]).unwrap().gen_index);
}
