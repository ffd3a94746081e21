//! RSA keys for `genCA`, `genSignedCert`, `genSelfSignedCert` and `genPrivateKey "rsa"`:
//! primes from `chartkit-primes` (a search on every core), assembled and checked by the
//! `rsa` crate ([`rsa::RsaPrivateKey::from_p_q`]); and certificate signatures, whose
//! exponentiations `chartkit-primes` also does, several times faster than the `rsa` crate.

use rsa::traits::{PrivateKeyParts, PublicKeyParts};

/// Makes an RSA key of `bits` bits with public exponent 65537, or `None` for a size the
/// prime search does not handle (the caller falls back to the `rsa` crate).
pub(crate) fn generate(bits: usize) -> Option<Result<rsa::RsaPrivateKey, String>> {
    let [p, q] = chartkit_primes::rsa_primes(bits)?;
    Some(
        rsa::RsaPrivateKey::from_p_q(
            to_big(&p),
            to_big(&q),
            rsa::BigUint::from(chartkit_primes::PUBLIC_EXPONENT),
        )
        .map_err(|e| format!("error generating rsa key: {e}")),
    )
}

/// The PKCS #1 v1.5 signature of a SHA-256 `digest`, as the `rsa` crate makes it (the
/// padding is deterministic, so the bytes are the same), with the two exponentiations
/// modulo the primes done by `chartkit-primes`. `None` for keys it does not handle (not
/// two primes of 1024, 1536 or 2048 bits), and if the result does not verify, which would
/// be an arithmetic fault; the caller then signs with the `rsa` crate.
pub(crate) fn sign_sha256(key: &rsa::RsaPrivateKey, digest: &[u8]) -> Option<Vec<u8>> {
    let [p, q] = key.primes() else {
        return None;
    };
    let (dp, dq, qinv) = (key.dp()?, key.dq()?, key.qinv()?);
    let prefix = rsa::Pkcs1v15Sign::new::<sha2::Sha256>().prefix;
    let size = key.size();
    let padding = size.checked_sub(prefix.len() + digest.len() + 3)?;
    let mut encoded = Vec::with_capacity(size);
    encoded.extend_from_slice(&[0x00, 0x01]);
    encoded.resize(2 + padding, 0xff);
    encoded.push(0x00);
    encoded.extend_from_slice(&prefix);
    encoded.extend_from_slice(digest);
    let message = rsa::BigUint::from_bytes_be(&encoded);

    let [s_p, s_q] = chartkit_primes::prime_powers(
        [&to_limbs(p), &to_limbs(q)],
        [&to_limbs(&(&message % p)), &to_limbs(&(&message % q))],
        [&to_limbs(dp), &to_limbs(dq)],
    )?;
    // Garner's recombination: s = s_q + q·(qinv·(s_p - s_q) mod p).
    let (s_p, s_q) = (to_big(&s_p), to_big(&s_q));
    let qinv = qinv.to_biguint()?;
    let difference = (&s_p + p - &s_q % p) % p;
    let signature = &s_q + q * (qinv * difference % p);
    if signature.modpow(key.e(), key.n()) != message {
        return None;
    }
    let bytes = signature.to_bytes_be();
    let mut out = vec![0u8; size.checked_sub(bytes.len())?];
    out.extend_from_slice(&bytes);
    Some(out)
}

fn to_limbs(x: &rsa::BigUint) -> Vec<u64> {
    x.to_bytes_le()
        .chunks(8)
        .map(|chunk| {
            let mut limb = [0u8; 8];
            limb[..chunk.len()].copy_from_slice(chunk);
            u64::from_le_bytes(limb)
        })
        .collect()
}

fn to_big(limbs: &[u64]) -> rsa::BigUint {
    let bytes: Vec<u8> = limbs.iter().flat_map(|limb| limb.to_le_bytes()).collect();
    rsa::BigUint::from_bytes_le(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    /// Signatures are the `rsa` crate's, byte for byte, for generated keys and for one
    /// made by the `rsa` crate itself.
    #[test]
    fn signatures_match_the_rsa_crate() {
        use sha2::Digest;
        let mut keys = vec![
            generate(2048).unwrap().unwrap(),
            generate(3072).unwrap().unwrap(),
        ];
        keys.push(rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).unwrap());
        for key in &keys {
            for message in [&b"tbsCertificate"[..], b"", &[0xff; 1000]] {
                let digest = sha2::Sha256::digest(message);
                let expected = key
                    .sign(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &digest)
                    .unwrap();
                let ours = sign_sha256(key, &digest);
                // The rsa crate's own keys may have primes of other sizes.
                if key.primes().iter().all(|p| p.bits() % 512 == 0) {
                    assert_eq!(ours.as_deref(), Some(&expected[..]));
                } else if let Some(ours) = ours {
                    assert_eq!(ours, expected);
                }
            }
        }
    }

    #[test]
    fn generated_keys_are_valid_and_of_the_requested_size() {
        let key = generate(2048).unwrap().unwrap();
        key.validate().unwrap();
        assert_eq!(key.n().bits(), 2048);
        assert_eq!(key.e(), &rsa::BigUint::from(65537u32));
        let primes = key.primes();
        assert_eq!(primes.len(), 2);
        assert!(primes.iter().all(|p| p.bits() == 1024));
        assert_ne!(primes[0], primes[1]);
        assert!(generate(1000).is_none());
    }
}
