"""Shared helpers: the repository's known-answer files (tests/vectors) and an optional peer."""

import pathlib

import pytest

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "vectors"


def vectors(name):
    """The records of tests/vectors/NAME: blocks of `key = value` lines between blank lines."""
    records, current = [], {}
    for line in (VECTORS / name).read_text().splitlines():
        line = line.strip()
        if not line:
            if current:
                records.append(current)
            current = {}
            continue
        if line.startswith("#"):
            continue
        k, _, v = line.partition("=")
        current[k.strip()] = v.strip()
    if current:
        records.append(current)
    assert records, name
    return records


def h(s):
    return bytes.fromhex(s)


@pytest.fixture(scope="session")
def pyca():
    """pyca `cryptography` (a test dependency the test command installs)."""
    import cryptography.hazmat.primitives.ciphers as ciphers

    return ciphers
