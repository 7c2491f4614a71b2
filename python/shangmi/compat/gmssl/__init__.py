"""The modules of the pure-Python ``gmssl`` package (3.2.x), backed by shangmi.

``from gmssl import sm2, sm3, sm4, func`` becomes
``from shangmi.compat.gmssl import sm2, sm3, sm4, func``: same names, arguments, return types
and hex conventions. Where gmssl is unsafe this layer is not, and says so in each function:
``CryptSM2.sign`` ignores the caller's nonce ``K`` (a predictable or reused nonce reveals the
private key) and signs with a fresh one from the operating system; ``CryptSM2.decrypt`` checks
C3 and returns ``None`` when it does not match instead of returning unauthenticated plaintext;
``func.random_hex`` uses ``secrets``; PKCS#7 padding is checked on removal.
"""

from . import func, sm2, sm3, sm4

__all__ = ["func", "sm2", "sm3", "sm4"]
