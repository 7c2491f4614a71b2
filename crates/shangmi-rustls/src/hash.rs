//! SM3 as rustls' transcript hash.

use rustls::crypto::hash::{self, HashAlgorithm};
use shangmi::sm3::Sm3;

/// The hash byte of sm2sig_sm3 (0x0708); IANA's TLS HashAlgorithm registry has no SM3, and
/// rustls compares the value only to decide which sessions may resume under which suite.
const SM3_HASH_ALGORITHM: HashAlgorithm = HashAlgorithm::Unknown(0x07);

/// SM3 for rustls' transcript.
pub(crate) struct Sm3Hash;

/// The one SM3 rustls sees.
pub(crate) static SM3: Sm3Hash = Sm3Hash;

impl hash::Hash for Sm3Hash {
    fn start(&self) -> Box<dyn hash::Context> {
        Box::new(Sm3Context {
            sm3: Sm3::new(),
            fed: false,
        })
    }

    fn hash(&self, data: &[u8]) -> hash::Output {
        if data.is_empty() {
            return hash::Output::new(&crate::hkdf::EMPTY_HASH);
        }
        hash::Output::new(&shangmi::sm3::hash(data))
    }

    fn output_len(&self) -> usize {
        32
    }

    fn algorithm(&self) -> HashAlgorithm {
        SM3_HASH_ALGORITHM
    }
}

/// A transcript hash; `fed` once any byte was absorbed. The key schedule hashes the empty
/// string two or three times a handshake (`Derive-Secret(., ., "")`), answered with the
/// constant: rustls takes it from the hash's algorithm, which knows SHA-2 but not SM3.
struct Sm3Context {
    sm3: Sm3,
    fed: bool,
}

impl hash::Context for Sm3Context {
    fn fork_finish(&self) -> hash::Output {
        if !self.fed {
            return hash::Output::new(&crate::hkdf::EMPTY_HASH);
        }
        hash::Output::new(&self.sm3.clone().finalize())
    }

    fn fork(&self) -> Box<dyn hash::Context> {
        Box::new(Sm3Context {
            sm3: self.sm3.clone(),
            fed: self.fed,
        })
    }

    fn finish(self: Box<Self>) -> hash::Output {
        if !self.fed {
            return hash::Output::new(&crate::hkdf::EMPTY_HASH);
        }
        hash::Output::new(&self.sm3.finalize())
    }

    fn update(&mut self, data: &[u8]) {
        self.fed |= !data.is_empty();
        self.sm3.update(data);
    }
}
