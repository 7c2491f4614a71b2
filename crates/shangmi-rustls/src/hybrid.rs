//! curveSM2MLKEM768 (NamedGroup 0x11EE): curveSM2 ECDH and ML-KEM-768 in one key share, the
//! post-quantum hybrid OpenSSL 4.0 and Tongsuo 8.5 offer beside X25519MLKEM768.
//!
//! The layout is theirs (their `mlx_kmgmt.c` lists curveSM2 with the ML-KEM part second, as
//! for SecP256r1MLKEM768): the client's share is the 65-byte uncompressed SM2 point then the
//! 1,184-byte ML-KEM encapsulation key; the server's the point then the 1,088-byte ciphertext;
//! the shared secret the 32-byte ECDH x then the 32-byte ML-KEM secret. A client also offers
//! the point alone as a curveSM2 share, so a server without the hybrid answers without a
//! HelloRetryRequest.
//!
//! ML-KEM is libcrux-ml-kem: formally verified (panic freedom, functional correctness and
//! secret independence are proved in F*), with AVX2 and NEON code chosen at run time and a
//! portable fallback; the fastest pure-Rust implementation we measured.

use libcrux_ml_kem::mlkem768::{self, MlKem768Ciphertext, MlKem768PrivateKey, MlKem768PublicKey};
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved, ProtocolVersion};
use shangmi::sm2::EphemeralSecret;
use zeroize::{Zeroize, Zeroizing};

use crate::kx::{CURVE_SM2, ephemeral, parse_key_share};
use crate::prepared::take_prepared;

/// curveSM2MLKEM768's code point.
pub const CURVE_SM2_MLKEM768: NamedGroup = NamedGroup::Unknown(0x11EE);

const POINT: usize = 65;
const EK: usize = 1184;
const CT: usize = 1088;

/// curveSM2MLKEM768 for rustls' `kx_groups`.
#[derive(Debug)]
pub struct CurveSm2MlKem768;

/// The group to list in a provider's `kx_groups`, before [`crate::CURVE_SM2_GROUP`] to prefer
/// it.
pub static CURVE_SM2_MLKEM768_GROUP: &dyn SupportedKxGroup = &CurveSm2MlKem768;

fn random<const N: usize>() -> Result<Zeroizing<[u8; N]>, Error> {
    let mut r = Zeroizing::new([0u8; N]);
    getrandom::fill(&mut r[..]).map_err(|_| rustls::crypto::GetRandomFailed)?;
    Ok(r)
}

fn invalid() -> Error {
    PeerMisbehaved::InvalidKeyShare.into()
}

/// An ML-KEM decapsulation key, wiped when dropped.
struct DecapsulationKey(MlKem768PrivateKey);

impl Drop for DecapsulationKey {
    fn drop(&mut self) {
        self.0[0..].zeroize();
    }
}

/// `ecdh || mlkem`, the order both peers combine them in.
fn combine(ecdh: &[u8], mlkem: &[u8; 32]) -> SharedSecret {
    let mut both = Zeroizing::new([0u8; 64]);
    both[..32].copy_from_slice(ecdh);
    both[32..].copy_from_slice(mlkem);
    SharedSecret::from(&both[..])
}

impl SupportedKxGroup for CurveSm2MlKem768 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let ecdh = ephemeral()?;
        let pair = mlkem768::generate_key_pair(*random::<64>()?);
        let (private, public) = pair.into_parts();
        let mut share = Vec::with_capacity(POINT + EK);
        share.extend_from_slice(&ecdh.public_key().to_uncompressed());
        share.extend_from_slice(public.as_slice());
        Ok(Box::new(Active {
            ecdh,
            mlkem: DecapsulationKey(private),
            share,
        }))
    }

    /// The server's side: the client's point and encapsulation key checked, our point and
    /// the ciphertext back.
    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        if client_share.len() != POINT + EK {
            return Err(invalid());
        }
        let peer = parse_key_share(&client_share[..POINT])?;
        let ek = MlKem768PublicKey::try_from(&client_share[POINT..]).map_err(|_| invalid())?;
        // FIPS 203's modulus check: every coefficient of the key below q.
        if !mlkem768::validate_public_key(&ek) {
            return Err(invalid());
        }
        // The ECDH half as `crate::with_prepared` put it on hand, else now.
        let (point, x) = match take_prepared(&client_share[..POINT]) {
            Some(done) => done.into_parts(),
            None => {
                let ecdh = ephemeral()?;
                let point = ecdh.public_key().to_uncompressed();
                let x = ecdh.diffie_hellman(&peer).map_err(|_| invalid())?;
                (point, Zeroizing::new(*x.as_bytes()))
            }
        };
        let mut share = Vec::with_capacity(POINT + CT);
        share.extend_from_slice(&point);
        let (ct, ss) = mlkem768::encapsulate(&ek, *random::<32>()?);
        let ss = Zeroizing::new(ss);
        share.extend_from_slice(ct.as_slice());
        Ok(CompletedKeyExchange {
            group: CURVE_SM2_MLKEM768,
            pub_key: share,
            secret: combine(&x[..], &ss),
        })
    }

    fn name(&self) -> NamedGroup {
        CURVE_SM2_MLKEM768
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

struct Active {
    ecdh: EphemeralSecret,
    mlkem: DecapsulationKey,
    share: Vec<u8>,
}

impl ActiveKeyExchange for Active {
    /// The client's side: the server's point and ciphertext.
    fn complete(self: Box<Self>, server_share: &[u8]) -> Result<SharedSecret, Error> {
        if server_share.len() != POINT + CT {
            return Err(invalid());
        }
        let peer = parse_key_share(&server_share[..POINT])?;
        let ct = MlKem768Ciphertext::try_from(&server_share[POINT..]).map_err(|_| invalid())?;
        let this = *self;
        let x = this.ecdh.diffie_hellman(&peer).map_err(|_| invalid())?;
        let ss = Zeroizing::new(mlkem768::decapsulate(&this.mlkem.0, &ct));
        Ok(combine(&x.as_bytes()[..], &ss))
    }

    fn hybrid_component(&self) -> Option<(NamedGroup, &[u8])> {
        Some((CURVE_SM2, &self.share[..POINT]))
    }

    /// The server chose plain curveSM2: our point's ECDH alone.
    fn complete_hybrid_component(
        self: Box<Self>,
        server_share: &[u8],
    ) -> Result<SharedSecret, Error> {
        let peer = parse_key_share(server_share)?;
        let x = self.ecdh.diffie_hellman(&peer).map_err(|_| invalid())?;
        Ok(SharedSecret::from(&x.as_bytes()[..]))
    }

    fn pub_key(&self) -> &[u8] {
        &self.share
    }

    fn group(&self) -> NamedGroup {
        CURVE_SM2_MLKEM768
    }
}
