//! SM2 key exchange: the standard's example (its test curve, with a bignum reference for the
//! points), and exchanges between two parties on the recommended curve with and without
//! confirmation, with failures where the parties disagree.

mod common;

use common::curve::{Curve, Pt, xy};
use common::vectors;
use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shangmi::Backend;
use shangmi::hazmat::derive_for_known_answer_tests;
use shangmi::sm2::{DEFAULT_ID, EphemeralSecret, Error, Exchange, Role, SigningKey, VerifyingKey};

#[test]
fn the_standards_example() {
    let rec = &vectors::load("sm2_kx.txt")[0];
    let big = |k: &str| BigUint::from_bytes_be(&rec.hex(k));
    let c = Curve {
        p: big("p"),
        a: big("a"),
        n: big("n"),
    };
    let g = Some((big("gx"), big("gy")));
    let on_curve = |q: &Pt| {
        let (x, y) = q.clone().unwrap();
        (&y * &y) % &c.p == (&x * &x * &x + &c.a * &x + big("b")) % &c.p
    };
    assert!(on_curve(&g));
    let pa = c.mul(&big("da"), &g);
    let pb = c.mul(&big("db"), &g);
    assert_eq!(pa, Some((big("pax"), big("pay"))));
    assert_eq!(pb, Some((big("pbx"), big("pby"))));
    let ra = c.mul(&big("ra"), &g);
    let rb = c.mul(&big("rb"), &g);
    let (x1, x2) = (ra.clone().unwrap().0, rb.clone().unwrap().0);
    let ta = (big("da") + c.xbar(&x1) * big("ra")) % &c.n;
    let tb = (big("db") + c.xbar(&x2) * big("rb")) % &c.n;
    let u = c.mul(&ta, &c.add(&pb, &c.mul(&c.xbar(&x2), &rb)));
    let v = c.mul(&tb, &c.add(&pa, &c.mul(&c.xbar(&x1), &ra)));
    assert_eq!(u, v);
    assert!(on_curve(&u));
    let (za, zb) = (rec.hex("za"), rec.hex("zb"));
    let (za, zb): (&[u8; 32], &[u8; 32]) = (za[..].try_into().unwrap(), zb[..].try_into().unwrap());
    let b = derive_for_known_answer_tests(Role::Responder, &xy(&v), za, zb, &xy(&ra), &xy(&rb), 16)
        .unwrap();
    assert_eq!(b.key(), rec.hex("k"));
    assert_eq!(b.confirmation().to_vec(), rec.hex("sb"));
    let a = derive_for_known_answer_tests(Role::Initiator, &xy(&u), za, zb, &xy(&ra), &xy(&rb), 16)
        .unwrap();
    assert_eq!(a.key(), rec.hex("k"));
    assert_eq!(a.confirmation().to_vec(), rec.hex("sa"));
    a.verify_confirmation(&b.confirmation()).unwrap();
    b.verify_confirmation(&a.confirmation()).unwrap();
}

fn random_key(rng: &mut StdRng) -> SigningKey {
    loop {
        if let Ok(k) = SigningKey::from_bytes(&rng.random()) {
            return k;
        }
    }
}

struct Party {
    key: SigningKey,
    id: Vec<u8>,
}

/// A full exchange; returns both agreements (initiator's, responder's).
fn exchange(
    a: &Party,
    b: &Party,
    key_len: usize,
) -> Result<(shangmi::sm2::Agreement, shangmi::sm2::Agreement), Error> {
    let ea = EphemeralSecret::random()?;
    let eb = EphemeralSecret::random()?;
    let (ra, rb) = (*ea.public_key(), *eb.public_key());
    // Points travel as SEC1 bytes and are validated on arrival.
    let ra = VerifyingKey::from_sec1_bytes(&ra.to_sec1_bytes(true))?;
    let rb = VerifyingKey::from_sec1_bytes(&rb.to_sec1_bytes(false))?;
    let at_b = b.key.key_exchange(
        eb,
        &Exchange {
            role: Role::Responder,
            own_id: &b.id,
            peer: a.key.verifying_key(),
            peer_id: &a.id,
            peer_ephemeral: &ra,
            key_len,
        },
    )?;
    let at_a = a.key.key_exchange(
        ea,
        &Exchange {
            role: Role::Initiator,
            own_id: &a.id,
            peer: b.key.verifying_key(),
            peer_id: &b.id,
            peer_ephemeral: &rb,
            key_len,
        },
    )?;
    Ok((at_a, at_b))
}

#[test]
fn two_parties_agree_on_every_backend() {
    let mut rng = StdRng::seed_from_u64(80);
    for b in Backend::available() {
        for key_len in [1usize, 16, 32, 33, 48, 100, 1000] {
            let a = Party {
                key: random_key(&mut rng).with_backend(b).unwrap(),
                id: b"ALICE123@YAHOO.COM".to_vec(),
            };
            let bob = Party {
                key: random_key(&mut rng).with_backend(b).unwrap(),
                id: DEFAULT_ID.to_vec(),
            };
            let (at_a, at_b) = exchange(&a, &bob, key_len).unwrap();
            assert_eq!(at_a.key(), at_b.key());
            assert_eq!(at_a.key().len(), key_len);
            // With confirmation: S_B checked by A, S_A by B.
            at_a.verify_confirmation(&at_b.confirmation()).unwrap();
            at_b.verify_confirmation(&at_a.confirmation()).unwrap();
            assert_ne!(at_a.confirmation(), at_b.confirmation());
        }
    }
}

#[test]
fn disagreements_show_up_as_different_keys_and_failed_confirmation() {
    let mut rng = StdRng::seed_from_u64(81);
    let a = Party {
        key: random_key(&mut rng),
        id: b"alice".to_vec(),
    };
    let b = Party {
        key: random_key(&mut rng),
        id: b"bob".to_vec(),
    };
    let ea = EphemeralSecret::random().unwrap();
    let eb = EphemeralSecret::random().unwrap();
    let (ra, rb) = (*ea.public_key(), *eb.public_key());
    let at_b = b
        .key
        .key_exchange(
            eb,
            &Exchange {
                role: Role::Responder,
                own_id: &b.id,
                peer: a.key.verifying_key(),
                peer_id: b"mallory", // B thinks it talks to someone else
                peer_ephemeral: &ra,
                key_len: 16,
            },
        )
        .unwrap();
    let at_a = a
        .key
        .key_exchange(
            ea,
            &Exchange {
                role: Role::Initiator,
                own_id: &a.id,
                peer: b.key.verifying_key(),
                peer_id: &b.id,
                peer_ephemeral: &rb,
                key_len: 16,
            },
        )
        .unwrap();
    assert_ne!(at_a.key(), at_b.key());
    assert_eq!(
        at_a.verify_confirmation(&at_b.confirmation()),
        Err(Error::KeyConfirmation)
    );
    assert_eq!(
        at_b.verify_confirmation(&at_a.confirmation()),
        Err(Error::KeyConfirmation)
    );
    // Tampered, short and long confirmation values.
    let (x, y) = exchange(&a, &b, 16).unwrap();
    let mut s = y.confirmation();
    s[31] ^= 1;
    assert_eq!(x.verify_confirmation(&s), Err(Error::KeyConfirmation));
    assert_eq!(
        x.verify_confirmation(&y.confirmation()[..31]),
        Err(Error::KeyConfirmation)
    );
    assert_eq!(
        x.verify_confirmation(&[&y.confirmation()[..], &[0]].concat()),
        Err(Error::KeyConfirmation)
    );
    x.verify_confirmation(&y.confirmation()).unwrap();
    // Both claiming the same role: no agreement.
    let ea = EphemeralSecret::random().unwrap();
    let eb = EphemeralSecret::random().unwrap();
    let (ra, rb) = (*ea.public_key(), *eb.public_key());
    fn ex<'a>(peer: &'a Party, r: &'a VerifyingKey) -> Exchange<'a> {
        Exchange {
            role: Role::Initiator,
            own_id: b"x",
            peer: peer.key.verifying_key(),
            peer_id: b"x",
            peer_ephemeral: r,
            key_len: 16,
        }
    }
    let k1 = a.key.key_exchange(ea, &ex(&b, &rb)).unwrap();
    let k2 = b.key.key_exchange(eb, &ex(&a, &ra)).unwrap();
    assert!(k1.verify_confirmation(&k2.confirmation()).is_err());
    // A zero key length and an overlong ID are refused.
    let e = EphemeralSecret::random().unwrap();
    let r = *EphemeralSecret::random().unwrap().public_key();
    let mut bad = ex(&b, &r);
    bad.key_len = 0;
    assert_eq!(a.key.key_exchange(e, &bad).unwrap_err(), Error::KeyExchange);
    // A length past the KDF's limit is refused before anything is allocated (usize::MAX used
    // to abort the process on the allocation).
    for huge in [usize::MAX, (u32::MAX as usize) * 32 + 1] {
        let e = EphemeralSecret::random().unwrap();
        let mut bad = ex(&b, &r);
        bad.key_len = huge;
        assert_eq!(a.key.key_exchange(e, &bad).unwrap_err(), Error::KeyExchange);
    }
    let long_id = vec![b'a'; 8192];
    let mut bad = ex(&b, &r);
    bad.peer_id = &long_id;
    let e = EphemeralSecret::random().unwrap();
    assert_eq!(a.key.key_exchange(e, &bad).unwrap_err(), Error::IdTooLong);
}

#[test]
fn ephemeral_points_are_validated_on_arrival() {
    let e = EphemeralSecret::random().unwrap();
    let mut bytes = e.public_key().to_sec1_bytes(false);
    bytes[64] ^= 1; // off the curve
    assert_eq!(
        VerifyingKey::from_sec1_bytes(&bytes),
        Err(Error::InvalidPublicKey)
    );
    assert!(VerifyingKey::from_sec1_bytes(&[0]).is_err());
}

/// Ephemeral keys the application made (as the JCA passes them in) agree as random ones do,
/// and their points are the ones the exchange uses.
#[test]
fn ephemeral_keys_made_by_the_application_agree() {
    let (a, b) = (SigningKey::random().unwrap(), SigningKey::random().unwrap());
    let (ra, rb) = (SigningKey::random().unwrap(), SigningKey::random().unwrap());
    let (ra_pub, rb_pub) = (*ra.verifying_key(), *rb.verifying_key());
    let ea = EphemeralSecret::from_signing_key(ra);
    assert_eq!(ea.public_key().to_uncompressed(), ra_pub.to_uncompressed());
    let ka = a
        .key_exchange(
            ea,
            &Exchange {
                role: Role::Initiator,
                own_id: DEFAULT_ID,
                peer: b.verifying_key(),
                peer_id: b"bob",
                peer_ephemeral: &rb_pub,
                key_len: 16,
            },
        )
        .unwrap();
    let kb = b
        .key_exchange(
            EphemeralSecret::from_signing_key(rb),
            &Exchange {
                role: Role::Responder,
                own_id: b"bob",
                peer: a.verifying_key(),
                peer_id: DEFAULT_ID,
                peer_ephemeral: &ra_pub,
                key_len: 16,
            },
        )
        .unwrap();
    assert_eq!(ka.key(), kb.key());
    kb.verify_confirmation(&ka.confirmation()).unwrap();
}
