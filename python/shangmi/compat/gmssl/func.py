"""gmssl.func: the byte/list helpers gmssl code imports."""

import secrets


def xor(a, b):
    return [x ^ y for x, y in zip(a, b)]


def rotl(x, n):
    return ((x << n) & 0xFFFFFFFF) | ((x >> (32 - n)) & 0xFFFFFFFF)


def get_uint32_be(key_data):
    return (key_data[0] << 24) | (key_data[1] << 16) | (key_data[2] << 8) | key_data[3]


def put_uint32_be(n):
    return [(n >> 24) & 0xFF, (n >> 16) & 0xFF, (n >> 8) & 0xFF, n & 0xFF]


def pkcs7_padding(data, block=16):
    n = 16 - len(data) % block
    return list(data) + [n] * n


def zero_padding(data, block=16):
    return list(data) + [0] * (16 - len(data) % block)


def pkcs7_unpadding(data):
    """Removes PKCS#7 padding; unlike gmssl, invalid padding raises ``ValueError``."""
    n = data[-1] if len(data) else 0
    if not 1 <= n <= 16 or n > len(data) or any(b != n for b in data[-n:]):
        raise ValueError("invalid PKCS#7 padding")
    return data[:-n]


def zero_unpadding(data, i=1):
    """As gmssl: drops the last byte when it is zero."""
    return data[:-i] if data[-i] == 0 else data


def list_to_bytes(data):
    return bytes(data)


def bytes_to_list(data):
    return list(data)


def random_hex(x):
    """``x`` random hex digits from the operating system's generator (gmssl uses ``random``)."""
    return "".join(secrets.choice("0123456789abcdef") for _ in range(x))
