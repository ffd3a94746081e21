//! Writing manifest objects to the cluster and removing them.
//!
//! Server-side apply is the default: the API server merges with each field's owner, so
//! chartkit needs no schema knowledge. Every write (apply, create, update, patch) names
//! the field manager helm's do, `helm`. The client-side path (create, or a three-way merge
//! of the previous configuration, the live object and the new one) is for servers or
//! objects where that is not wanted: for kinds the server publishes an OpenAPI v3 schema
//! of, the merge is strategic (lists merged by their keys, [`crate::strategic`]) and the
//! result is written with the live resourceVersion; for the others (custom resources) it
//! is a JSON merge patch, as kubectl's and helm's are.

use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::Value;

use crate::discovery::{Discovery, MappingError, Resource};
use crate::manifest::Object;

/// The annotation client-side apply keeps the applied configuration in (kubectl's).
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The field manager chartkit writes as unless told otherwise: helm's (helm 4 names its
/// manager after its binary, `helm`). One release is written by both tools in any order,
/// and fields owned by a `chartkit` manager would make every later `helm upgrade` or
/// `helm rollback` fail with an apply conflict; under one name the API server cannot
/// tell the tools apart.
pub const DEFAULT_FIELD_MANAGER: &str = "helm";

/// How many times a write that lost a race with another writer is retried.
const CONFLICT_RETRIES: usize = 5;

/// Why an object could not be written or removed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Mapping(#[from] MappingError),
    /// Server-side apply found fields owned by another manager.
    #[error(
        "{object}: apply conflicts with another field manager: {message}; use --force-conflicts \
         to take the fields over"
    )]
    Conflict { object: String, message: String },
    #[error("{object}: {message}")]
    Api { object: String, message: String },
    #[error("{object}: not deleted within {}", crate::readiness::go_duration(*timeout))]
    DeleteTimeout { object: String, timeout: Duration },
}

/// How a delete cascades to what the object owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    /// The object goes at once; the garbage collector removes its dependents afterwards.
    #[default]
    Background,
    /// The dependents go first; the object goes when they are gone.
    Foreground,
    /// The dependents are left without an owner.
    Orphan,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Created,
    Updated,
    Unchanged,
}

/// An object in the cluster: what to call it and where it lives.
#[derive(Debug, Clone)]
pub struct Target {
    pub resource: Resource,
    pub name: String,
    /// `None` for cluster-scoped resources.
    pub namespace: Option<String>,
}

impl Target {
    /// `Kind/name`, as kubectl and helm name objects.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.resource.api.kind, self.name)
    }

    pub fn api(&self, client: &kube::Client) -> Api<DynamicObject> {
        match &self.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &self.resource.api),
            None => Api::all_with(client.clone(), &self.resource.api),
        }
    }
}

/// An object as a write left it (or, in a dry run, as the API server says it would be).
#[derive(Debug, Clone)]
pub struct Written {
    pub outcome: Outcome,
    pub object: DynamicObject,
}

/// Writes and removes objects through one client, namespace and field manager.
pub struct Applier<'a> {
    pub client: kube::Client,
    pub discovery: &'a Discovery,
    /// Where namespaced objects that name no namespace go.
    pub namespace: String,
    pub field_manager: String,
    /// Writes are sent with `dryRun=All`: the API server runs defaulting, admission and
    /// the merge, answers with the result, and stores nothing. Deletes are not affected.
    pub dry_run: bool,
}

impl<'a> Applier<'a> {
    pub fn new(client: kube::Client, discovery: &'a Discovery, namespace: &str) -> Applier<'a> {
        Applier {
            client,
            discovery,
            namespace: namespace.to_string(),
            field_manager: DEFAULT_FIELD_MANAGER.to_string(),
            dry_run: false,
        }
    }

    fn post_params(&self) -> PostParams {
        PostParams {
            field_manager: Some(self.field_manager.clone()),
            dry_run: self.dry_run,
        }
    }

    /// Where an object goes: its resource, and its namespace (its own, else the
    /// default, for namespaced kinds).
    pub async fn target(&self, object: &Object) -> Result<Target, ApplyError> {
        let resource = self.discovery.resolve_object(object).await?;
        let namespace = resource.namespaced.then(|| {
            object
                .namespace()
                .unwrap_or(self.namespace.as_str())
                .to_string()
        });
        Ok(Target {
            resource,
            name: object.name().to_string(),
            namespace,
        })
    }

    /// Server-side apply. With `force`, fields owned by other managers are taken over;
    /// without, such a conflict is an error naming them.
    pub async fn apply(&self, object: &Object, force: bool) -> Result<DynamicObject, ApplyError> {
        let target = self.target(object).await?;
        let api = target.api(&self.client);
        let mut body = object.value.clone();
        if let Some(ns) = &target.namespace {
            body["metadata"]["namespace"] = Value::String(ns.clone());
        }
        // A resourceVersion would make the apply fail whenever the object changed since
        // it was rendered, which is never what a manifest means.
        if let Some(meta) = body["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        let mut params = PatchParams::apply(&self.field_manager);
        params.force = force;
        params.dry_run = self.dry_run;
        let mut attempt = 0;
        let mut adopted = false;
        loop {
            match api.patch(&target.name, &params, &Patch::Apply(&body)).await {
                Ok(applied) => return Ok(applied),
                Err(kube::Error::Api(status))
                    if status.code == 409
                        && is_field_conflict(&status)
                        && !adopted
                        && status.message.contains(&format!(
                            " with \"{}\"",
                            crate::csa_upgrade::LEGACY_MANAGER
                        ))
                        && self.field_manager != crate::csa_upgrade::LEGACY_MANAGER =>
                {
                    // Fields an older chartkit wrote under its own name are this
                    // writer's: they are handed over once and the apply tried again.
                    adopted = true;
                    self.rewrite_managed_fields(object, crate::csa_upgrade::adopted_legacy_fields)
                        .await?;
                }
                Err(kube::Error::Api(status))
                    if status.code == 409 && is_field_conflict(&status) =>
                {
                    return Err(ApplyError::Conflict {
                        object: target.describe(),
                        message: status.message.clone(),
                    });
                }
                Err(kube::Error::Api(status))
                    if status.code == 409 && attempt < CONFLICT_RETRIES =>
                {
                    attempt += 1;
                }
                Err(error) => return Err(api_error(&target, error)),
            }
        }
    }

    /// Before a server-side apply to an object this manager wrote client-side: its
    /// `Update` entry's fields are moved into its `Apply` entry ([`crate::csa_upgrade`]),
    /// as helm does, so the apply does not conflict with the manager's own earlier
    /// writes. Returns whether the object's managedFields were changed.
    pub async fn upgrade_client_side_fields(&self, object: &Object) -> Result<bool, ApplyError> {
        self.rewrite_managed_fields(object, crate::csa_upgrade::upgraded_managed_fields)
            .await
    }

    /// The object's managedFields rewritten by `rewrite` (given the live entries and this
    /// applier's manager; `None` leaves them), conditional on the live resourceVersion
    /// and read again after a lost race. Returns whether they were changed.
    async fn rewrite_managed_fields(
        &self,
        object: &Object,
        rewrite: fn(&[Value], &str) -> Option<Vec<Value>>,
    ) -> Result<bool, ApplyError> {
        let target = self.target(object).await?;
        let api = target.api(&self.client);
        let mut attempt = 0;
        loop {
            let Some(live) = api
                .get_opt(&target.name)
                .await
                .map_err(|e| api_error(&target, e))?
            else {
                return Ok(false);
            };
            let live = serde_json::to_value(&live).expect("objects serialise");
            let entries = live["metadata"]["managedFields"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let Some(upgraded) = rewrite(&entries, &self.field_manager) else {
                return Ok(false);
            };
            let version = live["metadata"]["resourceVersion"].as_str().unwrap_or("");
            let patch = crate::csa_upgrade::managed_fields_patch(upgraded, version);
            let params = PatchParams {
                field_manager: Some(self.field_manager.clone()),
                dry_run: self.dry_run,
                ..PatchParams::default()
            };
            match api
                .patch(&target.name, &params, &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(true),
                Err(kube::Error::Api(status))
                    if status.code == 409 && attempt < CONFLICT_RETRIES =>
                {
                    attempt += 1;
                }
                Err(error) => return Err(api_error(&target, error)),
            }
        }
    }

    /// Client-side apply as kubectl does it: creates the object, or patches the live one
    /// with a three-way merge of the last applied configuration (kept in an annotation),
    /// the live object and this one. A write that lost a race with another writer is
    /// recomputed from a fresh read.
    pub async fn apply_client_side(&self, object: &Object) -> Result<Outcome, ApplyError> {
        Ok(self
            .client_side(object, Original::LastApplied)
            .await?
            .outcome)
    }

    /// Client-side update as helm does it: the three-way merge's original is the object
    /// as the release's previous manifest had it (`None` for an object new to the
    /// release), and no annotation is written.
    pub async fn update_client_side(
        &self,
        object: &Object,
        original: Option<&Value>,
    ) -> Result<Written, ApplyError> {
        self.client_side(object, Original::Given(original.cloned()))
            .await
    }

    /// `--force-replace`: the object is written whole over the live one (PUT), or
    /// created; fields other writers set and the manifest lacks are lost, as helm's
    /// replacement loses them.
    pub async fn replace(&self, object: &Object) -> Result<Written, ApplyError> {
        let target = self.target(object).await?;
        let api = target.api(&self.client);
        let mut body = object.value.clone();
        if let Some(ns) = &target.namespace {
            body["metadata"]["namespace"] = Value::String(ns.clone());
        }
        let mut attempt = 0;
        loop {
            let live = api
                .get_opt(&target.name)
                .await
                .map_err(|e| api_error(&target, e))?;
            let result = match live {
                None => self.create(&api, &target, &body).await?,
                Some(live) => {
                    body["metadata"]["resourceVersion"] =
                        serde_json::to_value(&live.metadata.resource_version)
                            .expect("strings serialise");
                    let typed = dynamic(&body).map_err(|e| unreadable(&target, e))?;
                    api.replace(&target.name, &self.post_params(), &typed)
                        .await
                        .map(|object| Written {
                            outcome: Outcome::Updated,
                            object,
                        })
                }
            };
            match result {
                Ok(outcome) => return Ok(outcome),
                Err(kube::Error::Api(status))
                    if status.code == 409 && attempt < CONFLICT_RETRIES =>
                {
                    attempt += 1;
                }
                Err(error) => return Err(api_error(&target, error)),
            }
        }
    }

    /// Creates the object (without a resourceVersion, which a create must not carry).
    async fn create(
        &self,
        api: &Api<DynamicObject>,
        target: &Target,
        body: &Value,
    ) -> Result<Result<Written, kube::Error>, ApplyError> {
        let mut body = body.clone();
        if let Some(meta) = body["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        let typed = dynamic(&body).map_err(|e| unreadable(target, e))?;
        Ok(api
            .create(&self.post_params(), &typed)
            .await
            .map(|object| Written {
                outcome: Outcome::Created,
                object,
            }))
    }

    async fn client_side(
        &self,
        object: &Object,
        original: Original,
    ) -> Result<Written, ApplyError> {
        let target = self.target(object).await?;
        let api = target.api(&self.client);
        let mut modified = object.value.clone();
        if let Some(ns) = &target.namespace {
            modified["metadata"]["namespace"] = Value::String(ns.clone());
        }
        if let Some(meta) = modified["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        if let Original::LastApplied = original {
            let applied_text = serde_json::to_string(&without_last_applied(&modified))
                .expect("JSON values serialise");
            modified["metadata"]["annotations"][LAST_APPLIED] = Value::String(applied_text);
        }
        // Built-in kinds merge strategically, as kubectl's and helm's patches do; kinds
        // without a published schema (custom resources) fall back to a JSON merge patch,
        // as theirs do. The schema is looked up once, not on every retry.
        let kind = &target.resource.api;
        let document = self.discovery.openapi(&kind.api_version).await;
        let root = document.as_deref().and_then(|d| {
            crate::strategic::SchemaNode::root(d, &kind.group, &kind.version, &kind.kind)
        });
        let mut attempt = 0;
        loop {
            let live = api
                .get_opt(&target.name)
                .await
                .map_err(|e| api_error(&target, e))?;
            let result = match live {
                None => self.create(&api, &target, &modified).await?,
                Some(live_object) => {
                    let live = serde_json::to_value(&live_object).expect("objects serialise");
                    let original = match &original {
                        Original::LastApplied => live["metadata"]["annotations"][LAST_APPLIED]
                            .as_str()
                            .and_then(|t| serde_json::from_str::<Value>(t).ok())
                            .unwrap_or(Value::Null),
                        Original::Given(given) => given.clone().unwrap_or(Value::Null),
                    };
                    if let Some(root) = root {
                        let merged =
                            crate::strategic::three_way(&original, &modified, &live, Some(root));
                        if merged == live {
                            return Ok(Written {
                                outcome: Outcome::Unchanged,
                                object: live_object,
                            });
                        }
                        let typed = dynamic(&merged).map_err(|e| unreadable(&target, e))?;
                        // The live resourceVersion rides along: a concurrent write makes
                        // this a 409, and the merge is redone from a fresh read.
                        api.replace(&target.name, &self.post_params(), &typed)
                            .await
                            .map(|object| Written {
                                outcome: Outcome::Updated,
                                object,
                            })
                    } else {
                        let mut patch = three_way_merge_patch(&original, &modified, &live);
                        if patch.as_object().is_none_or(|p| p.is_empty()) {
                            return Ok(Written {
                                outcome: Outcome::Unchanged,
                                object: live_object,
                            });
                        }
                        // The patch holds only if nobody wrote in between.
                        patch["metadata"]["resourceVersion"] =
                            live["metadata"]["resourceVersion"].clone();
                        let params = PatchParams {
                            field_manager: Some(self.field_manager.clone()),
                            dry_run: self.dry_run,
                            ..PatchParams::default()
                        };
                        api.patch(&target.name, &params, &Patch::Merge(&patch))
                            .await
                            .map(|object| Written {
                                outcome: Outcome::Updated,
                                object,
                            })
                    }
                }
            };
            match result {
                Ok(outcome) => return Ok(outcome),
                Err(kube::Error::Api(status))
                    if status.code == 409 && attempt < CONFLICT_RETRIES =>
                {
                    attempt += 1;
                }
                Err(error) => return Err(api_error(&target, error)),
            }
        }
    }

    /// Deletes an object; `Ok(false)` when it was already gone. With `wait`, returns only
    /// once the object no longer exists (with foreground propagation: once its dependents
    /// are gone too), watching rather than polling.
    pub async fn delete(
        &self,
        target: &Target,
        propagation: Propagation,
        wait: Option<Duration>,
    ) -> Result<bool, ApplyError> {
        let api = target.api(&self.client);
        let params = DeleteParams {
            propagation_policy: Some(match propagation {
                Propagation::Background => kube::api::PropagationPolicy::Background,
                Propagation::Foreground => kube::api::PropagationPolicy::Foreground,
                Propagation::Orphan => kube::api::PropagationPolicy::Orphan,
            }),
            ..DeleteParams::default()
        };
        let uid = match api.delete(&target.name, &params).await {
            Ok(either) => either.left().and_then(|o| o.metadata.uid),
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
            Err(error) => return Err(api_error(target, error)),
        };
        let Some(timeout) = wait else {
            return Ok(true);
        };
        let Some(uid) = uid else {
            // Deleted at once: the server answered with a status, not the object.
            return Ok(true);
        };
        let gone = kube::runtime::wait::await_condition(
            api,
            &target.name,
            kube::runtime::wait::conditions::is_deleted::<DynamicObject>(&uid),
        );
        match tokio::time::timeout(timeout, gone).await {
            Ok(Ok(_)) => Ok(true),
            Ok(Err(kube::runtime::wait::Error::ProbeFailed(error))) => Err(ApplyError::Api {
                object: target.describe(),
                message: format!(
                    "watching for its deletion: {}",
                    crate::kube_error::describe_watch(&error)
                ),
            }),
            Err(_) => Err(ApplyError::DeleteTimeout {
                object: target.describe(),
                timeout,
            }),
        }
    }
}

/// A field-manager conflict of server-side apply, as opposed to a lost race on the
/// resourceVersion (both are 409).
fn is_field_conflict(status: &kube::core::Status) -> bool {
    status
        .details
        .as_ref()
        .is_some_and(|d| d.causes.iter().any(|c| c.reason == "FieldManagerConflict"))
        || status.message.contains("conflict with")
}

fn api_error(target: &Target, error: kube::Error) -> ApplyError {
    let message = crate::kube_error::describe(&error);
    ApplyError::Api {
        object: target.describe(),
        message,
    }
}

/// Where a client-side merge's original (what the previous apply wrote) comes from.
enum Original {
    /// kubectl's annotation on the live object.
    LastApplied,
    /// The caller knows it (helm: the previous release manifest's object).
    Given(Option<Value>),
}

/// The manifest as kube's dynamic object.
fn dynamic(body: &Value) -> Result<DynamicObject, serde_json::Error> {
    serde_json::from_value(body.clone())
}

fn unreadable(target: &Target, error: serde_json::Error) -> ApplyError {
    ApplyError::Api {
        object: target.describe(),
        message: error.to_string(),
    }
}

fn without_last_applied(value: &Value) -> Value {
    let mut copy = value.clone();
    if let Some(annotations) = copy["metadata"]["annotations"].as_object_mut() {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty()
            && let Some(meta) = copy["metadata"].as_object_mut()
        {
            meta.remove("annotations");
        }
    }
    copy
}

/// The JSON merge patch that takes `current` to `modified` and removes what `original`
/// (the last applied configuration) had and `modified` no longer has. Fields only the
/// live object has (set by controllers or other clients) are left alone.
pub fn three_way_merge_patch(original: &Value, modified: &Value, current: &Value) -> Value {
    let mut patch = serde_json::Map::new();
    let empty = serde_json::Map::new();
    let modified_map = modified.as_object().unwrap_or(&empty);
    let current_map = current.as_object().unwrap_or(&empty);
    let original_map = original.as_object().unwrap_or(&empty);
    for (key, new) in modified_map {
        match (current_map.get(key), new) {
            (Some(live), _) if live == new => {}
            (Some(live @ Value::Object(_)), Value::Object(_)) => {
                let sub =
                    three_way_merge_patch(original_map.get(key).unwrap_or(&Value::Null), new, live);
                if sub.as_object().is_some_and(|s| !s.is_empty()) {
                    patch.insert(key.clone(), sub);
                }
            }
            // Null in a merge patch deletes; a null the manifest sets is left as it is.
            (None, Value::Null) => {}
            _ => {
                patch.insert(key.clone(), new.clone());
            }
        }
    }
    for key in original_map.keys() {
        if !modified_map.contains_key(key) && current_map.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    Value::Object(patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn three_way_patch_changes_adds_and_removes_only_what_was_applied() {
        let original = json!({"data": {"a": "1", "gone": "x"}, "keep": 1});
        let modified = json!({"data": {"a": "2", "new": "y"}, "keep": 1});
        let current = json!({
            "data": {"a": "1", "gone": "x", "theirs": "z"},
            "keep": 1,
            "status": {"x": 1}
        });
        assert_eq!(
            three_way_merge_patch(&original, &modified, &current),
            json!({"data": {"a": "2", "new": "y", "gone": null}})
        );
    }

    #[test]
    fn without_a_last_applied_nothing_is_removed() {
        let modified = json!({"spec": {"replicas": 2, "list": [1]}});
        let current = json!({"spec": {"replicas": 1, "list": [1, 2], "other": true}});
        assert_eq!(
            three_way_merge_patch(&Value::Null, &modified, &current),
            json!({"spec": {"replicas": 2, "list": [1]}})
        );
        assert_eq!(
            three_way_merge_patch(&Value::Null, &current, &current),
            json!({})
        );
    }

    #[test]
    fn the_last_applied_copy_leaves_out_itself() {
        let value = json!({"metadata": {"name": "a", "annotations": {LAST_APPLIED: "{}"}}});
        assert_eq!(
            without_last_applied(&value),
            json!({"metadata": {"name": "a"}})
        );
    }
}
