//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod curve;
pub mod openssl_keys;
pub mod vectors;

/// A valid SM2 key drawn from `rng` (the rare draws outside [1, n-2] are skipped).
pub fn random_key(rng: &mut rand::rngs::StdRng) -> shangmi::sm2::SigningKey {
    use rand::Rng;
    loop {
        if let Ok(k) = shangmi::sm2::SigningKey::from_bytes(&rng.random()) {
            return k;
        }
    }
}
