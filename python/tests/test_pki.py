"""Certificates and CMS from Python, on real certificates of the corpus
(crates/shangmi-pki/tests/vectors/x509): chains verify or fail by the rule named, SignedData
and EnvelopedData round trip, and a failed check raises before anything is returned."""

import pathlib

import pytest

import shangmi

X509 = pathlib.Path(__file__).resolve().parents[2] / "crates" / "shangmi-pki" / "tests" / "vectors" / "x509"
# Inside the validity of the www.gmcert.org certificates (2023-02-22 .. 2024-02-22).
GMCERT_TIME = 1677154833


def read(name):
    return (X509 / name).read_bytes()


def test_chains_verify_and_fail_by_rule():
    root, sub = read("tongsuo-tlcp-root.pem"), read("tongsuo-tlcp-subca.pem")
    assert shangmi.verify_certificate(read("tongsuo-tlcp-server-sign.pem"), [root], untrusted=[sub]) == 3
    with pytest.raises(shangmi.ChainError, match="validity"):
        shangmi.verify_certificate(read("tongsuo-tlcp-server-sign-expired.pem"), [root], untrusted=[sub])
    with pytest.raises(shangmi.ChainError, match="issuer"):
        shangmi.verify_certificate(read("tongsuo-tlcp-server-sign.pem"), [root])
    with pytest.raises(shangmi.ChainError, match="signature"):
        shangmi.verify_certificate(read("tjfoc-localhost-sign.pem"), [read("gotlcp-test-ca.pem")], at=1700000000)
    # OpenSSL 3's self-signed root, signed with the empty ID: as its own anchor it is trusted;
    # a GM/T 0009 ID or an empty one changes nothing for an anchor.
    assert shangmi.verify_certificate(read("gmsm-openssl3-rootca.pem"), [read("gmsm-openssl3-rootca.pem")], sm2_id=b"") == 1
    with pytest.raises(ValueError):
        shangmi.verify_certificate(b"not a certificate", [root])
    # A CRL revoking the intermediate.
    with pytest.raises(shangmi.ChainError, match="revocation"):
        shangmi.verify_certificate(
            read("kona-ee-sm2sm2.pem"),
            [read("kona-ca-sm2sm2.pem")],
            untrusted=[read("kona-intca-sm2sm2.pem")],
            crls=[read("kona-ca-revokes-intca.crl.pem")],
            at=1650000000,
        )


def test_signed_data_round_trips_and_refuses_tampering():
    cert = read("gmcert-sign.pem")
    key = shangmi.SM2PrivateKey.from_pem(read("gmcert-sign-key.p8.pem"))
    ca = read("gotlcp-test-ca.pem")
    msg = b"contract " * 100
    for gm in (False, True):
        for detached in (False, True):
            p7 = shangmi.cms_sign(msg, [(cert, key)], detached=detached, gm=gm)
            content = msg if detached else None
            assert shangmi.cms_verify(p7, [ca], content=content, at=GMCERT_TIME) == msg
            if detached:
                with pytest.raises(shangmi.InvalidSignature):
                    shangmi.cms_verify(p7, [ca], content=msg + b"!", at=GMCERT_TIME)
    # Today the signer's certificate has expired: the chain check says so.
    p7 = shangmi.cms_sign(msg, [(cert, key)])
    with pytest.raises(shangmi.ChainError, match="validity"):
        shangmi.cms_verify(p7, [ca])
    # The CFCA SADK SignedData of the corpus (no signed attributes), its signer trusted itself.
    cfca = read("gmsm-cfca-signeddata-attached.der")
    with pytest.raises(shangmi.ChainError):
        shangmi.cms_verify(cfca, [ca])


def test_enveloped_data_opens_only_for_its_recipient():
    cert = read("gmcert-sign.pem")
    key = shangmi.SM2PrivateKey.from_pem(read("gmcert-sign-key.p8.pem"))
    other = shangmi.SM2PrivateKey.generate()
    forms = [
        {},
        {"gm": True},
        {"cipher": "sm4-gcm"},
        {"cfca": True, "by_key_id": True, "cipher": "sm4-gcm"},
    ]
    for form in forms:
        p7 = shangmi.cms_encrypt(b"secret " * 30, [cert], **form)
        assert shangmi.cms_decrypt(p7, key, certificate=cert) == b"secret " * 30
        assert shangmi.cms_decrypt(p7, key) == b"secret " * 30
        with pytest.raises(shangmi.DecryptionError):
            shangmi.cms_decrypt(p7, other)
    with pytest.raises(ValueError, match="sm4-gcm"):
        shangmi.cms_encrypt(b"x", [cert], cipher="sm4-ecb")
    # gmsm's envelope from the corpus, with the recipient key its README gives.
    d = bytes.fromhex("f043481ce3ba1332cc266ae795f2a41f100e52e47ee560de15d9e014acab35c9")
    assert shangmi.cms_decrypt(read("gmsm-envelopeddata-1.p7.pem"), shangmi.SM2PrivateKey.from_bytes(d)) == b"Hello World!"


def test_signed_and_enveloped_data_opens_only_when_its_signer_verifies():
    # The CA key delivery of the corpus: opened with the signing key, signed by the CA.
    delivery = read("gmcert-signed-enveloped-enckey.p7.pem")
    sign_key = shangmi.SM2PrivateKey.from_pem(read("gmcert-sign-key.p8.pem"))
    ca = read("gotlcp-test-ca.pem")
    # The CA signs with its CA key (certificate and CRL signing only): refused unless allowed.
    with pytest.raises(shangmi.ChainError, match="key usage"):
        shangmi.cms_decrypt_and_verify(delivery, sign_key, [ca])
    content = shangmi.cms_decrypt_and_verify(delivery, sign_key, [ca], allow_ca_signer=True)
    enc = shangmi.SM2PrivateKey.from_pem(read("gmcert-expected-enc-key.p8.pem"))
    assert content == bytes(32) + enc.to_bytes()
    # Ours: the delivery's CA certificate as the signer is not possible without its key, so a
    # fresh signer signs to the corpus recipient; another anchor is a ChainError.
    cert = read("gmcert-sign.pem")
    p7 = shangmi.cms_sign_and_encrypt(b"sealed " * 20, [(cert, sign_key)], [cert], gm=True)
    assert shangmi.cms_decrypt_and_verify(p7, sign_key, [ca], at=GMCERT_TIME) == b"sealed " * 20
    with pytest.raises(shangmi.ChainError):
        shangmi.cms_decrypt_and_verify(p7, sign_key, [read("gmsm-openssl3-rootca.pem")], at=GMCERT_TIME)
    with pytest.raises(shangmi.DecryptionError):
        shangmi.cms_decrypt_and_verify(p7, shangmi.SM2PrivateKey.generate(), [ca], at=GMCERT_TIME)


def test_cfca_sm2_files_open_and_round_trip():
    key, cert = shangmi.cfca_open_sm2_file(read("cfca-sm2file-test-oca1.pem"), b"123456")
    assert key.to_bytes().hex() == "d3f24d61bb2816882b8474b778dd7c3166d665f9455dc9d551c989c161e76ab0"
    assert cert == read("cfca-test-leaf-from-sm2file.der")
    with pytest.raises(shangmi.DecryptionError):
        shangmi.cfca_open_sm2_file(read("cfca-sm2file-test-oca1.pem"), b"654321")
    again = shangmi.cfca_sm2_file(key, cert, b"new password")
    key2, cert2 = shangmi.cfca_open_sm2_file(again, b"new password")
    assert key2.to_bytes() == key.to_bytes() and cert2 == cert


def test_gmssl_forms_round_trip_and_are_opt_in():
    cert = read("gmcert-sign.pem")
    key = shangmi.SM2PrivateKey.from_pem(read("gmcert-sign-key.p8.pem"))
    ca = read("gotlcp-test-ca.pem")
    p7 = shangmi.cms_sign(b"for GmSSL", [(cert, key)], gmssl=True)
    assert shangmi.cms_verify(p7, [ca], at=GMCERT_TIME, gmssl=True) == b"for GmSSL"
    with pytest.raises(shangmi.InvalidSignature):
        shangmi.cms_verify(p7, [ca], at=GMCERT_TIME)
    env = shangmi.cms_encrypt(b"sealed for GmSSL", [cert], gmssl=True)
    assert shangmi.cms_decrypt(env, key) == b"sealed for GmSSL"
    with pytest.raises(ValueError):
        shangmi.cms_sign(b"x", [(cert, key)], detached=True, gmssl=True)


def test_pkcs12_round_trips_and_reads_openssl(tmp_path):
    import subprocess

    cert = read("gmcert-sign.pem")
    key = shangmi.SM2PrivateKey.from_pem(read("gmcert-sign-key.p8.pem"))
    ca = read("gotlcp-test-ca.pem")
    for compat in (False, True):
        p12 = shangmi.pkcs12_dump(key, cert, b"pw", chain=[ca], name="sign", compat=compat)
        keys, certs = shangmi.pkcs12_load(p12, b"pw")
        assert [n for _, n in keys] == ["sign"]
        assert keys[0][0].public_key().to_der() == key.public_key().to_der()
        assert len(certs) == 2 and certs[0][1] == "sign"
        with pytest.raises(shangmi.DecryptionError):
            shangmi.pkcs12_load(p12, b"wrong")
    # The system OpenSSL's own defaults (AES-256-CBC, a SHA-256 MAC).
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(read("gmcert-sign-key.p8.pem"))
    subprocess.run(
        ["openssl", "pkcs12", "-export", "-inkey", "k.pem", "-in", "c.pem", "-name", "ossl",
         "-passout", "pass:pw", "-out", "o.p12"],
        cwd=tmp_path, check=True, capture_output=True,
    )
    keys, certs = shangmi.pkcs12_load((tmp_path / "o.p12").read_bytes(), b"pw")
    assert keys[0][1] == "ossl"
    assert keys[0][0].public_key().to_der() == key.public_key().to_der()
    with pytest.raises(ValueError):
        shangmi.pkcs12_load(b"not a keystore", b"pw")
