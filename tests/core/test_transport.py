"""core.transport: each transport's "cannot reach the server" becomes one error, once.

Run against real failures: a redis-py client on a port nothing listens on, a SQLite file
that cannot be opened, and a botocore client pointed at a closed port.
"""

from __future__ import annotations

import threading

import pytest

from tests.ports import free_port
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.transport import (
    KV_REASON,
    Unreachable,
    aws_unreachable,
    kv_unreachable,
    sql_unreachable,
)

PASSWORD = "s3cr3t-Pa55word-never-shown"


def dead_redis() -> object:
    import redis

    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"
    return redis.Redis.from_url(url, socket_connect_timeout=1, retry=None)


def test_a_lost_kv_server_is_unavailable_with_the_class_only():
    translate = kv_unreachable("cache", "sessions")
    with pytest.raises(ServiceUnavailableError) as caught, translate:
        dead_redis().get("k")
    error = caught.value
    assert (error.service, error.instance) == ("cache", "sessions")
    assert (
        str(error)
        == "cache.sessions: unavailable: cannot reach the key-value server (ConnectionError)"
    )
    assert PASSWORD not in str(error) and "127.0.0.1" not in str(error)
    # The driver's message (with its address) is not chained into a printed traceback.
    assert error.__cause__ is None and error.__suppress_context__


def test_keep_cause_chains_the_driver_error_and_the_reason_is_the_adapters():
    translate = kv_unreachable(
        "ratelimit", "api", "the key-value server did not answer", keep_cause=True
    )
    with pytest.raises(ServiceUnavailableError) as caught, translate:
        dead_redis().ping()
    assert str(caught.value) == "ratelimit.api: unavailable: the key-value server did not answer"
    import redis

    assert isinstance(caught.value.__cause__, redis.exceptions.ConnectionError)


def test_a_refusal_is_not_unavailability_and_passes_through(redis_client):
    import redis

    key = "transport-test-not-a-number"
    redis_client.set(key, "x")
    try:
        with pytest.raises(redis.exceptions.ResponseError), kv_unreachable("cache", "default"):
            redis_client.incr(key)
    finally:
        redis_client.delete(key)


def test_a_translator_serves_many_threads_and_calls_and_passes_results():
    translate = Unreachable("lock", "default", (ConnectionError,), KV_REASON)
    outcomes: list[str] = []

    def work(fail: bool) -> None:
        for _ in range(200):
            try:
                with translate:
                    if fail:
                        raise ConnectionRefusedError("10.0.0.1:6379 refused")
                outcomes.append("ok")
            except ServiceUnavailableError as exc:
                outcomes.append(str(exc))

    threads = [threading.Thread(target=work, args=(i % 2 == 0,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    failed = "lock.default: unavailable: cannot reach the key-value server (ConnectionRefusedError)"
    assert outcomes.count("ok") == 400 and outcomes.count(failed) == 400


def test_sql_runs_on_error_first_and_names_what_it_was_doing(tmp_path):
    from django.db import OperationalError

    dropped: list[bool] = []
    translate = sql_unreachable(
        "queue", "jobs", "use the queue's tables", on_error=lambda: dropped.append(True)
    )
    with pytest.raises(ServiceUnavailableError) as caught, translate:
        raise OperationalError(f"connection to server at 10.0.0.5 failed: password={PASSWORD}")
    assert (
        str(caught.value)
        == "queue.jobs: unavailable: cannot use the queue's tables (OperationalError)"
    )
    assert dropped == [True] and PASSWORD not in str(caught.value)


def test_sql_on_error_failing_still_reports_the_original_failure():
    from django.db import InterfaceError

    def broken() -> None:
        raise RuntimeError("the connection was already gone")

    translate = sql_unreachable("outbox", "default", on_error=broken)
    with pytest.raises(ServiceUnavailableError, match=r"\(InterfaceError\)"), translate:
        raise InterfaceError("connection already closed")


def test_a_closed_aws_endpoint_is_unavailable():
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url=f"http://127.0.0.1:{free_port()}",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key=PASSWORD,
        config=Config(connect_timeout=1, retries={"max_attempts": 1}),
    )
    with (
        pytest.raises(ServiceUnavailableError) as caught,
        aws_unreachable("queue", "default", "the SQS endpoint"),
    ):
        client.list_queues()
    assert str(caught.value) == (
        "queue.default: unavailable: cannot reach the SQS endpoint (EndpointConnectionError)"
    )
    assert PASSWORD not in str(caught.value)
