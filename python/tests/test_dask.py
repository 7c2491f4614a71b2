"""The scaling-out example: shangmi inside dask.distributed worker processes."""

import pathlib
import pickle
import sys

import pytest

import shangmi

pytest.importorskip("dask.distributed")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import dask_verify  # noqa: E402


def test_public_keys_pickle():
    pk = shangmi.SM2PrivateKey.generate().public_key()
    assert pickle.loads(pickle.dumps(pk)) == pk


def test_workers_hash_and_verify_like_the_local_process():
    records = dask_verify.make_records(300)
    results = dask_verify.run(records, workers=2, chunk=40)
    assert [d for d, _ in results] == shangmi.sm3_many([m for _, m, _ in records])
    assert [ok for _, ok in results] == shangmi.verify_batch(records)
    assert sum(not ok for _, ok in results) == 30  # every tenth record was tampered with
