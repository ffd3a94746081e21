//! Objects in memory, one global resourceVersion counter (as etcd's revision), and the
//! log of recent changes that watches read from.
//!
//! Every write is a closure run under one lock: it sees the current object and returns
//! the next one, so a read-modify-write (conflict checks, defaulting, apply) is atomic.
//! A change becomes visible to watches only once it is durable (when a journal keeps the
//! store on disk), so no client can act on something a crash would take back.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::watch;

use crate::status::{ApiError, ApiResult};

/// Changes kept for watches that resume from a resourceVersion.
const LOG_CAPACITY: usize = 50_000;

/// Where an object lives: its resource's key (`group/plural`), namespace (`""` for
/// cluster-scoped objects) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub resource: String,
    pub namespace: String,
    pub name: String,
}

/// One committed change: the object after it, or `None` when it was deleted (then
/// `previous` holds what was deleted).
#[derive(Debug, Clone)]
pub struct Change {
    pub rv: u64,
    pub key: ObjectKey,
    pub object: Option<Arc<Value>>,
    pub previous: Option<Arc<Value>>,
}

impl Change {
    pub fn event_type(&self) -> &'static str {
        match (&self.previous, &self.object) {
            (_, None) => "DELETED",
            (None, Some(_)) => "ADDED",
            (Some(_), Some(_)) => "MODIFIED",
        }
    }

    /// The object the event carries: the new one, or the deleted one.
    pub fn subject(&self) -> &Arc<Value> {
        self.object
            .as_ref()
            .or(self.previous.as_ref())
            .expect("a change has an object before or after it")
    }
}

/// Receives every change in commit order (under the store's lock) to make it durable,
/// then reports progress with [`Store::mark_durable`].
pub trait Journal: Send + Sync {
    fn append(&self, change: &Change);
}

type Collection = BTreeMap<(String, String), Arc<Value>>;

struct State {
    rv: u64,
    collections: HashMap<String, Collection>,
    log: VecDeque<Change>,
    journal: Option<Arc<dyn Journal>>,
}

/// The object store.
pub struct Store {
    state: Mutex<State>,
    /// The highest resourceVersion that is durable; watches read up to it.
    durable: watch::Sender<u64>,
    /// Changes committed, for in-process observers (controllers).
    notify: tokio::sync::broadcast::Sender<Change>,
    /// Why the journal stopped making changes durable, once it has.
    failed: std::sync::OnceLock<String>,
}

impl Store {
    pub fn new() -> Store {
        Store::starting_at(1)
    }

    fn starting_at(rv: u64) -> Store {
        let (durable, _) = watch::channel(rv);
        let (notify, _) = tokio::sync::broadcast::channel(65_536);
        Store {
            state: Mutex::new(State {
                rv,
                collections: HashMap::new(),
                log: VecDeque::new(),
                journal: None,
            }),
            durable,
            notify,
            failed: std::sync::OnceLock::new(),
        }
    }

    /// A store holding `objects` (as recovered from disk) at resourceVersion `rv`.
    pub fn restored<V: Into<Arc<Value>>>(
        rv: u64,
        objects: impl IntoIterator<Item = (ObjectKey, V)>,
    ) -> Store {
        let store = Store::starting_at(rv);
        {
            let mut state = store.lock();
            for (key, object) in objects {
                state
                    .collections
                    .entry(key.resource)
                    .or_default()
                    .insert((key.namespace, key.name), object.into());
            }
        }
        store
    }

    /// Puts recovered changes (oldest first, all at or below the current revision) in
    /// the log, so watches from a resourceVersion before a restart resume.
    pub fn restore_log(&self, changes: impl IntoIterator<Item = Change>) {
        let mut state = self.lock();
        for change in changes {
            if state.log.len() == LOG_CAPACITY {
                state.log.pop_front();
            }
            state.log.push_back(change);
        }
    }

    /// Sends every later change to `journal` too; changes become visible only when the
    /// journal marks them durable.
    pub fn set_journal(&self, journal: Arc<dyn Journal>) {
        self.lock().journal = Some(journal);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current resourceVersion.
    pub fn revision(&self) -> u64 {
        self.lock().rv
    }

    pub fn get(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        self.lock()
            .collections
            .get(&key.resource)?
            .get(&(key.namespace.clone(), key.name.clone()))
            .cloned()
    }

    /// Objects of `resource` (in `namespace`, or all of them), in namespace and name
    /// order, and the resourceVersion they were read at.
    pub fn list(&self, resource: &str, namespace: Option<&str>) -> (Vec<Arc<Value>>, u64) {
        let state = self.lock();
        let items = match state.collections.get(resource) {
            None => Vec::new(),
            Some(c) => match namespace {
                None => c.values().cloned().collect(),
                Some(ns) => c
                    .range((ns.to_string(), String::new())..)
                    .take_while(|((n, _), _)| n == ns)
                    .map(|(_, v)| Arc::clone(v))
                    .collect(),
            },
        };
        (items, state.rv)
    }

    /// Every object in `namespace`, of any resource, as `(resource, name)`.
    pub fn in_namespace(&self, namespace: &str) -> Vec<(String, String)> {
        let state = self.lock();
        let mut found = Vec::new();
        for (resource, c) in &state.collections {
            for ((_, name), _) in c
                .range((namespace.to_string(), String::new())..)
                .take_while(|((n, _), _)| n == namespace)
            {
                found.push((resource.clone(), name.clone()));
            }
        }
        found
    }

    /// Every stored object of every resource (for the garbage collector's scans).
    pub fn all(&self) -> Vec<(ObjectKey, Arc<Value>)> {
        let state = self.lock();
        let mut found = Vec::new();
        for (resource, c) in &state.collections {
            for ((ns, name), v) in c {
                found.push((
                    ObjectKey {
                        resource: resource.clone(),
                        namespace: ns.clone(),
                        name: name.clone(),
                    },
                    Arc::clone(v),
                ));
            }
        }
        found
    }

    /// Every stored object and the revision they are all at, read at one instant (for a
    /// snapshot: changes after that revision reach the journal after this returns).
    pub fn snapshot(&self) -> (u64, Vec<(ObjectKey, Arc<Value>)>) {
        let state = self.lock();
        let mut found = Vec::with_capacity(state.collections.values().map(BTreeMap::len).sum());
        for (resource, c) in &state.collections {
            for ((ns, name), v) in c {
                found.push((
                    ObjectKey {
                        resource: resource.clone(),
                        namespace: ns.clone(),
                        name: name.clone(),
                    },
                    Arc::clone(v),
                ));
            }
        }
        (state.rv, found)
    }

    /// Number of objects stored.
    pub fn len(&self) -> usize {
        self.lock().collections.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `write` on the current object at `key` (or `None`) under the lock. It returns
    /// the object to store (`Some`), `None` to delete, or an error to change nothing.
    /// The stored object gets the new resourceVersion in `metadata.resourceVersion`.
    /// Returns the committed change, or `None` when `write` asked to delete an object
    /// that does not exist or returned the same object unchanged (`Unchanged`).
    pub fn write(
        &self,
        key: &ObjectKey,
        write: impl FnOnce(Option<&Arc<Value>>, u64) -> ApiResult<Write>,
    ) -> ApiResult<Option<Change>> {
        let mut state = self.lock();
        let next_rv = state.rv + 1;
        let current = state
            .collections
            .get(&key.resource)
            .and_then(|c| c.get(&(key.namespace.clone(), key.name.clone())))
            .cloned();
        let outcome = write(current.as_ref(), next_rv)?;
        let object = match outcome {
            Write::Unchanged => return Ok(None),
            Write::Delete if current.is_none() => return Ok(None),
            Write::Delete => None,
            Write::Put(mut object) => {
                if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("resourceVersion".into(), Value::String(next_rv.to_string()));
                }
                Some(Arc::new(object))
            }
        };
        state.rv = next_rv;
        let collection = state.collections.entry(key.resource.clone()).or_default();
        let slot = (key.namespace.clone(), key.name.clone());
        match &object {
            Some(o) => {
                collection.insert(slot, Arc::clone(o));
            }
            None => {
                collection.remove(&slot);
            }
        }
        let change = Change {
            rv: next_rv,
            key: key.clone(),
            object,
            previous: current,
        };
        if state.log.len() == LOG_CAPACITY {
            state.log.pop_front();
        }
        state.log.push_back(change.clone());
        let journal = state.journal.clone();
        if let Some(journal) = &journal {
            journal.append(&change);
        }
        drop(state);
        if journal.is_none() {
            self.mark_durable(next_rv);
        }
        let _ = self.notify.send(change.clone());
        Ok(Some(change))
    }

    /// Records that every change up to `rv` is durable.
    pub fn mark_durable(&self, rv: u64) {
        self.durable.send_if_modified(|d| {
            if rv > *d {
                *d = rv;
                true
            } else {
                false
            }
        });
    }

    /// Records that the journal can make no more changes durable: writers waiting for
    /// theirs get an error instead of waiting forever.
    pub fn mark_failed(&self, reason: String) {
        if self.failed.set(reason).is_ok() {
            // Wakes the waiters so they see the failure.
            self.durable.send_modify(|_| {});
        }
    }

    /// Waits until `rv` is durable; fails when the journal failed before it was.
    pub async fn durable(&self, rv: u64) -> ApiResult<()> {
        let mut rx = self.durable.subscribe();
        let failed = &self.failed;
        let reached = rx
            .wait_for(|d| *d >= rv || failed.get().is_some())
            .await
            .is_ok_and(|d| *d >= rv);
        if reached {
            return Ok(());
        }
        Err(ApiError::internal(format!(
            "the change was not stored: {}",
            self.failed
                .get()
                .map(String::as_str)
                .unwrap_or("the store stopped")
        )))
    }

    /// A receiver of the durable resourceVersion, for watches.
    pub fn durable_rx(&self) -> watch::Receiver<u64> {
        self.durable.subscribe()
    }

    /// Committed changes as they happen, for controllers in this process.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.notify.subscribe()
    }

    /// Changes after `since` up to `until` for which `keep` holds. Fails with 410 Gone
    /// when changes after `since` have already left the log.
    pub fn changes(
        &self,
        since: u64,
        until: u64,
        keep: impl Fn(&Change) -> bool,
    ) -> ApiResult<Vec<Change>> {
        let state = self.lock();
        let oldest = state.log.front().map(|c| c.rv).unwrap_or(state.rv + 1);
        if since + 1 < oldest && since < state.rv {
            return Err(ApiError::gone(format!(
                "too old resource version: {since} ({})",
                oldest - 1
            )));
        }
        let start = state.log.partition_point(|c| c.rv <= since);
        Ok(state
            .log
            .range(start..)
            .take_while(|c| c.rv <= until)
            .filter(|c| keep(c))
            .cloned()
            .collect())
    }
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

/// What a write closure asks the store to do.
pub enum Write {
    Put(Value),
    Delete,
    /// Nothing changed: no new resourceVersion, no event (as the API server skips writes
    /// that change nothing).
    Unchanged,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str) -> ObjectKey {
        ObjectKey {
            resource: "/configmaps".into(),
            namespace: "default".into(),
            name: name.into(),
        }
    }

    #[test]
    fn writes_count_the_revision_and_log_changes() {
        let store = Store::new();
        let put = |name: &str| {
            store
                .write(&key(name), |_, _| {
                    Ok(Write::Put(json!({"metadata": {"name": name}})))
                })
                .unwrap()
                .unwrap()
        };
        let a = put("a");
        let b = put("b");
        assert_eq!((a.rv, b.rv), (2, 3));
        assert_eq!(
            store.get(&key("a")).unwrap()["metadata"]["resourceVersion"],
            "2"
        );
        let since = store.changes(2, u64::MAX, |_| true).unwrap();
        assert_eq!(since.len(), 1);
        assert_eq!(since[0].key.name, "b");
        let deleted = store
            .write(&key("a"), |_, _| Ok(Write::Delete))
            .unwrap()
            .unwrap();
        assert_eq!(deleted.event_type(), "DELETED");
        assert!(
            store
                .write(&key("a"), |_, _| Ok(Write::Delete))
                .unwrap()
                .is_none()
        );
        assert_eq!(store.list("/configmaps", Some("default")).0.len(), 1);
    }
}
