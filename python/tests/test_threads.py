"""The GIL is released during long operations: a Python thread keeps running meanwhile.

Measured by progress, not by time: a counter thread can only advance while the main thread's
call has released the GIL (with it held, no Python bytecode runs anywhere until the call
returns), so the test does not depend on how fast or loaded the machine is.
"""

import sys
import threading

import pytest

import shangmi

SK = shangmi.SM2PrivateKey.generate()
PK = SK.public_key()
SIGS = [(PK, b"m%d" % i, SK.sign(b"m%d" % i)) for i in range(200)]
BIG = bytes(48 << 20)
SIG_BIG = SK.sign(BIG[: 16 << 20])
CT_BIG = PK.encrypt(BIG[: 4 << 20])


def progress_during(call):
    """How many times a Python thread's loop ran while `call` ran."""
    counter = [0]
    started = threading.Event()
    stop = threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            counter[0] += 1

    # A long switch interval: the spinner cannot preempt the main thread between bytecodes
    # before or after the call, so only a released GIL lets it count during the call.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.25)
    try:
        t = threading.Thread(target=spin)
        t.start()
        started.wait()
        before = counter[0]
        call()
        during = counter[0] - before
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(interval)
    return during


CALLS = {
    "sm3": lambda: shangmi.sm3_digest(BIG),
    "sm3-update": lambda: shangmi.sm3().update(BIG),
    "sm4-ctr": lambda: shangmi.SM4(bytes(16)).ctr(bytes(16), BIG),
    "sm4-gcm": lambda: shangmi.SM4GCM(bytes(16)).encrypt(bytes(12), BIG),
    "pbkdf2": lambda: shangmi.pbkdf2_hmac_sm3(b"pw", b"salt", 300_000),
    "verify-batch": lambda: shangmi.verify_batch(SIGS),
    # SM2 calls release the GIL whatever their size; a long message makes one call long
    # enough to see it.
    "sm2-sign": lambda: SK.sign(BIG[: 16 << 20]),
    "sm2-verify": lambda: PK.verify(SIG_BIG, BIG[: 16 << 20]),
    "sm2-decrypt": lambda: SK.decrypt(CT_BIG),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_long_calls_let_other_threads_run(name):
    # The loop runs millions of times a second; had the call kept the GIL, it could not
    # advance at all until the call returned.
    assert progress_during(CALLS[name]) > 1000


def test_control_a_call_that_keeps_the_gil_shows_no_progress():
    # bytes.count holds the GIL throughout: the method must see (almost) nothing.
    assert progress_during(lambda: BIG.count(b"\x01")) < 1000


# Objects shared between threads, as pyca's are: every method may run while another thread
# is inside one on the same object (with the GIL released for long data), and none raises
# "Already borrowed" or loses an update.

CHUNK = bytes(64 << 10)
THREADS = 4


def run_threads(target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=wrapped, args=(i,)) for i in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


def test_shared_hash_and_mac_objects_take_every_update():
    key = bytes(range(16))
    h, m, c = shangmi.sm3(), shangmi.HMACSM3(key), shangmi.SM4CMAC(key)

    def feed(_):
        for _ in range(8):
            h.update(CHUNK)
            m.update(CHUNK)
            c.update(CHUNK)
            h.copy().digest()
            c.digest()

    run_threads(feed)
    whole = CHUNK * (8 * THREADS)
    assert h.digest() == shangmi.sm3_digest(whole)
    assert m.digest() == shangmi.hmac_sm3(key, whole)
    assert c.digest() == shangmi.cmac_sm4(key, whole)


def test_shared_aeads_from_several_threads():
    key, nonce = bytes(16), bytes(12)
    for aead in (shangmi.SM4GCM(key), shangmi.SM4CCM(key)):
        sealed = aead.encrypt(nonce, CHUNK)

        def use(_):
            for _ in range(8):
                assert aead.encrypt(nonce, CHUNK) == sealed
                assert aead.decrypt(nonce, sealed) == CHUNK

        run_threads(use)


def test_shared_streams_release_each_byte_once():
    key, iv = bytes(16), bytes(range(16))
    enc = shangmi.SM4(key).encryptor("ctr", iv)
    gcm = shangmi.SM4GCM(key).encryptor(bytes(12))
    pieces, gcm_pieces = [], []

    def feed(_):
        for _ in range(4):
            pieces.append(enc.update(CHUNK))
            gcm_pieces.append(gcm.update(CHUNK))

    run_threads(feed)
    # Zeros in: each piece is a stretch of keystream; together exactly the whole of it.
    want = shangmi.SM4(key).ctr(iv, CHUNK * 16)
    got = sorted(pieces)
    assert got == sorted(want[i : i + len(CHUNK)] for i in range(0, len(want), len(CHUNK)))
    gcm.finalize()
    assert len(b"".join(gcm_pieces)) == len(CHUNK) * 16
    assert len(gcm.tag) == 16


def test_bytearray_mutated_by_another_thread_is_read_once():
    # The input is taken as one snapshot before the GIL is released: whatever the other
    # thread writes meanwhile, the output is the encryption of one whole state of it.
    key, iv = bytes(16), bytes(16)
    cipher = shangmi.SM4(key)
    buf = bytearray(4 << 20)
    stop = threading.Event()

    def mutate():
        v = 0
        while not stop.is_set():
            v = (v + 1) & 0xFF
            buf[:] = bytes([v]) * len(buf)

    t = threading.Thread(target=mutate)
    t.start()
    try:
        for _ in range(5):
            back = cipher.ctr(iv, cipher.ctr(iv, buf))
            assert back == bytes([back[0]]) * len(back)
    finally:
        stop.set()
        t.join()
