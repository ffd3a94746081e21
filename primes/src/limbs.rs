//! Fixed-width unsigned integers as little-endian arrays of 64-bit limbs.

use std::cmp::Ordering;

pub(crate) fn small<const N: usize>(value: u64) -> [u64; N] {
    let mut x = [0u64; N];
    x[0] = value;
    x
}

/// `x + value`, or `None` when it overflows `N` limbs.
pub(crate) fn add_small<const N: usize>(x: &[u64; N], value: u64) -> Option<[u64; N]> {
    let mut out = *x;
    let mut carry = value;
    for limb in out.iter_mut() {
        let (sum, overflow) = limb.overflowing_add(carry);
        *limb = sum;
        carry = u64::from(overflow);
        if carry == 0 {
            break;
        }
    }
    (carry == 0).then_some(out)
}

/// `a -= b`, modulo `2^(64·N)`.
pub(crate) fn sub_assign<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    let mut borrow = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *x = d2;
        borrow = b1 || b2;
    }
}

pub(crate) fn cmp<const N: usize>(a: &[u64; N], b: &[u64; N]) -> Ordering {
    a.iter().rev().cmp(b.iter().rev())
}

/// `2x mod n`, for `x < n` and `n` with its top bit set.
pub(crate) fn double_mod<const N: usize>(x: &[u64; N], n: &[u64; N]) -> [u64; N] {
    let mut out = [0u64; N];
    let mut carry = 0;
    for (o, &limb) in out.iter_mut().zip(x) {
        *o = (limb << 1) | carry;
        carry = limb >> 63;
    }
    if carry != 0 || cmp(&out, n).is_ge() {
        sub_assign(&mut out, n);
    }
    out
}

pub(crate) fn bit_length(x: &[u64]) -> usize {
    x.iter()
        .rposition(|&limb| limb != 0)
        .map_or(0, |i| 64 * i + 64 - x[i].leading_zeros() as usize)
}

pub(crate) fn bit<const N: usize>(x: &[u64; N], i: usize) -> bool {
    (x[i / 64] >> (i % 64)) & 1 == 1
}

pub(crate) fn trailing_zeros<const N: usize>(x: &[u64; N]) -> usize {
    x.iter()
        .position(|&limb| limb != 0)
        .map_or(64 * N, |i| 64 * i + x[i].trailing_zeros() as usize)
}

pub(crate) fn shift_right<const N: usize>(x: &[u64; N], shift: usize) -> [u64; N] {
    let (words, bits) = (shift / 64, shift % 64);
    let mut out = [0u64; N];
    for i in 0..N - words.min(N) {
        let low = x[i + words] >> bits;
        let high = match (bits, x.get(i + words + 1)) {
            (0, _) | (_, None) => 0,
            (_, Some(&next)) => next << (64 - bits),
        };
        out[i] = low | high;
    }
    out
}

/// `-n⁻¹ mod 2^64` for odd `n`, by Newton's iteration: an odd number is its own inverse
/// mod 8, and each step doubles the number of correct low bits (3, 6, 12, 24, 48, 96).
pub(crate) fn negated_inverse(n0: u64) -> u64 {
    let mut inverse = n0;
    for _ in 0..5 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(n0.wrapping_mul(inverse)));
    }
    inverse.wrapping_neg()
}

/// `2^k mod n` for `k ≥ 64·N`, `n` with its top bit set.
pub(crate) fn power_of_two_mod<const N: usize>(k: usize, n: &[u64; N]) -> [u64; N] {
    // n > 2^(64N-1), so 2^(64N) mod n = 2^(64N) - n, which is -n in N limbs.
    let mut x = [0u64; N];
    sub_assign(&mut x, n);
    for _ in 64 * N..k {
        x = double_mod(&x, n);
    }
    x
}
