"""Hostile inputs: every parser and every length gets an exception, never a crash."""

import os
import random

import pytest

import shangmi

SK = shangmi.SM2PrivateKey.generate()
PK = SK.public_key()
EXPECTED = (ValueError, TypeError, OverflowError, MemoryError, shangmi.InvalidTag, shangmi.InvalidSignature)


def test_huge_lengths_raise():
    for call in (
        lambda: shangmi.sm2_kdf(b"z", 1 << 62),
        lambda: shangmi.pbkdf2_hmac_sm3(b"p", b"s", 1, 1 << 62),
        lambda: shangmi.sm2_kdf(b"z", -1),
        lambda: shangmi.pbkdf2_hmac_sm3(b"p", b"s", -1),
        lambda: shangmi.SM4GCM(bytes(16), tag_length=1 << 70),
    ):
        with pytest.raises(EXPECTED):
            call()


def test_random_bytes_into_every_parser():
    rng = random.Random(1234)
    sm4 = shangmi.SM4(bytes(16))
    gcm, ccm = shangmi.SM4GCM(bytes(16)), shangmi.SM4CCM(bytes(16))
    good_ct = PK.encrypt(b"hello")
    good_sig = SK.sign(b"hello")
    seeds = [b"", good_ct, good_sig, PK.to_der(), SK.to_der(), PK.to_bytes(), SK.to_pem().encode()]
    parsers = [
        shangmi.SM2PrivateKey.from_der,
        lambda d: shangmi.SM2PrivateKey.from_der(d, password=b"pw"),
        shangmi.SM2PrivateKey.from_pem,
        shangmi.SM2PublicKey.from_der,
        shangmi.SM2PublicKey.from_bytes,
        shangmi.SM2PublicKey.from_pem,
        lambda d: SK.decrypt(d),
        lambda d: SK.decrypt(d, format="asn1"),
        lambda d: SK.decrypt(d, format="c1c2c3"),
        lambda d: PK.verify(d, b"hello"),
        lambda d: PK.verify(d, b"hello", encoding="raw"),
        lambda d: shangmi.convert_ciphertext(d, "asn1", "c1c3c2"),
        lambda d: shangmi.convert_ciphertext(d, "c1c3c2", "asn1"),
        lambda d: sm4.cbc_decrypt(bytes(16), d),
        lambda d: sm4.ecb_decrypt(d, padding=True),
        lambda d: gcm.decrypt(bytes(12), d),
        lambda d: ccm.decrypt(bytes(12), d),
        lambda d: shangmi.SM4XTS(bytes(range(32))).decrypt(bytes(16), d),
    ]
    for _ in range(300):
        base = bytearray(rng.choice(seeds))
        for _ in range(rng.randrange(1, 4)):
            op = rng.randrange(3)
            if op == 0 and base:
                base[rng.randrange(len(base))] ^= 1 << rng.randrange(8)
            elif op == 1:
                base = base[: rng.randrange(len(base) + 1)]
            else:
                base += os.urandom(rng.randrange(1, 40))
        data = bytes(base)
        for parse in parsers:
            try:
                parse(data)
            except EXPECTED:
                pass
