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
