"""Scaling shangmi past one process with dask.distributed: hash and verify a batch of signed
records on a LocalCluster's worker processes (point `Client` at a real scheduler to use many
machines; nothing else changes).

    python examples/dask_verify.py [records] [workers]

Public keys pickle (as their SEC1 bytes), so they travel to workers with the data; each
task verifies its chunk with `shangmi.verify_batch` and hashes it with `shangmi.sm3_many`,
both of which release the GIL inside the worker.
"""

import sys

import shangmi


def make_records(n):
    """n (public key, message, signature) records from a few signers."""
    signers = [shangmi.SM2PrivateKey.generate() for _ in range(4)]
    records = []
    for i in range(n):
        sk = signers[i % len(signers)]
        msg = b"record %d" % i
        sig = sk.sign(msg)
        if i % 10 == 7:
            msg += b" (tampered)"
        records.append((sk.public_key(), msg, sig))
    return records


def check_chunk(chunk):
    """Runs on a worker: each record's SM3 digest and signature verdict."""
    digests = shangmi.sm3_many([m for _, m, _ in chunk])
    return list(zip(digests, shangmi.verify_batch(chunk)))


def run(records, workers=2, chunk=50):
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            futures = client.map(check_chunk, [records[i : i + chunk] for i in range(0, len(records), chunk)])
            return [r for part in client.gather(futures) for r in part]


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 400
    workers = int(argv[2]) if len(argv) > 2 else 2
    records = make_records(n)
    results = run(records, workers)
    valid = sum(ok for _, ok in results)
    print("%d records checked on %d workers: %d valid, %d rejected" % (len(results), workers, valid, len(results) - valid))


if __name__ == "__main__":
    main(sys.argv)
