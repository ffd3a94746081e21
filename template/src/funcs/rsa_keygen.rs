//! RSA keys for `genCA`, `genSignedCert`, `genSelfSignedCert` and `genPrivateKey "rsa"`:
//! primes from `chartkit-primes` (a search on every core), assembled and checked by the
//! `rsa` crate ([`rsa::RsaPrivateKey::from_p_q`]).

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

fn to_big(limbs: &[u64]) -> rsa::BigUint {
    let bytes: Vec<u8> = limbs.iter().flat_map(|limb| limb.to_le_bytes()).collect();
    rsa::BigUint::from_bytes_le(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

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
