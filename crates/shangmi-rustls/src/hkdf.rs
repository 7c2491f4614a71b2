//! HKDF-SM3 for the TLS 1.3 key schedule, with the schedule's constants computed once.
//!
//! SM3 costs five to six times what SHA-256 does on a CPU with SHA instructions, and a
//! handshake runs a hundred-odd SM3 blocks a side, so the key schedule is a visible part of an
//! RFC 8998 handshake. Part of it does not depend on the connection at all:
//! - every extraction without a salt is HMAC keyed with 32 zero bytes (the key's two padded
//!   blocks, once per process instead of once per handshake);
//! - a handshake without a PSK starts from HKDF-Extract(0, 0) and derives the handshake
//!   secret's salt from it with the hash of the empty string: three HMACs and a hash, the same
//!   for every such handshake, kept here with the salt's HMAC key.
//!
//! The comparisons that recognise these constants look only at public values (the labels and
//! the transcript hash of an expansion) or, for a salt, compare in constant time.

use std::sync::OnceLock;

use rustls::crypto::hmac;
use rustls::crypto::tls13::{Hkdf, HkdfExpander, OkmBlock, OutputLengthError};
use shangmi::sm3::HmacSm3;
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

const HASH_LEN: usize = 32;

/// SM3 of the empty string (the transcript hash rustls passes to `Derive-Secret(., ., "")`).
pub(crate) const EMPTY_HASH: [u8; HASH_LEN] = [
    0x1a, 0xb2, 0x1d, 0x83, 0x55, 0xcf, 0xa1, 0x7f, 0x8e, 0x61, 0x19, 0x48, 0x31, 0xe8, 0x1a, 0x8f,
    0x22, 0xbe, 0xc8, 0xc7, 0x28, 0xfe, 0xfb, 0x74, 0x7e, 0xd0, 0x35, 0xeb, 0x50, 0x82, 0xaa, 0x2b,
];

/// HKDF on HMAC-SM3, as rustls' key schedule calls it.
pub(crate) struct Sm3Hkdf;

/// The one HKDF-SM3 rustls sees.
pub(crate) static HKDF_SM3: Sm3Hkdf = Sm3Hkdf;

/// HMAC-SM3 keyed with HashLen zero bytes: the salt of every extraction given none.
fn zero_salt() -> &'static HmacSm3 {
    static KEY: OnceLock<HmacSm3> = OnceLock::new();
    KEY.get_or_init(|| HmacSm3::new(&[0; HASH_LEN]))
}

/// The constants of a handshake without a PSK.
struct NoPsk {
    /// HKDF-Extract(0, 0), the early secret, as an HMAC key.
    early: HmacSm3,
    /// The HkdfLabel of `Derive-Secret(early, "derived", "")`, and the secret it gives.
    derived_info: Vec<u8>,
    derived: [u8; HASH_LEN],
    /// HMAC keyed with `derived`: the salt of the handshake secret's extraction.
    derived_key: HmacSm3,
}

fn no_psk() -> &'static NoPsk {
    static C: OnceLock<NoPsk> = OnceLock::new();
    C.get_or_init(|| {
        let early = HmacSm3::new(&tag(zero_salt(), &[&[0; HASH_LEN]]));
        let derived_info = label_info(b"derived", &EMPTY_HASH);
        let derived = tag(&early, &[&derived_info, &[1]]);
        NoPsk {
            derived_key: HmacSm3::new(&derived),
            early,
            derived_info,
            derived,
        }
    })
}

/// RFC 8446's HkdfLabel for a 32-byte output, flattened.
fn label_info(label: &[u8], context: &[u8]) -> Vec<u8> {
    let mut info = vec![0, HASH_LEN as u8, (6 + label.len()) as u8];
    info.extend_from_slice(b"tls13 ");
    info.extend_from_slice(label);
    info.push(context.len() as u8);
    info.extend_from_slice(context);
    info
}

/// HMAC under a prepared key, over the concatenation of `parts`.
fn tag(key: &HmacSm3, parts: &[&[u8]]) -> [u8; HASH_LEN] {
    let mut mac = key.clone();
    for part in parts {
        mac.update(part);
    }
    mac.finalize()
}

/// The HMAC key for an extraction's salt.
fn salt_key(salt: Option<&[u8]>) -> HmacSm3 {
    match salt {
        None => zero_salt().clone(),
        Some(salt) => {
            let c = no_psk();
            // Whether this is the handshake without a PSK is on the wire already; the
            // comparison itself does not tell more of a PSK-derived salt than that.
            if bool::from(salt.ct_eq(&c.derived)) {
                c.derived_key.clone()
            } else {
                HmacSm3::new(salt)
            }
        }
    }
}

/// HKDF-Expand under one PRK: the PRK's HMAC key prepared once.
struct Expander {
    key: HmacSm3,
    /// Set on the early secret of a handshake without a PSK: its one expansion a handshake
    /// makes, already computed.
    known: Option<&'static NoPsk>,
}

impl Expander {
    fn with_prk(prk: &[u8]) -> Box<Self> {
        Box::new(Expander {
            key: HmacSm3::new(prk),
            known: None,
        })
    }
}

impl NoPsk {
    /// Whether `info`, joined, is the HkdfLabel of the `derived` secret.
    fn is_derived_info(&self, info: &[&[u8]]) -> bool {
        let mut rest = self.derived_info.as_slice();
        for part in info {
            match rest.split_at_checked(part.len()) {
                Some((head, tail)) if head == *part => rest = tail,
                _ => return false,
            }
        }
        rest.is_empty()
    }
}

impl HkdfExpander for Expander {
    fn expand_slice(&self, info: &[&[u8]], output: &mut [u8]) -> Result<(), OutputLengthError> {
        if output.len() > 255 * HASH_LEN {
            return Err(OutputLengthError);
        }
        if let Some(c) = self.known
            && output.len() == HASH_LEN
            && c.is_derived_info(info)
        {
            output.copy_from_slice(&c.derived);
            return Ok(());
        }
        let mut term = [0u8; HASH_LEN];
        let mut previous = 0;
        for (n, chunk) in output.chunks_mut(HASH_LEN).enumerate() {
            let mut mac = self.key.clone();
            mac.update(&term[..previous]);
            for part in info {
                mac.update(part);
            }
            mac.update(&[n as u8 + 1]);
            term = mac.finalize();
            previous = HASH_LEN;
            chunk.copy_from_slice(&term[..chunk.len()]);
        }
        term.zeroize();
        Ok(())
    }

    fn expand_block(&self, info: &[&[u8]]) -> OkmBlock {
        let mut out = [0u8; HASH_LEN];
        self.expand_slice(info, &mut out)
            .expect("one block is within HKDF's limit");
        let block = OkmBlock::new(&out);
        out.zeroize();
        block
    }

    fn hash_len(&self) -> usize {
        HASH_LEN
    }
}

impl Hkdf for Sm3Hkdf {
    fn extract_from_zero_ikm(&self, salt: Option<&[u8]>) -> Box<dyn HkdfExpander> {
        if salt.is_none() {
            let c = no_psk();
            return Box::new(Expander {
                key: c.early.clone(),
                known: Some(c),
            });
        }
        self.extract_from_secret(salt, &[0; HASH_LEN])
    }

    fn extract_from_secret(&self, salt: Option<&[u8]>, secret: &[u8]) -> Box<dyn HkdfExpander> {
        let mut prk = tag(&salt_key(salt), &[secret]);
        let expander = Expander::with_prk(&prk);
        prk.zeroize();
        expander
    }

    fn expander_for_okm(&self, okm: &OkmBlock) -> Box<dyn HkdfExpander> {
        Expander::with_prk(okm.as_ref())
    }

    fn hmac_sign(&self, key: &OkmBlock, message: &[u8]) -> hmac::Tag {
        let mut mac = HmacSm3::new(key.as_ref());
        mac.update(message);
        let mut t = mac.finalize();
        let out = hmac::Tag::new(&t);
        t.zeroize();
        out
    }
}

#[cfg(test)]
mod tests {
    use rustls::crypto::tls13::{HkdfExpander, HkdfUsingHmac};

    use super::*;

    /// HMAC-SM3 as rustls' generic HKDF takes it: the reference.
    struct HmacSm3Alg;

    impl hmac::Hmac for HmacSm3Alg {
        fn with_key(&self, key: &[u8]) -> Box<dyn hmac::Key> {
            Box::new(HmacKey(HmacSm3::new(key)))
        }

        fn hash_output_len(&self) -> usize {
            32
        }
    }

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

    /// Every call against rustls' generic HKDF over the same HMAC-SM3, including the calls
    /// the constants answer.
    #[test]
    fn matches_the_generic_hkdf() {
        let generic = HkdfUsingHmac(&HmacSm3Alg);
        let ours = &HKDF_SM3;
        let secret = [7u8; 32];
        let other_salt = [9u8; 32];
        let derived = no_psk().derived;
        let expand_all = |a: &dyn HkdfExpander, b: &dyn HkdfExpander| {
            let info = label_info(b"derived", &EMPTY_HASH);
            for parts in [
                vec![info.as_slice()],
                vec![&info[..5], &info[5..]],
                vec![&info[..5]],
                vec![b"c hs traffic".as_slice(), &[3; 32]],
            ] {
                assert_eq!(
                    a.expand_block(&parts).as_ref(),
                    b.expand_block(&parts).as_ref()
                );
                for len in [0, 12, 16, 32, 33, 64, 100] {
                    let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
                    a.expand_slice(&parts, &mut x).unwrap();
                    b.expand_slice(&parts, &mut y).unwrap();
                    assert_eq!(x, y, "{len} bytes");
                }
            }
            let mut big = vec![0u8; 255 * 32 + 1];
            assert!(a.expand_slice(&[], &mut big).is_err());
        };
        for salt in [None, Some(&derived[..]), Some(&other_salt[..])] {
            expand_all(
                &*ours.extract_from_zero_ikm(salt),
                &*generic.extract_from_zero_ikm(salt),
            );
            expand_all(
                &*ours.extract_from_secret(salt, &secret),
                &*generic.extract_from_secret(salt, &secret),
            );
        }
        let okm = OkmBlock::new(&secret);
        expand_all(
            &*ours.expander_for_okm(&okm),
            &*generic.expander_for_okm(&okm),
        );
        assert_eq!(
            ours.hmac_sign(&okm, b"transcript").as_ref(),
            generic.hmac_sign(&okm, b"transcript").as_ref()
        );
    }

    #[test]
    fn the_constants_are_what_they_say() {
        assert_eq!(shangmi::sm3::hash(b""), EMPTY_HASH);
        let generic = HkdfUsingHmac(&HmacSm3Alg);
        let early = generic.extract_from_zero_ikm(None);
        let derived = early.expand_block(&[&label_info(b"derived", &EMPTY_HASH)]);
        assert_eq!(derived.as_ref(), no_psk().derived);
    }
}
