//! curveSM2MLKEM768 between rustls peers on this provider: the hybrid agreed when both list
//! it, plain curveSM2 from the share sent beside it when the server lacks it (no
//! HelloRetryRequest), and malformed hybrid shares refused. Interop with OpenSSL 4.0 and
//! Tongsuo 8.5 is in shangmi-cli's tests.

mod common;

use std::sync::Arc;

use common::*;
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::{HandshakeKind, NamedGroup};
use shangmi_rustls::{CURVE_SM2, CURVE_SM2_GROUP, CURVE_SM2_MLKEM768, CURVE_SM2_MLKEM768_GROUP};

fn with_groups(groups: &[&'static dyn SupportedKxGroup]) -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        kx_groups: groups.to_vec(),
        ..shangmi_rustls::provider()
    })
}

fn agreed(
    client: &[&'static dyn SupportedKxGroup],
    server: &[&'static dyn SupportedKxGroup],
) -> (NamedGroup, Option<HandshakeKind>) {
    let pki = pki();
    let server = Arc::new(server_config(&pki, with_groups(server), false));
    let client = Arc::new(client_config(&pki, with_groups(client), false));
    let (mut c, mut s, r) = connect(&client, &server);
    r.unwrap();
    assert_eq!(send(&mut c, &mut s, b"hybrid"), b"hybrid");
    assert_eq!(send(&mut s, &mut c, b"back"), b"back");
    (
        c.negotiated_key_exchange_group().unwrap().name(),
        c.handshake_kind(),
    )
}

#[test]
fn the_hybrid_is_agreed_when_both_offer_it() {
    let hybrid = CURVE_SM2_MLKEM768_GROUP;
    assert_eq!(
        agreed(&[hybrid], &[hybrid]),
        (CURVE_SM2_MLKEM768, Some(HandshakeKind::Full))
    );
    assert_eq!(
        agreed(&[hybrid, CURVE_SM2_GROUP], &[CURVE_SM2_GROUP, hybrid]),
        (CURVE_SM2_MLKEM768, Some(HandshakeKind::Full))
    );
}

#[test]
fn a_server_without_it_takes_the_curve_sm2_share_beside_it() {
    assert_eq!(
        agreed(
            &[CURVE_SM2_MLKEM768_GROUP, CURVE_SM2_GROUP],
            &[CURVE_SM2_GROUP]
        ),
        (CURVE_SM2, Some(HandshakeKind::Full))
    );
}

#[test]
fn both_sides_derive_the_same_64_byte_secret() {
    let client = CURVE_SM2_MLKEM768_GROUP.start().unwrap();
    assert_eq!(client.pub_key().len(), 65 + 1184);
    assert_eq!(
        client.hybrid_component().map(|(g, s)| (g, s.len())),
        Some((CURVE_SM2, 65))
    );
    let server = CURVE_SM2_MLKEM768_GROUP
        .start_and_complete(client.pub_key())
        .unwrap();
    assert_eq!(server.pub_key.len(), 65 + 1088);
    let ours = client.complete(&server.pub_key).unwrap();
    assert_eq!(ours.secret_bytes().len(), 64);
    assert_eq!(ours.secret_bytes(), server.secret.secret_bytes());
}

#[test]
fn malformed_hybrid_shares_are_refused() {
    let client = CURVE_SM2_MLKEM768_GROUP.start().unwrap();
    let share = client.pub_key().to_vec();
    let group = CURVE_SM2_MLKEM768_GROUP;
    // Wrong lengths, a point off the curve, and an encapsulation key with a coefficient of
    // q = 3329 or more (FIPS 203's modulus check): 12-bit 0xFFF in the first coefficient.
    let mut off_curve = share.clone();
    off_curve[64] ^= 1;
    let mut big_coefficient = share.clone();
    big_coefficient[65] = 0xFF;
    big_coefficient[66] |= 0x0F;
    for bad in [
        &share[..65],
        &share[..share.len() - 1],
        &[share.clone(), vec![0]].concat()[..],
        &off_curve[..],
        &big_coefficient[..],
    ] {
        assert!(group.start_and_complete(bad).is_err());
    }
    let server = group.start_and_complete(&share).unwrap();
    let mut bad_point = server.pub_key.clone();
    bad_point[1] ^= 1;
    assert!(client.complete(&bad_point).is_err());
    let again = CURVE_SM2_MLKEM768_GROUP.start().unwrap();
    assert!(again.complete(&server.pub_key[..65]).is_err());
}
