//! The Job controller, as Kubernetes 1.34 runs it: pods carry the
//! `batch.kubernetes.io/job-tracking` finalizer until they are counted, up to
//! `parallelism` run at once until `completions` succeed (`Indexed` jobs run one pod
//! per index), and the conditions go `SuccessCriteriaMet` then `Complete`, or
//! `FailureTarget` then `Failed` (`BackoffLimitExceeded`, `DeadlineExceeded`), the
//! final one once no pod of the Job is left running. Finished Jobs with
//! `ttlSecondsAfterFinished` are deleted when it runs out, as the TTL controller does.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, events, objects};
use crate::meta;
use crate::selector::LabelSelector;
use crate::store::ObjectKey;

pub const TRACKING: &str = "batch.kubernetes.io/job-tracking";
const INDEX: &str = "batch.kubernetes.io/job-completion-index";

fn finished_condition(job: &Value) -> Option<&Value> {
    ["Complete", "Failed"]
        .iter()
        .find_map(|t| objects::condition(job, t).filter(|c| c["status"] == "True"))
}

fn terminal(pod: &Value) -> Option<bool> {
    match pod["status"]["phase"].as_str() {
        Some("Succeeded") => Some(true),
        Some("Failed") => Some(false),
        _ => None,
    }
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(job) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&job) {
        release_all(ctx, key, &job);
        return;
    }
    let selector = LabelSelector::from_object(&job["spec"]["selector"]).unwrap_or_default();
    let pods = objects::claim(ctx, "", "pods", &job, &selector);
    if let Some(done) = finished_condition(&job) {
        release_all(ctx, key, &job);
        ttl(ctx, key, &job, done);
        return;
    }
    let spec = &job["spec"];
    let parallelism = spec["parallelism"].as_i64().unwrap_or(1);
    let completions = spec["completions"].as_i64();
    let backoff_limit = spec["backoffLimit"].as_i64().unwrap_or(6);
    let indexed = spec["completionMode"] == "Indexed";
    let suspended = spec["suspend"] == true;

    // Count pods that finished (or went) since the last visit, and let them go.
    let mut succeeded = job["status"]["succeeded"].as_i64().unwrap_or(0);
    let mut failed = job["status"]["failed"].as_i64().unwrap_or(0);
    let mut completed: BTreeSet<i64> =
        parse_indexes(job["status"]["completedIndexes"].as_str().unwrap_or(""));
    for p in &pods {
        if !meta::finalizers(p).iter().any(|f| f == TRACKING) {
            continue;
        }
        let outcome = terminal(p).or(meta::is_deleting(p).then_some(false));
        let Some(ok) = outcome else {
            continue;
        };
        if ok {
            succeeded += 1;
            if let Some(i) = meta::annotation(p, INDEX).and_then(|i| i.parse().ok()) {
                completed.insert(i);
            }
        } else {
            failed += 1;
        }
        release(ctx, key, p);
    }
    let pods: Vec<Arc<Value>> = pods
        .iter()
        .filter_map(|p| objects::get(ctx, "", "pods", &key.namespace, meta::name(p)))
        .collect();
    let active: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| terminal(p).is_none() && !meta::is_deleting(p))
        .collect();
    let terminating = pods.iter().filter(|p| meta::is_deleting(p)).count() as i64;

    let mut conds = objects::conditions(&job);
    let now = meta::now();
    let cond = |ty: &str, reason: &str, message: &str| json!({"type": ty, "status": "True", "lastProbeTime": now, "lastTransitionTime": now, "reason": reason, "message": message});
    let has = |conds: &Vec<Value>, ty: &str| {
        conds
            .iter()
            .any(|c| c["type"] == ty && c["status"] == "True")
    };
    let started = job["status"]["startTime"].as_str().map(String::from);
    let deadline_passed = spec["activeDeadlineSeconds"].as_i64().is_some_and(|d| {
        started
            .as_deref()
            .and_then(meta::age_seconds)
            .is_some_and(|age| age >= d)
    });
    let success = if indexed {
        completions.is_some_and(|c| completed.len() as i64 >= c)
    } else {
        match completions {
            Some(c) => succeeded >= c,
            None => succeeded > 0 && active.is_empty(),
        }
    };
    if !has(&conds, "SuccessCriteriaMet") && !has(&conds, "FailureTarget") {
        if success {
            conds.push(cond(
                "SuccessCriteriaMet",
                "CompletionsReached",
                "Reached expected number of succeeded pods",
            ));
        } else if failed > backoff_limit {
            conds.push(cond(
                "FailureTarget",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ));
            events::warning(
                ctx,
                &job,
                events::JOB,
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            );
        } else if deadline_passed {
            conds.push(cond(
                "FailureTarget",
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            ));
            events::warning(
                ctx,
                &job,
                events::JOB,
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            );
        }
    }
    let ending = has(&conds, "SuccessCriteriaMet") || has(&conds, "FailureTarget");
    let mut completion_time = None;
    if ending {
        for p in &active {
            let _ = objects::delete(ctx, "", "pods", &key.namespace, meta::name(p), None, None);
        }
        let left = pods
            .iter()
            .any(|p| meta::finalizers(p).iter().any(|f| f == TRACKING));
        if !left && active.is_empty() {
            if has(&conds, "SuccessCriteriaMet") {
                conds.push(cond(
                    "Complete",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                ));
                completion_time = Some(now.clone());
                events::normal(ctx, &job, events::JOB, "Completed", "Job completed");
            } else {
                let failure = conds
                    .iter()
                    .find(|c| c["type"] == "FailureTarget")
                    .cloned()
                    .unwrap_or_default();
                conds.push(cond(
                    "Failed",
                    failure["reason"].as_str().unwrap_or("BackoffLimitExceeded"),
                    failure["message"].as_str().unwrap_or(""),
                ));
            }
        }
    } else if suspended {
        for p in &active {
            let _ = objects::delete(ctx, "", "pods", &key.namespace, meta::name(p), None, None);
        }
        if !has(&conds, "Suspended") {
            conds.retain(|c| c["type"] != "Suspended");
            conds.push(cond("Suspended", "JobSuspended", "Job suspended"));
            events::normal(ctx, &job, events::JOB, "Suspended", "Job suspended");
        }
    } else {
        if has(&conds, "Suspended") {
            conds.retain(|c| c["type"] != "Suspended");
            conds.push(json!({"type": "Suspended", "status": "False", "lastProbeTime": now, "lastTransitionTime": now, "reason": "JobResumed", "message": "Job resumed"}));
            events::normal(ctx, &job, events::JOB, "Resumed", "Job resumed");
        }
        create_pods(
            ctx,
            key,
            &job,
            &active,
            parallelism,
            completions,
            succeeded,
            indexed,
            &completed,
        );
    }
    let active_now = objects::list(ctx, "", "pods", &key.namespace)
        .into_iter()
        .filter(|p| {
            objects::controlled_by(p, meta::uid(&job))
                && terminal(p).is_none()
                && !meta::is_deleting(p)
        })
        .collect::<Vec<_>>();
    let ready = active_now
        .iter()
        .filter(|p| super::replicaset::is_ready(p))
        .count() as i64;
    let completed_text = format_indexes(&completed);
    objects::update_status(
        ctx,
        "batch",
        "jobs",
        &key.namespace,
        &key.name,
        MANAGER,
        |o| {
            let before = o["status"].clone();
            let s = &mut o["status"];
            if !s.is_object() {
                *s = json!({});
            }
            if s["startTime"].is_null() && !suspended {
                s["startTime"] = json!(meta::now());
            }
            if let Some(t) = &completion_time {
                s["completionTime"] = json!(t);
            }
            let m = s.as_object_mut().expect("status");
            objects::set_count(m, "active", active_now.len() as i64);
            objects::set_count(m, "succeeded", succeeded);
            objects::set_count(m, "failed", failed);
            m.insert("ready".into(), json!(ready));
            m.insert("terminating".into(), json!(terminating));
            m.insert("uncountedTerminatedPods".into(), json!({}));
            if indexed && !completed_text.is_empty() {
                m.insert("completedIndexes".into(), json!(completed_text));
            }
            if conds.is_empty() {
                m.shift_remove("conditions");
            } else {
                m.insert("conditions".into(), json!(conds));
            }
            o["status"] != before
        },
    );
    if let Some(d) = spec["activeDeadlineSeconds"].as_i64()
        && !ending
    {
        let age = started.as_deref().and_then(meta::age_seconds).unwrap_or(0);
        ctx.requeue(key, Duration::from_secs((d - age).max(1) as u64));
    }
}

#[allow(clippy::too_many_arguments)]
fn create_pods(
    ctx: &Ctx,
    key: &ObjectKey,
    job: &Value,
    active: &[&Arc<Value>],
    parallelism: i64,
    completions: Option<i64>,
    succeeded: i64,
    indexed: bool,
    completed: &BTreeSet<i64>,
) {
    let mut template = job["spec"]["template"].clone();
    let mut finalizers = template["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    finalizers.push(json!(TRACKING));
    template["metadata"]["finalizers"] = json!(finalizers);
    let name = meta::name(job);
    if indexed {
        let total = completions.unwrap_or(parallelism);
        let running: BTreeSet<i64> = active
            .iter()
            .filter_map(|p| meta::annotation(p, INDEX).and_then(|i| i.parse().ok()))
            .collect();
        let mut slots = parallelism - active.len() as i64;
        for i in 0..total {
            if slots <= 0 {
                break;
            }
            if completed.contains(&i) || running.contains(&i) {
                continue;
            }
            let mut t = template.clone();
            t["metadata"]["annotations"][INDEX] = json!(i.to_string());
            t["metadata"]["labels"][INDEX] = json!(i.to_string());
            if t["spec"]["hostname"].is_null() {
                t["spec"]["hostname"] = json!(format!("{name}-{i}"));
            }
            let pod = objects::pod_from_template(job, &t, None, &format!("{name}-{i}-"));
            if !create_one(ctx, key, job, pod) {
                return;
            }
            slots -= 1;
        }
        return;
    }
    let remaining = match completions {
        Some(c) => c - succeeded,
        None if succeeded > 0 => 0,
        None => parallelism,
    };
    let want = parallelism.min(remaining).max(0);
    for _ in active.len() as i64..want {
        let pod = objects::pod_from_template(job, &template, None, &format!("{name}-"));
        if !create_one(ctx, key, job, pod) {
            return;
        }
    }
}

fn create_one(ctx: &Ctx, key: &ObjectKey, job: &Value, pod: Value) -> bool {
    match objects::create(ctx, "", "pods", &key.namespace, pod, MANAGER) {
        Ok(p) => {
            events::normal(
                ctx,
                job,
                events::JOB,
                "SuccessfulCreate",
                &format!("Created pod: {}", meta::name(&p)),
            );
            true
        }
        Err(e) => {
            events::warning(
                ctx,
                job,
                events::JOB,
                "FailedCreate",
                &format!("Error creating: {}", e.message),
            );
            ctx.requeue(key, Duration::from_secs(1));
            false
        }
    }
}

/// Takes the tracking finalizer off a pod.
fn release(ctx: &Ctx, key: &ObjectKey, pod: &Value) {
    objects::update(
        ctx,
        "",
        "pods",
        &key.namespace,
        meta::name(pod),
        MANAGER,
        |o| {
            let mut f = meta::finalizers(o);
            let before = f.len();
            f.retain(|x| x != TRACKING);
            meta::set_finalizers(o, &f);
            f.len() != before
        },
    );
}

fn release_all(ctx: &Ctx, key: &ObjectKey, job: &Value) {
    for p in objects::list(ctx, "", "pods", &key.namespace) {
        if objects::controlled_by(&p, meta::uid(job))
            && meta::finalizers(&p).iter().any(|f| f == TRACKING)
        {
            release(ctx, key, &p);
        }
    }
}

/// How long the TTL-after-finished controller takes, at the least, to delete a Job whose
/// time is up. On a cluster its informer, queue and requests take a moment; a client
/// watching the Job (helm waiting for a hook with `ttlSecondsAfterFinished: 0`) sees it
/// complete before it disappears, and relies on that.
const TTL_LATENCY: Duration = Duration::from_millis(500);

/// When each finished Job whose TTL ran out was first seen so (by uid).
#[derive(Default)]
pub struct State {
    expired: Mutex<HashMap<String, std::time::Instant>>,
}

/// The TTL-after-finished controller.
fn ttl(ctx: &Ctx, key: &ObjectKey, job: &Value, done: &Value) {
    let Some(ttl) = job["spec"]["ttlSecondsAfterFinished"].as_i64() else {
        return;
    };
    let finished = job["status"]["completionTime"]
        .as_str()
        .or_else(|| done["lastTransitionTime"].as_str())
        .and_then(meta::age_seconds)
        .unwrap_or(0);
    if finished >= ttl {
        let uid = meta::uid(job).to_string();
        let mut expired = ctx
            .state
            .jobs
            .expired
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let waited = expired
            .entry(uid.clone())
            .or_insert_with(std::time::Instant::now)
            .elapsed();
        if waited < TTL_LATENCY {
            ctx.requeue(key, TTL_LATENCY - waited);
            return;
        }
        expired.remove(&uid);
        drop(expired);
        if let Some(t) = objects::key_target(ctx, key) {
            let _ = objects::delete_target(ctx, &t, Some("Foreground"), None, Some(&uid));
        }
    } else {
        ctx.requeue(key, Duration::from_secs((ttl - finished).max(1) as u64));
    }
}

fn parse_indexes(text: &str) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i64>(), b.parse::<i64>()) {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(n) = part.parse() {
                    out.insert(n);
                }
            }
        }
    }
    out
}

/// `0,2-4`: completed indexes as the status lists them.
fn format_indexes(set: &BTreeSet<i64>) -> String {
    let mut parts = Vec::new();
    let mut iter = set.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end = iter.next().unwrap_or(end);
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_indexes_round_trip() {
        let s = parse_indexes("0,2-4,7");
        assert_eq!(s.len(), 5);
        assert_eq!(format_indexes(&s), "0,2-4,7");
    }
}
