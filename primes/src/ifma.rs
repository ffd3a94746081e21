//! Montgomery arithmetic with AVX-512 IFMA (52-bit multiply-accumulate on 8 lanes), two
//! candidates at a time: about three times the portable code's speed per product.
//!
//! Numbers are held as 52-bit digits, eight to a vector (`K` vectors, `L` digits used),
//! and multiplied with "almost Montgomery multiplication" (Gueron and Krasnov): for inputs
//! below `4n` the product `a·b·R⁻¹ mod n` (`R = 2^(52·L)`) comes out below `2n` without a
//! final subtraction, because `R` exceeds `n` by at least 2^16. Values are reduced fully
//! only to compare them. One product takes one digit of `b` per step: the low and high
//! halves of `a·b_i` and of `n·y` (with `y` chosen so the lowest digit becomes zero) are
//! added into the lanes, then every lane moves down one digit. The lowest digit, which
//! decides `y`, is followed on the scalar side so that the vectors never wait on more than
//! one lane-to-register move per step; two products run interleaved so that each one's
//! latency hides the other's.
//!
//! This is the crate's only unsafe code: intrinsics of a CPU feature may run only where
//! the CPU has it, which [`Ifma::detect`] checks once and the [`Ifma`] token proves, and
//! vector loads and stores read and write whole `[u64; 8]` arrays.

use std::arch::x86_64::{
    __m512i, _mm_cvtsi128_si64, _mm512_add_epi64, _mm512_alignr_epi64, _mm512_castsi512_si128,
    _mm512_loadu_si512, _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_set1_epi64,
    _mm512_setzero_si512, _mm512_storeu_si512,
};

use crate::limbs::{bit, bit_length, negated_inverse, power_of_two_mod, sub_assign};

const MASK: u64 = (1 << 52) - 1;

/// A number as 52-bit digits, least significant first, eight to a vector.
type Digits<const K: usize> = [[u64; 8]; K];

/// Proof that this CPU has AVX-512F and AVX-512 IFMA; only [`Ifma::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ifma(());

impl Ifma {
    pub(crate) fn detect() -> Option<Ifma> {
        (std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma"))
            .then_some(Ifma(()))
    }

    /// Whether each of two odd numbers of `64·N` bits (top bit set) is a strong probable
    /// prime to base 2.
    pub(crate) fn base_two<const N: usize, const K: usize, const L: usize>(
        self,
        candidates: [&[u64; N]; 2],
    ) -> [bool; 2] {
        // SAFETY: `self` exists only where the CPU has the features these functions enable.
        unsafe { base_two::<N, K, L>(candidates) }
    }

    /// Whether `n` (odd, `64·N` bits, top bit set) is a strong probable prime to every
    /// base in `bases` (each in `[2, n - 2]`), tested two bases at a time.
    pub(crate) fn bases<const N: usize, const K: usize, const L: usize>(
        self,
        n: &[u64; N],
        bases: &[[u64; N]],
    ) -> bool {
        // SAFETY: as in `base_two`.
        unsafe { bases_test::<N, K, L>(n, bases) }
    }

    /// `bases[u]^exponents[u] mod moduli[u]` for two odd moduli of `64·N` bits with their
    /// top bits set, bases below their moduli.
    pub(crate) fn powers<const N: usize, const K: usize, const L: usize>(
        self,
        moduli: [&[u64; N]; 2],
        bases: [&[u64; N]; 2],
        exponents: [&[u64; N]; 2],
    ) -> [[u64; N]; 2] {
        // SAFETY: as in `base_two`.
        unsafe { powers::<N, K, L>(moduli, bases, exponents) }
    }

    #[cfg(test)]
    fn multiply<const N: usize, const K: usize, const L: usize>(
        self,
        n: &[u64; N],
        a: &[u64; N],
        b: &[u64; N],
    ) -> [u64; N] {
        let m = Modulus::<K, L>::new(n);
        // SAFETY: as in `base_two`.
        let product = unsafe { amm::<1, K, L>([&m], [&to_digits(a)], [&to_digits(b)]) };
        from_digits(&canonical(&m, product[0]))
    }
}

/// An odd modulus `n` with its top bit set, and the constants its arithmetic needs.
struct Modulus<const K: usize, const L: usize> {
    n: Digits<K>,
    /// `-n⁻¹ mod 2^52`.
    k0: u64,
    /// `R mod n`, which is 1 in Montgomery form.
    one: Digits<K>,
    /// `n - 1` in Montgomery form.
    minus_one: Digits<K>,
}

impl<const K: usize, const L: usize> Modulus<K, L> {
    fn new<const N: usize>(n: &[u64; N]) -> Self {
        // R must exceed 16n for the almost-Montgomery bounds, and the lanes must hold
        // the L digits plus the one that the high halves reach before each shift.
        const { assert!(52 * L >= 64 * N + 16 && 8 * K > L) };
        let one = power_of_two_mod(52 * L, n);
        let mut minus_one = *n;
        sub_assign(&mut minus_one, &one);
        Modulus {
            n: to_digits(n),
            k0: negated_inverse(n[0]) & MASK,
            one: to_digits(&one),
            minus_one: to_digits(&minus_one),
        }
    }
}

fn to_digits<const N: usize, const K: usize>(x: &[u64; N]) -> Digits<K> {
    let mut out = [[0u64; 8]; K];
    for (i, position) in (0..64 * N).step_by(52).enumerate() {
        let (limb, offset) = (position / 64, position % 64);
        let mut digit = x[limb] >> offset;
        if offset > 12 && limb + 1 < N {
            digit |= x[limb + 1] << (64 - offset);
        }
        out[i / 8][i % 8] = digit & MASK;
    }
    out
}

fn from_digits<const N: usize, const K: usize>(digits: &Digits<K>) -> [u64; N] {
    let mut out = [0u64; N];
    for (i, &digit) in digits.iter().flatten().enumerate() {
        let (limb, offset) = (52 * i / 64, 52 * i % 64);
        if limb < N {
            out[limb] |= digit << offset;
        }
        if offset > 12 && limb + 1 < N {
            out[limb + 1] |= digit >> (64 - offset);
        }
    }
    out
}

fn digit<const K: usize>(x: &Digits<K>, i: usize) -> u64 {
    x[i / 8][i % 8]
}

/// `x` (below `4n`) reduced below `n`.
fn canonical<const K: usize, const L: usize>(m: &Modulus<K, L>, mut x: Digits<K>) -> Digits<K> {
    while !below(&x, &m.n, L) {
        let mut borrow = 0u64;
        for i in 0..L {
            let d = digit(&x, i)
                .wrapping_sub(digit(&m.n, i))
                .wrapping_sub(borrow);
            x[i / 8][i % 8] = d & MASK;
            borrow = d >> 63;
        }
    }
    x
}

fn below<const K: usize>(a: &Digits<K>, b: &Digits<K>, len: usize) -> bool {
    (0..len)
        .rev()
        .map(|i| (digit(a, i), digit(b, i)))
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| x < y)
}

/// `2x`, for `x` below `2n`: the result stays below `4n`, which products accept.
fn double<const K: usize>(x: &mut Digits<K>, len: usize) {
    let mut carry = 0;
    for i in 0..len {
        let v = (x[i / 8][i % 8] << 1) | carry;
        x[i / 8][i % 8] = v & MASK;
        carry = v >> 52;
    }
}

fn load<const K: usize>(x: &Digits<K>) -> [__m512i; K] {
    // SAFETY: each load reads the 64 bytes of one `[u64; 8]`; unaligned loads are allowed.
    std::array::from_fn(|j| unsafe { _mm512_loadu_si512(x[j].as_ptr().cast()) })
}

/// `U` independent almost-Montgomery products `a·b·R⁻¹ mod n`, each below `2n` for
/// inputs below `4n`.
#[target_feature(enable = "avx512f,avx512ifma")]
fn amm<const U: usize, const K: usize, const L: usize>(
    m: [&Modulus<K, L>; U],
    a: [&Digits<K>; U],
    b: [&Digits<K>; U],
) -> [Digits<K>; U] {
    let zero = _mm512_setzero_si512();
    let av: [[__m512i; K]; U] = std::array::from_fn(|u| load(a[u]));
    let nv: [[__m512i; K]; U] = std::array::from_fn(|u| load(&m[u].n));
    // The same digits one lane up, for the high halves: the high half of digit j's
    // product belongs one digit above it.
    let up = |v: &[__m512i; K]| -> [__m512i; K] {
        std::array::from_fn(|j| _mm512_alignr_epi64(v[j], if j == 0 { zero } else { v[j - 1] }, 7))
    };
    let a_up: [[__m512i; K]; U] = std::array::from_fn(|u| up(&av[u]));
    let n_up: [[__m512i; K]; U] = std::array::from_fn(|u| up(&nv[u]));

    let mut x = [[zero; K]; U];
    // What the lowest lane carries into the next digit once it is zero mod 2^52; kept on
    // the scalar side, as that lane is shifted out.
    let mut carry = [0u64; U];
    for i in 0..L {
        for u in 0..U {
            let b_i = digit(b[u], i);
            let b_v = _mm512_set1_epi64(b_i as i64);
            let low = (_mm_cvtsi128_si64(_mm512_castsi512_si128(x[u][0])) as u64)
                .wrapping_add(carry[u])
                .wrapping_add(a[u][0][0].wrapping_mul(b_i) & MASK);
            let y = low.wrapping_mul(m[u].k0) & MASK;
            carry[u] = (low + (m[u].n[0][0].wrapping_mul(y) & MASK)) >> 52;
            for j in 0..K {
                x[u][j] = _mm512_madd52lo_epu64(x[u][j], av[u][j], b_v);
                x[u][j] = _mm512_madd52hi_epu64(x[u][j], a_up[u][j], b_v);
            }
            let y_v = _mm512_set1_epi64(y as i64);
            for j in 0..K {
                let high = _mm512_madd52hi_epu64(zero, n_up[u][j], y_v);
                x[u][j] = _mm512_madd52lo_epu64(x[u][j], nv[u][j], y_v);
                x[u][j] = _mm512_add_epi64(x[u][j], high);
            }
            for j in 0..K {
                let next = if j + 1 < K { x[u][j + 1] } else { zero };
                x[u][j] = _mm512_alignr_epi64(next, x[u][j], 1);
            }
        }
    }
    // Lanes hold up to 4·L·2^52 each; carry them into 52-bit digits.
    std::array::from_fn(|u| {
        let mut out = [[0u64; 8]; K];
        for j in 0..K {
            // SAFETY: writes the 64 bytes of one `[u64; 8]`; unaligned stores are allowed.
            unsafe { _mm512_storeu_si512(out[j].as_mut_ptr().cast(), x[u][j]) };
        }
        let mut c = carry[u];
        for i in 0..L {
            let v = out[i / 8][i % 8] + c;
            out[i / 8][i % 8] = v & MASK;
            c = v >> 52;
        }
        out
    })
}

/// The end of a Miller-Rabin round: given `x = a^d` for `n - 1 = d·2^s`, is `n` a
/// strong probable prime to base `a`?
#[target_feature(enable = "avx512f,avx512ifma")]
fn strong_test<const K: usize, const L: usize>(m: &Modulus<K, L>, x: Digits<K>, s: usize) -> bool {
    let mut x = canonical(m, x);
    if x == m.one || x == m.minus_one {
        return true;
    }
    for _ in 1..s {
        let [square] = amm::<1, K, L>([m], [&x], [&x]);
        x = canonical(m, square);
        if x == m.minus_one {
            return true;
        }
        if x == m.one {
            return false;
        }
    }
    false
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn base_two<const N: usize, const K: usize, const L: usize>(
    candidates: [&[u64; N]; 2],
) -> [bool; 2] {
    let moduli = candidates.map(Modulus::<K, L>::new);
    let split = candidates.map(crate::odd_part);
    // 2^d left to right, where multiplying by the base is a doubling; the shorter
    // exponent's leading zeros square 1.
    let top = split.iter().map(|(d, _)| bit_length(d)).max().unwrap_or(0);
    let mut x = [moduli[0].one, moduli[1].one];
    for i in (0..top).rev() {
        x = amm::<2, K, L>([&moduli[0], &moduli[1]], [&x[0], &x[1]], [&x[0], &x[1]]);
        for u in 0..2 {
            if bit(&split[u].0, i) {
                double(&mut x[u], L);
            }
        }
    }
    [0, 1].map(|u| strong_test(&moduli[u], x[u], split[u].1))
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn bases_test<const N: usize, const K: usize, const L: usize>(
    n: &[u64; N],
    bases: &[[u64; N]],
) -> bool {
    let m = Modulus::<K, L>::new(n);
    let (d, s) = crate::odd_part(n);
    let r_squared = to_digits(&power_of_two_mod(2 * 52 * L, n));
    bases.chunks(2).all(|pair| {
        let plain = [
            to_digits(&pair[0]),
            to_digits(pair.last().unwrap_or(&pair[0])),
        ];
        let base = amm::<2, K, L>([&m, &m], [&plain[0], &plain[1]], [&r_squared, &r_squared]);
        let x = pow([&m, &m], &base, [&d, &d]);
        x.into_iter().all(|x| strong_test(&m, x, s))
    })
}

/// `base[u]^e[u]` modulo `m[u]` for two bases (in Montgomery form) at once, with a fixed
/// window of four bits.
#[target_feature(enable = "avx512f,avx512ifma")]
fn pow<const N: usize, const K: usize, const L: usize>(
    m: [&Modulus<K, L>; 2],
    base: &[Digits<K>; 2],
    e: [&[u64; N]; 2],
) -> [Digits<K>; 2] {
    let mut table = [[m[0].one; 16], [m[1].one; 16]];
    table[0][1] = base[0];
    table[1][1] = base[1];
    for i in 2..16 {
        let [t0, t1] = amm::<2, K, L>(
            m,
            [&table[0][i - 1], &table[1][i - 1]],
            [&base[0], &base[1]],
        );
        table[0][i] = t0;
        table[1][i] = t1;
    }
    let mut x = [m[0].one, m[1].one];
    let top = bit_length(e[0]).max(bit_length(e[1]));
    for nibble_index in (0..top.div_ceil(4)).rev() {
        for _ in 0..4 {
            x = amm::<2, K, L>(m, [&x[0], &x[1]], [&x[0], &x[1]]);
        }
        // A zero nibble multiplies by table[..][0], which is 1.
        let nibble =
            |u: usize| ((e[u][nibble_index / 16] >> (4 * (nibble_index % 16))) & 0xf) as usize;
        x = amm::<2, K, L>(
            m,
            [&x[0], &x[1]],
            [&table[0][nibble(0)], &table[1][nibble(1)]],
        );
    }
    x
}

/// `bases[u]^exponents[u] mod moduli[u]`, fully reduced, for two moduli at once.
#[target_feature(enable = "avx512f,avx512ifma")]
fn powers<const N: usize, const K: usize, const L: usize>(
    moduli: [&[u64; N]; 2],
    bases: [&[u64; N]; 2],
    exponents: [&[u64; N]; 2],
) -> [[u64; N]; 2] {
    let m = moduli.map(Modulus::<K, L>::new);
    let m = [&m[0], &m[1]];
    let r_squared = moduli.map(|n| to_digits::<N, K>(&power_of_two_mod(2 * 52 * L, n)));
    let plain = bases.map(to_digits::<N, K>);
    let base = amm::<2, K, L>(m, [&plain[0], &plain[1]], [&r_squared[0], &r_squared[1]]);
    let x = pow(m, &base, exponents);
    // Out of Montgomery form: a product with 1.
    let one = to_digits::<1, K>(&[1]);
    let plain = amm::<2, K, L>(m, [&x[0], &x[1]], [&one, &one]);
    [0, 1].map(|u| from_digits(&canonical(m[u], plain[u])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{big, limbs};
    use rsa::BigUint;

    fn ifma() -> Option<Ifma> {
        let found = Ifma::detect();
        if found.is_none() {
            eprintln!("skipped: this CPU has no AVX-512 IFMA");
        }
        found
    }

    #[test]
    fn digits_round_trip() {
        let x = crate::random_start::<16>();
        assert_eq!(from_digits::<16, 3>(&to_digits::<16, 3>(&x)), x);
        let y = crate::random_start::<32>();
        assert_eq!(from_digits::<32, 6>(&to_digits::<32, 6>(&y)), y);
    }

    /// Products agree with the bignum library's for every size, including inputs up to
    /// the `4n` bound that the exponentiations produce.
    #[test]
    fn products_match_big_integers() {
        let Some(ifma) = ifma() else { return };
        // M = N + 1 limbs hold the inputs near 4n.
        fn check<const N: usize, const M: usize, const K: usize, const L: usize>(ifma: Ifma) {
            let n = crate::random_start::<N>();
            let big_n = big(&n);
            let m = Modulus::<K, L>::new(&n);
            for round in 0..50 {
                let (a, b) = (crate::random_start::<N>(), crate::random_start::<N>());
                // Plain products of inputs below n, and raw ones of inputs near 4n.
                // p = x·y·R⁻¹ mod n  ⇔  p·R ≡ x·y (mod n)
                let agrees = |p: &BigUint, x: &BigUint, y: &BigUint| {
                    ((p << (52 * L)) % &big_n) == (x * y % &big_n)
                };
                let (x, y) = (crate::random_below(&n), crate::random_below(&n));
                let product = big(&ifma.multiply::<N, K, L>(&n, &x, &y));
                assert!(product < big_n);
                assert!(agrees(&product, &big(&x), &big(&y)));
                let (mut da, mut db) = (to_digits::<N, K>(&a), to_digits::<N, K>(&b));
                if round % 2 == 0 {
                    double(&mut da, L);
                    double(&mut db, L);
                }
                let (big_a, big_b) = (
                    big(&from_digits::<M, K>(&da)),
                    big(&from_digits::<M, K>(&db)),
                );
                // SAFETY: `ifma` proves the CPU features.
                let [raw] = unsafe { amm::<1, K, L>([&m], [&da], [&db]) };
                let raw = big(&from_digits::<M, K>(&raw));
                assert!(raw < &big_n * 2u8, "product not below 2n");
                assert!(agrees(&raw, &big_a, &big_b));
            }
        }
        check::<16, 17, 3, 20>(ifma);
        check::<24, 25, 4, 30>(ifma);
        check::<32, 33, 6, 40>(ifma);
    }

    #[test]
    fn agrees_with_the_portable_test() {
        let Some(ifma) = ifma() else { return };
        let p = (BigUint::from(1u8) << 512) - BigUint::from(569u16);
        let q = (BigUint::from(1u8) << 512) - BigUint::from(629u16);
        let composite = limbs::<16>(&(&p * &q));
        let mut largest = [u64::MAX; 16];
        largest[0] -= 104;
        assert_eq!(
            ifma.base_two::<16, 3, 20>([&largest, &composite]),
            [true, false]
        );
        let bases: Vec<[u64; 16]> = (0..5).map(|_| crate::random_below(&largest)).collect();
        assert!(ifma.bases::<16, 3, 20>(&largest, &bases));
        // Numbers that pass base 2 but not others are rare; random odd numbers check
        // that both implementations agree on the usual answer.
        for _ in 0..200 {
            let a = crate::random_start::<16>();
            let b = crate::random_start::<16>();
            let expected = [a, b].map(|n| {
                let m = crate::montgomery::Montgomery::new(&n);
                let (d, s) = crate::odd_part(&n);
                m.strong_test(m.pow_two(&d), s)
            });
            assert_eq!(ifma.base_two::<16, 3, 20>([&a, &b]), expected);
        }
    }
}
