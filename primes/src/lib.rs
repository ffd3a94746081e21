//! Random primes for RSA keys: the work behind `genCA`, `genSignedCert`,
//! `genSelfSignedCert` and `genPrivateKey "rsa"`.
//!
//! Charts that make certificates ask for several 2048-bit keys per render, and finding
//! their primes is most of such a render in helm as in chartkit. aws-lc makes a key in
//! about 57 ms on one core and cannot share one key's work between cores; this crate
//! looks for a key's two primes on every core at once and tests candidates more cheaply:
//! - candidates come from a random odd start with its top two bits set (so `p·q` has
//!   exactly the requested size) and are sieved in a window by every odd prime below
//!   2^16, and by 65537 so that `e` is invertible;
//! - survivors take a strong probable-prime test to base 2 in Montgomery arithmetic, whose
//!   exponentiation needs only squarings and doublings; on CPUs with AVX-512 IFMA two
//!   candidates are tested at once in 52-bit digits ([`ifma`]), elsewhere one at a time
//!   on 64-bit limbs ([`montgomery`]);
//! - the rare survivor of that takes [`EXTRA_ROUNDS`] more Miller-Rabin rounds with bases
//!   drawn from the OS's random source, which puts the chance of a composite below 2^-100
//!   for these sizes (FIPS 186-5, table B.1 asks for at most 5 for primes of 1024 bits
//!   and more).
//!
//! Randomness is the operating system's (`getrandom`), as Go's `crypto/rand` is for helm.

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod ifma;
mod limbs;
mod montgomery;

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::RngCore;
use rand::rngs::OsRng;

use limbs::{add_small, bit_length, cmp, shift_right, small, sub_assign, trailing_zeros};

/// Miller-Rabin rounds with random bases after the base-2 test.
const EXTRA_ROUNDS: usize = 5;
/// Candidates are sieved by every odd prime below this.
const SIEVE_BOUND: u32 = 1 << 16;
/// Odd candidates looked at from one random start: primes of 1024 bits are about 355 odd
/// numbers apart, so a window this wide holds one except with probability below 1 %.
const WINDOW: usize = 2048;
/// The public exponent of the keys the primes are for.
pub const PUBLIC_EXPONENT: u32 = 65537;

/// Two distinct random primes for an RSA modulus of `bits` bits with exponent
/// [`PUBLIC_EXPONENT`], larger first, as little-endian 64-bit limbs; `None` for a size
/// this crate does not handle (2048, 3072 and 4096 bits are handled).
pub fn rsa_primes(bits: usize) -> Option<[Vec<u64>; 2]> {
    // N limbs of 64 bits per prime; K vectors holding L 52-bit digits for IFMA.
    let primes = match bits {
        2048 => two_primes::<16, 3, 20>().map(|p| p.to_vec()),
        3072 => two_primes::<24, 4, 30>().map(|p| p.to_vec()),
        4096 => two_primes::<32, 6, 40>().map(|p| p.to_vec()),
        _ => return None,
    };
    Some(primes)
}

/// `bases[u]^exponents[u] mod moduli[u]` for the two primes of an RSA key: the
/// private-key operation by the Chinese remainder theorem, about twenty times faster than
/// the `rsa` crate's with IFMA. Numbers are little-endian 64-bit limbs. `None` unless both
/// moduli are odd with exactly 1024, 1536 or 2048 bits, and each base is below its
/// modulus; exponents may have up to as many limbs as the moduli.
///
/// The exponentiation's time depends on the exponents (no blinding, unlike a TLS
/// library's): chartkit signs with keys it generated for one render.
pub fn prime_powers(
    moduli: [&[u64]; 2],
    bases: [&[u64]; 2],
    exponents: [&[u64]; 2],
) -> Option<[Vec<u64>; 2]> {
    let bits = bit_length(moduli[0]);
    if bits != bit_length(moduli[1]) {
        return None;
    }
    let powers = match bits {
        1024 => powers::<16, 3, 20>(moduli, bases, exponents)?.map(|x| x.to_vec()),
        1536 => powers::<24, 4, 30>(moduli, bases, exponents)?.map(|x| x.to_vec()),
        2048 => powers::<32, 6, 40>(moduli, bases, exponents)?.map(|x| x.to_vec()),
        _ => return None,
    };
    Some(powers)
}

fn powers<const N: usize, const K: usize, const L: usize>(
    moduli: [&[u64]; 2],
    bases: [&[u64]; 2],
    exponents: [&[u64]; 2],
) -> Option<[[u64; N]; 2]> {
    let fixed = |x: &[u64]| -> Option<[u64; N]> {
        if x.len() > N {
            return None;
        }
        let mut out = [0u64; N];
        out[..x.len()].copy_from_slice(x);
        Some(out)
    };
    let [n0, n1] = [fixed(moduli[0])?, fixed(moduli[1])?];
    let [b0, b1] = [fixed(bases[0])?, fixed(bases[1])?];
    let [e0, e1] = [fixed(exponents[0])?, fixed(exponents[1])?];
    let fits = |n: &[u64; N], b: &[u64; N]| n[0] & 1 == 1 && cmp(b, n).is_lt();
    if !fits(&n0, &b0) || !fits(&n1, &b1) {
        return None;
    }
    Some(match Tester::get() {
        #[cfg(target_arch = "x86_64")]
        Tester::Ifma(ifma) => ifma.powers::<N, K, L>([&n0, &n1], [&b0, &b1], [&e0, &e1]),
        Tester::Portable => [(n0, b0, e0), (n1, b1, e1)]
            .map(|(n, b, e)| montgomery::Montgomery::new(&n).power(&b, &e)),
    })
}

/// How primality is tested on this CPU.
#[derive(Clone, Copy)]
enum Tester {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Ifma(ifma::Ifma),
}

impl Tester {
    fn get() -> Tester {
        static TESTER: OnceLock<Tester> = OnceLock::new();
        *TESTER.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if let Some(found) = ifma::Ifma::detect() {
                return Tester::Ifma(found);
            }
            Tester::Portable
        })
    }
}

/// Two distinct primes of `64·N` bits, far enough apart for RSA (FIPS 186-5 asks that
/// `|p - q| > 2^(bits/2 - 100)`), larger first; looked for on every core.
fn two_primes<const N: usize, const K: usize, const L: usize>() -> [[u64; N]; 2] {
    let tester = Tester::get();
    loop {
        let found = Mutex::new(Vec::<[u64; N]>::with_capacity(2));
        let done = AtomicBool::new(false);
        let work = || {
            while !done.load(Ordering::Relaxed) {
                let Some(prime) = search::<N, K, L>(tester, &done) else {
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
        let helpers = cores().clamp(1, 8) - 1;
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
            return [p, q];
        }
    }
}

fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The first probable prime from one random start, or `None` when the window held none
/// or another thread finished the key first.
fn search<const N: usize, const K: usize, const L: usize>(
    tester: Tester,
    done: &AtomicBool,
) -> Option<[u64; N]> {
    let start = random_start::<N>();
    let composite = sieve(&start);
    let mut candidates = composite
        .iter()
        .enumerate()
        .filter(|(_, c)| !**c)
        .map(|(offset, _)| add_small(&start, 2 * offset as u64));
    while !done.load(Ordering::Relaxed) {
        let first = candidates.next()??;
        match tester {
            Tester::Portable => {
                if is_probable_prime(&first) {
                    return Some(first);
                }
            }
            #[cfg(target_arch = "x86_64")]
            Tester::Ifma(ifma) => {
                // Two candidates at a time; the window's last one may be tested twice.
                let second = candidates.next().flatten().unwrap_or(first);
                let passed = ifma.base_two::<N, K, L>([&first, &second]);
                for (candidate, passed) in [first, second].into_iter().zip(passed) {
                    if passed {
                        let bases: Vec<[u64; N]> = (0..EXTRA_ROUNDS)
                            .map(|_| random_below(&candidate))
                            .collect();
                        if ifma.bases::<N, K, L>(&candidate, &bases) {
                            return Some(candidate);
                        }
                    }
                }
            }
        }
    }
    None
}

/// A random odd number of exactly `64·N` bits whose top two bits are set.
fn random_start<const N: usize>() -> [u64; N] {
    let mut limbs = random_limbs::<N>();
    limbs[0] |= 1;
    limbs[N - 1] |= 0b11 << 62;
    limbs
}

fn random_limbs<const N: usize>() -> [u64; N] {
    let mut limbs = [0u64; N];
    for limb in &mut limbs {
        *limb = OsRng.next_u64();
    }
    limbs
}

/// The odd primes below [`SIEVE_BOUND`], as integers and as `f64` with their
/// reciprocals (see [`residues`]).
struct SmallPrimes {
    primes: Vec<u32>,
    as_float: Vec<f64>,
    reciprocals: Vec<f64>,
}

fn small_primes() -> &'static SmallPrimes {
    static PRIMES: OnceLock<SmallPrimes> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let bound = SIEVE_BOUND as usize;
        let mut composite = vec![false; bound];
        let mut primes = Vec::new();
        for n in (3..bound).step_by(2) {
            if composite[n] {
                continue;
            }
            primes.push(n as u32);
            for multiple in (n * n..bound).step_by(2 * n) {
                composite[multiple] = true;
            }
        }
        let as_float: Vec<f64> = primes.iter().map(|&p| f64::from(p)).collect();
        let reciprocals = as_float.iter().map(|p| 1.0 / p).collect();
        SmallPrimes {
            primes,
            as_float,
            reciprocals,
        }
    })
}

/// `x mod p` for every small prime `p`, in the order of [`small_primes`].
///
/// Dividing by each prime cost a seventh of a key's search. Instead this is Horner's rule
/// on 32-bit pieces in `f64`, whose 53-bit mantissa holds every intermediate exactly
/// (`rem·2^32 + piece < 2^49`): the quotient comes from a multiplication by the prime's
/// reciprocal, off by at most one, which the sign of the remainder corrects. The loop has
/// no division and no branch, so the compiler runs it on vector lanes.
fn residues<const N: usize>(x: &[u64; N]) -> Vec<u32> {
    // Adding and subtracting 2^52 rounds a non-negative f64 below 2^51 to an integer.
    const ROUND: f64 = 4_503_599_627_370_496.0;
    let small = small_primes();
    let pieces: Vec<f64> = x
        .iter()
        .rev()
        .flat_map(|&limb| [(limb >> 32) as f64, (limb & 0xffff_ffff) as f64])
        .collect();
    let mut out = Vec::with_capacity(small.primes.len());
    for (primes, reciprocals) in small
        .as_float
        .chunks(256)
        .zip(small.reciprocals.chunks(256))
    {
        let mut rem = [0f64; 256];
        let rem = &mut rem[..primes.len()];
        for &piece in &pieces {
            for ((r, &p), &inverse) in rem.iter_mut().zip(primes).zip(reciprocals) {
                let value = *r * 4_294_967_296.0 + piece;
                let quotient = (value * inverse + ROUND) - ROUND;
                let rest = value - quotient * p;
                *r = if rest < 0.0 { rest + p } else { rest };
            }
        }
        out.extend(rem.iter().map(|&r| r as u32));
    }
    out
}

/// Marks which of `start + 2k` (`k < WINDOW`) have a small factor, or are 1 mod 65537
/// (then `e` would not be invertible mod `p - 1`).
fn sieve<const N: usize>(start: &[u64; N]) -> Vec<bool> {
    let mut composite = vec![false; WINDOW];
    // start + 2k ≡ target (mod p)  ⇔  k ≡ (target - start)·2⁻¹ (mod p)
    let mut mark = |modulus: u32, residue: u64, target: u64| {
        let m = u64::from(modulus);
        let half = m.div_ceil(2);
        let mut k = ((target + m - residue) % m * half % m) as usize;
        while k < WINDOW {
            composite[k] = true;
            k += modulus as usize;
        }
    };
    for (&p, residue) in small_primes().primes.iter().zip(residues(start)) {
        mark(p, u64::from(residue), 0);
    }
    mark(PUBLIC_EXPONENT, rem_small(start, PUBLIC_EXPONENT), 1);
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

/// `n - 1 = d·2^s` with `d` odd: `(d, s)`.
fn odd_part<const N: usize>(n: &[u64; N]) -> ([u64; N], usize) {
    let mut n_minus_1 = *n;
    n_minus_1[0] &= !1;
    let s = trailing_zeros(&n_minus_1);
    (shift_right(&n_minus_1, s), s)
}

/// A strong probable-prime test to base 2, then [`EXTRA_ROUNDS`] with random bases, in
/// portable arithmetic. `n` is odd and has its top bit set.
fn is_probable_prime<const N: usize>(n: &[u64; N]) -> bool {
    let modulus = montgomery::Montgomery::new(n);
    let (d, s) = odd_part(n);
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
    let mut n_minus_2 = *n;
    sub_assign(&mut n_minus_2, &small::<N>(2));
    loop {
        let mut x = random_limbs::<N>();
        // Keep the bits below n's top bit, so at least half the draws are below n.
        let keep = top_bits - 64 * (N - 1);
        if keep < 64 {
            x[N - 1] &= (1u64 << keep) - 1;
        }
        if cmp(&x, &small::<N>(2)).is_ge() && cmp(&x, &n_minus_2).is_le() {
            return x;
        }
    }
}

/// Conversions between limbs and the bignum library that tests check against.
#[cfg(test)]
mod test_support {
    use rsa::BigUint;

    pub(crate) fn big<const N: usize>(x: &[u64; N]) -> BigUint {
        BigUint::from_bytes_le(&x.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<u8>>())
    }

    pub(crate) fn limbs<const N: usize>(x: &BigUint) -> [u64; N] {
        let mut bytes = x.to_bytes_le();
        bytes.resize(8 * N, 0);
        std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{big, limbs};
    use rsa::BigUint;

    /// Montgomery products and powers agree with the bignum library's.
    #[test]
    fn montgomery_arithmetic_matches_big_integers() {
        let mut n = random_start::<16>();
        n[3] ^= 0x5555;
        let modulus = montgomery::Montgomery::new(&n);
        let big_n = big(&n);
        let r = BigUint::from(1u8) << (64 * 16);
        for _ in 0..20 {
            let a = random_below(&n);
            let b = random_below(&n);
            let (big_a, big_b) = (big(&a), big(&b));
            let product = modulus.mul(&modulus.to_montgomery(&a), &modulus.to_montgomery(&b));
            assert_eq!(big(&product), (&big_a * &big_b * &r) % &big_n);
            let e = random_below(&n);
            let big_e = big(&e);
            let power = modulus.pow(&modulus.to_montgomery(&a), &e);
            assert_eq!(big(&power), big_a.modpow(&big_e, &big_n) * &r % &big_n);
            let two = BigUint::from(2u8);
            assert_eq!(
                big(&modulus.pow_two(&e)),
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
        let p = (BigUint::from(1u8) << 512) - BigUint::from(569u16);
        let q = (BigUint::from(1u8) << 512) - BigUint::from(629u16);
        assert!(is_probable_prime(&limbs::<8>(&p)));
        assert!(is_probable_prime(&limbs::<8>(&q)));
        assert!(!is_probable_prime(&limbs::<16>(&(&p * &q))));
    }

    #[test]
    fn residues_match_division() {
        for x in [
            random_start::<16>(),
            [u64::MAX; 16],
            random_start::<32>()[..16].try_into().unwrap(),
        ] {
            let residues = residues(&x);
            for (&p, &r) in small_primes().primes.iter().zip(&residues) {
                assert_eq!(u64::from(r), rem_small(&x, p), "mod {p}");
            }
        }
    }

    #[test]
    fn sieve_marks_exactly_the_candidates_with_small_factors() {
        let start = random_start::<16>();
        let composite = sieve(&start);
        for (k, &marked) in composite.iter().enumerate().take(200) {
            let candidate = big(&add_small(&start, 2 * k as u64).unwrap());
            let small_factor = small_primes()
                .primes
                .iter()
                .any(|&p| (&candidate % BigUint::from(p)) == BigUint::from(0u8));
            let one_mod_e = &candidate % BigUint::from(PUBLIC_EXPONENT) == BigUint::from(1u8);
            assert_eq!(marked, small_factor || one_mod_e, "offset {k}");
        }
    }

    /// Whichever arithmetic this CPU uses, every size gives two distinct primes of half
    /// the modulus size, far enough apart, that no other test calls composite.
    #[test]
    fn rsa_primes_are_prime_and_of_the_requested_size() {
        for bits in [2048, 3072, 4096] {
            let [p, q] = rsa_primes(bits).unwrap();
            let (p, q) = (big_vec(&p), big_vec(&q));
            assert_eq!((p.bits(), q.bits()), (bits / 2, bits / 2));
            assert!(p > q);
            assert!((&p - &q).bits() > bits / 2 - 100);
            for prime in [&p, &q] {
                // Fermat tests to a few bases, by the bignum library.
                for base in [3u32, 5, 7, 11] {
                    let exponent = prime - 1u8;
                    assert_eq!(
                        BigUint::from(base).modpow(&exponent, prime),
                        BigUint::from(1u8)
                    );
                }
                assert_ne!(prime % BigUint::from(PUBLIC_EXPONENT), BigUint::from(1u8));
            }
        }
        assert!(rsa_primes(1000).is_none());
    }

    /// The portable arithmetic finds primes too, whatever this CPU has.
    #[test]
    fn portable_search_finds_primes() {
        let done = AtomicBool::new(false);
        let prime = std::iter::repeat_with(|| search::<16, 3, 20>(Tester::Portable, &done))
            .flatten()
            .next()
            .unwrap();
        let big_prime = big(&prime);
        assert_eq!(big_prime.bits(), 1024);
        let exponent = &big_prime - 1u8;
        assert_eq!(
            BigUint::from(3u8).modpow(&exponent, &big_prime),
            BigUint::from(1u8)
        );
    }

    /// Both arithmetics' powers agree with the bignum library's, for every size.
    #[test]
    fn prime_powers_match_big_integers() {
        fn check<const N: usize>() {
            let moduli = [random_start::<N>(), random_start::<N>()];
            let bases = moduli.map(|n| random_below(&n));
            let exponents = [random_start::<N>(), random_limbs::<N>()];
            let [x0, x1] = prime_powers(
                [&moduli[0], &moduli[1]],
                [&bases[0], &bases[1]],
                [&exponents[0], &exponents[1]],
            )
            .unwrap();
            for (u, x) in [x0, x1].iter().enumerate() {
                let expected = big(&bases[u]).modpow(&big(&exponents[u]), &big(&moduli[u]));
                assert_eq!(big_vec(x), expected);
                let [n, b, e] = [moduli[u], bases[u], exponents[u]];
                let y = montgomery::Montgomery::new(&n).power(&b, &e);
                assert_eq!(big(&y), expected);
            }
        }
        check::<16>();
        check::<24>();
        check::<32>();
        // Sizes and inputs outside the supported ones.
        let n = random_start::<16>();
        assert!(prime_powers([&n, &n[..15]], [&[2], &[2]], [&[3], &[3]]).is_none());
        assert!(prime_powers([&n, &n], [&n, &[2]], [&[3], &[3]]).is_none());
        assert!(prime_powers([&n[..8], &n[..8]], [&[2], &[2]], [&[3], &[3]]).is_none());
    }

    fn big_vec(x: &[u64]) -> BigUint {
        BigUint::from_bytes_le(&x.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<u8>>())
    }
}
