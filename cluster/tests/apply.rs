//! Applying and deleting against an in-process sandbox.

use std::time::Duration;

use chartkit_cluster::apply::{Applier, ApplyError, Outcome, Propagation};
use chartkit_cluster::discovery::Discovery;
use chartkit_cluster::manifest;
use chartkit_sandbox::{Options, Sandbox};
use kube::api::{Api, DynamicObject, ListParams};

async fn client(sandbox: &Sandbox) -> kube::Client {
    let config = kube::Config::new(sandbox.url().parse().unwrap());
    kube::Client::try_from(config).unwrap()
}

const APP: &str = "---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
---
# Source: web/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
data:
  greeting: hello
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_conflicts_force_and_foreground_delete() {
    let sandbox = Sandbox::start(Options::default()).await.unwrap();
    let client = client(&sandbox).await;
    let discovery = Discovery::new(client.clone());
    let applier = Applier::new(client.clone(), &discovery, "default");

    let mut objects = manifest::split(APP).unwrap();
    objects.sort_by(|a, b| chartkit_render::kind_order(a.kind(), b.kind()));
    let kinds: Vec<&str> = objects.iter().map(|o| o.kind()).collect();
    assert_eq!(kinds, ["ConfigMap", "Service", "Deployment"]);
    for object in &objects {
        let applied = applier.apply(object, false).await.unwrap();
        assert_eq!(applied.metadata.namespace.as_deref(), Some("default"));
        let managers: Vec<_> = applied
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| m.manager)
            .collect();
        assert!(managers.contains(&"helm".to_string()), "{managers:?}");
    }
    // Applying the same again changes nothing and raises no conflict.
    applier.apply(&objects[0], false).await.unwrap();

    // Another manager setting the same field with another value conflicts.
    let mut other = Applier::new(client.clone(), &discovery, "default");
    other.field_manager = "someone-else".into();
    let mut changed = objects[0].clone();
    changed.value["data"]["greeting"] = "bonjour".into();
    let error = other.apply(&changed, false).await.unwrap_err();
    assert!(matches!(error, ApplyError::Conflict { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("ConfigMap/web: apply conflicts"),
        "{error}"
    );
    // Forcing takes the field over.
    let forced = other.apply(&changed, true).await.unwrap();
    assert_eq!(forced.data["data"]["greeting"], "bonjour");

    // Foreground deletion of the Deployment waits for its ReplicaSets to go first.
    let deployment = applier.target(&objects[2]).await.unwrap();
    chartkit_cluster::readiness::wait(
        &client,
        std::slice::from_ref(&deployment),
        Duration::from_secs(20),
        false,
        &chartkit_cluster::readiness::Quiet,
    )
    .await
    .unwrap();
    let replicasets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &discovery
            .resolve("apps/v1", "ReplicaSet")
            .await
            .unwrap()
            .api,
    );
    assert!(
        !replicasets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty(),
        "the deployment controller made a ReplicaSet"
    );
    let deleted = applier
        .delete(
            &deployment,
            Propagation::Foreground,
            Some(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert!(deleted);
    assert!(
        deployment
            .api(&client)
            .get_opt("web")
            .await
            .unwrap()
            .is_none()
    );
    let left = replicasets
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert!(left.is_empty(), "{left:?}");
    // Deleting what is gone says so.
    assert!(
        !applier
            .delete(&deployment, Propagation::Background, None)
            .await
            .unwrap()
    );

    sandbox.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_apply_creates_then_merges_three_ways() {
    let sandbox = Sandbox::start(Options::default()).await.unwrap();
    let client = client(&sandbox).await;
    let discovery = Discovery::new(client.clone());
    let applier = Applier::new(client.clone(), &discovery, "default");
    let first = manifest::split(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1', b: '2'}\n",
    )
    .unwrap();
    assert_eq!(
        applier.apply_client_side(&first[0]).await.unwrap(),
        Outcome::Created
    );
    assert_eq!(
        applier.apply_client_side(&first[0]).await.unwrap(),
        Outcome::Unchanged
    );

    // Someone else adds a key; the next apply drops `b` and keeps theirs.
    let target = applier.target(&first[0]).await.unwrap();
    let api = target.api(&client);
    api.patch(
        "c",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(serde_json::json!({"data": {"theirs": "x"}})),
    )
    .await
    .unwrap();
    let second =
        manifest::split("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '3'}\n")
            .unwrap();
    assert_eq!(
        applier.apply_client_side(&second[0]).await.unwrap(),
        Outcome::Updated
    );
    let live = api.get("c").await.unwrap();
    assert_eq!(
        live.data["data"],
        serde_json::json!({"a": "3", "theirs": "x"})
    );

    // A kind the server does not serve is helm's mapping error.
    let unknown = manifest::split(
        "# Source: c/templates/w.yaml\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
    )
    .unwrap();
    let error = applier
        .apply(&unknown[0], false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "resource mapping not found for name: \"w\" namespace: \"\" from \"c/templates/w.yaml\": \
             no matches for kind \"Widget\" in version \"example.com/v1\""
        ),
        "{error}"
    );
    sandbox.stop().await;
}

/// A dry-running applier answers with what each write would leave (the server's defaults
/// included) and stores nothing, by every write method.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_answer_with_the_result_and_store_nothing() {
    let sandbox = Sandbox::start(Options::default()).await.unwrap();
    let client = client(&sandbox).await;
    let discovery = Discovery::new(client.clone());
    let mut applier = Applier::new(client.clone(), &discovery, "default");
    applier.dry_run = true;
    let objects = manifest::split(APP).unwrap();
    let deployment = objects.iter().find(|o| o.kind() == "Deployment").unwrap();
    let configmap = objects.iter().find(|o| o.kind() == "ConfigMap").unwrap();

    let answer = applier.apply(deployment, false).await.unwrap();
    assert_eq!(answer.data["spec"]["replicas"], 2);
    // A default the template does not set.
    assert_eq!(answer.data["spec"]["revisionHistoryLimit"], 10);
    let deployments: Api<DynamicObject> = applier.target(deployment).await.unwrap().api(&client);
    assert!(deployments.get_opt("web").await.unwrap().is_none());

    let created = applier.update_client_side(configmap, None).await.unwrap();
    assert_eq!(created.outcome, Outcome::Created);
    assert_eq!(created.object.data["data"]["greeting"], "hello");
    let configmaps: Api<DynamicObject> = applier.target(configmap).await.unwrap().api(&client);
    assert!(configmaps.get_opt("web").await.unwrap().is_none());

    // Against a live object: the merge is answered, the live object stays.
    applier.dry_run = false;
    applier.apply(configmap, false).await.unwrap();
    applier.dry_run = true;
    let mut changed = configmap.clone();
    changed.value["data"]["greeting"] = "bye".into();
    let merged = applier
        .update_client_side(&changed, Some(&configmap.value))
        .await
        .unwrap();
    assert_eq!(merged.outcome, Outcome::Updated);
    assert_eq!(merged.object.data["data"]["greeting"], "bye");
    let replaced = applier.replace(&changed).await.unwrap();
    assert_eq!(replaced.object.data["data"]["greeting"], "bye");
    let live = configmaps.get("web").await.unwrap();
    assert_eq!(live.data["data"]["greeting"], "hello");
}
