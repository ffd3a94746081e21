//! RSA key generation for `genCA`, `genSignedCert`, `genSelfSignedCert` and
//! `genPrivateKey "rsa"`.
//!
//! Charts that make certificates ask for several 2048-bit keys per render, and finding
//! their primes is most of such a render in helm as in chartkit. aws-lc makes a key in
//! about 57 ms on one core and cannot share one key's work between cores; this module
//! looks for a key's two primes on every core at once and tests candidates more cheaply:
//! - candidates come from a random odd start with its top two bits set (so `p·q` has
//!   exactly the requested size) and are sieved in a window by every odd prime below
//!   2^16, and by 65537 so that `e` is invertible;
//! - survivors take a strong probable-prime test to base 2 in Montgomery arithmetic, whose
//!   exponentiation needs only squarings and doublings;
//! - the rare survivor of that takes [`EXTRA_ROUNDS`] more Miller-Rabin rounds with bases
//!   drawn from the OS's random source, which puts the chance of a composite below 2^-100
//!   for these sizes (FIPS 186-5, table B.1 asks for at most 5 for primes of 1024 bits
//!   and more).
//!
//! Randomness is the operating system's (`getrandom`), as Go's `crypto/rand` uses for helm.
//! The key itself is assembled and checked by the `rsa` crate ([`rsa::RsaPrivateKey::from_p_q`]).

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::RngCore;
use rand::rngs::OsRng;

/// Miller-Rabin rounds with random bases after the base-2 test.
const EXTRA_ROUNDS: usize = 5;
/// Candidates are sieved by every odd prime below this.
const SIEVE_BOUND: u32 = 1 << 16;
/// Odd candidates looked at from one random start: primes of 1024 bits are about 355 odd
/// numbers apart, so a window this wide holds one except with probability below 1 %.
const WINDOW: usize = 2048;
const PUBLIC_EXPONENT: u32 = 65537;

/// Makes an RSA key of `bits` bits with public exponent 65537, or `None` for a size this
/// module does not handle (the caller falls back to the `rsa` crate).
pub(crate) fn generate(bits: usize) -> Option<Result<rsa::RsaPrivateKey, String>> {
    let primes = match bits {
        2048 => two_primes::<16>(),
        3072 => two_primes::<24>(),
        4096 => two_primes::<32>(),
        _ => return None,
    };
    let [p, q] = primes;
    Some(
        rsa::RsaPrivateKey::from_p_q(p, q, rsa::BigUint::from(PUBLIC_EXPONENT))
            .map_err(|e| format!("error generating rsa key: {e}")),
    )
}

/// Two distinct primes of `64·N` bits, far enough apart for RSA (FIPS 186-5 asks that
/// `|p - q| > 2^(bits/2 - 100)`), larger first; looked for on every core.
fn two_primes<const N: usize>() -> [rsa::BigUint; 2] {
    loop {
        let found = Mutex::new(Vec::<[u64; N]>::with_capacity(2));
        let done = AtomicBool::new(false);
        let work = || {
            while !done.load(Ordering::Relaxed) {
                let Some(prime) = search::<N>(&done) else {
                    continue;
                };
                let mut found = found.lock().unwrap_or_else(|e| e.into_inner());
                if found.len() < 2 && !found.contains(&prime) {
                    found.push(prime);
                }
                if found.len() == 2 {
                    done.store(true, Ordering::Relaxed);
                }
            }
        };
        let helpers = crate::cores().clamp(1, 8) - 1;
        std::thread::scope(|scope| {
            for _ in 0..helpers {
                if std::thread::Builder::new()
                    .name("rsa-primes".into())
                    .spawn_scoped(scope, work)
                    .is_err()
                {
                    break;
                }
            }
            work();
        });
        let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
        found.sort_by(|a, b| cmp(b, a));
        let (p, q) = (found[0], found[1]);
        let mut gap = p;
        sub_assign(&mut gap, &q);
        if bit_length(&gap) > 64 * N - 100 {
            return [to_big(&p), to_big(&q)];
        }
    }
}

/// One prime from one random start, or `None` when the window held none or another
/// thread finished the key first.
fn search<const N: usize>(done: &AtomicBool) -> Option<[u64; N]> {
    let start = random_start::<N>();
    let composite = sieve(&start);
    for (offset, _) in composite.iter().enumerate().filter(|(_, c)| !**c) {
        if done.load(Ordering::Relaxed) {
            return None;
        }
        let candidate = add_small(&start, 2 * offset as u64)?;
        if is_probable_prime(&candidate) {
            return Some(candidate);
        }
    }
    None
}

/// A random odd number of exactly `64·N` bits whose top two bits are set.
fn random_start<const N: usize>() -> [u64; N] {
    let mut bytes = vec![0u8; 8 * N];
    OsRng.fill_bytes(&mut bytes);
    let mut limbs = [0u64; N];
    for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
        *limb = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
    }
    limbs[0] |= 1;
    limbs[N - 1] |= 0b11 << 62;
    limbs
}

/// The odd primes below [`SIEVE_BOUND`].
fn small_primes() -> &'static [u32] {
    static PRIMES: OnceLock<Vec<u32>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let bound = SIEVE_BOUND as usize;
        let mut composite = vec![false; bound];
        let mut primes = Vec::new();
        for n in 3..bound {
            if composite[n] || n % 2 == 0 {
                continue;
            }
            primes.push(n as u32);
            for multiple in (n * n..bound).step_by(2 * n) {
                composite[multiple] = true;
            }
        }
        primes
    })
}

/// Marks which of `start + 2k` (`k < WINDOW`) have a small factor, or are 1 mod 65537
/// (then `e` would not be invertible mod `p - 1`).
fn sieve<const N: usize>(start: &[u64; N]) -> Vec<bool> {
    let mut composite = vec![false; WINDOW];
    // start + 2k ≡ target (mod p)  ⇔  k ≡ (target - start)·2⁻¹ (mod p)
    let mut mark = |modulus: u32, target: u64| {
        let m = u64::from(modulus);
        let residue = rem_small(start, modulus);
        let half = m.div_ceil(2);
        let mut k = ((target + m - residue) % m * half % m) as usize;
        while k < WINDOW {
            composite[k] = true;
            k += modulus as usize;
        }
    };
    for &p in small_primes() {
        mark(p, 0);
    }
    mark(PUBLIC_EXPONENT, 1);
    composite
}

fn rem_small<const N: usize>(x: &[u64; N], modulus: u32) -> u64 {
    let m = u64::from(modulus);
    let mut rem = 0u64;
    for &limb in x.iter().rev() {
        rem = ((rem << 32) | (limb >> 32)) % m;
        rem = ((rem << 32) | (limb & 0xffff_ffff)) % m;
    }
    rem
}

/// A strong probable-prime test to base 2, then [`EXTRA_ROUNDS`] with random bases.
/// `n` is odd and has its top bit set.
fn is_probable_prime<const N: usize>(n: &[u64; N]) -> bool {
    let modulus = Montgomery::new(n);
    let mut n_minus_1 = *n;
    n_minus_1[0] &= !1;
    let s = trailing_zeros(&n_minus_1);
    let d = shift_right(&n_minus_1, s);
    if !modulus.strong_test(modulus.pow_two(&d), s) {
        return false;
    }
    (0..EXTRA_ROUNDS).all(|_| {
        let base = modulus.to_montgomery(&random_below(n));
        modulus.strong_test(modulus.pow(&base, &d), s)
    })
}

/// A random number in `[2, n - 2]`.
fn random_below<const N: usize>(n: &[u64; N]) -> [u64; N] {
    let top_bits = bit_length(n);
    let mut bytes = vec![0u8; 8 * N];
    loop {
        OsRng.fill_bytes(&mut bytes);
        let mut x = [0u64; N];
        for (limb, chunk) in x.iter_mut().zip(bytes.chunks_exact(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        }
        // Keep the bits below n's top bit, so at least half the draws are below n.
        let keep = top_bits - 64 * (N - 1);
        if keep < 64 {
            x[N - 1] &= (1u64 << keep) - 1;
        }
        let mut n_minus_2 = *n;
        sub_assign(&mut n_minus_2, &small::<N>(2));
        if cmp(&x, &small::<N>(2)).is_ge() && cmp(&x, &n_minus_2).is_le() {
            return x;
        }
    }
}

/// Arithmetic modulo an odd `n` with its top bit set, on numbers kept in Montgomery form
/// (`x·R mod n`, `R = 2^(64·N)`), every result fully reduced so equal values compare equal.
struct Montgomery<const N: usize> {
    n: [u64; N],
    /// `-n⁻¹ mod 2^64`.
    n_inv: u64,
    /// `R mod n`, which is 1 in Montgomery form.
    one: [u64; N],
    /// `n - 1` in Montgomery form.
    minus_one: [u64; N],
    /// `R² mod n`, to bring numbers into Montgomery form.
    r_squared: [u64; N],
}

impl<const N: usize> Montgomery<N> {
    fn new(n: &[u64; N]) -> Montgomery<N> {
        // Newton's iteration: an odd n is its own inverse mod 8, and each step doubles the
        // number of correct low bits (3, 6, 12, 24, 48, 96).
        let mut inverse = n[0];
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inverse)));
        }
        // n > R/2, so R mod n = R - n, which is -n in N limbs.
        let mut one = [0u64; N];
        sub_assign(&mut one, n);
        let mut minus_one = *n;
        sub_assign(&mut minus_one, &one);
        let mut modulus = Montgomery {
            n: *n,
            n_inv: inverse.wrapping_neg(),
            one,
            minus_one,
            r_squared: one,
        };
        let mut r_squared = one;
        for _ in 0..64 * N {
            r_squared = modulus.double(&r_squared);
        }
        modulus.r_squared = r_squared;
        modulus
    }

    fn to_montgomery(&self, x: &[u64; N]) -> [u64; N] {
        self.mul(x, &self.r_squared)
    }

    /// `2x mod n`.
    fn double(&self, x: &[u64; N]) -> [u64; N] {
        let mut out = [0u64; N];
        let mut carry = 0;
        for (o, &limb) in out.iter_mut().zip(x) {
            *o = (limb << 1) | carry;
            carry = limb >> 63;
        }
        if carry != 0 || cmp(&out, &self.n).is_ge() {
            sub_assign(&mut out, &self.n);
        }
        out
    }

    /// Montgomery multiplication (`a·b·R⁻¹ mod n`), coarsely integrated operand
    /// scanning: one row of the product, then one word of reduction, per limb of `b`.
    fn mul(&self, a: &[u64; N], b: &[u64; N]) -> [u64; N] {
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
    fn pow_two(&self, e: &[u64; N]) -> [u64; N] {
        let top = bit_length(e);
        let mut x = self.double(&self.one);
        for i in (0..top.saturating_sub(1)).rev() {
            x = self.mul(&x, &x);
            if bit(e, i) {
                x = self.double(&x);
            }
        }
        x
    }

    /// `base^e` (base in Montgomery form), with a fixed window of four bits.
    fn pow(&self, base: &[u64; N], e: &[u64; N]) -> [u64; N] {
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
    fn strong_test(&self, mut x: [u64; N], s: usize) -> bool {
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

fn small<const N: usize>(value: u64) -> [u64; N] {
    let mut x = [0u64; N];
    x[0] = value;
    x
}

fn add_small<const N: usize>(x: &[u64; N], value: u64) -> Option<[u64; N]> {
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

fn sub_assign<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    let mut borrow = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *x = d2;
        borrow = b1 || b2;
    }
}

fn cmp<const N: usize>(a: &[u64; N], b: &[u64; N]) -> std::cmp::Ordering {
    a.iter().rev().cmp(b.iter().rev())
}

fn bit_length<const N: usize>(x: &[u64; N]) -> usize {
    x.iter()
        .rposition(|&limb| limb != 0)
        .map_or(0, |i| 64 * i + 64 - x[i].leading_zeros() as usize)
}

fn bit<const N: usize>(x: &[u64; N], i: usize) -> bool {
    (x[i / 64] >> (i % 64)) & 1 == 1
}

fn trailing_zeros<const N: usize>(x: &[u64; N]) -> usize {
    x.iter()
        .position(|&limb| limb != 0)
        .map_or(64 * N, |i| 64 * i + x[i].trailing_zeros() as usize)
}

fn shift_right<const N: usize>(x: &[u64; N], shift: usize) -> [u64; N] {
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

fn to_big<const N: usize>(x: &[u64; N]) -> rsa::BigUint {
    let bytes: Vec<u8> = x.iter().flat_map(|limb| limb.to_le_bytes()).collect();
    rsa::BigUint::from_bytes_le(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    fn from_big<const N: usize>(x: &rsa::BigUint) -> [u64; N] {
        let mut bytes = x.to_bytes_le();
        bytes.resize(8 * N, 0);
        let mut out = [0u64; N];
        for (limb, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().unwrap());
        }
        out
    }

    /// Montgomery products and powers agree with the bignum library's.
    #[test]
    fn montgomery_arithmetic_matches_big_integers() {
        let mut n = random_start::<16>();
        n[3] ^= 0x5555;
        let modulus = Montgomery::new(&n);
        let big_n = to_big(&n);
        let r = rsa::BigUint::from(1u8) << (64 * 16);
        for _ in 0..20 {
            let a = random_below(&n);
            let b = random_below(&n);
            let (big_a, big_b) = (to_big(&a), to_big(&b));
            let product = modulus.mul(&modulus.to_montgomery(&a), &modulus.to_montgomery(&b));
            assert_eq!(to_big(&product), (&big_a * &big_b * &r) % &big_n);
            let e = random_below(&n);
            let big_e = to_big(&e);
            let power = modulus.pow(&modulus.to_montgomery(&a), &e);
            assert_eq!(to_big(&power), big_a.modpow(&big_e, &big_n) * &r % &big_n);
            let two = rsa::BigUint::from(2u8);
            assert_eq!(
                to_big(&modulus.pow_two(&e)),
                two.modpow(&big_e, &big_n) * &r % &big_n
            );
        }
    }

    #[test]
    fn known_primes_pass_and_composites_fail() {
        // 2^1024 - 105 is the largest prime below 2^1024; 2^1024 - 1 is divisible by 3;
        // the product of two 512-bit primes has no small factor, so only the exponentiation
        // can reject it.
        let mut largest = [u64::MAX; 16];
        largest[0] -= 104;
        assert!(is_probable_prime(&largest));
        assert!(!is_probable_prime(&[u64::MAX; 16]));
        let p = (rsa::BigUint::from(1u8) << 512) - rsa::BigUint::from(569u16);
        let q = (rsa::BigUint::from(1u8) << 512) - rsa::BigUint::from(629u16);
        assert!(is_probable_prime(&from_big::<8>(&p)));
        assert!(is_probable_prime(&from_big::<8>(&q)));
        assert!(!is_probable_prime(&from_big::<16>(&(&p * &q))));
    }

    #[test]
    fn sieve_marks_exactly_the_candidates_with_small_factors() {
        let start = random_start::<16>();
        let composite = sieve(&start);
        for (k, &marked) in composite.iter().enumerate().take(200) {
            let candidate = to_big(&add_small(&start, 2 * k as u64).unwrap());
            let small_factor = small_primes()
                .iter()
                .any(|&p| (&candidate % rsa::BigUint::from(p)) == rsa::BigUint::from(0u8));
            let one_mod_e =
                &candidate % rsa::BigUint::from(PUBLIC_EXPONENT) == rsa::BigUint::from(1u8);
            assert_eq!(marked, small_factor || one_mod_e, "offset {k}");
        }
    }

    #[test]
    fn generated_keys_are_valid_and_of_the_requested_size() {
        let key = generate(2048).unwrap().unwrap();
        key.validate().unwrap();
        assert_eq!(key.n().bits(), 2048);
        assert_eq!(key.e(), &rsa::BigUint::from(PUBLIC_EXPONENT));
        let primes = key.primes();
        assert_eq!(primes.len(), 2);
        assert!(primes.iter().all(|p| p.bits() == 1024));
        assert_ne!(primes[0], primes[1]);
        assert!(generate(1000).is_none());
    }
}
