//! Go's `sort.Sort` (pattern-defeating quicksort, Go 1.19+) reproduced step for step.
//!
//! Helm sorts index entries with it, and it is not stable: versions that compare equal
//! (`1.0.0+a` and `1.0.0+b`, or the same version twice) end up in an order that depends on the
//! algorithm. `helm pull --version 1.0.0` takes the first of them, so matching Helm's choice
//! means matching its sort, swap for swap.

use chartkit_version::Version;

use crate::model::ChartVersion;

/// Helm's `sort.Sort(sort.Reverse(ChartVersions))`: newest first; entries whose version
/// does not parse count as oldest.
pub fn sort_newest_first(versions: &mut Vec<ChartVersion>) {
    let mut keyed: Vec<(Option<Version>, ChartVersion)> = std::mem::take(versions)
        .into_iter()
        .map(|v| (v.parsed_version(), v))
        .collect();
    // ChartVersions.Less(a, b): a failed parse is "less"; Reverse swaps the arguments.
    let ascending = |a: &Option<Version>, b: &Option<Version>| match (a, b) {
        (None, _) => true,
        (_, None) => false,
        (Some(a), Some(b)) => a < b,
    };
    go_sort(&mut keyed, |x, y| ascending(&y.0, &x.0));
    versions.extend(keyed.into_iter().map(|(_, v)| v));
}

/// `sort.Sort` with `less` as the interface's `Less`.
pub fn go_sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    if n <= 1 {
        return;
    }
    let limit = bit_len(n);
    let mut sorter = Sorter { data, less };
    sorter.pdqsort(0, n, limit);
}

fn bit_len(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()) as usize
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

struct Sorter<'a, T, F> {
    data: &'a mut [T],
    less: F,
}

impl<T, F: Fn(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let first = a;
        let hi = b - a;
        for i in (0..=(hi - 1) / 2).rev() {
            self.sift_down(i, hi, first);
        }
        for i in (0..hi).rev() {
            self.swap(first, first + i);
            self.sift_down(0, i, first);
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: usize) {
        const MAX_INSERTION: usize = 12;
        let mut was_balanced = true;
        let mut was_partitioned = true;
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already_partitioned) = self.partition(a, b, pivot);
            was_partitioned = already_partitioned;
            let (left, right) = (mid - a, b - mid);
            let balance_threshold = length / 8;
            if left < right {
                was_balanced = left >= balance_threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= balance_threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        while i <= j && self.less(i as usize, a) {
            i += 1;
        }
        while i <= j && !self.less(j as usize, a) {
            j -= 1;
        }
        if i > j {
            self.swap(j as usize, a);
            return (j as usize, true);
        }
        self.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i as usize, a) {
                i += 1;
            }
            while i <= j && !self.less(j as usize, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        self.swap(j as usize, a);
        (j as usize, false)
    }

    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        loop {
            while i <= j && !self.less(a, i as usize) {
                i += 1;
            }
            while i <= j && self.less(a, j as usize) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        i as usize
    }

    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1usize << bit_len(length);
            let idx = a + (length / 4) * 2 - 1;
            for i in 0..3 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let mut other = (random as usize) & (modulus - 1);
                if other >= length {
                    other -= length;
                }
                self.swap(idx - 1 + i, a + other);
            }
        }
    }

    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, Hint) {
        const SHORTEST_NINTHER: usize = 50;
        const MAX_SWAPS: usize = 4 * 3;
        let l = b - a;
        let mut swaps = 0;
        let mut i = a + l / 4;
        let mut j = a + l / 4 * 2;
        let mut k = a + l / 4 * 3;
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median(i - 1, i, i + 1, &mut swaps);
                j = self.median(j - 1, j, j + 1, &mut swaps);
                k = self.median(k - 1, k, k + 1, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        match swaps {
            0 => (j, Hint::Increasing),
            MAX_SWAPS => (j, Hint::Decreasing),
            _ => (j, Hint::Unknown),
        }
    }

    fn order2(&self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, c) = self.order2(b, c, swaps);
        let _ = c;
        let (_a, b) = self.order2(a, b, swaps);
        b
    }

    fn reverse_range(&mut self, a: usize, b: usize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_any_correct_sort() {
        let mut seed = 12345u64;
        for n in [0usize, 1, 2, 7, 13, 49, 50, 51, 200, 1000] {
            let mut data: Vec<u64> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 33) % 97
                })
                .collect();
            let mut want = data.clone();
            want.sort();
            go_sort(&mut data, |a, b| a < b);
            assert_eq!(data, want, "n={n}");
            let mut rev = want.clone();
            rev.reverse();
            go_sort(&mut rev, |a, b| a < b);
            assert_eq!(rev, want, "reversed n={n}");
        }
    }
}
