//! A map bounded by a cost budget, forgetting the entries used longest ago first: the web
//! view's cache of what it read from packages. Entries are few (hundreds), so finding
//! the oldest by a scan is cheaper than keeping an order.

use std::collections::HashMap;
use std::hash::Hash;

#[derive(Debug)]
pub struct Bounded<K, V> {
    budget: usize,
    used: usize,
    tick: u64,
    entries: HashMap<K, Entry<V>>,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    cost: usize,
    last_used: u64,
}

impl<K: Eq + Hash + Clone, V: Clone> Bounded<K, V> {
    pub fn new(budget: usize) -> Self {
        Bounded {
            budget,
            used: 0,
            tick: 0,
            entries: HashMap::new(),
        }
    }

    pub fn get(&mut self, key: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        let entry = self.entries.get_mut(key)?;
        entry.last_used = tick;
        Some(entry.value.clone())
    }

    /// Keeps `value` unless it alone costs more than the budget, forgetting the entries
    /// used longest ago until it fits.
    pub fn insert(&mut self, key: K, value: V, cost: usize) {
        if cost > self.budget {
            return;
        }
        if let Some(old) = self.entries.remove(&key) {
            self.used -= old.cost;
        }
        while self.used + cost > self.budget {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(gone) = self.entries.remove(&oldest) {
                self.used -= gone.cost;
            }
        }
        self.tick += 1;
        self.used += cost;
        self.entries.insert(
            key,
            Entry {
                value,
                cost,
                last_used: self.tick,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_used_longest_ago_goes_first_and_the_budget_holds() {
        let mut cache = Bounded::new(10);
        cache.insert("a", 1, 4);
        cache.insert("b", 2, 4);
        assert_eq!(cache.get(&"a"), Some(1));
        cache.insert("c", 3, 4);
        assert_eq!(cache.get(&"b"), None, "b was used longest ago");
        assert_eq!(cache.get(&"a"), Some(1));
        assert_eq!(cache.get(&"c"), Some(3));
        cache.insert("huge", 9, 11);
        assert_eq!(
            cache.get(&"huge"),
            None,
            "more than the whole budget is not kept"
        );
        assert!(cache.used <= 10);
    }
}
