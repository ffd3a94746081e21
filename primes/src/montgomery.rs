//! Portable Montgomery arithmetic on 64-bit limbs, and the strong probable-prime test
//! built on it: the search's arithmetic on CPUs without AVX-512 IFMA.

use std::cell::OnceCell;

use crate::limbs::{
    bit, bit_length, cmp, double_mod, negated_inverse, power_of_two_mod, small, sub_assign,
};

/// Arithmetic modulo an odd `n` with its top bit set, on numbers kept in Montgomery form
/// (`x·R mod n`, `R = 2^(64·N)`), every result fully reduced so equal values compare equal.
pub(crate) struct Montgomery<const N: usize> {
    n: [u64; N],
    /// `-n⁻¹ mod 2^64`.
    n_inv: u64,
    /// `R mod n`, which is 1 in Montgomery form.
    one: [u64; N],
    /// `n - 1` in Montgomery form.
    minus_one: [u64; N],
    /// `R² mod n`, to bring numbers into Montgomery form; made on first use, as only the
    /// random-base rounds need it.
    r_squared: OnceCell<[u64; N]>,
}

impl<const N: usize> Montgomery<N> {
    pub(crate) fn new(n: &[u64; N]) -> Montgomery<N> {
        let one = power_of_two_mod(64 * N, n);
        let mut minus_one = *n;
        sub_assign(&mut minus_one, &one);
        Montgomery {
            n: *n,
            n_inv: negated_inverse(n[0]),
            one,
            minus_one,
            r_squared: OnceCell::new(),
        }
    }

    /// `x` (below `n`) in Montgomery form.
    pub(crate) fn to_montgomery(&self, x: &[u64; N]) -> [u64; N] {
        let r_squared = self
            .r_squared
            .get_or_init(|| power_of_two_mod(2 * 64 * N, &self.n));
        self.mul(x, r_squared)
    }

    /// Montgomery multiplication (`a·b·R⁻¹ mod n`), coarsely integrated operand
    /// scanning: one row of the product, then one word of reduction, per limb of `b`.
    pub(crate) fn mul(&self, a: &[u64; N], b: &[u64; N]) -> [u64; N] {
        let mut t = [0u64; N];
        let mut t_high = 0u64;
        for &b_limb in b {
            let b_limb = u128::from(b_limb);
            let mut carry = 0u64;
            for (t_limb, &a_limb) in t.iter_mut().zip(a) {
                let sum = u128::from(a_limb) * b_limb + u128::from(*t_limb) + u128::from(carry);
                *t_limb = sum as u64;
                carry = (sum >> 64) as u64;
            }
            let sum = u128::from(t_high) + u128::from(carry);
            t_high = sum as u64;
            let t_top = (sum >> 64) as u64;

            let q = u128::from(t[0].wrapping_mul(self.n_inv));
            let sum = q * u128::from(self.n[0]) + u128::from(t[0]);
            let mut carry = (sum >> 64) as u64;
            for j in 1..N {
                let sum = q * u128::from(self.n[j]) + u128::from(t[j]) + u128::from(carry);
                t[j - 1] = sum as u64;
                carry = (sum >> 64) as u64;
            }
            let sum = u128::from(t_high) + u128::from(carry);
            t[N - 1] = sum as u64;
            t_high = t_top + (sum >> 64) as u64;
        }
        if t_high != 0 || cmp(&t, &self.n).is_ge() {
            sub_assign(&mut t, &self.n);
        }
        t
    }

    /// `2^e` in Montgomery form: left to right, where multiplying by the base is a doubling.
    pub(crate) fn pow_two(&self, e: &[u64; N]) -> [u64; N] {
        let top = bit_length(e);
        let mut x = double_mod(&self.one, &self.n);
        for i in (0..top.saturating_sub(1)).rev() {
            x = self.mul(&x, &x);
            if bit(e, i) {
                x = double_mod(&x, &self.n);
            }
        }
        x
    }

    /// `base^e mod n` for a plain `base` below `n`, and a plain result.
    pub(crate) fn power(&self, base: &[u64; N], e: &[u64; N]) -> [u64; N] {
        let x = self.pow(&self.to_montgomery(base), e);
        // Out of Montgomery form: a product with 1.
        self.mul(&x, &small(1))
    }

    /// `base^e` (base in Montgomery form), with a fixed window of four bits.
    pub(crate) fn pow(&self, base: &[u64; N], e: &[u64; N]) -> [u64; N] {
        let mut table = [self.one; 16];
        table[1] = *base;
        for i in 2..16 {
            table[i] = self.mul(&table[i - 1], base);
        }
        let mut x = self.one;
        for nibble_index in (0..bit_length(e).div_ceil(4)).rev() {
            for _ in 0..4 {
                x = self.mul(&x, &x);
            }
            let nibble = (e[nibble_index / 16] >> (4 * (nibble_index % 16))) & 0xf;
            if nibble != 0 {
                x = self.mul(&x, &table[nibble as usize]);
            }
        }
        x
    }

    /// The end of a Miller-Rabin round: given `x = a^d` for `n - 1 = d·2^s`, is `n` a
    /// strong probable prime to base `a`?
    pub(crate) fn strong_test(&self, mut x: [u64; N], s: usize) -> bool {
        if x == self.one || x == self.minus_one {
            return true;
        }
        for _ in 1..s {
            x = self.mul(&x, &x);
            if x == self.minus_one {
                return true;
            }
            if x == self.one {
                return false;
            }
        }
        false
    }
}
