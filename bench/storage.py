"""Storage benchmarks: the adapters against the library underneath, measured in the same run.

* ``objstore`` ``put`` + ``get`` of 1 KiB objects through the battery (a bucket view of
  the Django-held storage, opened by a Container) against raw boto3 ``put_object`` +
  ``get_object(...)["Body"].read()`` on a client with the same settings, both against
  one moto S3 server (server mode, real HTTP on 127.0.0.1) started by the benchmark.
  Target: at least 0.9x the raw rate. The two sides alternate pair by pair (the moto
  server's latency drifts with the machine's load).
* ``local`` ``put`` + ``get`` of 1 KiB objects against a plain Django
  ``FileSystemStorage(allow_overwrite=True)`` ``save`` + ``open().read()`` under the same
  kind of temporary directory. Target: at least 0.9x.

Each figure is operations per second (one put plus one get counts as two); runs of the two
sides are interleaved and the best of several repeats is kept, so a busy machine slows
both alike.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable

from bench._measure import best_interleaved
from bench.foundation import Result

PAYLOAD = bytes(range(256)) * 4  # 1 KiB


def _paired(
    ours: Callable[[int], None], base: Callable[[int], None], pairs: int
) -> tuple[float, float]:
    """Return both rates, alternating one pair of each so a noisy server slows both alike.

    The moto server's latency drifts with the machine's load over a run; timing each side
    in alternation (one put+get of ours, one of the baseline) cancels the drift that
    interleaving whole runs leaves in.
    """
    spent_ours = spent_base = 0.0
    clock = time.perf_counter
    for _ in range(pairs):
        started = clock()
        base(1)
        middle = clock()
        ours(1)
        spent_base += middle - started
        spent_ours += clock() - middle
    return 2 * pairs / spent_ours, 2 * pairs / spent_base


def bench_objstore() -> Result:
    """Time objstore put+get against raw boto3 on one moto S3 server."""
    import boto3
    from botocore.config import Config as BotoConfig
    from moto.server import ThreadedMotoServer

    from tests.ports import free_port
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    keys = {"access_key_id": "AKIABENCH", "secret_access_key": "bench-secret"}
    instance = f"bench{uuid.uuid4().hex[:8]}"
    config = Config.load(
        {
            "storage": {
                instance: {
                    "adapter": "objstore",
                    "options": {
                        "endpoint": endpoint,
                        "allow_insecure": True,
                        "allow_private": True,
                        **keys,
                    },
                }
            }
        },
        {},
    )
    container = Container(config)
    raw = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=keys["access_key_id"],
        aws_secret_access_key=keys["secret_access_key"],
        region_name="us-east-1",
        config=BotoConfig(s3={"addressing_style": "path"}, signature_version="s3v4"),
    )
    try:
        raw.create_bucket(Bucket="bench-ours")
        raw.create_bucket(Bucket="bench-raw")
        bucket = container.storage(instance).bucket("bench-ours")

        def ours(pairs: int) -> None:
            put, get = bucket.put, bucket.get
            for i in range(pairs):
                key = f"k{i % 50}.bin"
                put(key, PAYLOAD)
                get(key)

        def base(pairs: int) -> None:
            put, get = raw.put_object, raw.get_object
            for i in range(pairs):
                key = f"k{i % 50}.bin"
                put(Bucket="bench-raw", Key=key, Body=PAYLOAD)
                get(Bucket="bench-raw", Key=key)["Body"].read()

        ours(50), base(50)  # connect and warm up both
        mine, theirs = _paired(ours, base, pairs=1500)
    finally:
        container.close()
        server.stop()
    return Result(
        "objstore put+get (1 KiB) vs raw boto3, moto server",
        mine,
        theirs,
        "ops/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        ",.0f",
    )


def bench_local() -> Result:
    """Time local put+get against a plain FileSystemStorage save+open."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import FileSystemStorage

    from toolkit_batteries.storage.adapters.local import LocalStorage

    ours_dir, base_dir = tempfile.mkdtemp(), tempfile.mkdtemp()
    try:
        bucket = LocalStorage(instance="bench", root=ours_dir).bucket("bench")
        plain = FileSystemStorage(location=f"{base_dir}/bench", allow_overwrite=True)

        def ours(pairs: int) -> None:
            put, get = bucket.put, bucket.get
            for i in range(pairs):
                key = f"k{i % 50}.bin"
                put(key, PAYLOAD)
                get(key)

        def base(pairs: int) -> None:
            for i in range(pairs):
                key = f"k{i % 50}.bin"
                plain.save(key, ContentFile(PAYLOAD))
                with plain.open(key) as handle:
                    handle.read()

        ours(100), base(100)
        mine, theirs = best_interleaved(ours, base, 2000, repeats=5, per_unit=2)
    finally:
        shutil.rmtree(ours_dir, ignore_errors=True)
        shutil.rmtree(base_dir, ignore_errors=True)
    return Result(
        "local put+get (1 KiB) vs FileSystemStorage save+open",
        mine,
        theirs,
        "ops/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        ",.0f",
    )


BENCHMARKS = (bench_objstore, bench_local)
