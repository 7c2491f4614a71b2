//! Plain elliptic-curve Diffie-Hellman on the SM2 curve: the shared secret is the x
//! coordinate of r Q, as RFC 8446 defines ECDHE for its curves and RFC 8998 uses for
//! curveSM2 in TLS 1.3. This is not the SM2 key-exchange protocol (GB/T 32918.3), which RFC
//! 8998 forbids in TLS 1.3: no identities, no static keys, no confirmation.
//!
//! The peer's point is validated by its type: a [`VerifyingKey`] is on the curve and not
//! infinity, and with a prime-order curve (cofactor 1) r Q is then never infinity.

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::sm2::Error;
use crate::sm2::arithmetic::engine::{Engine, dispatch};
use crate::sm2::arithmetic::mul::{variable_base, variable_base_many};
use crate::sm2::arithmetic::point::{Affine, Jacobian, batch_to_affine};
use crate::sm2::arithmetic::scalar::{Scalar, SecretScalar};
use crate::sm2::protocols::keys::{SigningKey, VerifyingKey};
use crate::sm2::protocols::kx::EphemeralSecret;

/// The x coordinate of the Diffie-Hellman point, 32 bytes big-endian; wiped on drop.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct SharedSecret([u8; 32]);

impl core::fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SharedSecret(..)")
    }
}

impl SharedSecret {
    /// The 32 bytes of x.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl EphemeralSecret {
    /// ECDH with the peer's public point: x(r Q). Consumes the ephemeral key, so a key share
    /// serves one exchange. Fails only on a point at infinity, which a validated peer key and
    /// a nonzero r cannot give; the check stays as defence in depth.
    pub fn diffie_hellman(self, peer: &VerifyingKey) -> Result<SharedSecret, Error> {
        x_of_product(self.public.engine, &self.r, peer)
    }

    /// Whether [`EphemeralSecret::diffie_hellman_many`] runs agreements side by side in vector
    /// lanes on this CPU (AVX512-IFMA). Where it does, a server gains by gathering the
    /// agreements of its handshakes in flight; where it does not, the call runs them one after
    /// another (one inversion shared) and a server gains nothing by waiting to gather.
    pub fn many_in_lanes() -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Engine::Adx512(t) = <Engine as crate::cpu::Implementation>::best() {
            return t.with_ifma().is_some();
        }
        false
    }

    /// [`EphemeralSecret::diffie_hellman`] for many key shares at once, each result in its
    /// pair's place: the agreements of many handshakes in flight, gathered. On CPUs with
    /// AVX512-IFMA eight run at once in vector lanes; elsewhere one after another, with the
    /// same results. Constant time in the secrets as the single call is (the time depends on
    /// how many pairs there are); the points' affine forms share one inversion.
    pub fn diffie_hellman_many(
        pairs: Vec<(EphemeralSecret, &VerifyingKey)>,
    ) -> Vec<Result<SharedSecret, Error>> {
        let Some(engine) = pairs.first().map(|(s, _)| s.public.engine) else {
            return Vec::new();
        };
        dispatch!(engine, |a| {
            let jobs: Vec<(Affine<_>, &Scalar)> =
                pairs.iter().map(|(s, q)| (q.affine(a), &*s.r)).collect();
            let mut points = variable_base_many(a, &jobs);
            let mut affine = vec![Affine::generator(a); points.len()];
            batch_to_affine(&points, &mut affine);
            let secrets = points
                .iter()
                .zip(&affine)
                .map(|(p, q)| {
                    // Infinity (which validated keys and nonzero secrets cannot give) came out
                    // as (0, 0); it is refused as the single call refuses it.
                    if crate::ct::public_choice(p.is_identity()) {
                        Err(Error::KeyExchange)
                    } else {
                        Ok(SharedSecret(q.x.to_bytes()))
                    }
                })
                .collect();
            // The shared points are the secrets in another form.
            points.zeroize();
            affine.zeroize();
            secrets
        })
    }
}

impl SigningKey {
    /// ECDH with this key as the private half: x(d Q), what OpenSSL's ECDH computes for any
    /// EC key. For TLS key shares prefer [`EphemeralSecret`], which cannot be used twice;
    /// this serves callers that hold the key themselves (OpenSSL's provider interface keeps
    /// the key in its own object and may derive from it more than once).
    pub fn diffie_hellman(&self, peer: &VerifyingKey) -> Result<SharedSecret, Error> {
        x_of_product(self.engine, &self.d, peer)
    }
}

/// x(k Q) in constant time in k.
fn x_of_product(
    engine: Engine,
    k: &SecretScalar,
    peer: &VerifyingKey,
) -> Result<SharedSecret, Error> {
    dispatch!(engine, |a| {
        let p = variable_base(a, &Jacobian::from_affine(&peer.affine(a)), k).to_affine();
        if !crate::ct::public_choice(p.is_some()) {
            return Err(Error::KeyExchange);
        }
        let x = p.unwrap_or(Affine::generator(a)).x.to_bytes();
        Ok(SharedSecret(x))
    })
}

#[cfg(test)]
mod tests {
    use crate::sm2::{EphemeralSecret, VerifyingKey};

    fn hex_decode(s: &str) -> Option<Vec<u8>> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
            .collect()
    }

    #[test]
    fn both_sides_agree_and_differ_per_exchange() {
        let (a, b) = (
            EphemeralSecret::random().unwrap(),
            EphemeralSecret::random().unwrap(),
        );
        let (pa, pb) = (*a.public_key(), *b.public_key());
        let ka = a.diffie_hellman(&pb).unwrap();
        let kb = b.diffie_hellman(&pa).unwrap();
        assert_eq!(ka.as_bytes(), kb.as_bytes());
        let c = EphemeralSecret::random().unwrap();
        assert_ne!(c.diffie_hellman(&pb).unwrap().as_bytes(), ka.as_bytes());
    }

    #[test]
    fn a_static_key_agrees_with_an_ephemeral_one() {
        let d = crate::sm2::SigningKey::random().unwrap();
        let e = EphemeralSecret::random().unwrap();
        let pe = *e.public_key();
        let from_static = d.diffie_hellman(&pe).unwrap();
        // The key is not consumed: a second derivation gives the same secret.
        assert_eq!(
            d.diffie_hellman(&pe).unwrap().as_bytes(),
            from_static.as_bytes()
        );
        assert_eq!(
            e.diffie_hellman(d.verifying_key()).unwrap().as_bytes(),
            from_static.as_bytes()
        );
    }

    #[test]
    fn many_at_once_agree_with_one_at_a_time() {
        let mut seed = [5u8; 32];
        for n in [0, 1, 5, 9] {
            let mut pairs = Vec::new();
            let mut wants = Vec::new();
            let peers: Vec<VerifyingKey> = (0..n)
                .map(|_| *EphemeralSecret::random().unwrap().public_key())
                .collect();
            for peer in &peers {
                seed = crate::sm3::hash(&seed);
                let e = EphemeralSecret::from_bytes_for_known_answer_tests(&seed).unwrap();
                let again = EphemeralSecret::from_bytes_for_known_answer_tests(&seed).unwrap();
                wants.push(again.diffie_hellman(peer).unwrap());
                pairs.push((e, peer));
            }
            let got = EphemeralSecret::diffie_hellman_many(pairs);
            assert_eq!(got.len(), n);
            for (g, w) in got.iter().zip(&wants) {
                assert_eq!(g.as_ref().unwrap().as_bytes(), w.as_bytes());
            }
        }
    }

    #[test]
    fn with_the_generator_gives_the_own_public_x() {
        // x(r G) is the x of the key share itself: the multiplication is the plain one.
        let g = hex_decode(
            "0432C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7\
             BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0",
        )
        .unwrap();
        let g = VerifyingKey::from_sec1_bytes(&g).unwrap();
        let e = EphemeralSecret::random().unwrap();
        let own_x = e.public_key().coordinates().0;
        assert_eq!(e.diffie_hellman(&g).unwrap().as_bytes(), &own_x);
    }
}
