use super::*;
use crate::resources::Registry;

fn deployments() -> std::sync::Arc<ResourceDef> {
    Registry::with_builtins()
        .by_key("apps/deployments")
        .unwrap()
}

fn config(replicas: Option<i64>, image: &str) -> Value {
    let mut c = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": 80}]}]},
            },
        },
    });
    if let Some(r) = replicas {
        c["spec"]["replicas"] = json!(r);
    }
    c
}

fn fields(object: &Value, manager: &str) -> Value {
    object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn a_create_owns_what_it_set_with_markers_for_what_it_added() {
    let def = deployments();
    let mut new = config(Some(2), "nginx");
    record_update(
        &def,
        None,
        &mut new,
        "kubectl-client-side-apply",
        "apps/v1",
        "",
    );
    let f = fields(&new, "kubectl-client-side-apply");
    assert_eq!(f["f:metadata"], json!({"f:labels": {".": {}, "f:app": {}}}));
    assert_eq!(f["f:spec"]["f:replicas"], json!({}));
    assert_eq!(f["f:spec"]["f:selector"], json!({}));
    let containers = &f["f:spec"]["f:template"]["f:spec"]["f:containers"];
    assert!(containers.get(".").is_none(), "{containers}");
    let web = &containers["k:{\"name\":\"web\"}"];
    assert_eq!(web["."], json!({}));
    assert_eq!(
        web["f:ports"],
        json!({".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}})
    );
    let entry = &new["metadata"]["managedFields"][0];
    assert_eq!(entry["operation"], "Update");
    assert_eq!(entry["apiVersion"], "apps/v1");
}

#[test]
fn an_update_takes_the_fields_it_changes() {
    let def = deployments();
    let mut live = config(Some(2), "nginx");
    record_update(&def, None, &mut live, "first", "apps/v1", "");
    let mut new = live.clone();
    new["spec"]["replicas"] = json!(5);
    record_update(&def, Some(&live), &mut new, "second", "apps/v1", "");
    assert!(fields(&new, "first")["f:spec"].get("f:replicas").is_none());
    assert_eq!(
        fields(&new, "second"),
        json!({"f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn apply_conflicts_force_and_removal() {
    let def = deployments();
    let first = apply(
        &def,
        None,
        &config(Some(2), "nginx"),
        "one",
        "apps/v1",
        "",
        false,
    )
    .unwrap();
    assert_eq!(first["spec"]["replicas"], 2);
    assert_eq!(fields(&first, "one")["f:spec"]["f:replicas"], json!({}));
    // Another manager changing replicas conflicts.
    let err = apply(
        &def,
        Some(&first),
        &config(Some(3), "nginx"),
        "two",
        "apps/v1",
        "",
        false,
    )
    .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"one\": .spec.replicas"
    );
    assert_eq!(
        err.details.as_ref().unwrap()["causes"][0]["field"],
        ".spec.replicas"
    );
    // The same value is shared, not a conflict.
    let shared = apply(
        &def,
        Some(&first),
        &config(Some(2), "nginx"),
        "two",
        "apps/v1",
        "",
        false,
    )
    .unwrap();
    assert_eq!(fields(&shared, "two")["f:spec"]["f:replicas"], json!({}));
    // Forcing takes the field.
    let forced = apply(
        &def,
        Some(&first),
        &config(Some(3), "nginx"),
        "two",
        "apps/v1",
        "",
        true,
    )
    .unwrap();
    assert_eq!(forced["spec"]["replicas"], 3);
    assert!(fields(&forced, "one")["f:spec"].get("f:replicas").is_none());
    // A field its only owner stops applying is removed.
    let dropped = apply(
        &def,
        Some(&first),
        &config(None, "nginx"),
        "one",
        "apps/v1",
        "",
        false,
    )
    .unwrap();
    assert!(
        dropped["spec"].get("replicas").is_none(),
        "{}",
        dropped["spec"]
    );
    assert_eq!(
        dropped["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );
}

#[test]
fn conflicts_with_updaters_name_their_api_version() {
    let def = deployments();
    let mut live = config(Some(2), "nginx");
    record_update(
        &def,
        None,
        &mut live,
        "kubectl-client-side-apply",
        "apps/v1",
        "",
    );
    let err = apply(
        &def,
        Some(&live),
        &config(Some(3), "nginx"),
        "other",
        "apps/v1",
        "",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
    );
    let err = apply(
        &def,
        Some(&live),
        &config(Some(3), "redis"),
        "other",
        "apps/v1",
        "",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name=\"web\"].image"
    );
}

#[test]
fn unknown_fields_in_an_apply_are_refused() {
    let def = deployments();
    let mut c = config(Some(1), "nginx");
    c["spec"]["replicaz"] = json!(1);
    let err = apply(&def, None, &c, "one", "apps/v1", "", false).unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema"
    );
}

#[test]
fn managed_fields_survive_a_round_trip() {
    let def = deployments();
    let first = apply(
        &def,
        None,
        &config(Some(2), "nginx"),
        "one",
        "apps/v1",
        "",
        false,
    )
    .unwrap();
    let list = first["metadata"]["managedFields"].clone();
    let decoded = decode(Some(&list)).unwrap();
    let mut again = decoded.clone();
    assert_eq!(encode(&mut again).unwrap(), list);
}

#[test]
fn wrong_types_in_an_apply_are_refused_in_structured_merge_diffs_words() {
    let def = deployments();
    let mut c = config(Some(1), "nginx");
    c["spec"]["replicas"] = json!("three");
    c["spec"]["paused"] = json!(5);
    c["spec"]["template"]["spec"]["containers"][0]["image"] = json!({"a": 1});
    c["spec"]["template"]["spec"]["tolerations"] = json!([{"key": 7}]);
    c["spec"]["selector"] = json!(5);
    let err = apply(&def, None, &c, "one", "apps/v1", "", false).unwrap_err();
    assert_eq!((err.code, err.reason), (500, ""));
    let mut lines: Vec<&str> = err.message.lines().collect();
    assert_eq!(
        lines.remove(0),
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): errors:"
    );
    lines.sort();
    assert_eq!(
        lines,
        [
            "  .spec.paused: expected boolean, got &{5}",
            "  .spec.replicas: expected numeric (int or float), got string",
            "  .spec.selector: expected map, got &{5}",
            "  .spec.template.spec.containers[name=\"web\"].image: expected string, got &value.valueUnstructured{Value:map[string]interface {}{\"a\":1}}",
            "  .spec.template.spec.tolerations[0].key: expected string, got &value.valueUnstructured{Value:7}",
        ]
    );
}

#[test]
fn what_the_typed_check_lets_through_fails_converting_to_the_go_type() {
    let def = deployments();
    let mut c = config(Some(1), "nginx");
    c["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": true}});
    let err = apply(&def, None, &c, "one", "apps/v1", "", false).unwrap_err();
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "failed to convert new object (default/web; apps/v1, Kind=Deployment) to proper version: unable to convert unstructured object to apps/v1, Kind=Deployment: json: cannot unmarshal bool into Go value of type int32"
    );
}
