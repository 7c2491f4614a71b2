//! The PKI parsers on arbitrary bytes: certificates, requests and CRLs in DER or PEM, and what
//! is done with a parsed one (its key read, its text made, a chain verified against it, a
//! request's signature checked). Nothing panics, and nothing verifies that was not signed.
//! Replayed on stable over the committed seeds by crates/shangmi-pki/tests/fuzz_corpus.rs.

use der::Encode;

pub fn pki_parsers(data: &[u8]) {
    if let Ok(certs) = shangmi_pki::certificates(data) {
        for c in &certs {
            let _ = shangmi_pki::public_key(c.tbs_certificate().subject_public_key_info());
            let _ = shangmi_pki::describe_certificate(c);
            // A parsed certificate encodes, and its encoding reads back and encodes to itself
            // (the input may differ, and so may the first parse: an explicit default version
            // is read and not written, and a GeneralizedTime before 2050 is written as the
            // UTCTime RFC 5280 requires; signatures are checked over the bytes as received).
            let again = c.certificate().to_der().expect("re-encodes");
            let back = shangmi_pki::certificates(&again).expect("its own encoding reads back");
            assert_eq!(
                back[0].certificate().to_der().expect("re-encodes"),
                again,
                "encoding is a fixed point"
            );
            // As its own anchor it is trusted as given; as a leaf under itself, a forged
            // self-signature must fail (a random key cannot have signed it).
            let v = shangmi_pki::Verifier::new(certs.clone());
            let _ = v.verify(c, &certs);
            // It keeps the bytes it was read from, and its signed part lies within them.
            assert_eq!(c.to_der().expect("kept"), c.der());
            let signed = c.signed_part();
            assert!(c.der().windows(signed.len()).any(|w| w == signed));
        }
    }
    if let Ok(reqs) = shangmi_pki::requests(data) {
        for r in &reqs {
            let _ = shangmi_pki::describe_request(r);
            let _ = shangmi_pki::verify_request(r, shangmi_pki::DEFAULT_ID);
        }
    }
    // PKCS#12 with the seeds' password (their MACs verify, so the bags are reached), the
    // iterations capped so a file asking for millions cannot stall the fuzzer.
    if let Ok(p) = shangmi_pki::pkcs12::read_with_limit(data, b"fuzz", 2048) {
        for c in &p.certs {
            assert!(
                shangmi_pki::certificates(&c.der).is_ok(),
                "a returned certificate parses"
            );
        }
    }
    // EnvelopedData: a key that no sender used opens nothing (SM2's C3 check fails first).
    let key = shangmi::sm2::SigningKey::from_bytes(&[7; 32]).expect("a valid scalar");
    assert!(shangmi_pki::envelope::decrypt(data, &key, None).is_err());
    assert!(shangmi_pki::open_enveloped_key(data, &key).is_err());
    // CFCA's formats: an escrowed key for another key opens nothing; a .sm2 file may open
    // (its password is public here), but only with its certificate's key.
    assert!(shangmi_pki::cfca::open_escrowed_key(data, &key).is_err());
    if let Ok((k, c)) = shangmi_pki::cfca::open_sm2_file(data, b"123456") {
        let public = shangmi_pki::public_key(c.tbs_certificate().subject_public_key_info());
        assert!(public.is_ok_and(|p| p == *k.verifying_key()));
    }
    // SignedAndEnvelopedData: nothing opens for a key no sender used, nor verifies without
    // anchors; any message has a kind or a clear error.
    let none = shangmi_pki::Verifier::new(Vec::<shangmi_pki::Cert>::new());
    assert!(shangmi_pki::signed_envelope::decrypt_and_verify(data, &key, &none).is_err());
    let _ = shangmi_pki::signed_envelope::kind(data);
    // SignedData: never verified without anchors, whatever the bytes.
    assert!(
        shangmi_pki::cms::verify(
            data,
            None,
            &shangmi_pki::Verifier::new(Vec::<shangmi_pki::Cert>::new())
        )
        .is_err()
    );
    assert!(shangmi_pki::cms::verify_accepting_gmssl(data, &none).is_err());
    if let Ok(lists) = shangmi_pki::crls(data) {
        for l in &lists {
            let _ = shangmi_pki::describe_crl(l);
        }
    }
}
