//! The CronJob controller: a Job from the template at each time the schedule names
//! (only the latest missed one, within `startingDeadlineSeconds`), named
//! `<cronjob>-<minutes since the epoch>`, with `concurrencyPolicy`, `suspend`, the
//! history limits, and status `active`, `lastScheduleTime`, `lastSuccessfulTime`.
//!
//! Tests need not wait for the next minute: the annotation
//! [`super::faults::CRON_INTERVAL`] (or [`crate::Settings::cron_interval`]) makes a
//! CronJob fire every interval instead, its Jobs then named by the second.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::cron::Schedule;
use super::{Ctx, MANAGER, events, faults, objects};
use crate::meta;
use crate::store::ObjectKey;

const SCHEDULED: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// When interval-driven CronJobs last fired, by uid (wall time, sub-second).
#[derive(Default)]
pub struct State {
    fired: Mutex<HashMap<String, DateTime<Utc>>>,
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn finished(job: &Value) -> Option<&'static str> {
    for ty in ["Complete", "Failed"] {
        if objects::condition(job, ty).is_some_and(|c| c["status"] == "True") {
            return Some(if ty == "Complete" {
                "Complete"
            } else {
                "Failed"
            });
        }
    }
    None
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(cj) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&cj) {
        return;
    }
    let uid = meta::uid(&cj).to_string();
    let jobs: Vec<Arc<Value>> = objects::list(ctx, "batch", "jobs", &key.namespace)
        .into_iter()
        .filter(|j| objects::controlled_by(j, &uid))
        .collect();
    // Finished jobs leave `active`; the limits prune the oldest.
    let mut active = Vec::new();
    let mut last_success: Option<String> = cj["status"]["lastSuccessfulTime"]
        .as_str()
        .map(String::from);
    let previously_active: Vec<String> = cj["status"]["active"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["uid"].as_str().map(String::from))
        .collect();
    let mut succeeded_jobs = Vec::new();
    let mut failed_jobs = Vec::new();
    for j in &jobs {
        match finished(j) {
            None if !meta::is_deleting(j) => active.push(Arc::clone(j)),
            None => {}
            Some(state) => {
                if previously_active.iter().any(|u| u == meta::uid(j)) {
                    events::normal(
                        ctx,
                        &cj,
                        events::CRONJOB,
                        "SawCompletedJob",
                        &format!("Saw completed job: {}, condition: {state}", meta::name(j)),
                    );
                }
                if state == "Complete" {
                    if let Some(t) = j["status"]["completionTime"].as_str()
                        && last_success.as_deref().is_none_or(|l| l < t)
                    {
                        last_success = Some(t.to_string());
                    }
                    succeeded_jobs.push(Arc::clone(j));
                } else {
                    failed_jobs.push(Arc::clone(j));
                }
            }
        }
    }
    for (list, limit) in [
        (
            &mut succeeded_jobs,
            cj["spec"]["successfulJobsHistoryLimit"]
                .as_i64()
                .unwrap_or(3),
        ),
        (
            &mut failed_jobs,
            cj["spec"]["failedJobsHistoryLimit"].as_i64().unwrap_or(1),
        ),
    ] {
        list.retain(|j| !meta::is_deleting(j));
        list.sort_by_key(|j| j["status"]["startTime"].as_str().unwrap_or("").to_string());
        let extra = list.len() as i64 - limit.max(0);
        for j in list.iter().take(extra.max(0) as usize) {
            if objects::delete(
                ctx,
                "batch",
                "jobs",
                &key.namespace,
                meta::name(j),
                Some("Background"),
                None,
            )
            .is_ok()
            {
                events::normal(
                    ctx,
                    &cj,
                    events::CRONJOB,
                    "SuccessfulDelete",
                    &format!("Deleted job {}", meta::name(j)),
                );
            }
        }
    }

    let now = Utc::now();
    let interval =
        faults::duration(&cj, faults::CRON_INTERVAL).or(ctx.cluster.settings.cron_interval);
    let last_scheduled = cj["status"]["lastScheduleTime"]
        .as_str()
        .and_then(parse_time);
    let created = cj["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(parse_time)
        .unwrap_or(now);
    let mut scheduled_now: Option<DateTime<Utc>> = None;
    let mut wait: Option<Duration> = None;
    if cj["spec"]["suspend"] != true {
        let due = match interval {
            Some(every) => {
                let every = every.max(Duration::from_millis(100));
                let mut fired = ctx
                    .state
                    .cronjobs
                    .fired
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let last = *fired.entry(uid.clone()).or_insert_with(|| {
                    last_scheduled
                        .unwrap_or(created)
                        .max(now - chrono::Duration::from_std(every).unwrap_or_default())
                });
                let next = last + chrono::Duration::from_std(every).unwrap_or_default();
                if next <= now {
                    fired.insert(uid.clone(), now);
                    wait = Some(every);
                    Some(now)
                } else {
                    wait = (next - now).to_std().ok();
                    None
                }
            }
            None => match Schedule::parse(cj["spec"]["schedule"].as_str().unwrap_or("")) {
                Err(e) => {
                    events::warning(
                        ctx,
                        &cj,
                        events::CRONJOB,
                        "UnparseableSchedule",
                        &format!(
                            "unparseable schedule: {:?} : {e}",
                            cj["spec"]["schedule"].as_str().unwrap_or("")
                        ),
                    );
                    None
                }
                Ok(schedule) => {
                    let mut latest = None;
                    let mut t = last_scheduled.unwrap_or(created);
                    // The latest missed time only, as the controller starts one Job.
                    for _ in 0..100_000 {
                        match schedule.next(t) {
                            Some(n) if n <= now => {
                                latest = Some(n);
                                t = n;
                            }
                            Some(n) => {
                                wait = (n - now).to_std().ok();
                                break;
                            }
                            None => break,
                        }
                    }
                    let deadline = cj["spec"]["startingDeadlineSeconds"].as_i64();
                    latest.filter(|l| deadline.is_none_or(|d| (now - *l).num_seconds() <= d))
                }
            },
        };
        if let Some(when) = due {
            let policy = cj["spec"]["concurrencyPolicy"].as_str().unwrap_or("Allow");
            let skip = policy == "Forbid" && !active.is_empty();
            if skip {
                events::normal(
                    ctx,
                    &cj,
                    events::CRONJOB,
                    "JobAlreadyActive",
                    "Not starting job because prior execution is running and concurrency policy is Forbid",
                );
            } else {
                if policy == "Replace" {
                    for j in active.drain(..) {
                        if objects::delete(
                            ctx,
                            "batch",
                            "jobs",
                            &key.namespace,
                            meta::name(&j),
                            Some("Background"),
                            None,
                        )
                        .is_ok()
                        {
                            events::normal(
                                ctx,
                                &cj,
                                events::CRONJOB,
                                "SuccessfulDelete",
                                &format!("Deleted job {}", meta::name(&j)),
                            );
                        }
                    }
                }
                let suffix = if interval.is_some() {
                    when.timestamp()
                } else {
                    when.timestamp() / 60
                };
                let name = format!("{}-{suffix}", meta::name(&cj));
                if let Some(job) = create_job(ctx, key, &cj, &name, when) {
                    active.push(job);
                }
                scheduled_now = Some(when);
            }
        }
    }
    let active_refs: Vec<Value> = active
        .iter()
        .map(|j| json!({"apiVersion": "batch/v1", "kind": "Job", "name": meta::name(j), "namespace": key.namespace, "uid": meta::uid(j), "resourceVersion": meta::resource_version(j)}))
        .collect();
    objects::update_status(
        ctx,
        "batch",
        "cronjobs",
        &key.namespace,
        &key.name,
        MANAGER,
        |o| {
            let before = o["status"].clone();
            if !o["status"].is_object() {
                o["status"] = json!({});
            }
            let s = o["status"].as_object_mut().expect("status");
            if active_refs.is_empty() {
                s.shift_remove("active");
            } else {
                s.insert("active".into(), json!(active_refs));
            }
            if let Some(t) = scheduled_now {
                s.insert(
                    "lastScheduleTime".into(),
                    json!(t.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                );
            }
            if let Some(t) = &last_success {
                s.insert("lastSuccessfulTime".into(), json!(t));
            }
            o["status"] != before
        },
    );
    if let Some(w) = wait {
        ctx.requeue(key, w + Duration::from_millis(5));
    }
}

fn create_job(
    ctx: &Ctx,
    key: &ObjectKey,
    cj: &Value,
    name: &str,
    when: DateTime<Utc>,
) -> Option<Arc<Value>> {
    let template = &cj["spec"]["jobTemplate"];
    let mut metadata = json!({
        "name": name,
        "namespace": key.namespace,
        "ownerReferences": [objects::owner_ref(cj, true)],
    });
    for k in ["labels", "annotations"] {
        if let Some(v) = template["metadata"].get(k).filter(|v| v.is_object()) {
            metadata[k] = v.clone();
        }
    }
    metadata["annotations"][SCHEDULED] = json!(when.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": template["spec"].clone(),
    });
    match objects::create(ctx, "batch", "jobs", &key.namespace, job, MANAGER) {
        Ok(j) => {
            events::normal(
                ctx,
                cj,
                events::CRONJOB,
                "SuccessfulCreate",
                &format!("Created job {}", meta::name(&j)),
            );
            objects::get(ctx, "batch", "jobs", &key.namespace, meta::name(&j))
        }
        Err(e) if e.code == 409 => None,
        Err(e) => {
            events::warning(
                ctx,
                cj,
                events::CRONJOB,
                "FailedCreate",
                &format!("Error creating job: {}", e.message),
            );
            None
        }
    }
}
