"""gmssl.sm4: ``CryptSM4`` with ``crypt_ecb`` and ``crypt_cbc``."""

from ... import SM4

SM4_ENCRYPT = 0
SM4_DECRYPT = 1
PKCS7 = 0
ZERO = 1


class CryptSM4(object):
    """SM4-ECB/CBC with gmssl's interface: ``set_key(key, mode)`` then ``crypt_ecb(data)``
    or ``crypt_cbc(iv, data)``. ECB pads per ``padding_mode`` (PKCS7, ZERO, or None for
    none); CBC always uses PKCS#7, as gmssl does. Invalid padding raises ``ValueError``.
    """

    def __init__(self, mode=SM4_ENCRYPT, padding_mode=PKCS7):
        self.mode = mode
        self.padding_mode = padding_mode
        self._cipher = None

    def set_key(self, key, mode):
        self._cipher = SM4(bytes(key))
        self.mode = mode

    def _sm4(self):
        if self._cipher is None:
            raise ValueError("set_key() first")
        return self._cipher

    def crypt_ecb(self, input_data):
        c = self._sm4()
        data = bytes(input_data)
        if self.mode == SM4_ENCRYPT:
            if self.padding_mode == PKCS7:
                return c.ecb_encrypt(data, padding=True)
            if self.padding_mode == ZERO:
                data += b"\x00" * (16 - len(data) % 16)
            return c.ecb_encrypt(data)
        if self.padding_mode == PKCS7:
            return c.ecb_decrypt(data, padding=True)
        out = c.ecb_decrypt(data)
        if self.padding_mode == ZERO and out and out[-1] == 0:
            return out[:-1]
        return out

    def crypt_cbc(self, iv, input_data):
        c = self._sm4()
        if self.mode == SM4_ENCRYPT:
            return c.cbc_encrypt(bytes(iv), bytes(input_data))
        return c.cbc_decrypt(bytes(iv), bytes(input_data))
