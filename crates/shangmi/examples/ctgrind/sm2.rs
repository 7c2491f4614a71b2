//! SM2 operations on secret inputs for the constant-time check, on the
//! portable backend (valgrind runs neither ADX nor AVX-512).

use crate::ct::{public, secret};
use crate::sm2::arithmetic::engine::Engine;
use crate::sm2::arithmetic::field::{Fe, Soft};
use crate::sm2::arithmetic::mul::{fixed_base, variable_base};
use crate::sm2::arithmetic::point::{Affine, Jacobian, batch_to_affine};
use crate::sm2::arithmetic::scalar::Scalar;
use crate::sm2::protocols::keys::{SigningKey, VerifyingKey};

fn x_bytes(p: &Jacobian<Soft>) -> [u8; 32] {
    let a = p.to_affine().unwrap_or(Affine::generator(Soft));
    public(a.x.to_bytes())
}

pub(crate) fn fixed_base_mul(mut k: [u8; 32]) -> [u8; 32] {
    secret(&mut k);
    x_bytes(&fixed_base(Soft, &Scalar::from_bytes_reduced(&k)))
}

pub(crate) fn variable_base_mul(mut k: [u8; 32]) -> [u8; 32] {
    secret(&mut k);
    let p = Jacobian::from_affine(&Affine::generator(Soft)).double();
    x_bytes(&variable_base(Soft, &p, &Scalar::from_bytes_reduced(&k)))
}

pub(crate) fn scalar_invert(mut k: [u8; 32]) -> [u8; 32] {
    secret(&mut k);
    public(Scalar::from_bytes_reduced(&k).invert().to_bytes())
}

pub(crate) fn field_invert(mut x: [u8; 32]) -> [u8; 32] {
    x[0] &= 0x7f; // below p
    secret(&mut x);
    let fe = Fe::from_bytes(Soft, &x).unwrap_or(Fe::zero(Soft));
    public(fe.invert().to_bytes())
}

/// Key from secret bytes (validity check, d G, (1 + d)^-1), then a signature with a secret
/// nonce and one with a fresh hedged nonce.
pub(crate) fn keygen_and_sign(mut d: [u8; 32], mut k: [u8; 32], e: [u8; 32]) -> [u8; 64] {
    secret(&mut d);
    secret(&mut k);
    let Ok(key) = SigningKey::from_bytes_with(&d, Engine::Soft) else {
        return [0; 64];
    };
    let k = Scalar::from_bytes_reduced(&k);
    let Ok(sig) = key.sign_with_nonce(&e, &k) else {
        return [0; 64];
    };
    let Ok(sig2) = key.sign_digest(&e) else {
        return [0; 64];
    };
    let mut out = sig.to_bytes();
    out[..32].copy_from_slice(&sig2.to_bytes()[..32]);
    out
}

/// Key generation and signing as `SigningKey::random` and `sign_digest` run them, with the
/// inversions blinded: d, k and both blinding factors secret; only the blinded values and
/// whether a factor is usable may be published.
pub(crate) fn keygen_and_sign_blinded(
    mut d: [u8; 32],
    mut k: [u8; 32],
    mut blinds: [[u8; 32]; 2],
) -> [u8; 64] {
    secret(&mut d);
    secret(&mut k);
    secret(&mut blinds);
    let Ok(key) = SigningKey::from_bytes_blinded(&d, Engine::Soft, Some(&blinds[0])) else {
        return [0; 64];
    };
    let k = Scalar::from_bytes_reduced(&k);
    let e = [0x5a; 32];
    match key.sign_with_nonce_blinded(&e, &k, Some(&blinds[1])) {
        Ok(sig) => sig.to_bytes(),
        Err(_) => [0; 64],
    }
}

/// Several secret multiples of G to affine with one shared inversion (the presign pool's
/// batch step).
pub(crate) fn batch_affine(mut k: [u8; 32]) -> [u8; 32] {
    secret(&mut k);
    let mut points = [Jacobian::identity(Soft); 4];
    for (i, p) in points.iter_mut().enumerate().skip(1) {
        let mut ki = k;
        ki[31] ^= i as u8;
        *p = fixed_base(Soft, &Scalar::from_bytes_reduced(&ki));
    }
    let mut out = [Affine::generator(Soft); 4];
    batch_to_affine(&points, &mut out);
    let mut acc = [0u8; 32];
    for p in &out {
        for (a, b) in acc.iter_mut().zip(p.x.to_bytes()) {
            *a ^= b;
        }
    }
    public(acc)
}

/// Encryption to a key, then decryption with the secret key: d C1, the KDF, the C3 check.
pub(crate) fn decrypt(mut d: [u8; 32], msg: [u8; 32]) -> [u8; 32] {
    secret(&mut d);
    let Ok(key) = SigningKey::from_bytes_with(&d, Engine::Soft) else {
        return [0; 32];
    };
    let mut m = msg;
    secret(&mut m);
    let Ok(ct) = key
        .verifying_key()
        .encrypt(&m, crate::sm2::protocols::encrypt::Format::C1C3C2)
    else {
        return [0; 32];
    };
    let mut ct = ct;
    crate::ct::public_slice(&mut ct);
    match key.decrypt(&ct, crate::sm2::protocols::encrypt::Format::C1C3C2) {
        Ok(mut pt) => {
            crate::ct::public_slice(&mut pt);
            pt.try_into().unwrap_or([0; 32])
        }
        Err(_) => [1; 32],
    }
}

/// Both sides of a key exchange with secret static and ephemeral keys.
pub(crate) fn key_exchange(mut seeds: [[u8; 32]; 4]) -> [u8; 32] {
    use crate::sm2::protocols::kx::{EphemeralSecret, Exchange, Role};
    for s in seeds.iter_mut() {
        secret(s);
    }
    let (Ok(a), Ok(b)) = (
        SigningKey::from_bytes_with(&seeds[0], Engine::Soft),
        SigningKey::from_bytes_with(&seeds[1], Engine::Soft),
    ) else {
        return [0; 32];
    };
    let (Ok(ea), Ok(eb)) = (
        EphemeralSecret::from_bytes_with(&seeds[2], Engine::Soft),
        EphemeralSecret::from_bytes_with(&seeds[3], Engine::Soft),
    ) else {
        return [0; 32];
    };
    let (ra, rb) = (*ea.public_key(), *eb.public_key());
    fn ex<'a>(role: Role, peer: &'a SigningKey, r: &'a VerifyingKey) -> Exchange<'a> {
        Exchange {
            role,
            own_id: b"a",
            peer: peer.verifying_key(),
            peer_id: b"a",
            peer_ephemeral: r,
            key_len: 32,
        }
    }
    let (Ok(ka), Ok(kb)) = (
        a.key_exchange(ea, &ex(Role::Initiator, &b, &rb)),
        b.key_exchange(eb, &ex(Role::Responder, &a, &ra)),
    ) else {
        return [0; 32];
    };
    let ok = ka.verify_confirmation(&kb.confirmation()).is_ok();
    let mut out: [u8; 32] = ka.key().try_into().unwrap_or([0; 32]);
    crate::ct::public_slice(&mut out);
    out[0] ^= u8::from(ok);
    out
}

/// ECDH as curveSM2 runs it (RFC 8998): a secret ephemeral scalar times a public point.
pub(crate) fn ecdh(mut r: [u8; 32], peer_seed: [u8; 32]) -> [u8; 32] {
    use crate::sm2::protocols::kx::EphemeralSecret;
    secret(&mut r);
    let (Ok(e), Ok(peer)) = (
        EphemeralSecret::from_bytes_with(&r, Engine::Soft),
        SigningKey::from_bytes_with(&peer_seed, Engine::Soft),
    ) else {
        return [0; 32];
    };
    match e.diffie_hellman(peer.verifying_key()) {
        Ok(x) => public(*x.as_bytes()),
        Err(_) => [0; 32],
    }
}

/// Eight key agreements in IFMA lanes and eight key generations' comb in lanes, on the
/// stand-ins for the instructions (`field::SoftLanes`: valgrind runs no AVX-512), secret
/// scalars against public points.
#[cfg(target_arch = "x86_64")]
pub(crate) fn lanes(secrets: [u8; 32], points: [u8; 32]) -> [u8; 64] {
    use crate::sm2::arithmetic::field::SoftLanes;
    use crate::sm2::arithmetic::mul::{fixed_base_many, variable_base_many};
    let ks: Vec<Scalar> = (0..8u8)
        .map(|i| {
            let mut k = crate::sm3::hash(&[&secrets[..], &[i]].concat());
            secret(&mut k);
            Scalar::from_bytes_reduced(&k)
        })
        .collect();
    let ps: Vec<Affine<SoftLanes>> = (0..8u8)
        .map(|i| {
            let d = Scalar::from_bytes_reduced(&crate::sm3::hash(&[&points[..], &[i]].concat()));
            let p = fixed_base(Soft, &d)
                .to_affine()
                .unwrap_or(Affine::generator(Soft));
            Affine {
                x: Fe::from_mont(SoftLanes, p.x.mont_limbs()),
                y: Fe::from_mont(SoftLanes, p.y.mont_limbs()),
            }
        })
        .collect();
    let jobs: Vec<(Affine<SoftLanes>, &Scalar)> = ps.iter().copied().zip(&ks).collect();
    let shared = variable_base_many(SoftLanes, &jobs);
    let keys = fixed_base_many(SoftLanes, &ks);
    let x = |p: &Jacobian<SoftLanes>| {
        let a = p.to_affine().unwrap_or(Affine::generator(SoftLanes));
        public(a.x.to_bytes())
    };
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(&x(&shared[7]));
    out[32..].copy_from_slice(&x(&keys[7]));
    out
}
