import os

import pytest
from conftest import h, vectors

import shangmi

MODES = vectors("sm4_modes.txt")


def chunks(data, size):
    """Pieces of varying length (size - 3 .. size + 3) covering data in order."""
    i, k = 0, 0
    while i < len(data):
        step = size + (k % 7) - 3
        yield data[i : i + step]
        i, k = i + step, k + 1


@pytest.mark.parametrize("v", vectors("sm4.txt"))
def test_block_known_answers(v):
    c = shangmi.SM4(h(v["key"]))
    block = h(v["plaintext"])
    n = int(v["iterations"])
    if n > 1000:
        n = 1000  # the million-iteration example is the Rust suite's; check the chain starts right
        for _ in range(n):
            block = c.encrypt_block(block)
        for _ in range(n):
            block = c.decrypt_block(block)
        assert block == h(v["plaintext"])
        return
    for _ in range(n):
        block = c.encrypt_block(block)
    assert block.hex() == v["ciphertext"]
    assert c.decrypt_block(block) == h(v["plaintext"])


@pytest.mark.parametrize("v", [v for v in MODES if v["mode"] in ("ecb", "cbc", "cfb", "ofb", "ctr")])
def test_raw_mode_known_answers(v):
    c = shangmi.SM4(h(v["key"]))
    pt, ct, mode = h(v["plaintext"]), h(v["ciphertext"]), v["mode"]
    iv = h(v.get("iv", ""))
    enc = {
        "ecb": lambda d: c.ecb_encrypt(d),
        "cbc": lambda d: c.cbc_encrypt(iv, d, padding=False),
        "cfb": lambda d: c.cfb_encrypt(iv, d),
        "ofb": lambda d: c.ofb(iv, d),
        "ctr": lambda d: c.ctr(iv, d),
    }[mode]
    dec = {
        "ecb": lambda d: c.ecb_decrypt(d),
        "cbc": lambda d: c.cbc_decrypt(iv, d, padding=False),
        "cfb": lambda d: c.cfb_decrypt(iv, d),
        "ofb": lambda d: c.ofb(iv, d),
        "ctr": lambda d: c.ctr(iv, d),
    }[mode]
    assert enc(pt) == ct
    assert dec(ct) == pt


@pytest.mark.parametrize("v", [v for v in MODES if v["mode"] in ("gcm", "ccm")])
def test_aead_known_answers(v):
    key, iv, aad = h(v["key"]), h(v["iv"]), h(v.get("aad", ""))
    pt, ct, tag = h(v["plaintext"]), h(v["ciphertext"]), h(v["tag"])
    cls = shangmi.SM4GCM if v["mode"] == "gcm" else shangmi.SM4CCM
    aead = cls(key, tag_length=len(tag))
    assert aead.encrypt(iv, pt, aad) == ct + tag
    assert aead.decrypt(iv, ct + tag, aad) == pt
    with pytest.raises(shangmi.InvalidTag):
        aead.decrypt(iv, ct + bytes([tag[0] ^ 1]) + tag[1:], aad)


@pytest.mark.parametrize("v", [v for v in MODES if v["mode"].startswith("xts-")])
def test_xts_known_answers(v):
    x = shangmi.SM4XTS(h(v["key"]), variant=v["mode"][4:])
    assert x.encrypt(h(v["iv"]), h(v["plaintext"])).hex() == v["ciphertext"]
    assert x.decrypt(h(v["iv"]), h(v["ciphertext"])).hex() == v["plaintext"]


def test_raw_modes_against_pyca(pyca):
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    try:
        from cryptography.hazmat.decrepit.ciphers.modes import CFB, OFB
    except ImportError:  # cryptography < 47
        from cryptography.hazmat.primitives.ciphers.modes import CFB, OFB

    key, iv = os.urandom(16), os.urandom(16)
    c = shangmi.SM4(key)
    for n in (0, 1, 15, 16, 17, 100, 4096, 8192 + 5):
        data = os.urandom(n)
        whole = data[: n // 16 * 16]

        def ref(mode, d):
            e = Cipher(algorithms.SM4(key), mode).encryptor()
            return e.update(d) + e.finalize()

        assert c.ecb_encrypt(whole) == ref(modes.ECB(), whole)
        assert c.cbc_encrypt(iv, whole, padding=False) == ref(modes.CBC(iv), whole)
        p = padding.PKCS7(128).padder()
        padded = p.update(data) + p.finalize()
        assert c.cbc_encrypt(iv, data) == ref(modes.CBC(iv), padded)
        assert c.cbc_decrypt(iv, ref(modes.CBC(iv), padded)) == data
        assert c.ecb_encrypt(data, padding=True) == ref(modes.ECB(), padded)
        assert c.cfb_encrypt(iv, data) == ref(CFB(iv), data)
        assert c.ofb(iv, data) == ref(OFB(iv), data)
        assert c.ctr(iv, data) == ref(modes.CTR(iv), data)


def test_cmac_against_pyca():
    from cryptography.hazmat.primitives import cmac
    from cryptography.hazmat.primitives.ciphers import algorithms

    key = os.urandom(16)
    for n in (0, 1, 16, 17, 1000):
        data = os.urandom(n)
        ref = cmac.CMAC(algorithms.SM4(key))
        ref.update(data)
        tag = ref.finalize()
        assert shangmi.cmac_sm4(key, data) == tag
        m = shangmi.SM4CMAC(key)
        m.update(data)
        assert m.digest() == tag
        m.verify(tag)
        with pytest.raises(shangmi.InvalidTag):
            m.verify(bytes(16))
        # The caller fixes a truncated tag's length; the received tag's own length never
        # does, so every prefix of the real tag is refused by default.
        for k in range(0, 16):
            with pytest.raises(shangmi.InvalidTag):
                m.verify(tag[:k])
        m.verify(tag[:8], tag_length=8)
        with pytest.raises(shangmi.InvalidTag):
            m.verify(tag[:9], tag_length=8)
        with pytest.raises(shangmi.InvalidTag):
            m.verify(tag, tag_length=8)
        with pytest.raises(ValueError):
            m.verify(tag[:4], tag_length=4)


def test_aead_round_trips_and_failures():
    key = shangmi.SM4GCM.generate_key()
    assert len(key) == 16
    for cls, nonces in ((shangmi.SM4GCM, (12, 8, 16)), (shangmi.SM4CCM, range(7, 14))):
        for tag_length in (12, 16):
            aead = cls(key, tag_length=tag_length)
            for nl in nonces:
                nonce = os.urandom(nl)
                for n in (0, 1, 16, 1000, 60_000):
                    pt, aad = os.urandom(n), os.urandom(n % 37)
                    sealed = aead.encrypt(nonce, pt, aad)
                    assert len(sealed) == n + tag_length
                    assert aead.decrypt(nonce, sealed, aad) == pt
                    assert aead.decrypt(nonce, aead.encrypt(nonce, pt, None), None) == pt
                    for bad in (
                        lambda: aead.decrypt(nonce, sealed[:-1] + bytes([sealed[-1] ^ 1]), aad),
                        lambda: aead.decrypt(nonce, sealed, aad + b"x"),
                        lambda: aead.decrypt(bytes([nonce[0] ^ 1]) + nonce[1:], sealed, aad),
                    ):
                        with pytest.raises(shangmi.InvalidTag):
                            bad()
            with pytest.raises((ValueError, shangmi.InvalidTag)):
                aead.decrypt(os.urandom(12), b"short", b"")
    with pytest.raises(ValueError):
        shangmi.SM4GCM(b"short")
    with pytest.raises(ValueError):
        shangmi.SM4GCM(key, tag_length=3)
    with pytest.raises(ValueError):
        shangmi.SM4CCM(key, tag_length=5)
    with pytest.raises(ValueError):
        shangmi.SM4CCM(key).encrypt(os.urandom(6), b"x")
    with pytest.raises(ValueError):  # a 13-byte nonce leaves 2 length bytes: 65535 at most
        shangmi.SM4CCM(key).encrypt(os.urandom(13), bytes(65536))
    with pytest.raises(ValueError):
        shangmi.SM4GCM(key).encrypt(b"", b"x")
    with pytest.raises(TypeError):
        shangmi.SM4GCM(key).encrypt(os.urandom(12), "text")


def test_bad_padding_and_lengths():
    c = shangmi.SM4(os.urandom(16))
    iv = os.urandom(16)
    ct = c.cbc_encrypt(iv, b"x" * 20)
    with pytest.raises(ValueError):
        c.cbc_decrypt(iv, ct[:-1])
    with pytest.raises(ValueError):
        c.cbc_decrypt(iv, b"")
    bad = c.cbc_encrypt(iv, b"y" * 16, padding=False)
    with pytest.raises(ValueError, match="padding"):
        c.cbc_decrypt(iv, bad)
    with pytest.raises(ValueError):
        c.ecb_encrypt(b"x" * 15)
    with pytest.raises(ValueError):
        c.ctr(b"short", b"x")
    with pytest.raises(ValueError):
        shangmi.SM4XTS(bytes(32))  # equal halves
    with pytest.raises(ValueError):
        shangmi.SM4XTS(os.urandom(32)).encrypt(bytes(16), b"x" * 15)


@pytest.mark.parametrize("mode", ["ecb", "cbc", "cfb", "ofb", "ctr"])
@pytest.mark.parametrize("pad", [False, True])
def test_streams_equal_one_shot(mode, pad):
    if pad and mode not in ("ecb", "cbc"):
        return
    c = shangmi.SM4(os.urandom(16))
    iv = None if mode == "ecb" else os.urandom(16)
    for n in (0, 5, 16, 33, 4096 + 48, 20_000):
        if mode in ("ecb", "cbc") and not pad:
            n -= n % 16
        data = os.urandom(n)
        e = c.encryptor(mode, iv, padding=pad)
        ct = b"".join(e.update(p) for p in chunks(data, 1000)) + e.finalize()
        one = {
            "ecb": lambda: c.ecb_encrypt(data, padding=pad),
            "cbc": lambda: c.cbc_encrypt(iv, data, padding=pad),
            "cfb": lambda: c.cfb_encrypt(iv, data),
            "ofb": lambda: c.ofb(iv, data),
            "ctr": lambda: c.ctr(iv, data),
        }[mode]()
        assert ct == one
        d = c.decryptor(mode, iv, padding=pad)
        pt = b"".join(d.update(p) for p in chunks(ct, 777)) + d.finalize()
        assert pt == data
        with pytest.raises(ValueError):
            d.update(b"more")


def test_gcm_streams():
    key, nonce, aad = os.urandom(16), os.urandom(12), b"header"
    g = shangmi.SM4GCM(key)
    data = os.urandom(100_003)
    e = g.encryptor(nonce, aad)
    ct = b"".join(e.update(data[i : i + 4099]) for i in range(0, len(data), 4099)) + e.finalize()
    assert ct + e.tag == g.encrypt(nonce, data, aad)
    d = g.decryptor(nonce, e.tag, aad)
    assert d.update(ct[:500]) == b""  # nothing before the tag is checked
    d.update(ct[500:])
    assert d.finalize() == data
    d = g.decryptor(nonce, bytes(16), aad)
    d.update(ct)
    with pytest.raises(shangmi.InvalidTag):
        d.finalize()
    with pytest.raises(ValueError):
        e.update(b"after the end")
