"""gmssl.sm3: ``sm3_hash`` and ``sm3_kdf`` with gmssl's argument and hex conventions."""

from ... import sm2_kdf, sm3_digest


def sm3_hash(msg):
    """SM3 of ``msg`` (a list of byte values, or bytes), as 64 hex digits.

    Unlike gmssl, ``msg`` is not modified.
    """
    return sm3_digest(bytes(msg)).hex()


def sm3_kdf(z, klen):
    """The SM2 KDF: ``klen`` bytes from ``z`` (hex text, as str or ASCII bytes), as hex."""
    if isinstance(z, (bytes, bytearray)):
        z = z.decode("ascii")
    return sm2_kdf(bytes.fromhex(z), int(klen)).hex()
