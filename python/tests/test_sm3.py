import hashlib
import hmac

import pytest
from conftest import h, vectors

import shangmi


@pytest.mark.parametrize("v", vectors("sm3.txt"))
def test_known_answers(v):
    msg, digest = h(v["msg"]), v["digest"]
    assert shangmi.sm3(msg).hexdigest() == digest
    assert shangmi.sm3_digest(msg).hex() == digest
    hh = shangmi.sm3()
    for i in range(0, len(msg), 7):
        hh.update(msg[i : i + 7])
    assert hh.hexdigest() == digest


def test_hashlib_shape():
    x = shangmi.sm3(b"ab")
    assert (x.name, x.digest_size, x.block_size) == ("sm3", 32, 64)
    y = x.copy()
    y.update(b"c")
    assert y.hexdigest() == shangmi.sm3(b"abc").hexdigest()
    assert x.digest() == shangmi.sm3(b"ab").digest()  # copy is independent
    assert x.digest() == x.digest()  # digest does not end the object
    assert shangmi.sm3(usedforsecurity=False).digest() == shangmi.sm3(b"").digest()


def test_bytes_like_inputs_and_refusals():
    ref = shangmi.sm3_digest(b"abc")
    assert shangmi.sm3_digest(bytearray(b"abc")) == ref
    assert shangmi.sm3_digest(memoryview(b"xabcx")[1:4]) == ref
    for bad in ("abc", 3, None, [1, 2]):
        with pytest.raises(TypeError):
            shangmi.sm3_digest(bad)


def test_hmac_module_and_pyca(pyca):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives import hmac as pyca_hmac

    for key in (b"", b"k", b"k" * 64, b"k" * 65, b"k" * 200):
        for msg in (b"", b"m", b"m" * 1000):
            ours = shangmi.hmac_sm3(key, msg)
            assert hmac.new(key, msg, shangmi.sm3).digest() == ours
            p = pyca_hmac.HMAC(key, hashes.SM3())
            p.update(msg)
            assert p.finalize() == ours
            mac = shangmi.HMACSM3(key)
            mac.update(msg)
            assert mac.digest() == ours
            mac.verify(ours)
            with pytest.raises(shangmi.InvalidTag):
                mac.verify(bytes(32))
            for k in (0, 1, 16, 31):
                with pytest.raises(shangmi.InvalidTag):
                    mac.verify(ours[:k])


def test_against_pyca_and_openssl_hashlib(pyca):
    from cryptography.hazmat.primitives import hashes

    for n in (0, 1, 55, 56, 63, 64, 65, 1000, 8192, 100_000):
        data = bytes(range(256)) * (n // 256) + bytes(n % 256)
        d = hashes.Hash(hashes.SM3())
        d.update(data)
        assert shangmi.sm3(data).digest() == d.finalize()
        if "sm3" in hashlib.algorithms_available:
            assert hashlib.new("sm3", data).digest() == shangmi.sm3_digest(data)


def test_pbkdf2_against_pyca():
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    for length in (16, 32, 33, 64):
        ours = shangmi.pbkdf2_hmac_sm3(b"password", b"salt", 1000, length)
        ref = PBKDF2HMAC(hashes.SM3(), length, b"salt", 1000).derive(b"password")
        assert ours == ref
    assert len(shangmi.pbkdf2_hmac_sm3(b"p", b"s", 1)) == 32
    with pytest.raises(ValueError):
        shangmi.pbkdf2_hmac_sm3(b"p", b"s", 0)


def test_kdf_is_the_counter_construction():
    z = bytes(range(64))
    out = b"".join(shangmi.sm3_digest(z + i.to_bytes(4, "big")) for i in range(1, 4))
    assert shangmi.sm2_kdf(z, 70) == out[:70]
    assert shangmi.sm2_kdf(z, 0) == b""


def test_many_messages():
    msgs = [bytes([i]) * i for i in range(100)] + [bytearray(b"x" * 5000)]
    assert shangmi.sm3_many(msgs) == [shangmi.sm3_digest(m) for m in msgs]
    assert shangmi.sm3_many([]) == []
    assert shangmi.sm3_many(m for m in [b"abc"]) == [shangmi.sm3_digest(b"abc")]
    with pytest.raises(TypeError):
        shangmi.sm3_many(["abc"])


def test_package_docstring_examples_run():
    import doctest

    assert doctest.testmod(shangmi).failed == 0
