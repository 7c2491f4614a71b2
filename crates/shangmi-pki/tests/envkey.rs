//! The SM2 key envelope (GB/T 35276 / GM/T 0009 SM2EnvelopedKey): round trips, the wrong key
//! and tampering refused, the corpus's malformed envelope refused, and gmsm both ways.

mod common;

use shangmi::sm2::SigningKey;
use shangmi_pki::{Error, certificates, envelope_key, open_enveloped_key};

#[test]
fn enveloped_keys_round_trip_and_refuse_others() {
    let (recipient, pair, stranger) = (
        SigningKey::random().unwrap(),
        SigningKey::random().unwrap(),
        SigningKey::random().unwrap(),
    );
    let env = envelope_key(&pair, recipient.verifying_key()).unwrap();
    assert_eq!(
        open_enveloped_key(&env, &recipient).unwrap().to_bytes(),
        pair.to_bytes()
    );
    assert!(matches!(
        open_enveloped_key(&env, &stranger),
        Err(Error::Decryption(_))
    ));
    for i in (0..env.len()).step_by(3) {
        let mut bad = env.clone();
        bad[i] ^= 0x10;
        if let Ok(k) = open_enveloped_key(&bad, &recipient) {
            // Only a change that leaves every checked part intact may pass, and then it is
            // still the same key.
            assert_eq!(k.to_bytes(), pair.to_bytes());
        }
    }
}

#[test]
fn a_symmetric_key_field_that_is_no_sm2_ciphertext_is_refused() {
    let path = format!(
        "{}/tests/vectors/x509/gmsm-sm2envelopedkey-short-ciphertext.der",
        env!("CARGO_MANIFEST_DIR")
    );
    let env = std::fs::read(path).unwrap();
    let mut d = [0u8; 32];
    let hex = "5cbd96822bb1491ec835ae9c09d4d3825e30bd9955e3c7031fbbe0e72d6fddf6";
    for (i, b) in d.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    let key = SigningKey::from_bytes(&d).unwrap();
    assert!(open_enveloped_key(&env, &key).is_err());
}

#[test]
fn gmsm_and_shangmi_open_each_others_key_envelopes() {
    let Some(peer) = common::peer("gmsmpeer-envkey") else {
        return;
    };
    let d = std::env::temp_dir().join(format!("shangmi-pki-envkey-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    assert!(common::run(&peer, &d, &["issue", "."]));
    let cert = certificates(&std::fs::read(d.join("leaf.pem")).unwrap())
        .unwrap()
        .remove(0);
    let recipient =
        SigningKey::from_pem(&std::fs::read_to_string(d.join("leaf.key")).unwrap(), None).unwrap();
    let public = shangmi_pki::public_key(cert.tbs_certificate().subject_public_key_info()).unwrap();
    // gmsm seals, we open.
    assert!(common::run(
        &peer,
        &d,
        &["envkey-seal", "leaf.pem", "theirs.env", "theirs-pair.pem"]
    ));
    let opened =
        open_enveloped_key(&std::fs::read(d.join("theirs.env")).unwrap(), &recipient).unwrap();
    let want = SigningKey::from_pem(
        &std::fs::read_to_string(d.join("theirs-pair.pem")).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(opened.to_bytes(), want.to_bytes());
    // We seal, gmsm opens.
    let pair = SigningKey::random().unwrap();
    std::fs::write(d.join("ours.env"), envelope_key(&pair, &public).unwrap()).unwrap();
    assert!(common::run(
        &peer,
        &d,
        &["envkey-open", "ours.env", "leaf.key", "ours-pair.pem"]
    ));
    let back = SigningKey::from_pem(
        &std::fs::read_to_string(d.join("ours-pair.pem")).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(back.to_bytes(), pair.to_bytes());
    std::fs::remove_dir_all(&d).unwrap();
}
