//! SM3 as rustls' transcript hash, and HMAC-SM3 under the TLS 1.3 key schedule's HKDF.

use rustls::crypto::hash::{self, HashAlgorithm};
use rustls::crypto::hmac;
use shangmi::sm3::{HmacSm3, Sm3};

/// The hash byte of sm2sig_sm3 (0x0708); IANA's TLS HashAlgorithm registry has no SM3, and
/// rustls compares the value only to decide which sessions may resume under which suite.
const SM3_HASH_ALGORITHM: HashAlgorithm = HashAlgorithm::Unknown(0x07);

/// SM3 for rustls' transcript.
pub(crate) struct Sm3Hash;

/// The one SM3 rustls sees.
pub(crate) static SM3: Sm3Hash = Sm3Hash;

impl hash::Hash for Sm3Hash {
    fn start(&self) -> Box<dyn hash::Context> {
        Box::new(Sm3Context(Sm3::new()))
    }

    fn hash(&self, data: &[u8]) -> hash::Output {
        hash::Output::new(&shangmi::sm3::hash(data))
    }

    fn output_len(&self) -> usize {
        32
    }

    fn algorithm(&self) -> HashAlgorithm {
        SM3_HASH_ALGORITHM
    }
}

struct Sm3Context(Sm3);

impl hash::Context for Sm3Context {
    fn fork_finish(&self) -> hash::Output {
        hash::Output::new(&self.0.clone().finalize())
    }

    fn fork(&self) -> Box<dyn hash::Context> {
        Box::new(Sm3Context(self.0.clone()))
    }

    fn finish(self: Box<Self>) -> hash::Output {
        hash::Output::new(&self.0.finalize())
    }

    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
}

/// HMAC-SM3, which RFC 8998's suites use in HKDF.
pub(crate) struct HmacSm3Alg;

/// The one HMAC-SM3 rustls sees.
pub(crate) static HMAC_SM3: HmacSm3Alg = HmacSm3Alg;

impl hmac::Hmac for HmacSm3Alg {
    fn with_key(&self, key: &[u8]) -> Box<dyn hmac::Key> {
        Box::new(HmacKey(HmacSm3::new(key)))
    }

    fn hash_output_len(&self) -> usize {
        32
    }
}

/// The keyed state before any data: each tag starts from a clone of it, so the key's two
/// padded blocks are hashed once per key, not once per tag.
struct HmacKey(HmacSm3);

impl hmac::Key for HmacKey {
    fn sign_concat(&self, first: &[u8], middle: &[&[u8]], last: &[u8]) -> hmac::Tag {
        let mut mac = self.0.clone();
        mac.update(first);
        for part in middle {
            mac.update(part);
        }
        mac.update(last);
        hmac::Tag::new(&mac.finalize())
    }

    fn tag_len(&self) -> usize {
        32
    }
}
