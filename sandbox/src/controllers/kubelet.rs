//! The simulated kubelet: what a node does with the pods bound to it, as status and
//! events, with no container running.
//!
//! A pod's life is a function of the time since the kubelet first saw it: its sandbox
//! and containers are created (a quarter of the ready delay), init containers run one
//! after another (half the ready delay each), then the containers start and become
//! ready after the ready delay. Pods that run to completion (`restartPolicy` `Never` or
//! `OnFailure`) finish after the job duration. The [`super::faults`] annotations bend
//! this timeline. Each visit writes the status the timeline gives for now, records the
//! events passed since the last visit, and asks for a visit at the next change.
//!
//! A pod being deleted gracefully has its containers stopped (`Killing`) and is then
//! removed (a delete with a zero grace period), shortly, whatever its grace period.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::faults::{self, Fault};
use super::{Ctx, events, objects};
use crate::meta;
use crate::store::{Change, ObjectKey};

pub const MANAGER: &str = "kubelet";

/// Pods the kubelet is running, by uid, and the pod IPs in use.
#[derive(Default)]
pub struct State {
    sims: Mutex<HashMap<String, Sim>>,
    ips: Mutex<IpPool>,
}

#[derive(Debug, Clone)]
struct Sim {
    t0: Instant,
    wall: DateTime<Utc>,
    ip: String,
    /// Timeline events already recorded.
    emitted: usize,
    killing: bool,
}

#[derive(Default)]
struct IpPool {
    loaded: bool,
    used: HashSet<u32>,
    next: u32,
}

/// Pod IPs come from 10.244.0.0/16 (the first node's pod CIDR on kind and kubeadm).
const POD_NET: u32 = (10 << 24) | (244 << 16);
const POD_NET_SIZE: u32 = 1 << 16;

impl IpPool {
    fn allocate(&mut self) -> String {
        for _ in 0..POD_NET_SIZE {
            let offset = 2 + self.next % (POD_NET_SIZE - 3);
            self.next = self.next.wrapping_add(1);
            if self.used.insert(offset) {
                return ip_string(POD_NET + offset);
            }
        }
        // Every address taken: share the last one rather than fail a pod.
        ip_string(POD_NET + POD_NET_SIZE - 2)
    }

    fn release(&mut self, ip: &str) {
        if let Some(offset) = parse_ip(ip).and_then(|n| n.checked_sub(POD_NET))
            && offset < POD_NET_SIZE
        {
            self.used.remove(&offset);
        }
    }
}

pub fn ip_string(n: u32) -> String {
    let b = n.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

pub fn parse_ip(s: &str) -> Option<u32> {
    let parts: Vec<u8> = s
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    (parts.len() == 4).then(|| u32::from_be_bytes([parts[0], parts[1], parts[2], parts[3]]))
}

/// A deleted pod's IP and timeline are forgotten.
pub fn route(ctx: &Ctx, change: &Change) {
    if change.key.resource != "/pods" || change.object.is_some() {
        return;
    }
    let Some(previous) = &change.previous else {
        return;
    };
    let uid = meta::uid(previous);
    let sim = ctx
        .state
        .kubelet
        .sims
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(uid);
    let ip = sim
        .map(|s| s.ip)
        .or_else(|| previous["status"]["podIP"].as_str().map(String::from));
    if let Some(ip) = ip {
        ctx.state
            .kubelet
            .ips
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release(&ip);
    }
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(pod) = ctx.cluster.store.get(key) else {
        return;
    };
    let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
    // A kubelet runs only the pods bound to its own node: a pod on a node the sandbox
    // does not simulate keeps whatever status it is given, as on a cluster whose node
    // is gone.
    if node.is_empty() || !ctx.cluster.settings.nodes.contains(&node) {
        return;
    }
    if meta::is_deleting(&pod) {
        stop(ctx, key, &pod, &node);
        return;
    }
    let plan = Plan::of(ctx, &pod);
    let sim = sim_for(ctx, &pod);
    let elapsed = sim.t0.elapsed();
    let view = view(&plan, &pod, elapsed);
    let host_ip = host_ip(ctx, &node);
    let wall = sim.wall;
    let ip = sim.ip.clone();
    let status_view = view.clone();
    objects::update_status(ctx, "", "pods", &key.namespace, &key.name, MANAGER, |p| {
        write_status(p, &status_view, wall, &ip, &host_ip)
    });
    // Events passed since the last visit.
    let timeline = milestones(&plan, &pod, elapsed);
    let already = sim.emitted;
    if timeline.len() > already {
        for m in &timeline[already..] {
            events::container(
                ctx,
                &pod,
                &m.field_path,
                &node,
                m.warning,
                m.reason,
                &m.message,
            );
        }
        if let Some(s) = ctx
            .state
            .kubelet
            .sims
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(meta::uid(&pod))
        {
            s.emitted = timeline.len();
        }
    }
    if let Some(next) = view.next {
        let wait = next.saturating_sub(elapsed) + Duration::from_millis(2);
        ctx.requeue(key, wait);
    }
}

/// The pod's timeline: created now, or (after a restart of the sandbox) when its
/// status says it started.
fn sim_for(ctx: &Ctx, pod: &Value) -> Sim {
    let uid = meta::uid(pod).to_string();
    let mut sims = ctx
        .state
        .kubelet
        .sims
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = sims.get(&uid) {
        return s.clone();
    }
    let mut ips = ctx
        .state
        .kubelet
        .ips
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if !ips.loaded {
        ips.loaded = true;
        for p in objects::list(ctx, "", "pods", "") {
            if let Some(ip) = p["status"]["podIP"].as_str().and_then(parse_ip)
                && let Some(offset) = ip.checked_sub(POD_NET)
                && offset < POD_NET_SIZE
            {
                ips.used.insert(offset);
            }
        }
    }
    let now = Instant::now();
    let started = pod["status"]["startTime"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    let (t0, wall) = match started {
        Some(wall) => {
            let ago = (Utc::now() - wall).to_std().unwrap_or_default();
            (now.checked_sub(ago).unwrap_or(now), wall)
        }
        None => (now, Utc::now()),
    };
    let ip = match pod["status"]["podIP"].as_str() {
        Some(ip) if !ip.is_empty() => ip.to_string(),
        _ => ips.allocate(),
    };
    let mut sim = Sim {
        t0,
        wall,
        ip,
        emitted: 0,
        killing: false,
    };
    if started.is_some() {
        // Events of a restored pod were recorded by the sandbox that ran it.
        let plan = Plan::of_settings(&ctx.cluster.settings, pod);
        sim.emitted = milestones(&plan, pod, t0.elapsed()).len();
    }
    sims.insert(uid, sim.clone());
    sim
}

fn host_ip(ctx: &Ctx, node: &str) -> String {
    objects::get(ctx, "", "nodes", "", node)
        .and_then(|n| {
            n["status"]["addresses"]
                .as_array()?
                .iter()
                .find(|a| a["type"] == "InternalIP")
                .and_then(|a| a["address"].as_str().map(String::from))
        })
        .unwrap_or_else(|| "127.0.0.1".to_string())
}

/// Graceful deletion: the containers are stopped, then the pod is removed.
fn stop(ctx: &Ctx, key: &ObjectKey, pod: &Value, node: &str) {
    let grace = pod["metadata"]["deletionGracePeriodSeconds"]
        .as_i64()
        .unwrap_or(0);
    if grace <= 0 {
        return;
    }
    let uid = meta::uid(pod).to_string();
    let first = {
        let mut sims = ctx
            .state
            .kubelet
            .sims
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let sim = sims.entry(uid.clone()).or_insert_with(|| Sim {
            t0: Instant::now(),
            wall: Utc::now(),
            ip: String::new(),
            emitted: usize::MAX,
            killing: false,
        });
        let first = !sim.killing;
        sim.killing = true;
        first
    };
    let stop_delay = (ctx.cluster.settings.pod_ready_delay / 2)
        .clamp(Duration::from_millis(10), Duration::from_secs(grace as u64));
    if first {
        let finished = matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        );
        if !finished {
            for c in pod["status"]["containerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if c["state"]["running"].is_object() {
                    let name = c["name"].as_str().unwrap_or("");
                    events::container(
                        ctx,
                        pod,
                        &format!("spec.containers{{{name}}}"),
                        node,
                        false,
                        "Killing",
                        &format!("Stopping container {name}"),
                    );
                }
            }
        }
        ctx.requeue(key, stop_delay);
        return;
    }
    if let Some(t) = objects::key_target(ctx, key) {
        let _ = objects::delete_target(ctx, &t, None, Some(0), Some(&uid));
    }
}

/// What a pod is told to do: its containers, how long things take, its fault.
#[derive(Debug, Clone)]
struct Plan {
    fault: Fault,
    /// The ready delay.
    d: Duration,
    run_for: Option<Duration>,
    restart: String,
    inits: Vec<Ctr>,
    mains: Vec<Ctr>,
}

#[derive(Debug, Clone)]
struct Ctr {
    name: String,
    image: String,
    pull_always: bool,
    readiness: Option<String>,
}

impl Plan {
    fn of(ctx: &Ctx, pod: &Value) -> Plan {
        Plan::of_settings(&ctx.cluster.settings, pod)
    }

    fn of_settings(settings: &crate::settings::Settings, pod: &Value) -> Plan {
        let d = faults::duration(pod, faults::READY_DELAY)
            .unwrap_or(settings.pod_ready_delay)
            .max(Duration::from_millis(10));
        let restart = pod["spec"]["restartPolicy"]
            .as_str()
            .unwrap_or("Always")
            .to_string();
        let run_for = (restart != "Always").then(|| {
            faults::duration(pod, faults::RUN_DURATION)
                .unwrap_or(settings.job_duration)
                .max(Duration::from_millis(10))
        });
        let ctrs = |list: &str| -> Vec<Ctr> {
            pod["spec"][list]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| Ctr {
                    name: c["name"].as_str().unwrap_or("").to_string(),
                    image: c["image"].as_str().unwrap_or("").to_string(),
                    pull_always: c["imagePullPolicy"] == "Always",
                    readiness: readiness_failure(c),
                })
                .collect()
        };
        Plan {
            fault: faults::fault(pod),
            d,
            run_for,
            restart,
            inits: ctrs("initContainers"),
            mains: ctrs("containers"),
        }
    }

    fn creating(&self) -> Duration {
        self.d / 4
    }

    fn init_step(&self) -> Duration {
        self.d / 2
    }

    fn init_start(&self, i: usize) -> Duration {
        self.creating() + self.init_step() * i as u32
    }

    /// When the main containers start.
    fn main_start(&self) -> Duration {
        self.init_start(self.inits.len())
    }

    fn crashes(&self) -> bool {
        self.fault == Fault::CrashLoop
    }
}

/// What a failing readiness probe of this container reports.
fn readiness_failure(c: &Value) -> Option<String> {
    let p = c.get("readinessProbe")?;
    Some(if p.get("httpGet").is_some() {
        "Readiness probe failed: HTTP probe failed with statuscode: 503".to_string()
    } else if let Some(port) = p["tcpSocket"].get("port") {
        let port = match port {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        format!("Readiness probe failed: dial tcp: connect to port {port}: connection refused")
    } else if p.get("grpc").is_some() {
        "Readiness probe failed: service unhealthy (responded with \"NOT_SERVING\")".to_string()
    } else {
        "Readiness probe failed: command exited with a non-zero status".to_string()
    })
}

/// A container that ended.
#[derive(Debug, Clone, PartialEq)]
struct Term {
    code: i64,
    reason: &'static str,
    start: Duration,
    end: Duration,
    attempt: u32,
}

#[derive(Debug, Clone, PartialEq)]
enum St {
    Waiting {
        reason: &'static str,
        message: Option<String>,
        last: Option<Term>,
        restarts: u32,
    },
    Running {
        since: Duration,
        restarts: u32,
        last: Option<Term>,
        ready: bool,
    },
    Done {
        term: Term,
        restarts: u32,
        last: Option<Term>,
    },
}

/// Back-off before restart `n` (1-based), scaled from the kubelet's 10s doubling to
/// the ready delay, capped at 16 times it.
fn backoff(n: u32, d: Duration) -> Duration {
    d * (1u32 << n.saturating_sub(1).min(4))
}

/// What the kubelet's back-off message says for restart `n` (10s doubling, 5m cap).
fn backoff_text(n: u32) -> String {
    let secs = (10u64 << n.saturating_sub(1).min(5)).min(300);
    if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m{}s", secs / 60, secs % 60)
    }
}

/// One run of a restarting container: started at `start`, ends at `end`, the next run
/// starts at `next`.
struct Cycle {
    k: u32,
    start: Duration,
    end: Duration,
    next: Duration,
}

fn cycles(start: Duration, run: Duration, d: Duration) -> impl Iterator<Item = Cycle> {
    let mut k = 0;
    let mut s = start;
    std::iter::from_fn(move || {
        let end = s + run;
        let next = end + backoff(k + 1, d);
        let c = Cycle {
            k,
            start: s,
            end,
            next,
        };
        k += 1;
        s = next;
        Some(c)
    })
}

#[derive(Debug, Clone)]
struct View {
    phase: &'static str,
    sandbox_ready: bool,
    inits: Vec<(String, St)>,
    mains: Vec<(String, St)>,
    next: Option<Duration>,
}

fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The pod as the timeline has it `e` after the kubelet first saw it.
fn view(plan: &Plan, pod: &Value, e: Duration) -> View {
    let mut next = None;
    let creating = plan.creating();
    let sandbox_ready = e >= creating;
    if !sandbox_ready {
        next = Some(creating);
    }
    let mut inits = Vec::new();
    for (i, c) in plan.inits.iter().enumerate() {
        let start = plan.init_start(i);
        let end = start + plan.init_step();
        let st = if e < start {
            next = earliest(next, Some(start));
            St::Waiting {
                reason: "PodInitializing",
                message: None,
                last: None,
                restarts: 0,
            }
        } else if e < end {
            next = earliest(next, Some(end));
            St::Running {
                since: start,
                restarts: 0,
                last: None,
                ready: false,
            }
        } else {
            St::Done {
                term: Term {
                    code: 0,
                    reason: "Completed",
                    start,
                    end,
                    attempt: 0,
                },
                restarts: 0,
                last: None,
            }
        };
        inits.push((c.name.clone(), st));
    }
    let s = plan.main_start();
    let mut mains = Vec::new();
    for (i, c) in plan.mains.iter().enumerate() {
        let (st, n) = main_state(plan, pod, i, c, s, e);
        next = earliest(next, n);
        mains.push((c.name.clone(), st));
    }
    let initialized = inits.iter().all(|(_, st)| matches!(st, St::Done { .. }));
    let phase = if !initialized {
        "Pending"
    } else {
        let mut waiting = 0;
        let mut running = 0;
        let mut failed = 0;
        let mut succeeded = 0;
        for (_, st) in &mains {
            match st {
                St::Waiting { last: None, .. } => waiting += 1,
                St::Waiting { .. } | St::Running { .. } => running += 1,
                St::Done { term, .. } if term.code == 0 => succeeded += 1,
                St::Done { .. } => failed += 1,
            }
        }
        if waiting > 0 {
            "Pending"
        } else if running > 0 {
            "Running"
        } else if failed > 0 {
            "Failed"
        } else if succeeded > 0 {
            "Succeeded"
        } else {
            "Pending"
        }
    };
    if matches!(phase, "Succeeded" | "Failed") {
        next = None;
    }
    View {
        phase,
        sandbox_ready: sandbox_ready && !matches!(phase, "Succeeded" | "Failed"),
        inits,
        mains,
        next,
    }
}

fn main_state(
    plan: &Plan,
    pod: &Value,
    i: usize,
    c: &Ctr,
    s: Duration,
    e: Duration,
) -> (St, Option<Duration>) {
    let d = plan.d;
    if e < s {
        let reason = if plan.inits.is_empty() {
            "ContainerCreating"
        } else {
            "PodInitializing"
        };
        return (
            St::Waiting {
                reason,
                message: None,
                last: None,
                restarts: 0,
            },
            Some(s),
        );
    }
    if i == 0 && plan.fault == Fault::ImagePull {
        for cy in cycles(s, d, d) {
            if e < cy.end {
                return (
                    St::Waiting {
                        reason: "ErrImagePull",
                        message: Some(pull_error(&c.image)),
                        last: None,
                        restarts: 0,
                    },
                    Some(cy.end),
                );
            }
            if e < cy.next {
                return (
                    St::Waiting {
                        reason: "ImagePullBackOff",
                        message: Some(format!("Back-off pulling image \"{}\"", c.image)),
                        last: None,
                        restarts: 0,
                    },
                    Some(cy.next),
                );
            }
        }
    }
    if i == 0 && plan.crashes() {
        let mut last = None;
        for cy in cycles(s, d, d) {
            if e < cy.end {
                return (
                    St::Running {
                        since: cy.start,
                        restarts: cy.k,
                        last,
                        ready: false,
                    },
                    Some(cy.end),
                );
            }
            let term = Term {
                code: 1,
                reason: "Error",
                start: cy.start,
                end: cy.end,
                attempt: cy.k,
            };
            if plan.restart == "Never" {
                return (
                    St::Done {
                        term,
                        restarts: cy.k,
                        last,
                    },
                    None,
                );
            }
            if e < cy.next {
                return (
                    St::Waiting {
                        reason: "CrashLoopBackOff",
                        message: Some(format!(
                            "back-off {} restarting failed container={} pod={}_{}({})",
                            backoff_text(cy.k + 1),
                            c.name,
                            meta::name(pod),
                            meta::namespace(pod),
                            meta::uid(pod)
                        )),
                        last: Some(term),
                        restarts: cy.k + 1,
                    },
                    Some(cy.next),
                );
            }
            last = Some(term);
        }
    }
    let ready_at = s + d;
    if let Some(run) = plan.run_for {
        let end = s + run;
        if e >= end {
            let failed = plan.fault == Fault::JobFail;
            return (
                St::Done {
                    term: Term {
                        code: if failed { 1 } else { 0 },
                        reason: if failed { "Error" } else { "Completed" },
                        start: s,
                        end,
                        attempt: 0,
                    },
                    restarts: 0,
                    last: None,
                },
                None,
            );
        }
        let ready = e >= ready_at && plan.fault != Fault::NeverReady;
        let n = if e < ready_at { ready_at.min(end) } else { end };
        return (
            St::Running {
                since: s,
                restarts: 0,
                last: None,
                ready,
            },
            Some(n),
        );
    }
    let never = plan.fault == Fault::NeverReady;
    let ready = e >= ready_at && !never;
    (
        St::Running {
            since: s,
            restarts: 0,
            last: None,
            ready,
        },
        (e < ready_at && !never).then_some(ready_at),
    )
}

fn pull_error(image: &str) -> String {
    let reference = normalize_image(image);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{reference}\": failed to resolve reference \"{reference}\": {reference}: not found"
    )
}

/// `nginx` → `docker.io/library/nginx:latest`, as the runtime reports images.
pub fn normalize_image(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let first = name.split('/').next().unwrap_or("");
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut full = if has_registry {
        name.to_string()
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    let last = full.rsplit('/').next().unwrap_or("");
    if digest.is_none() && !last.contains(':') {
        full.push_str(":latest");
    }
    match digest {
        Some(d) => format!("{full}@{d}"),
        None => full,
    }
}

fn image_id(image: &str) -> String {
    use sha2::Digest as _;
    let full = normalize_image(image);
    if full.contains("@sha256:") {
        return full;
    }
    let repo = match full.rsplit_once(':') {
        Some((r, tag)) if !tag.contains('/') => r.to_string(),
        _ => full.clone(),
    };
    format!(
        "{repo}@sha256:{}",
        hex::encode(sha2::Sha256::digest(full.as_bytes()))
    )
}

fn container_id(pod: &Value, name: &str, attempt: u32) -> String {
    use sha2::Digest as _;
    let seed = format!("{}/{name}/{attempt}", meta::uid(pod));
    format!(
        "containerd://{}",
        hex::encode(sha2::Sha256::digest(seed.as_bytes()))
    )
}

fn at(wall: DateTime<Utc>, offset: Duration) -> String {
    let t = wall + chrono::Duration::from_std(offset).unwrap_or_default();
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn container_status(pod: &Value, name: &str, image: &str, st: &St, wall: DateTime<Utc>) -> Value {
    let term_json = |t: &Term| {
        json!({"terminated": {
            "exitCode": t.code,
            "reason": t.reason,
            "startedAt": at(wall, t.start),
            "finishedAt": at(wall, t.end),
            "containerID": container_id(pod, name, t.attempt),
        }})
    };
    let last_json = |l: &Option<Term>| l.as_ref().map(term_json).unwrap_or_else(|| json!({}));
    let mut s = Map::new();
    s.insert("name".into(), json!(name));
    s.insert("image".into(), json!(image));
    s.insert("imageID".into(), json!(""));
    match st {
        St::Waiting {
            reason,
            message,
            last,
            restarts,
        } => {
            let mut w = json!({"reason": reason});
            if let Some(m) = message {
                w["message"] = json!(m);
            }
            s.insert("state".into(), json!({"waiting": w}));
            s.insert("lastState".into(), last_json(last));
            s.insert("ready".into(), json!(false));
            s.insert("started".into(), json!(false));
            s.insert("restartCount".into(), json!(restarts));
            if let Some(l) = last {
                s.insert("imageID".into(), json!(image_id(image)));
                s.insert(
                    "containerID".into(),
                    json!(container_id(pod, name, l.attempt)),
                );
            }
        }
        St::Running {
            since,
            restarts,
            last,
            ready,
        } => {
            s.insert(
                "state".into(),
                json!({"running": {"startedAt": at(wall, *since)}}),
            );
            s.insert("lastState".into(), last_json(last));
            s.insert("ready".into(), json!(ready));
            s.insert("started".into(), json!(true));
            s.insert("restartCount".into(), json!(restarts));
            s.insert("imageID".into(), json!(image_id(image)));
            s.insert(
                "containerID".into(),
                json!(container_id(pod, name, *restarts)),
            );
        }
        St::Done {
            term,
            restarts,
            last,
        } => {
            s.insert("state".into(), term_json(term));
            s.insert("lastState".into(), last_json(last));
            s.insert("ready".into(), json!(false));
            s.insert("started".into(), json!(false));
            s.insert("restartCount".into(), json!(restarts));
            s.insert("imageID".into(), json!(image_id(image)));
            s.insert(
                "containerID".into(),
                json!(container_id(pod, name, term.attempt)),
            );
        }
    }
    Value::Object(s)
}

/// Writes the view into a pod's status; returns whether anything changed.
fn write_status(p: &mut Value, v: &View, wall: DateTime<Utc>, ip: &str, host_ip: &str) -> bool {
    let before = p["status"].clone();
    let spec = p["spec"].clone();
    let image_of = |list: &str, name: &str| -> String {
        spec[list]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["name"] == name)
            .and_then(|c| c["image"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let pod_view = p.clone();
    let inits: Vec<Value> = v
        .inits
        .iter()
        .map(|(n, st)| container_status(&pod_view, n, &image_of("initContainers", n), st, wall))
        .collect();
    let mains: Vec<Value> = v
        .mains
        .iter()
        .map(|(n, st)| container_status(&pod_view, n, &image_of("containers", n), st, wall))
        .collect();
    let terminal = matches!(v.phase, "Succeeded" | "Failed");
    let not_initialized: Vec<&str> = v
        .inits
        .iter()
        .filter(|(_, st)| !matches!(st, St::Done { term, .. } if term.code == 0))
        .map(|(n, _)| n.as_str())
        .collect();
    let not_ready: Vec<&str> = v
        .mains
        .iter()
        .filter(|(_, st)| !matches!(st, St::Running { ready: true, .. }))
        .map(|(n, _)| n.as_str())
        .collect();
    let status = p["status"].as_object_mut().cloned().unwrap_or_default();
    let mut conds: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let generation = p["metadata"]["generation"].as_i64().unwrap_or(1);
    let mut set = |ty: &str, ok: bool, reason: Option<&str>, message: Option<String>| {
        let mut c = json!({"type": ty, "status": if ok { "True" } else { "False" }, "lastProbeTime": null, "observedGeneration": generation});
        if let Some(r) = reason {
            c["reason"] = json!(r);
        }
        if let Some(m) = message {
            c["message"] = json!(m);
        }
        objects::set_condition(&mut conds, c, &["lastTransitionTime"]);
    };
    set("PodReadyToStartContainers", v.sandbox_ready, None, None);
    if not_initialized.is_empty() {
        set("Initialized", true, None, None);
    } else if terminal {
        set("Initialized", false, Some("PodCompleted"), None);
    } else {
        set(
            "Initialized",
            false,
            Some("ContainersNotInitialized"),
            Some(format!(
                "containers with incomplete status: [{}]",
                not_initialized.join(" ")
            )),
        );
    }
    for ty in ["Ready", "ContainersReady"] {
        if terminal {
            set(ty, false, Some("PodCompleted"), None);
        } else if not_ready.is_empty() {
            set(ty, true, None, None);
        } else {
            set(
                ty,
                false,
                Some("ContainersNotReady"),
                Some(format!(
                    "containers with unready status: [{}]",
                    not_ready.join(" ")
                )),
            );
        }
    }
    // The order a real pod's conditions are listed in.
    let order = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ];
    conds.sort_by_key(|c| {
        order
            .iter()
            .position(|o| c["type"] == *o)
            .unwrap_or(order.len())
    });
    let mut s = status;
    s.insert("phase".into(), json!(v.phase));
    s.insert("observedGeneration".into(), json!(generation));
    s.insert("conditions".into(), json!(conds));
    s.insert("hostIP".into(), json!(host_ip));
    s.insert("hostIPs".into(), json!([{"ip": host_ip}]));
    s.insert("podIP".into(), json!(ip));
    s.insert("podIPs".into(), json!([{"ip": ip}]));
    if !s.contains_key("startTime") {
        s.insert("startTime".into(), json!(at(wall, Duration::ZERO)));
    }
    if inits.is_empty() {
        s.shift_remove("initContainerStatuses");
    } else {
        s.insert("initContainerStatuses".into(), json!(inits));
    }
    s.insert("containerStatuses".into(), json!(mains));
    let after = Value::Object(s);
    if after == before {
        return false;
    }
    p["status"] = after;
    true
}

/// An event on the timeline.
#[derive(Debug, Clone)]
struct Milestone {
    at: Duration,
    field_path: String,
    warning: bool,
    reason: &'static str,
    message: String,
}

/// The timeline's events up to `e`, in time order.
fn milestones(plan: &Plan, pod: &Value, e: Duration) -> Vec<Milestone> {
    let mut out: Vec<Milestone> = Vec::new();
    let mut push =
        |at: Duration, fp: &str, warning: bool, reason: &'static str, message: String| {
            if at <= e {
                out.push(Milestone {
                    at,
                    field_path: fp.to_string(),
                    warning,
                    reason,
                    message,
                });
            }
        };
    let start_events = |push: &mut dyn FnMut(Duration, &str, bool, &'static str, String),
                        at: Duration,
                        fp: &str,
                        c: &Ctr| {
        if c.pull_always {
            push(
                at,
                fp,
                false,
                "Pulling",
                format!("Pulling image \"{}\"", c.image),
            );
            let took = 200 + (c.image.len() as u64 * 37) % 800;
            push(
                at,
                fp,
                false,
                "Pulled",
                format!(
                    "Successfully pulled image \"{}\" in {took}ms ({took}ms including waiting). Image size: {} bytes.",
                    c.image,
                    10_000_000 + (c.image.len() as u64 * 7_919_113) % 90_000_000
                ),
            );
        } else {
            push(
                at,
                fp,
                false,
                "Pulled",
                format!("Container image \"{}\" already present on machine", c.image),
            );
        }
        push(
            at,
            fp,
            false,
            "Created",
            format!("Created container: {}", c.name),
        );
        push(
            at,
            fp,
            false,
            "Started",
            format!("Started container {}", c.name),
        );
    };
    for (i, c) in plan.inits.iter().enumerate() {
        let fp = format!("spec.initContainers{{{}}}", c.name);
        start_events(&mut push, plan.init_start(i), &fp, c);
    }
    let s = plan.main_start();
    let d = plan.d;
    for (i, c) in plan.mains.iter().enumerate() {
        let fp = format!("spec.containers{{{}}}", c.name);
        if e < s {
            break;
        }
        if i == 0 && plan.fault == Fault::ImagePull {
            for cy in cycles(s, d, d) {
                if cy.start > e {
                    break;
                }
                push(
                    cy.start,
                    &fp,
                    false,
                    "Pulling",
                    format!("Pulling image \"{}\"", c.image),
                );
                push(
                    cy.start,
                    &fp,
                    true,
                    "Failed",
                    format!(
                        "Failed to pull image \"{}\": {}",
                        c.image,
                        pull_error(&c.image)
                    ),
                );
                push(cy.start, &fp, true, "Failed", "Error: ErrImagePull".into());
                push(
                    cy.end,
                    &fp,
                    false,
                    "BackOff",
                    format!("Back-off pulling image \"{}\"", c.image),
                );
                push(
                    cy.end,
                    &fp,
                    true,
                    "Failed",
                    "Error: ImagePullBackOff".into(),
                );
            }
            continue;
        }
        if i == 0 && plan.crashes() {
            for cy in cycles(s, d, d) {
                if cy.start > e {
                    break;
                }
                start_events(&mut push, cy.start, &fp, c);
                if plan.restart == "Never" {
                    break;
                }
                push(
                    cy.end,
                    &fp,
                    true,
                    "BackOff",
                    format!(
                        "Back-off restarting failed container {} in pod {}_{}({})",
                        c.name,
                        meta::name(pod),
                        meta::namespace(pod),
                        meta::uid(pod)
                    ),
                );
            }
            continue;
        }
        start_events(&mut push, s, &fp, c);
        if plan.fault == Fault::NeverReady
            && let Some(msg) = &c.readiness
        {
            push(s + d, &fp, true, "Unhealthy", msg.clone());
        }
    }
    out.sort_by_key(|m| m.at);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    fn pod(annotations: Value, restart: &str) -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "default", "uid": "u", "annotations": annotations},
            "spec": {"restartPolicy": restart, "containers": [{"name": "app", "image": "nginx:1.25"}]},
        })
    }

    fn settings() -> Settings {
        Settings {
            pod_ready_delay: Duration::from_millis(400),
            job_duration: Duration::from_millis(1000),
            ..Settings::default()
        }
    }

    #[test]
    fn a_pod_is_created_runs_then_is_ready() {
        let p = pod(json!({}), "Always");
        let plan = Plan::of_settings(&settings(), &p);
        let v = view(&plan, &p, Duration::from_millis(50));
        assert_eq!(v.phase, "Pending");
        let v = view(&plan, &p, Duration::from_millis(200));
        assert_eq!(v.phase, "Running");
        assert!(matches!(v.mains[0].1, St::Running { ready: false, .. }));
        assert_eq!(v.next, Some(Duration::from_millis(500)));
        let v = view(&plan, &p, Duration::from_millis(600));
        assert!(matches!(v.mains[0].1, St::Running { ready: true, .. }));
        assert_eq!(v.next, None);
    }

    #[test]
    fn crash_loops_count_restarts() {
        let p = pod(json!({faults::FAIL: "crashloop"}), "Always");
        let plan = Plan::of_settings(&settings(), &p);
        // Starts at 100ms, exits at 500ms, back-off 400ms, runs 900..1300, back-off 800ms.
        let v = view(&plan, &p, Duration::from_millis(600));
        assert!(matches!(
            v.mains[0].1,
            St::Waiting {
                reason: "CrashLoopBackOff",
                restarts: 1,
                ..
            }
        ));
        assert_eq!(v.phase, "Running");
        let v = view(&plan, &p, Duration::from_millis(1400));
        assert!(matches!(v.mains[0].1, St::Waiting { restarts: 2, .. }));
        let events = milestones(&plan, &p, Duration::from_millis(1400));
        assert_eq!(events.iter().filter(|m| m.reason == "BackOff").count(), 2);
    }

    #[test]
    fn job_pods_complete_or_fail() {
        let p = pod(json!({}), "Never");
        let plan = Plan::of_settings(&settings(), &p);
        assert_eq!(
            view(&plan, &p, Duration::from_millis(1200)).phase,
            "Succeeded"
        );
        let p = pod(json!({faults::FAIL: "job-fail"}), "Never");
        let plan = Plan::of_settings(&settings(), &p);
        assert_eq!(view(&plan, &p, Duration::from_millis(1200)).phase, "Failed");
    }

    #[test]
    fn image_pull_failures_keep_the_pod_pending() {
        let p = pod(json!({faults::FAIL: "image-pull"}), "Always");
        let plan = Plan::of_settings(&settings(), &p);
        let v = view(&plan, &p, Duration::from_millis(200));
        assert_eq!(v.phase, "Pending");
        assert!(matches!(
            v.mains[0].1,
            St::Waiting {
                reason: "ErrImagePull",
                ..
            }
        ));
        let v = view(&plan, &p, Duration::from_millis(600));
        assert!(matches!(
            v.mains[0].1,
            St::Waiting {
                reason: "ImagePullBackOff",
                ..
            }
        ));
    }

    #[test]
    fn images_are_normalized_as_the_runtime_reports_them() {
        assert_eq!(normalize_image("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(
            normalize_image("bitnami/redis:7"),
            "docker.io/bitnami/redis:7"
        );
        assert_eq!(normalize_image("ghcr.io/a/b:1"), "ghcr.io/a/b:1");
        assert_eq!(
            normalize_image("localhost:5000/x"),
            "localhost:5000/x:latest"
        );
    }
}
