//! Simulated controllers: what kube-controller-manager, the scheduler and the kubelet
//! visibly do, driven by the store's change stream through one work queue of object
//! keys (deduplicated, with delayed re-queues for timed transitions).
//!
//! Every change puts its own key on the queue, the keys of the objects that own it
//! (a pod's ReplicaSet, a ReplicaSet's Deployment), and, when it was deleted, the keys
//! of its dependents (for the garbage collector). A few controllers route more (pods
//! to the Services selecting them, claims to the pods waiting for them).
//!
//! How pods behave can be steered per object with annotations: see [`faults`].

pub mod admission;
pub mod crds;
pub mod cron;
pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod events;
pub mod faults;
pub mod gc;
pub mod job;
pub mod kubelet;
pub mod namespace;
pub mod node;
pub mod objects;
pub mod owners;
pub mod replicaset;
pub mod revisions;
pub mod scheduler;
pub mod serviceaccounts;
pub mod services;
pub mod statefulset;
pub mod volumes;

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::cluster::Cluster;
use crate::store::{Change, ObjectKey};

/// Keys waiting to be reconciled, each at most once.
#[derive(Default)]
pub struct Queue {
    pending: Mutex<(VecDeque<ObjectKey>, HashSet<ObjectKey>)>,
    notify: Notify,
}

impl Queue {
    pub fn add(&self, key: ObjectKey) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if p.1.insert(key.clone()) {
            p.0.push_back(key);
            self.notify.notify_one();
        }
    }

    /// Adds `key` after `delay` (a pod turning ready, a job finishing).
    pub fn add_after(self: &Arc<Self>, key: ObjectKey, delay: Duration) {
        let queue = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            queue.add(key);
        });
    }

    async fn next(&self) -> ObjectKey {
        loop {
            {
                let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(key) = p.0.pop_front() {
                    p.1.remove(&key);
                    return key;
                }
            }
            self.notify.notified().await;
        }
    }
}

/// What the controllers remember between visits (none of it is API state: after a
/// restart it is rebuilt from the objects).
#[derive(Default)]
pub struct State {
    pub owners: owners::Index,
    pub kubelet: kubelet::State,
    pub events: events::Recorder,
    pub cronjobs: cronjob::State,
    pub services: services::State,
    pub jobs: job::State,
}

/// What a reconcile step sees: the cluster, the queue (to ask for later visits) and
/// the controllers' memory.
#[derive(Clone)]
pub struct Ctx {
    pub cluster: Arc<Cluster>,
    pub queue: Arc<Queue>,
    pub state: Arc<State>,
}

impl Ctx {
    /// Reconcile `key` again after `delay`.
    pub fn requeue(&self, key: &ObjectKey, delay: Duration) {
        self.queue.add_after(key.clone(), delay);
    }
}

/// The field manager kube-controller-manager's controllers write as.
pub const MANAGER: &str = "kube-controller-manager";

/// Starts the controllers; they run until the runtime stops.
pub fn spawn(cluster: Arc<Cluster>) {
    let ctx = Ctx {
        cluster: Arc::clone(&cluster),
        queue: Arc::new(Queue::default()),
        state: Arc::new(State::default()),
    };
    // Types of Established CRDs are served before the first request can name them.
    crds::register_all(&cluster);
    let mut changes = cluster.store.subscribe();
    for (key, object) in cluster.store.all() {
        ctx.state
            .owners
            .record(&ctx.cluster, &key, None, Some(&object));
        ctx.queue.add(key);
    }
    let router = ctx.clone();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => route(&router, &change),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    for (key, object) in router.cluster.store.all() {
                        router
                            .state
                            .owners
                            .record(&router.cluster, &key, None, Some(&object));
                        router.queue.add(key);
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    tokio::spawn(async move {
        loop {
            let key = ctx.queue.next().await;
            reconcile(&ctx, &key);
        }
    });
}

/// Which keys a change makes worth another look.
fn route(ctx: &Ctx, change: &Change) {
    if is_event(&change.key) {
        return;
    }
    ctx.queue.add(change.key.clone());
    // A namespaced object changing may let its terminating namespace finish.
    if !change.key.namespace.is_empty() && change.object.is_none() {
        ctx.queue.add(namespace_key(&change.key.namespace));
    }
    owners::route(ctx, change);
    for hook in ROUTES {
        hook(ctx, change);
    }
}

fn is_event(key: &ObjectKey) -> bool {
    key.resource == "/events" || key.resource == "events.k8s.io/events"
}

pub fn namespace_key(name: &str) -> ObjectKey {
    ObjectKey {
        resource: "/namespaces".into(),
        namespace: String::new(),
        name: name.to_string(),
    }
}

type RouteFn = fn(&Ctx, &Change);
type ReconcileFn = fn(&Ctx, &ObjectKey);

/// Extra routing: controllers that care about other objects' changes.
const ROUTES: &[RouteFn] = &[
    kubelet::route,
    services::route,
    volumes::route,
    serviceaccounts::route,
    daemonset::route,
    crds::route,
];

/// Reconcilers by resource key.
const RECONCILERS: &[(&str, ReconcileFn)] = &[
    ("/nodes", node::reconcile),
    ("/namespaces", namespace::reconcile),
    ("/namespaces", serviceaccounts::reconcile_namespace),
    ("/pods", scheduler::reconcile),
    ("/pods", kubelet::reconcile),
    ("apps/replicasets", replicaset::reconcile),
    ("apps/deployments", deployment::reconcile),
    ("apps/statefulsets", statefulset::reconcile),
    ("apps/daemonsets", daemonset::reconcile),
    ("batch/jobs", job::reconcile),
    ("batch/cronjobs", cronjob::reconcile),
    ("/services", services::reconcile),
    ("/persistentvolumeclaims", volumes::reconcile_claim),
    ("/persistentvolumes", volumes::reconcile_volume),
    (
        "apiextensions.k8s.io/customresourcedefinitions",
        crds::reconcile,
    ),
];

fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    for (resource, f) in RECONCILERS {
        if *resource == key.resource {
            f(ctx, key);
        }
    }
    gc::reconcile(ctx, key);
}
