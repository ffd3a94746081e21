//! The Deployment controller, after kube-controller-manager's: one ReplicaSet per pod
//! template (named `<deployment>-<pod-template-hash>`, numbered by the
//! `deployment.kubernetes.io/revision` annotation, which `kubectl rollout
//! history/undo` read), rolling updates within maxSurge and maxUnavailable, Recreate,
//! proportional scaling, pausing, cleanup of old ReplicaSets past
//! `revisionHistoryLimit`, and the status and conditions (`Available`, `Progressing`
//! with its reasons and messages, `ProgressDeadlineExceeded`) that `kubectl rollout
//! status`, `kubectl wait` and kstatus read.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{Ctx, MANAGER, events, objects};
use crate::meta;
use crate::selector::LabelSelector;
use crate::store::ObjectKey;

pub const REVISION: &str = "deployment.kubernetes.io/revision";
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
pub const HASH_LABEL: &str = "pod-template-hash";

/// Deployment annotations a ReplicaSet does not copy.
const SKIPPED: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deployment.kubernetes.io/error-selector-overlapping-with",
    "deployment.kubernetes.io/selector-updated-at",
];

type Rs = Arc<Value>;

fn replicas(rs: &Value) -> i64 {
    rs["spec"]["replicas"].as_i64().unwrap_or(1)
}

fn status_count(rs: &Value, field: &str) -> i64 {
    rs["status"][field].as_i64().unwrap_or(0)
}

fn revision(rs: &Value) -> i64 {
    meta::annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn created(rs: &Value) -> (String, String) {
    (
        rs["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        meta::name(rs).to_string(),
    )
}

/// Empty maps and lists dropped, as the API machinery's semantic equality treats
/// them as absent (a typed round trip drops `annotations: {}`).
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), semantic(v)))
                .filter(|(_, v)| {
                    !matches!(v, Value::Object(m) if m.is_empty())
                        && !matches!(v, Value::Array(a) if a.is_empty())
                        && !v.is_null()
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

/// The pod template with the hash label taken out, for comparing templates.
fn without_hash(template: &Value) -> Value {
    let mut t = semantic(template);
    if let Some(labels) = t["metadata"]["labels"].as_object_mut() {
        labels.shift_remove(HASH_LABEL);
    }
    if t["metadata"]["labels"]
        .as_object()
        .is_some_and(Map::is_empty)
        && let Some(m) = t["metadata"].as_object_mut()
    {
        m.shift_remove("labels");
    }
    t
}

/// Resolved maxSurge and maxUnavailable (never both zero).
fn fenceposts(d: &Value) -> (i64, i64) {
    let want = replicas(d);
    if d["spec"]["strategy"]["type"] != "RollingUpdate" {
        return (0, 0);
    }
    let ru = &d["spec"]["strategy"]["rollingUpdate"];
    let surge = objects::int_or_percent(&ru["maxSurge"], want, true);
    let mut unavailable = objects::int_or_percent(&ru["maxUnavailable"], want, false);
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    (surge, unavailable.min(want))
}

struct Run<'a> {
    ctx: &'a Ctx,
    key: &'a ObjectKey,
    d: Arc<Value>,
    /// Progressing conditions set while creating or finding the new ReplicaSet.
    conditions: Vec<Value>,
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(d) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&d) {
        return;
    }
    let Some(selector) = LabelSelector::from_object(&d["spec"]["selector"]) else {
        return;
    };
    if selector.is_empty() {
        return;
    }
    let mut run = Run {
        ctx,
        key,
        conditions: objects::conditions(&d),
        d,
    };
    let all = objects::claim(ctx, "apps", "replicasets", &run.d, &selector);
    let paused = run.d["spec"]["paused"] == true;
    if paused || run.scaling_event(&all) {
        let (new_rs, olds) = run.sync_revision(&all, false);
        run.scale(new_rs.as_ref(), &olds);
        if paused {
            run.cleanup(&olds);
        }
        run.finish(false);
        return;
    }
    if run.d["spec"]["strategy"]["type"] == "Recreate" {
        run.recreate(&all);
    } else {
        run.rolling(&all);
    }
}

impl Run<'_> {
    fn ns(&self) -> &str {
        &self.key.namespace
    }

    fn name(&self) -> &str {
        &self.key.name
    }

    fn refresh(&self, all: &[Rs]) -> Vec<Rs> {
        all.iter()
            .filter_map(|rs| {
                objects::get(self.ctx, "apps", "replicasets", self.ns(), meta::name(rs))
            })
            .collect()
    }

    /// Splits the ReplicaSets into the one matching the template and the old ones.
    fn split(&self, all: &[Rs]) -> (Option<Rs>, Vec<Rs>) {
        let template = without_hash(&self.d["spec"]["template"]);
        let mut matching: Vec<&Rs> = all
            .iter()
            .filter(|rs| without_hash(&rs["spec"]["template"]) == template)
            .collect();
        matching.sort_by_key(|rs| created(rs));
        let new_rs = matching.first().map(|rs| Arc::clone(rs));
        let olds = all
            .iter()
            .filter(|rs| {
                new_rs
                    .as_ref()
                    .is_none_or(|n| meta::uid(n) != meta::uid(rs))
            })
            .cloned()
            .collect();
        (new_rs, olds)
    }

    fn scaling_event(&self, all: &[Rs]) -> bool {
        let (new_rs, olds) = self.split(all);
        let want = replicas(&self.d).to_string();
        new_rs
            .iter()
            .chain(olds.iter())
            .filter(|rs| replicas(rs) > 0)
            .any(|rs| meta::annotation(rs, DESIRED_REPLICAS).is_some_and(|a| a != want))
    }

    /// Finds (and with `create`, makes) the new ReplicaSet, brings its revision and
    /// annotations up to date, and the Deployment's revision annotation.
    fn sync_revision(&mut self, all: &[Rs], create: bool) -> (Option<Rs>, Vec<Rs>) {
        let (new_rs, olds) = self.split(all);
        let max_old = olds.iter().map(|rs| revision(rs)).max().unwrap_or(0);
        let next = max_old + 1;
        let d = Arc::clone(&self.d);
        let new_rs = match new_rs {
            Some(rs) => {
                let copied = copied_annotations(&d);
                let min_ready = d["spec"]["minReadySeconds"].clone();
                let current_rev = revision(&rs);
                objects::update(
                    self.ctx,
                    "apps",
                    "replicasets",
                    self.ns(),
                    meta::name(&rs),
                    MANAGER,
                    |o| {
                        let mut changed = false;
                        let m = meta::meta_mut(o);
                        let ann = m
                            .entry("annotations")
                            .or_insert_with(|| json!({}))
                            .as_object_mut()
                            .expect("annotations");
                        for (k, v) in &copied {
                            if ann.get(k) != Some(v) {
                                ann.insert(k.clone(), v.clone());
                                changed = true;
                            }
                        }
                        if current_rev < next {
                            if current_rev > 0 {
                                let history =
                                    match ann.get(REVISION_HISTORY).and_then(Value::as_str) {
                                        Some(h) if !h.is_empty() => format!("{h},{current_rev}"),
                                        _ => current_rev.to_string(),
                                    };
                                ann.insert(REVISION_HISTORY.into(), json!(history));
                            }
                            ann.insert(REVISION.into(), json!(next.to_string()));
                            changed = true;
                        }
                        if o["spec"]["minReadySeconds"] != min_ready && !min_ready.is_null() {
                            o["spec"]["minReadySeconds"] = min_ready.clone();
                            changed = true;
                        }
                        changed
                    },
                );
                if !self.conditions.iter().any(|c| c["type"] == "Progressing") && has_deadline(&d) {
                    set_dcond(
                        &mut self.conditions,
                        "Progressing",
                        "True",
                        "FoundNewReplicaSet",
                        &format!("Found new replica set \"{}\"", meta::name(&rs)),
                    );
                }
                objects::get(self.ctx, "apps", "replicasets", self.ns(), meta::name(&rs))
            }
            None if create => self.create_rs(all, next),
            None => None,
        };
        if let Some(rs) = &new_rs {
            let rev = meta::annotation(rs, REVISION).unwrap_or("").to_string();
            if meta::annotation(&d, REVISION) != Some(rev.as_str()) {
                objects::update(
                    self.ctx,
                    "apps",
                    "deployments",
                    self.ns(),
                    self.name(),
                    MANAGER,
                    |o| {
                        let m = meta::meta_mut(o);
                        let ann = m.entry("annotations").or_insert_with(|| json!({}));
                        ann[REVISION] = json!(rev);
                        true
                    },
                );
            }
        }
        (new_rs, olds)
    }

    fn create_rs(&mut self, all: &[Rs], rev: i64) -> Option<Rs> {
        let d = Arc::clone(&self.d);
        let collision = d["status"]["collisionCount"].as_i64().unwrap_or(0);
        let template = d["spec"]["template"].clone();
        let hash = template_hash(&template, collision);
        let name = format!("{}-{hash}", meta::name(&d));
        let want = replicas(&d);
        let (surge, _) = fenceposts(&d);
        let count = if d["spec"]["strategy"]["type"] == "Recreate" {
            want
        } else {
            let current: i64 = all.iter().map(|rs| replicas(rs)).sum();
            let max_total = want + surge;
            if current >= max_total {
                0
            } else {
                (max_total - current).min(want)
            }
        };
        let mut labels = template["metadata"]["labels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        labels.insert(HASH_LABEL.into(), json!(hash));
        let mut rs_template = template.clone();
        rs_template["metadata"]["labels"] = Value::Object(labels.clone());
        let mut selector = d["spec"]["selector"].clone();
        if !selector["matchLabels"].is_object() {
            selector["matchLabels"] = json!({});
        }
        selector["matchLabels"][HASH_LABEL] = json!(hash);
        let mut annotations = copied_annotations(&d);
        annotations.insert(REVISION.into(), json!(rev.to_string()));
        annotations.insert(DESIRED_REPLICAS.into(), json!(want.to_string()));
        annotations.insert(MAX_REPLICAS.into(), json!((want + surge).to_string()));
        let mut spec = json!({
            "replicas": count,
            "selector": selector,
            "template": rs_template,
        });
        if let Some(m) = d["spec"]["minReadySeconds"].as_i64().filter(|m| *m > 0) {
            spec["minReadySeconds"] = json!(m);
        }
        let rs = json!({
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": self.ns(),
                "labels": labels,
                "annotations": annotations,
                "ownerReferences": [objects::owner_ref(&d, true)],
            },
            "spec": spec,
        });
        match objects::create(self.ctx, "apps", "replicasets", self.ns(), rs, MANAGER) {
            Ok(created) => {
                if count > 0 {
                    events::normal(
                        self.ctx,
                        &d,
                        events::DEPLOYMENT,
                        "ScalingReplicaSet",
                        &format!("Scaled up replica set {name} from 0 to {count}"),
                    );
                }
                if has_deadline(&d) {
                    set_dcond(
                        &mut self.conditions,
                        "Progressing",
                        "True",
                        "NewReplicaSetCreated",
                        &format!("Created new replica set \"{name}\""),
                    );
                }
                objects::get(
                    self.ctx,
                    "apps",
                    "replicasets",
                    self.ns(),
                    meta::name(&created),
                )
            }
            Err(e) if e.code == 409 => {
                // A ReplicaSet of that name with another template: count a collision so
                // the next hash differs.
                let existing = objects::get(self.ctx, "apps", "replicasets", self.ns(), &name);
                if let Some(rs) = existing
                    && objects::controlled_by(&rs, meta::uid(&d))
                    && without_hash(&rs["spec"]["template"]) == without_hash(&template)
                {
                    return Some(rs);
                }
                objects::update_status(
                    self.ctx,
                    "apps",
                    "deployments",
                    self.ns(),
                    self.name(),
                    MANAGER,
                    |o| {
                        o["status"]["collisionCount"] = json!(collision + 1);
                        true
                    },
                );
                None
            }
            Err(e) => {
                set_dcond(
                    &mut self.conditions,
                    "Progressing",
                    "False",
                    "ReplicaSetCreateError",
                    &format!("Failed to create new replica set \"{name}\": {}", e.message),
                );
                events::warning(
                    self.ctx,
                    &d,
                    events::DEPLOYMENT,
                    "FailedCreate",
                    &format!("Failed to create new replica set \"{name}\": {}", e.message),
                );
                None
            }
        }
    }

    /// Sets a ReplicaSet's size and its desired/max replicas annotations; records the
    /// scaling event. Returns whether the size changed.
    fn scale_rs(&self, rs: &Value, to: i64) -> bool {
        let want = replicas(&self.d);
        let (surge, _) = fenceposts(&self.d);
        let from = replicas(rs);
        let desired = want.to_string();
        let max = (want + surge).to_string();
        objects::update(
            self.ctx,
            "apps",
            "replicasets",
            self.ns(),
            meta::name(rs),
            MANAGER,
            |o| {
                let mut changed = false;
                if replicas(o) != to {
                    o["spec"]["replicas"] = json!(to);
                    changed = true;
                }
                let m = meta::meta_mut(o);
                let ann = m.entry("annotations").or_insert_with(|| json!({}));
                for (k, v) in [(DESIRED_REPLICAS, &desired), (MAX_REPLICAS, &max)] {
                    if ann[k] != json!(v) {
                        ann[k] = json!(v);
                        changed = true;
                    }
                }
                changed
            },
        );
        if from == to {
            return false;
        }
        let direction = if to > from { "up" } else { "down" };
        events::normal(
            self.ctx,
            &self.d,
            events::DEPLOYMENT,
            "ScalingReplicaSet",
            &format!(
                "Scaled {direction} replica set {} from {from} to {to}",
                meta::name(rs)
            ),
        );
        true
    }

    fn rolling(&mut self, all: &[Rs]) {
        let (new_rs, olds) = self.sync_revision(all, true);
        let Some(new_rs) = new_rs else {
            self.finish(true);
            return;
        };
        let want = replicas(&self.d);
        let (surge, unavailable) = fenceposts(&self.d);
        let mut all_now: Vec<Rs> = olds.clone();
        all_now.push(Arc::clone(&new_rs));
        // Scale up, if we can.
        let new_size = replicas(&new_rs);
        if new_size != want {
            let target = if new_size > want {
                want
            } else {
                let current: i64 = all_now.iter().map(|rs| replicas(rs)).sum();
                let max_total = want + surge;
                if current >= max_total {
                    new_size
                } else {
                    new_size + (max_total - current).min(want - new_size)
                }
            };
            if target != new_size && self.scale_rs(&new_rs, target) {
                self.finish(true);
                return;
            }
        }
        // Scale down, if we can.
        let old_count: i64 = olds.iter().map(|rs| replicas(rs)).sum();
        if old_count > 0 {
            let all_count: i64 = all_now.iter().map(|rs| replicas(rs)).sum();
            let min_available = want - unavailable;
            let new_unavailable = replicas(&new_rs) - status_count(&new_rs, "availableReplicas");
            let max_down = all_count - min_available - new_unavailable;
            if max_down > 0 {
                let mut olds_sorted = olds.clone();
                olds_sorted.sort_by_key(|rs| created(rs));
                let mut scaled = 0;
                // Unhealthy old pods go first.
                let mut sizes: Vec<i64> = olds_sorted.iter().map(|rs| replicas(rs)).collect();
                for (i, rs) in olds_sorted.iter().enumerate() {
                    if scaled >= max_down {
                        break;
                    }
                    let unhealthy = sizes[i] - status_count(rs, "availableReplicas");
                    if sizes[i] == 0 || unhealthy <= 0 {
                        continue;
                    }
                    let n = (max_down - scaled).min(unhealthy);
                    sizes[i] -= n;
                    self.scale_rs(rs, sizes[i]);
                    scaled += n;
                }
                // Then available ones, keeping minAvailable.
                let available: i64 = all_now
                    .iter()
                    .map(|rs| status_count(rs, "availableReplicas"))
                    .sum();
                if available > min_available {
                    let total = available - min_available;
                    let mut down = 0;
                    for (i, rs) in olds_sorted.iter().enumerate() {
                        if down >= total {
                            break;
                        }
                        if sizes[i] == 0 {
                            continue;
                        }
                        let n = sizes[i].min(total - down);
                        sizes[i] -= n;
                        self.scale_rs(rs, sizes[i]);
                        down += n;
                    }
                    scaled += down;
                }
                if scaled > 0 {
                    self.finish(true);
                    return;
                }
            }
        }
        let refreshed = self.refresh(&olds);
        if complete(&self.d, &self.calculate(&self.refresh(all), Some(&new_rs))) {
            self.cleanup(&refreshed);
        }
        self.finish(true);
    }

    fn recreate(&mut self, all: &[Rs]) {
        let (new_rs, olds) = self.sync_revision(all, false);
        let mut scaled = false;
        for rs in olds.iter().filter(|rs| replicas(rs) > 0) {
            scaled |= self.scale_rs(rs, 0);
        }
        if scaled {
            self.finish(true);
            return;
        }
        let old_uids: Vec<&str> = olds.iter().map(|rs| meta::uid(rs)).collect();
        let old_running = objects::list(self.ctx, "", "pods", self.ns())
            .iter()
            .any(|p| {
                objects::controller_ref(p)
                    .is_some_and(|r| old_uids.contains(&r["uid"].as_str().unwrap_or("")))
                    && !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
            });
        if old_running {
            self.finish(true);
            return;
        }
        let new_rs = match new_rs {
            Some(rs) => Some(rs),
            None => self.sync_revision(all, true).0,
        };
        if let Some(rs) = &new_rs
            && replicas(rs) != replicas(&self.d)
        {
            self.scale_rs(rs, replicas(&self.d));
        }
        let all_now = self.refresh(all);
        if complete(&self.d, &self.calculate(&all_now, new_rs.as_ref())) {
            self.cleanup(&self.refresh(&olds));
        }
        self.finish(true);
    }

    /// Scaling outside a rollout: the one active ReplicaSet takes the new size, or
    /// every active one a share proportional to its size.
    fn scale(&self, new_rs: Option<&Rs>, olds: &[Rs]) {
        let want = replicas(&self.d);
        let mut by_age: Vec<Rs> = olds.to_vec();
        by_age.sort_by_key(|rs| std::cmp::Reverse(created(rs)));
        let mut active: Vec<Rs> = new_rs
            .into_iter()
            .cloned()
            .chain(by_age.iter().cloned())
            .filter(|rs| replicas(rs) > 0)
            .collect();
        if active.len() <= 1 {
            let target = active
                .first()
                .cloned()
                .or_else(|| new_rs.cloned())
                .or_else(|| by_age.first().cloned());
            if let Some(rs) = target {
                self.scale_rs(&rs, want);
            }
            return;
        }
        if let Some(n) = new_rs
            && replicas(n) == want
            && status_count(n, "availableReplicas") == want
        {
            for rs in olds.iter().filter(|rs| replicas(rs) > 0) {
                self.scale_rs(rs, 0);
            }
            return;
        }
        let (surge, _) = fenceposts(&self.d);
        let allowed = if want > 0 { want + surge } else { 0 };
        let current: i64 = active.iter().map(|rs| replicas(rs)).sum();
        let to_add = allowed - current;
        if to_add > 0 {
            active.sort_by_key(|rs| {
                (
                    std::cmp::Reverse(replicas(rs)),
                    std::cmp::Reverse(created(rs)),
                )
            });
        } else {
            active.sort_by_key(|rs| (std::cmp::Reverse(replicas(rs)), created(rs)));
        }
        let mut added = 0;
        let mut sizes: Vec<i64> = Vec::new();
        for rs in &active {
            let mut size = replicas(rs);
            if to_add != 0 && added != to_add {
                let annotated = meta::annotation(rs, MAX_REPLICAS)
                    .and_then(|a| a.parse::<i64>().ok())
                    .unwrap_or_else(|| status_count(&self.d, "replicas").max(1));
                let fraction = if want == 0 {
                    -replicas(rs)
                } else {
                    ((replicas(rs) * allowed) as f64 / annotated as f64).round() as i64
                        - replicas(rs)
                };
                let left = to_add - added;
                let p = if to_add > 0 {
                    fraction.min(left)
                } else {
                    fraction.max(left)
                };
                size += p;
                added += p;
            }
            sizes.push(size);
        }
        if let Some(first) = sizes.first_mut() {
            *first = (*first + to_add - added).max(0);
        }
        for (rs, size) in active.iter().zip(sizes) {
            self.scale_rs(rs, size.max(0));
        }
    }

    /// Deletes old, empty ReplicaSets past `revisionHistoryLimit`, lowest revision first.
    fn cleanup(&self, olds: &[Rs]) {
        let Some(limit) = self.d["spec"]["revisionHistoryLimit"].as_i64() else {
            return;
        };
        let mut cleanable: Vec<&Rs> = olds.iter().filter(|rs| !meta::is_deleting(rs)).collect();
        let diff = cleanable.len() as i64 - limit;
        if diff <= 0 {
            return;
        }
        cleanable.sort_by_key(|rs| (revision(rs), created(rs)));
        for rs in cleanable.iter().take(diff as usize) {
            let observed = status_count(rs, "observedGeneration");
            let generation = rs["metadata"]["generation"].as_i64().unwrap_or(0);
            if status_count(rs, "replicas") != 0 || replicas(rs) != 0 || generation > observed {
                continue;
            }
            let _ = objects::delete(
                self.ctx,
                "apps",
                "replicasets",
                self.ns(),
                meta::name(rs),
                None,
                None,
            );
        }
    }

    /// The status the ReplicaSets add up to (without conditions).
    fn calculate(&self, all: &[Rs], new_rs: Option<&Rs>) -> Map<String, Value> {
        let want = replicas(&self.d);
        let (_, unavailable_allowed) = fenceposts(&self.d);
        let new_uid = new_rs.map(|r| meta::uid(r).to_string());
        let sum = |f: &dyn Fn(&Value) -> i64| -> i64 { all.iter().map(|rs| f(rs)).sum() };
        let total_spec = sum(&|rs| replicas(rs));
        let actual = sum(&|rs| status_count(rs, "replicas"));
        let updated = all
            .iter()
            .filter(|rs| Some(meta::uid(rs).to_string()) == new_uid)
            .map(|rs| status_count(rs, "replicas"))
            .sum::<i64>();
        let ready = sum(&|rs| status_count(rs, "readyReplicas"));
        let available = sum(&|rs| status_count(rs, "availableReplicas"));
        let mut s = Map::new();
        s.insert(
            "observedGeneration".into(),
            json!(self.d["metadata"]["generation"].as_i64().unwrap_or(1)),
        );
        objects::set_count(&mut s, "replicas", actual);
        objects::set_count(&mut s, "updatedReplicas", updated);
        objects::set_count(&mut s, "readyReplicas", ready);
        objects::set_count(&mut s, "availableReplicas", available);
        objects::set_count(
            &mut s,
            "unavailableReplicas",
            (total_spec - available).max(0),
        );
        if let Some(c) = self.d["status"]["collisionCount"].as_i64() {
            s.insert("collisionCount".into(), json!(c));
        }
        s.insert(
            "__minAvailable".into(),
            json!(available >= want - unavailable_allowed),
        );
        s
    }

    /// Writes the status: counts, `Available`, and (with `rollout`) `Progressing`.
    fn finish(&mut self, rollout: bool) {
        let d = match objects::get(self.ctx, "apps", "deployments", self.ns(), self.name()) {
            Some(d) => d,
            None => return,
        };
        self.d = Arc::clone(&d);
        let selector = LabelSelector::from_object(&d["spec"]["selector"]).unwrap_or_default();
        let all: Vec<Rs> = objects::list(self.ctx, "apps", "replicasets", self.ns())
            .into_iter()
            .filter(|rs| objects::controlled_by(rs, meta::uid(&d)))
            .collect();
        let _ = selector;
        let (new_rs, _) = self.split(&all);
        let mut s = self.calculate(&all, new_rs.as_ref());
        let min_available = s.shift_remove("__minAvailable") == Some(json!(true));
        let mut conds = std::mem::take(&mut self.conditions);
        if min_available {
            set_dcond(
                &mut conds,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            );
        } else {
            set_dcond(
                &mut conds,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            );
        }
        let paused = d["spec"]["paused"] == true;
        let progressing = conds.iter().find(|c| c["type"] == "Progressing").cloned();
        if paused {
            if progressing
                .as_ref()
                .is_none_or(|c| c["reason"] != "DeploymentPaused")
            {
                set_dcond(
                    &mut conds,
                    "Progressing",
                    "Unknown",
                    "DeploymentPaused",
                    "Deployment is paused",
                );
            }
        } else if progressing
            .as_ref()
            .is_some_and(|c| c["reason"] == "DeploymentPaused")
        {
            set_dcond(
                &mut conds,
                "Progressing",
                "Unknown",
                "DeploymentResumed",
                "Deployment is resumed",
            );
        }
        let mut requeue = None;
        if rollout && !paused && has_deadline(&d) {
            let current = conds.iter().find(|c| c["type"] == "Progressing").cloned();
            let count =
                |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_i64).unwrap_or(0);
            let already_complete = count(&s, "replicas") == count(&s, "updatedReplicas")
                && current
                    .as_ref()
                    .is_some_and(|c| c["reason"] == "NewReplicaSetAvailable");
            let rs_name = new_rs.as_ref().map(|r| meta::name(r).to_string());
            if !already_complete {
                let old = d["status"].as_object().cloned().unwrap_or_default();
                if complete(&d, &s) {
                    let msg = match &rs_name {
                        Some(n) => format!("ReplicaSet \"{n}\" has successfully progressed."),
                        None => format!(
                            "Deployment \"{}\" has successfully progressed.",
                            self.name()
                        ),
                    };
                    set_dcond(
                        &mut conds,
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        &msg,
                    );
                } else if progressed(&old, &s) {
                    let msg = match &rs_name {
                        Some(n) => format!("ReplicaSet \"{n}\" is progressing."),
                        None => format!("Deployment \"{}\" is progressing.", self.name()),
                    };
                    let now = meta::now();
                    let mut c = json!({"type": "Progressing", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now, "reason": "ReplicaSetUpdated", "message": msg});
                    if let Some(cur) = &current {
                        if cur["status"] == "True" {
                            c["lastTransitionTime"] = cur["lastTransitionTime"].clone();
                        }
                        conds.retain(|x| x["type"] != "Progressing");
                    }
                    conds.push(c);
                } else if let Some(cur) = &current {
                    let deadline = d["spec"]["progressDeadlineSeconds"].as_i64().unwrap_or(600);
                    if cur["reason"] != "ProgressDeadlineExceeded" {
                        let since = cur["lastUpdateTime"]
                            .as_str()
                            .and_then(meta::age_seconds)
                            .unwrap_or(0);
                        if since > deadline {
                            let msg = match &rs_name {
                                Some(n) => format!("ReplicaSet \"{n}\" has timed out progressing."),
                                None => format!(
                                    "Deployment \"{}\" has timed out progressing.",
                                    self.name()
                                ),
                            };
                            set_dcond(
                                &mut conds,
                                "Progressing",
                                "False",
                                "ProgressDeadlineExceeded",
                                &msg,
                            );
                        } else {
                            requeue =
                                Some(Duration::from_secs((deadline - since + 1).max(1) as u64));
                        }
                    }
                }
            }
        }
        // ReplicaSet failures surface on the Deployment.
        let failure = new_rs.iter().chain(all.iter()).find_map(|rs| {
            objects::condition(rs, "ReplicaFailure")
                .filter(|c| c["status"] == "True")
                .cloned()
        });
        match failure {
            Some(f) => {
                set_dcond(
                    &mut conds,
                    "ReplicaFailure",
                    "True",
                    f["reason"].as_str().unwrap_or("FailedCreate"),
                    f["message"].as_str().unwrap_or(""),
                );
            }
            None => conds.retain(|c| c["type"] != "ReplicaFailure"),
        }
        if !conds.is_empty() {
            s.insert("conditions".into(), json!(conds));
        }
        let status = Value::Object(s);
        objects::update_status(
            self.ctx,
            "apps",
            "deployments",
            self.ns(),
            self.name(),
            MANAGER,
            |o| {
                if o["status"] == status {
                    return false;
                }
                o["status"] = status.clone();
                true
            },
        );
        if let Some(r) = requeue {
            self.ctx.requeue(self.key, r);
        }
    }
}

fn has_deadline(d: &Value) -> bool {
    d["spec"]["progressDeadlineSeconds"]
        .as_i64()
        .is_none_or(|s| s != i32::MAX as i64)
}

fn count(s: &Map<String, Value>, k: &str) -> i64 {
    s.get(k).and_then(Value::as_i64).unwrap_or(0)
}

/// Every replica updated and available, and no old one left.
fn complete(d: &Value, s: &Map<String, Value>) -> bool {
    let want = replicas(d);
    count(s, "updatedReplicas") == want
        && count(s, "replicas") == want
        && count(s, "availableReplicas") == want
        && count(s, "observedGeneration") >= d["metadata"]["generation"].as_i64().unwrap_or(0)
}

/// More updated, ready or available replicas, or fewer old ones, than before.
fn progressed(old: &Map<String, Value>, new: &Map<String, Value>) -> bool {
    let old_old = count(old, "replicas") - count(old, "updatedReplicas");
    let new_old = count(new, "replicas") - count(new, "updatedReplicas");
    count(new, "updatedReplicas") > count(old, "updatedReplicas")
        || new_old < old_old
        || count(new, "readyReplicas") > count(old, "readyReplicas")
        || count(new, "availableReplicas") > count(old, "availableReplicas")
}

/// SetDeploymentCondition: nothing changes when status and reason are the same; the
/// transition time is kept while the status is.
fn set_dcond(conds: &mut Vec<Value>, ty: &str, status: &str, reason: &str, message: &str) {
    let now = meta::now();
    let current = conds.iter().find(|c| c["type"] == ty).cloned();
    if let Some(c) = &current
        && c["status"] == status
        && c["reason"] == reason
    {
        return;
    }
    let mut cond = json!({"type": ty, "status": status, "lastUpdateTime": now, "lastTransitionTime": now, "reason": reason, "message": message});
    if let Some(c) = &current
        && c["status"] == status
    {
        cond["lastTransitionTime"] = c["lastTransitionTime"].clone();
    }
    conds.retain(|c| c["type"] != ty);
    conds.push(cond);
}

fn copied_annotations(d: &Value) -> Map<String, Value> {
    meta::meta(d)
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
        .map(|a| {
            a.iter()
                .filter(|(k, _)| !SKIPPED.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The pod-template-hash: a short hash of the template (and the collision count).
pub fn template_hash(template: &Value, collision: i64) -> String {
    let h = meta::hash_suffix(&json!([template, collision]));
    h[..10.min(h.len())].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenceposts_round_surge_up_and_unavailable_down() {
        let d = json!({"spec": {"replicas": 3, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
        assert_eq!(fenceposts(&d), (1, 0));
        let d = json!({"spec": {"replicas": 4, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}});
        assert_eq!(fenceposts(&d), (0, 1));
    }

    #[test]
    fn the_hash_label_does_not_make_templates_differ() {
        let a = json!({"metadata": {"labels": {"app": "x", HASH_LABEL: "abc"}}, "spec": {}});
        let b = json!({"metadata": {"labels": {"app": "x"}}, "spec": {}});
        assert_eq!(without_hash(&a), without_hash(&b));
    }

    #[test]
    fn a_condition_with_the_same_reason_is_left_alone() {
        let mut c = Vec::new();
        set_dcond(
            &mut c,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "m",
        );
        let first = c[0].clone();
        set_dcond(
            &mut c,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "m2",
        );
        assert_eq!(c[0], first);
        set_dcond(&mut c, "Progressing", "True", "NewReplicaSetCreated", "x");
        set_dcond(
            &mut c,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "ok",
        );
        assert_eq!(c[1]["type"], "Available");
    }
}
