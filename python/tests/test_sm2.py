import os
import shutil
import subprocess

import pytest
from conftest import h, vectors

import shangmi

SIGN = vectors("sm2_sign.txt")
ENC = vectors("sm2_encrypt.txt")


def test_signature_known_answer():
    v = SIGN[0]
    sk = shangmi.SM2PrivateKey.from_hex(v["d"])
    pk = sk.public_key()
    assert pk.to_hex() == "04" + v["px"] + v["py"]
    assert pk.digest(v["msg"].encode(), id=v["id"].encode()).hex() == v["e"]
    raw = h(v["r"] + v["s"])
    assert pk.verify(raw, v["msg"].encode(), id=v["id"].encode(), encoding="raw") is None
    assert pk.verify(h(v["der"]), v["msg"].encode(), id=v["id"].encode()) is None
    assert pk.verify_digest(raw, h(v["e"]), encoding="raw") is None
    with pytest.raises(shangmi.InvalidSignature):
        pk.verify(raw, b"other message", id=v["id"].encode(), encoding="raw")
    with pytest.raises(shangmi.InvalidSignature):
        pk.verify(raw, v["msg"].encode(), id=b"another id", encoding="raw")


@pytest.mark.parametrize("v", SIGN)
def test_all_signature_vectors_verify(v):
    if "d" in v:
        pk = shangmi.SM2PrivateKey.from_hex(v["d"]).public_key()
    else:
        pk = shangmi.SM2PublicKey.from_hex(v["pub"])
    raw = h(v["r"] + v["s"])
    pk.verify(raw, v["msg"].encode(), id=v["id"].encode(), encoding="raw")


def test_decryption_known_answer():
    v = ENC[0]
    sk = shangmi.SM2PrivateKey.from_hex(v["d"])
    c1 = h("04" + v["c1x"] + v["c1y"])
    msg = v["msg"].encode()
    assert sk.decrypt(c1 + h(v["c3"]) + h(v["c2"])) == msg
    assert sk.decrypt(c1 + h(v["c2"]) + h(v["c3"]), format="c1c2c3") == msg
    assert sk.decrypt(h(v["der"]), format="asn1") == msg
    assert shangmi.convert_ciphertext(h(v["der"]), "asn1", "c1c3c2") == c1 + h(v["c3"]) + h(v["c2"])
    tampered = bytearray(c1 + h(v["c3"]) + h(v["c2"]))
    tampered[-1] ^= 1
    with pytest.raises(shangmi.DecryptionError):
        sk.decrypt(bytes(tampered))
    with pytest.raises(ValueError):  # DecryptionError is a ValueError
        sk.decrypt(b"\x04" + bytes(10))


def test_sign_verify_round_trips():
    sk = shangmi.SM2PrivateKey.generate()
    pk = sk.public_key()
    for msg in (b"", b"m", os.urandom(10_000)):
        for ident in (None, b"", b"alice@example.com", b"i" * 1000):
            for enc in ("der", "raw"):
                sig = sk.sign(msg, id=ident, encoding=enc)
                pk.verify(sig, msg, id=ident, encoding=enc)
                e = pk.digest(msg, id=ident)
                pk.verify_digest(sig, e, encoding=enc)
                pk.verify_digest(sk.sign_digest(e, encoding=enc), e, encoding=enc)
                with pytest.raises(shangmi.InvalidSignature):
                    pk.verify(sig, msg + b"x", id=ident, encoding=enc)
    raw = sk.sign(b"m", encoding="raw")
    assert len(raw) == 64
    for bad in (raw[:-1], bytes(64), b"\xff" * 64, b"", b"\x30\x00"):
        with pytest.raises(shangmi.InvalidSignature):
            pk.verify(bad, b"m", encoding="raw")
        with pytest.raises(shangmi.InvalidSignature):
            pk.verify(bad, b"m")
    with pytest.raises(ValueError):
        sk.sign(b"m", id=b"x" * 9000)
    with pytest.raises(ValueError):
        sk.sign(b"m", encoding="pem")


def test_encryption_round_trips():
    sk = shangmi.SM2PrivateKey.generate()
    pk = sk.public_key()
    for fmt in ("c1c3c2", "c1c2c3", "asn1"):
        for n in (1, 32, 1000, 70_000):
            msg = os.urandom(n)
            ct = pk.encrypt(msg, format=fmt)
            assert sk.decrypt(ct, format=fmt) == msg
            other = "c1c2c3" if fmt != "c1c2c3" else "asn1"
            assert sk.decrypt(shangmi.convert_ciphertext(ct, fmt, other), format=other) == msg
    with pytest.raises(shangmi.DecryptionError):
        shangmi.SM2PrivateKey.generate().decrypt(pk.encrypt(b"secret"))
    with pytest.raises(ValueError):
        pk.encrypt(b"x", format="c2c1c3")


def test_key_formats():
    sk = shangmi.SM2PrivateKey.generate()
    pk = sk.public_key()
    assert shangmi.SM2PrivateKey.from_pem(sk.to_pem()).to_bytes() == sk.to_bytes()
    assert shangmi.SM2PrivateKey.from_pem(sk.to_pem().encode()).to_bytes() == sk.to_bytes()
    assert shangmi.SM2PrivateKey.from_der(sk.to_der()).to_bytes() == sk.to_bytes()
    assert shangmi.SM2PrivateKey.from_bytes(sk.to_bytes()).to_hex() == sk.to_hex()
    enc = sk.to_pem(password=b"pw")
    assert "ENCRYPTED PRIVATE KEY" in enc
    assert shangmi.SM2PrivateKey.from_pem(enc, password=b"pw").to_bytes() == sk.to_bytes()
    assert shangmi.SM2PrivateKey.from_der(sk.to_der(password=b"pw"), password=b"pw").to_bytes() == sk.to_bytes()
    with pytest.raises(ValueError):
        shangmi.SM2PrivateKey.from_pem(enc, password=b"wrong")
    with pytest.raises(ValueError):
        shangmi.SM2PrivateKey.from_pem(enc)
    assert shangmi.SM2PublicKey.from_pem(pk.to_pem()) == pk
    assert shangmi.SM2PublicKey.from_der(pk.to_der()) == pk
    assert shangmi.SM2PublicKey.from_bytes(pk.to_bytes()) == pk
    assert shangmi.SM2PublicKey.from_bytes(pk.to_bytes(compressed=True)) == pk
    assert shangmi.SM2PublicKey.from_bytes(pk.to_bytes()[1:]) == pk  # raw x || y
    assert shangmi.SM2PublicKey.from_hex(pk.to_hex()) == pk
    assert shangmi.SM2PublicKey.from_hex(pk.to_hex()[2:]) == pk
    assert shangmi.SM2PublicKey.from_hex(pk.to_hex(compressed=True)) == pk
    assert len({pk, shangmi.SM2PublicKey.from_hex(pk.to_hex())}) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda: shangmi.SM2PrivateKey.from_bytes(bytes(32)),
        lambda: shangmi.SM2PrivateKey.from_bytes(b"\xff" * 32),
        lambda: shangmi.SM2PrivateKey.from_bytes(b"short"),
        lambda: shangmi.SM2PrivateKey.from_hex("zz" * 32),
        lambda: shangmi.SM2PrivateKey.from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
        lambda: shangmi.SM2PrivateKey.from_pem("not a pem"),
        lambda: shangmi.SM2PrivateKey.from_der(b"\x30\x03\x02\x01\x01"),
        lambda: shangmi.SM2PublicKey.from_bytes(b"\x04" + bytes(64)),
        lambda: shangmi.SM2PublicKey.from_bytes(b"\x05" + bytes(64)),
        lambda: shangmi.SM2PublicKey.from_bytes(b""),
        lambda: shangmi.SM2PublicKey.from_hex("04" + "1" * 127),
        lambda: shangmi.SM2PublicKey.from_pem(b"\xff\xfe"),
        lambda: shangmi.SM2PublicKey.from_der(os.urandom(91)),
    ],
)
def test_malformed_keys_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_key_exchange():
    a, b = shangmi.SM2PrivateKey.generate(), shangmi.SM2PrivateKey.generate()
    ra, rb = shangmi.SM2EphemeralKey.generate(), shangmi.SM2EphemeralKey.generate()
    ka = a.exchange("initiator", ra, b.public_key(), rb.public_key(), 16, id=b"alice", peer_id=b"bob")
    kb = b.exchange("responder", rb, a.public_key(), ra.public_key(), 16, id=b"bob", peer_id=b"alice")
    assert ka.key == kb.key and len(ka.key) == 16
    ka.verify_confirmation(kb.confirmation)
    kb.verify_confirmation(ka.confirmation)
    with pytest.raises(ValueError):
        ka.verify_confirmation(bytes(32))
    with pytest.raises(ValueError, match="already used"):
        a.exchange("initiator", ra, b.public_key(), rb.public_key(), 16)
    with pytest.raises(ValueError):
        a.exchange("both", shangmi.SM2EphemeralKey.generate(), b.public_key(), rb.public_key(), 16)


def test_verify_batch_reports_each_item():
    keys = [shangmi.SM2PrivateKey.generate() for _ in range(3)]
    items, expect = [], []
    for i in range(40):
        k = keys[i % 3]
        msg = b"msg %d" % i
        sig = k.sign(msg, id=b"id%d" % i)
        if i % 5 == 0:
            sig = sig[:-1] + bytes([sig[-1] ^ 1])
        items.append((k.public_key(), msg, sig, b"id%d" % i))
        expect.append(i % 5 != 0)
    items.append((keys[0].public_key(), b"m", b"not der"))
    expect.append(False)
    items.append((keys[0].public_key(), b"m", keys[0].sign(b"m")))
    expect.append(True)
    assert shangmi.verify_batch(items) == expect
    assert shangmi.verify_batch(items, threads=2) == expect
    assert shangmi.verify_batch([]) == []
    with pytest.raises(ValueError):
        shangmi.verify_batch([(b"not a key", b"m", b"s")])


openssl = shutil.which("openssl")


@pytest.mark.skipif(openssl is None, reason="no openssl command")
def test_openssl_keys_and_signatures(tmp_path):
    key = tmp_path / "k.pem"
    subprocess.run([openssl, "genpkey", "-algorithm", "SM2", "-out", str(key)], check=True)
    sk = shangmi.SM2PrivateKey.from_pem(key.read_text())
    msg = tmp_path / "m"
    msg.write_bytes(b"signed by openssl")
    sig = subprocess.run(
        [openssl, "dgst", "-sm3", "-sign", str(key), "-sigopt", "distid:1234567812345678", str(msg)],
        check=True,
        capture_output=True,
    ).stdout
    sk.public_key().verify(sig, b"signed by openssl")
    # And the other way: OpenSSL verifies ours.
    (tmp_path / "s").write_bytes(sk.sign(b"signed by openssl"))
    (tmp_path / "p.pem").write_text(sk.public_key().to_pem())
    subprocess.run(
        [openssl, "dgst", "-sm3", "-verify", str(tmp_path / "p.pem"), "-sigopt",
         "distid:1234567812345678", "-signature", str(tmp_path / "s"), str(msg)],
        check=True,
        capture_output=True,
    )


def test_sign_many_signatures_verify():
    sk = shangmi.SM2PrivateKey.generate()
    pk = sk.public_key()
    msgs = [b"m%d" % i for i in range(70)] + [bytearray(b"x" * 5000)]
    for enc in ("der", "raw"):
        sigs = sk.sign_many(msgs, id=b"alice", encoding=enc)
        assert len(sigs) == len(msgs) and len(set(sigs)) == len(sigs)
        for m, s in zip(msgs, sigs):
            pk.verify(s, m, id=b"alice", encoding=enc)
    assert sk.sign_many([]) == []
    with pytest.raises(TypeError):
        sk.sign_many(["text"])
