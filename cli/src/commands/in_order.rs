//! Work on several arguments at once, reported in argument order: `pull A B C` and
//! `push a.tgz b.tgz oci://...` fetch or upload concurrently, but print (and write)
//! exactly what helm's loop over the same arguments prints, stopping at the first
//! failure as helm's loop does.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// How many arguments are worked on at once: enough to hide a registry's round trips,
/// few enough not to flood it.
pub const CONCURRENCY: usize = 8;

/// Runs `work` on every item, at most `workers` at a time, and hands the results to
/// `finish` in the items' order. The first error (from `work` or `finish`), in item
/// order, ends the run: later items are not finished (those under way are waited for
/// and dropped) and the error is returned.
pub fn run_in_order<T, R, E>(
    items: &[T],
    workers: usize,
    work: impl Fn(&T) -> Result<R, E> + Sync,
    mut finish: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    // One item needs no thread (a single `pull` stays as it was).
    if items.len() <= 1 || workers <= 1 {
        for item in items {
            finish(work(item)?)?;
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        for _ in 0..workers.min(items.len()) {
            let sender = sender.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else {
                        break;
                    };
                    if sender.send((index, work(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut waiting = BTreeMap::new();
        let mut expected = 0;
        let outcome = (|| {
            for (index, result) in receiver.iter() {
                waiting.insert(index, result);
                while let Some(result) = waiting.remove(&expected) {
                    expected += 1;
                    finish(result?)?;
                }
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_whatever_order_they_finish_in() {
        let items: Vec<u64> = (0..20).collect();
        let mut seen = Vec::new();
        run_in_order(
            &items,
            4,
            |&i| {
                // Later items finish first.
                std::thread::sleep(std::time::Duration::from_millis(20 - i));
                Ok::<u64, ()>(i * 10)
            },
            |r| {
                seen.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..20).map(|i| i * 10).collect::<Vec<_>>());
    }

    #[test]
    fn the_first_failure_in_item_order_stops_the_run() {
        let items: Vec<u64> = (0..10).collect();
        let mut seen = Vec::new();
        let error = run_in_order(
            &items,
            3,
            |&i| match i {
                // Item 7 fails first in time, item 4 first in order.
                7 => Err(format!("item {i}")),
                4 => {
                    std::thread::sleep(std::time::Duration::from_millis(30));
                    Err(format!("item {i}"))
                }
                _ => Ok(i),
            },
            |r| {
                seen.push(r);
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(error, "item 4");
        assert_eq!(seen, [0, 1, 2, 3]);
    }
}
