//! Simulated controllers: what kube-controller-manager, the scheduler and the kubelet
//! visibly do, driven by the store's change stream through one work queue of object
//! keys (deduplicated, with delayed re-queues for timed transitions).

pub mod namespace;

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

/// What a reconcile step sees: the cluster and the queue, to ask for later visits.
#[derive(Clone)]
pub struct Ctx {
    pub cluster: Arc<Cluster>,
    pub queue: Arc<Queue>,
}

/// The field manager controllers write as.
pub const MANAGER: &str = "kube-controller-manager";

/// Starts the controllers; they run until the runtime stops.
pub fn spawn(cluster: Arc<Cluster>) {
    let ctx = Ctx {
        cluster: Arc::clone(&cluster),
        queue: Arc::new(Queue::default()),
    };
    let mut changes = cluster.store.subscribe();
    for (key, _) in cluster.store.all() {
        ctx.queue.add(key);
    }
    let router = ctx.clone();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => route(&router, &change),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    for (key, _) in router.cluster.store.all() {
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
    ctx.queue.add(change.key.clone());
    // A namespaced object changing may let its terminating namespace finish.
    if !change.key.namespace.is_empty() && change.object.is_none() {
        ctx.queue.add(ObjectKey {
            resource: "/namespaces".into(),
            namespace: String::new(),
            name: change.key.namespace.clone(),
        });
    }
    for hook in ROUTES {
        hook(ctx, change);
    }
}

type RouteFn = fn(&Ctx, &Change);
type ReconcileFn = fn(&Ctx, &ObjectKey);

/// Extra routing: controllers that care about other objects' changes.
const ROUTES: &[RouteFn] = &[];

/// Reconcilers by resource key.
const RECONCILERS: &[(&str, ReconcileFn)] = &[("/namespaces", namespace::reconcile)];

fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    for (resource, f) in RECONCILERS {
        if *resource == key.resource {
            f(ctx, key);
        }
    }
}
