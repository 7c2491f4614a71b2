"""shangmi: SM2, SM3 and SM4 (China's commercial cryptography) at native speed.

The algorithms run in shangmi's Rust library, compiled into this package; the APIs are the
ones Python users already know:

>>> import hmac, shangmi
>>> shangmi.sm3(b"abc").hexdigest()
'66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0'
>>> hmac.new(b"key", b"message", shangmi.sm3).hexdigest() == shangmi.hmac_sm3(b"key", b"message").hex()
True
>>> key = shangmi.SM4GCM.generate_key()
>>> aead = shangmi.SM4GCM(key)
>>> sealed = aead.encrypt(b"\\x00" * 12, b"secret", b"header")
>>> aead.decrypt(b"\\x00" * 12, sealed, b"header")
b'secret'
>>> sk = shangmi.SM2PrivateKey.generate()
>>> sig = sk.sign(b"message")
>>> sk.public_key().verify(sig, b"message") is None
True

Certificates and CMS (GM/T 0010): ``verify_certificate`` checks a chain to trusted anchors
(SM2 ID, validity, constraints, revocation); ``cms_sign``/``cms_verify`` make and check
SignedData, ``cms_encrypt``/``cms_decrypt`` EnvelopedData, ``cms_sign_and_encrypt``/
``cms_decrypt_and_verify`` SignedAndEnvelopedData, ``cfca_open_sm2_file``/``cfca_sm2_file``
CFCA's .sm2 key files, all on PEM or DER bytes.

Errors: ``InvalidTag`` (AEAD tag or MAC mismatch), ``InvalidSignature`` (SM2 signature that
does not verify), ``ChainError`` (a certificate chain rule, an ``InvalidSignature``),
``DecryptionError`` (SM2 or CMS decryption failure, a ``ValueError``), and
``ValueError``/``TypeError`` for malformed input. Nothing partial is returned when a check
fails.

Threads: operations on ``RELEASE_GIL_AT`` bytes or more, every SM2 operation and the batch
calls (``sm3_many``, ``verify_batch``, ``pbkdf2_hmac_sm3``) release the GIL, so Python threads
run them on several cores at once.

Code written for the pure-Python ``gmssl`` package can switch with one import:
``from shangmi.compat.gmssl import sm2, sm3, sm4, func``.
"""

from ._native import (
    DEFAULT_ID,
    RELEASE_GIL_AT,
    HMACSM3,
    SM2EphemeralKey,
    SM2KeyAgreement,
    SM2PrivateKey,
    SM2PublicKey,
    SM4,
    SM4CCM,
    SM4CMAC,
    SM4GCM,
    SM4XTS,
    ChainError,
    DecryptionError,
    InvalidSignature,
    InvalidTag,
    backends,
    cmac_sm4,
    cfca_open_sm2_file,
    cfca_sm2_file,
    pkcs12_dump,
    pkcs12_load,
    cms_decrypt,
    cms_decrypt_and_verify,
    cms_encrypt,
    cms_sign,
    cms_sign_and_encrypt,
    cms_verify,
    convert_ciphertext,
    hmac_sm3,
    pbkdf2_hmac_sm3,
    sm2_kdf,
    sm3,
    sm3_digest,
    sm3_many,
    verify_batch,
    verify_certificate,
)

try:
    from importlib.metadata import version as _version

    __version__ = _version("shangmi")
except Exception:  # pragma: no cover - running from a source tree
    __version__ = "0"

__all__ = [
    "DEFAULT_ID",
    "RELEASE_GIL_AT",
    "HMACSM3",
    "SM2EphemeralKey",
    "SM2KeyAgreement",
    "SM2PrivateKey",
    "SM2PublicKey",
    "SM4",
    "SM4CCM",
    "SM4CMAC",
    "SM4GCM",
    "SM4XTS",
    "DecryptionError",
    "InvalidSignature",
    "InvalidTag",
    "backends",
    "cmac_sm4",
    "convert_ciphertext",
    "hmac_sm3",
    "pbkdf2_hmac_sm3",
    "sm2_kdf",
    "sm3",
    "sm3_digest",
    "sm3_many",
    "verify_batch",
    "ChainError",
    "cfca_open_sm2_file",
    "cfca_sm2_file",
    "pkcs12_dump",
    "pkcs12_load",
    "cms_decrypt",
    "cms_decrypt_and_verify",
    "cms_encrypt",
    "cms_sign",
    "cms_sign_and_encrypt",
    "cms_verify",
    "verify_certificate",
]
