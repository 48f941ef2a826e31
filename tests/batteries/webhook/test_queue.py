"""What only the ``queue`` adapter has: jobs, sealed secrets, dead letters, real workers."""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections import Counter
from pathlib import Path

from tests.subprocesses import run_manage
from tests.support.redis_server import drop_redis_prefix
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.webhook.models import WebhookDelivery

from .conftest import CRYPTO_KEY, SECRET, clear_rows

ROOT = Path(__file__).resolve().parents[3]


def test_the_job_on_the_queue_never_holds_the_secret_in_clear(make_hook, receiver):
    opened = make_hook("queue-memory", worker=False)
    hook = opened.hook
    delivery = hook.send(receiver.url(), {"a": 1}, event="e", secret=SECRET)
    message = hook.queue.pop(hook.topic, timeout=1)
    assert message is not None
    assert SECRET.encode() not in message.body
    assert base64.b64encode(SECRET.encode()) not in message.body
    call = json.loads(message.body)
    assert call["job"] == "toolkit.webhook.deliver"
    assert call["kwargs"]["id"] == delivery.id and call["kwargs"]["attempt"] == 1
    assert hook.delivery(delivery.id).status == "queued"
    assert receiver.requests == []  # nothing is sent until a worker runs the job


def test_a_delivery_that_exhausts_its_retries_goes_to_the_dead_letter_topic(make_hook, receiver):
    opened = make_hook("queue-memory", max_retries=1, dead_letter_topic="webhooks-dead")
    opened.hook.configure(retry=opened.hook.retry_policy.__class__(jitter=0.0))
    receiver.default = 503
    delivery = opened.hook.send(receiver.url("/x"), b"payload", event="ping", secret=SECRET)
    settled = opened.settle(delivery.id)
    assert (settled.status, settled.attempts) == ("failed", 2)
    letter = opened.hook.queue.pop("webhooks-dead", timeout=5)
    assert letter is not None
    document = json.loads(letter.body)
    assert document["id"] == delivery.id and document["attempts"] == 2
    assert document["error"] == "HTTP 503" and document["event"] == "ping"
    assert base64.b64decode(document["body"]) == b"payload"
    assert SECRET.encode() not in letter.body
    assert len(receiver.requests) == 2


def test_the_project_queue_runs_deliveries_with_the_registered_job(
    settings, receiver, postgres_dsn
):
    """Without queue_adapter / queue_opts the jobs ride on services.queue() (queue_work)."""
    import toolkit_batteries.webhook.jobs  # noqa: F401 - the worker imports it the same way
    from toolkit_batteries import services
    from toolkit_batteries.queue.jobs.worker import Worker

    clear_rows(postgres_dsn)
    settings.TOOLKIT = {
        "db": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}},
        "queue": {"adapter": "db", "options": {"poll_timeout": "200ms"}},
        "crypto": {"options": {"key": CRYPTO_KEY}},
        "webhook": {"adapter": "queue", "options": {"allow_private_targets": True}},
    }
    try:
        hook = services.webhook()
        assert hook.queue is services.queue()
        delivery = hook.send(receiver.url(), {"k": "v"}, event="e", secret=SECRET)
        worker = Worker(services.queue(), queues=("webhooks",), stop_when_empty=True)
        worker.run()
        assert worker.stats.succeeded == 1
        assert hook.delivery(delivery.id).status == "succeeded"
        (got,) = receiver.wait_for(1)
        assert got.headers["Webhook-Id"] == delivery.id
    finally:
        settings.TOOLKIT = {}
        clear_rows(postgres_dsn)


def test_a_real_worker_process_delivers_queued_deliveries(receiver, postgres_dsn, redis_url):
    """``manage.py webhook_work`` in a child process, on a kvserver queue on the real Redis."""
    clear_rows(postgres_dsn)
    prefix = f"twh-{uuid.uuid4().hex}:"
    env_config = {
        "DB__DEFAULT__ADAPTER": "sqlserver",
        "DB__DEFAULT__DSN": postgres_dsn,
        "CRYPTO__DEFAULT__KEY": CRYPTO_KEY,
        "WEBHOOK__DEFAULT__ADAPTER": "queue",
        "WEBHOOK__DEFAULT__ALLOW_PRIVATE_TARGETS": "true",
        "WEBHOOK__DEFAULT__MAX_RETRIES": "2",
        "WEBHOOK__DEFAULT__QUEUE_ADAPTER": "kvserver",
        "WEBHOOK__DEFAULT__QUEUE_OPTS__URL": redis_url,
        "WEBHOOK__DEFAULT__QUEUE_OPTS__PREFIX": prefix,
        "WEBHOOK__DEFAULT__QUEUE_OPTS__POLL_TIMEOUT": "1s",
    }
    container = Container(Config.load({}, env_config))
    try:
        hook = container.webhook()
        receiver.script = [500]  # the worker retries once, with the policy's backoff
        sent = [
            hook.send(receiver.url(f"/{n}"), {"n": n}, event="batch", secret=SECRET)
            for n in range(5)
        ]
        env = {**os.environ, **env_config, "DJANGO_SETTINGS_MODULE": "tests.settings"}
        done = run_manage(ROOT, "webhook_work", "--stop-when-empty", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert SECRET not in done.stdout + done.stderr
        rows = WebhookDelivery.objects.using(hook.database.alias)
        states = {row.delivery_id: (row.status, row.attempts) for row in rows}
        assert sorted(states.values()) == [("succeeded", 1)] * 4 + [("succeeded", 2)]
        assert set(states) == {d.id for d in sent}
        paths = Counter(r.path for r in receiver.wait_for(6))
        assert set(paths) == {f"/{n}" for n in range(5)}
        assert sorted(paths.values()) == [1, 1, 1, 1, 2]  # the one that got a 500, twice
    finally:
        container.close()
        drop_redis_prefix(redis_url, prefix)
        clear_rows(postgres_dsn)


def test_closing_the_webhook_closes_its_own_queue(make_hook):
    opened = make_hook("queue-memory", worker=False)
    queue = opened.hook.queue
    assert not queue.closed
    opened.container.close()
    assert queue.closed


def test_queue_opts_alone_imply_the_queue_adapter(receiver, postgres_dsn, redis_url):
    """Without queue_adapter, a dsn in queue_opts means db and a url means kvserver."""
    from toolkit_batteries.queue.adapters.db import DBQueue
    from toolkit_batteries.queue.adapters.kvserver import KVServerQueue
    from toolkit_batteries.queue.adapters.memory import MemoryQueue

    clear_rows(postgres_dsn)
    prefix = f"twh-{uuid.uuid4().hex}:"
    for queue_opts, expected in (
        ({"dsn": postgres_dsn}, DBQueue),
        ({"url": redis_url, "prefix": prefix}, KVServerQueue),
        ({"buffer": 10}, MemoryQueue),
    ):
        toolkit = {
            "db": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}},
            "crypto": {"options": {"key": CRYPTO_KEY}},
            "webhook": {"adapter": "queue", "options": {"queue_opts": queue_opts}},
        }
        container = Container(Config.load(toolkit, {}))
        try:
            assert type(container.webhook().queue) is expected
        finally:
            container.close()
    drop_redis_prefix(redis_url, prefix)
