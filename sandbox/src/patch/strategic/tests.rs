use super::*;
use crate::resources::Registry;
use serde_json::json;

fn patch(doc: Value, p: Value) -> ApiResult<Value> {
    let def = Registry::with_builtins()
        .by_key("apps/deployments")
        .unwrap();
    strategic_merge_patch(&def, &doc, &p)
}

fn deployment(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "finalizers": ["a", "b"], "labels": {"app": "web", "tier": "x"}},
        "spec": {
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            "template": {"spec": {"containers": containers}},
        },
    })
}

#[test]
fn containers_merge_by_name_and_env_by_name() {
    let doc = deployment(json!([
        {"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}], "args": ["x", "y"]},
        {"name": "side", "image": "busybox"},
    ]));
    let out = patch(
        doc,
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:2", "env": [{"name": "B", "value": "2"}], "args": ["z"]},
            {"name": "side", "$patch": "delete"},
        ]}}}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        // With no $setElementOrder, the patch's new items come before the others.
        json!([{"name": "web", "image": "nginx:2", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}], "args": ["z"]}])
    );
}

#[test]
fn set_element_order_orders_the_merged_list() {
    let doc = deployment(json!([{"name": "a"}, {"name": "b"}]));
    let out = patch(
        doc,
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}],
            "containers": [{"name": "c", "image": "x"}],
        }}}}),
    )
    .unwrap();
    let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c", "b", "a"]);
}

#[test]
fn primitive_lists_union_and_delete_from_primitive_list() {
    let doc = deployment(json!([]));
    let out = patch(
        doc,
        json!({"metadata": {"finalizers": ["c", "a"], "$deleteFromPrimitiveList/finalizers": ["b"]}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a"]));
}

#[test]
fn retain_keys_clears_the_others_and_nulls_delete() {
    let doc = deployment(json!([]));
    let out = patch(
        doc,
        json!({"metadata": {"labels": {"tier": null}}, "spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
    let bad = patch(
        deployment(json!([])),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
    )
    .unwrap_err();
    assert_eq!(
        (bad.code, bad.message.as_str()),
        (400, "invalid patch format of retainKeys")
    );
}

#[test]
fn errors_are_the_api_servers() {
    let e = patch(
        deployment(json!([{"name": "web"}])),
        json!({"spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}}}),
    )
    .unwrap_err();
    assert_eq!(e.code, 500);
    assert_eq!(
        e.message,
        "map: map[image:nginx] does not contain declared merge key: name"
    );
    let e = patch(deployment(json!([])), json!({"spec": {"$patch": "merge"}})).unwrap_err();
    assert_eq!(
        e.message,
        "unknown patch type: merge in map: map[$patch:merge]"
    );
    let e = patch(
        deployment(json!([])),
        json!({"$deleteFromPrimitiveList": ["x"]}),
    )
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (400, "invalid patch format of primitive list")
    );
}

#[test]
fn replace_directives_and_atomic_lists() {
    let doc = deployment(json!([{"name": "a"}, {"name": "b"}]));
    let out = patch(
        doc,
        json!({"metadata": {"labels": {"$patch": "replace", "only": "me"}},
               "spec": {"template": {"spec": {"containers": [{"name": "z"}, {"$patch": "replace"}]}}}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"only": "me"}));
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "z"}])
    );
}

#[test]
fn go_formats_values() {
    assert_eq!(
        go_format(&json!({"b": [1, "x"], "a": null})),
        "map[a:<nil> b:[1 x]]"
    );
    assert_eq!(go_format(&json!(1000000.0)), "1e+06");
    assert_eq!(go_format(&json!(1.5)), "1.5");
}
