"""gmssl.sm2: ``CryptSM2`` (hex keys, hex signatures, raw 64-byte C1)."""

import binascii

from ... import DecryptionError, InvalidSignature, SM2PrivateKey, SM2PublicKey

default_ecc_table = {
    "n": "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123",
    "p": "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF",
    "g": "32c4ae2c1f1981195f9904466a39c9948fe30bbff2660be1715a4589334c74c7"
    "bc3736a2f4f6779c59bdcee36b692153d0a9877cc62a474002df32e52139f0a0",
    "a": "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFC",
    "b": "28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93",
}

_N = int(default_ecc_table["n"], 16)


def _same_curve(table):
    return all(int(table[k], 16) == int(default_ecc_table[k], 16) for k in default_ecc_table)


class CryptSM2(object):
    """SM2 with gmssl's interface. ``private_key`` is 64 hex digits, ``public_key`` 128
    (``x || y``) or 130 with the ``04`` prefix; either may be empty or None when only the
    other's operations are used. ``mode`` 0 writes C1C2C3, 1 writes C1C3C2; ``asn1=True``
    makes signatures DER (as hex). Only the SM2 curve is supported.
    """

    def __init__(self, private_key, public_key, ecc_table=default_ecc_table, mode=0, asn1=False):
        if ecc_table is not default_ecc_table and not _same_curve(ecc_table):
            raise ValueError("shangmi supports the SM2 curve only")
        assert mode in (0, 1), "mode must be one of (0, 1)"
        public_key = public_key or ""
        if len(public_key) == 130 and public_key[:2] == "04":
            public_key = public_key[2:]
        self.private_key = private_key
        self.public_key = public_key
        self.para_len = len(default_ecc_table["n"])
        self.ecc_table = ecc_table
        self.mode = mode
        self.asn1 = asn1
        self._sk = SM2PrivateKey.from_hex(private_key) if private_key else None
        if public_key:
            self._pk = SM2PublicKey.from_hex(public_key)
        elif self._sk is not None:
            self._pk = self._sk.public_key()
            self.public_key = self._pk.to_hex()[2:]
        else:
            self._pk = None

    def _need(self, key, what):
        if key is None:
            raise ValueError("this CryptSM2 has no %s key" % what)
        return key

    @staticmethod
    def _e(data):
        # gmssl signs int(data.hex(), 16) and reduces (e + x) mod n: the same as e mod n.
        return (int.from_bytes(bytes(data), "big") % _N).to_bytes(32, "big")

    def sign(self, data, K):
        """Signs ``data`` (the message digest e, as bytes); returns hex r || s (or DER hex).

        ``K`` is accepted and ignored: a fresh nonce from the operating system is used, since
        a caller-chosen nonce that repeats or is guessable gives the private key away.
        """
        sk = self._need(self._sk, "private")
        raw = sk.sign_digest(self._e(data), encoding="der" if self.asn1 else "raw")
        return raw.hex()

    def verify(self, Sign, data):
        """Whether ``Sign`` (hex r || s, or DER hex with ``asn1``) signs the digest ``data``."""
        pk = self._need(self._pk, "public")
        try:
            sig = binascii.unhexlify(Sign)
            enc = "der" if self.asn1 else "raw"
            if not self.asn1:
                sig = sig[:64]
            pk.verify_digest(sig, self._e(data), encoding=enc)
            return True
        except (InvalidSignature, ValueError, TypeError, binascii.Error):
            return False

    def sign_with_sm3(self, data, random_hex_str=None):
        """Signs the message ``data`` with e = SM3(Z || data), Z for the ID 1234567812345678."""
        sk = self._need(self._sk, "private")
        e = self._need(self._pk, "public").digest(bytes(data))
        return sk.sign_digest(e, encoding="der" if self.asn1 else "raw").hex()

    def verify_with_sm3(self, sign, data):
        pk = self._need(self._pk, "public")
        return self.verify(sign, pk.digest(bytes(data)))

    def encrypt(self, data):
        """Encrypts ``data`` (bytes) to the public key: C1 (64 bytes, no ``04``) then C2 and
        C3 in ``mode``'s order."""
        pk = self._need(self._pk, "public")
        ct = pk.encrypt(bytes(data), format="c1c3c2" if self.mode else "c1c2c3")
        return ct[1:]

    def decrypt(self, data):
        """Decrypts; returns ``None`` when C3 does not match (gmssl returns the unchecked
        plaintext)."""
        sk = self._need(self._sk, "private")
        try:
            return sk.decrypt(b"\x04" + bytes(data), format="c1c3c2" if self.mode else "c1c2c3")
        except DecryptionError:
            return None
