"""Secrets benchmarks: the ``secretstore`` adapter against raw hvac, in the same run.

Both sides read the same KV v2 secret from the same local server
(``tests.batteries.secrets.server.KVServer`` on 127.0.0.1, the test suite's wire-format
server, request recording off): the battery through ``container.secrets().get(name)``
(name checks, the guarded transport that checks every resolved address, error mapping),
raw hvac through ``client.secrets.kv.v2.read_secret_version`` on a plain
``requests.Session`` with ``trust_env`` off like the adapter's (with it on, requests looks
up environment proxies on every call and raw hvac is about 25 % slower). Runs of the two
sides alternate and the best of several repeats is kept, so a busy machine slows both
alike. Target: at least 0.9x the raw rate.
"""

from __future__ import annotations

import secrets as random
import time
from collections.abc import Callable

from bench.foundation import Result


def _rate(loop: Callable[[int], None], reads: int) -> float:
    started = time.perf_counter()
    loop(reads)
    return reads / (time.perf_counter() - started)


def bench_secretstore() -> Result:
    """Time secretstore ``get`` against raw hvac ``read_secret_version`` on one server."""
    import hvac
    import requests

    from tests.batteries.secrets.server import KVServer
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    token = "hvs." + random.token_urlsafe(24)
    value = "v" * 64
    with KVServer(record=False) as server:
        server.add_token(token)
        server.put("TOOLKIT/BENCH", {"value": value})
        block = {
            "adapter": "secretstore",
            "options": {
                "addr": server.url,
                "token": token,
                "allow_insecure": True,  # the bench server is plain http on loopback
                "allow_private": True,
            },
        }
        container = Container(Config.load({"secrets": block}, {}))
        store = container.secrets()
        session = requests.Session()
        session.trust_env = False  # like the adapter: no per-request proxy lookup
        raw = hvac.Client(url=server.url, token=token, session=session)

        def ours(reads: int) -> None:
            get = store.get
            for _ in range(reads):
                assert get("BENCH") == value

        def base(reads: int) -> None:
            read = raw.secrets.kv.v2.read_secret_version
            for _ in range(reads):
                answer = read(
                    path="TOOLKIT/BENCH", mount_point="secret", raise_on_deleted_version=True
                )
                assert answer["data"]["data"]["value"] == value

        try:
            ours(50), base(50)  # connect and warm up both
            mine = theirs = 0.0
            for round_ in range(9):  # alternate which side runs first
                first, second = (base, ours) if round_ % 2 else (ours, base)
                rates = {first: _rate(first, 500), second: _rate(second, 500)}
                theirs, mine = max(theirs, rates[base]), max(mine, rates[ours])
        finally:
            session.close()
            container.close()
    return Result(
        "secretstore get vs raw hvac read_secret_version",
        mine,
        theirs,
        "reads/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


BENCHMARKS = (bench_secretstore,)
