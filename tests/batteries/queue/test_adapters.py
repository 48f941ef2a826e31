"""What is particular to each adapter: memory's buffer, Redis keys and sharing, SQL tables.

Also the adapter table (aliases), the system checks and the import cost of the package.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import override_settings

from tests.ports import free_port
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.core.loading import resolve_adapter
from toolkit_batteries.queue import QueueFullError
from toolkit_batteries.queue.adapters.db import DEFAULT_TABLE, DBQueue
from toolkit_batteries.queue.adapters.kvserver import KVServerQueue
from toolkit_batteries.queue.adapters.memory import MemoryQueue
from toolkit_batteries.queue.models import DeadLetter, Message

from .conftest import ROOT, clear_queue_tables, drop_redis_prefix, wait_for


def open_queue(settings: dict, instance: str = "default"):
    container = Container(Config.load(settings, {}))
    return container, container.queue(instance)


# ---------------------------------------------------------------------- adapter table


@pytest.mark.parametrize(
    ("name", "canonical", "cls"),
    [
        ("memory", "memory", MemoryQueue),
        ("kvserver", "kvserver", KVServerQueue),
        ("redis", "kvserver", KVServerQueue),
        ("db", "db", DBQueue),
        ("postgres", "db", DBQueue),
        ("sqlite", "db", DBQueue),
        ("DB", "db", DBQueue),
    ],
)
def test_adapter_names_and_aliases(name, canonical, cls):
    assert resolve_adapter("queue", name) == (canonical, cls)


def test_importing_the_battery_loads_no_vendor_sdk():
    code = (
        "import sys, toolkit_batteries.queue, toolkit_batteries.queue.jobs, "
        "toolkit_batteries.queue.celery_app;"
        "print([m for m in ('redis', 'psycopg', 'celery', 'kombu') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------- memory


def test_memory_buffer_bounds_waiting_messages_per_topic(make_queue):
    queue = make_queue("memory", buffer=3).queue
    for i in range(3):
        queue.push("t", str(i).encode())
    with pytest.raises(QueueFullError) as info:
        queue.push("t", b"overflow")
    assert info.value.topic == "t" and info.value.limit == 3
    assert '"t" is full (3 waiting messages)' in str(info.value)
    assert queue.size("t") == 3
    queue.push("other", b"fine")  # the bound is per topic
    message = queue.pop("t", timeout=0)
    queue.push("t", b"3")  # in-flight messages do not count
    with pytest.raises(QueueFullError):
        queue.push("t", b"4", delay=10)  # delayed ones do
    assert queue.ack(message)


def test_memory_push_many_is_all_or_nothing(make_queue):
    queue = make_queue("memory", buffer=3).queue
    queue.push("t", b"0")
    with pytest.raises(QueueFullError):
        queue.push_many("t", [b"1", b"2", b"3"])
    assert queue.size("t") == 1
    assert len(queue.push_many("t", [b"1", b"2"])) == 2


def test_memory_default_buffer_is_ten_thousand(make_queue):
    assert make_queue("memory").queue.buffer == 10000


def test_memory_queues_are_private_to_their_container(make_queue):
    one, two = make_queue("memory").queue, make_queue("memory").queue
    one.push("t", b"x")
    assert two.pop("t", timeout=0) is None and one.size("t") == 1


# ---------------------------------------------------------------------- kvserver


def test_kvserver_keys_live_under_the_prefix_and_are_cleaned(make_queue, redis_url):
    import redis

    queue = make_queue("kvserver").queue
    prefix = queue.prefix
    assert prefix.startswith("t-")
    for i in range(5):
        queue.push("jobs:default", str(i).encode())
    client = redis.Redis.from_url(redis_url)
    base = f"{prefix}queue:{{jobs:default}}:"
    keys = sorted(k.decode() for k in client.scan_iter(match=f"{prefix}*"))
    assert keys == [f"{base}msgs", f"{base}ready", f"{base}seq"]
    assert client.hlen(f"{base}msgs") == 5 and client.zcard(f"{base}ready") == 5
    message = queue.pop("jobs:default", timeout=0)
    queue.dead(message, "kept for inspection")
    assert client.hexists(f"{base}why", message.id)
    while (message := queue.pop("jobs:default", timeout=0)) is not None:
        assert queue.ack(message)
    queue.purge_dead("jobs:default")
    left = sorted(k.decode() for k in client.scan_iter(match=f"{prefix}*"))
    assert left == [f"{base}seq"]  # no body, attempt count or set left behind
    client.close()


def test_kvserver_wake_tokens_only_while_someone_waits(make_queue, redis_url):
    import redis

    queue = make_queue("kvserver").queue
    queue.clock = time.time
    base = f"{queue.prefix}queue:{{t}}:"
    client = redis.Redis.from_url(redis_url)
    for _ in range(3):
        queue.push("t", b"x")
    assert client.llen(f"{base}wake") == 0  # nobody waits: a push costs no token
    while queue.pop("t", timeout=0) is not None:
        pass
    got: list = []
    popper = threading.Thread(target=lambda: got.append(queue.pop("t", timeout=5)))
    popper.start()
    wait_for(lambda: client.zcard(f"{base}waiters") == 1, 5, "the consumer to register")
    started = time.monotonic()
    queue.push("t", b"wake up")
    popper.join(5)
    assert got[0].body == b"wake up" and time.monotonic() - started < 0.5
    assert client.zcard(f"{base}waiters") == 0  # the consumer left the waiters
    assert queue.pop("t", timeout=0.05) is None
    assert client.zcard(f"{base}waiters") == 0  # a consumer that gave up left too
    client.close()


def test_kvserver_a_refused_command_is_a_queue_error_naming_no_key(make_queue, redis_url):
    # A key of the wrong type (another program wrote it): the server answered, so the
    # queue is not unavailable; the error names the error class, never the key or value.
    import redis

    from toolkit_batteries.queue import QueueError

    queue = make_queue("kvserver").queue
    client = redis.Redis.from_url(redis_url)
    client.set(f"{queue.prefix}queue:{{t}}:ready", b"not a sorted set")
    calls = (
        lambda: queue.push("t", b"x"),
        lambda: queue.pop("t", timeout=0),
        lambda: queue.size("t"),
    )
    for call in calls:
        with pytest.raises(QueueError) as info:
            call()
        text = str(info.value)
        assert text == "queue.default: the key-value server refused a command (ResponseError)"
    client.close()


def test_kvserver_url_wins_over_addr(make_queue, redis_url):
    port = free_port()  # nothing listens on it
    queue = make_queue("kvserver", addr=f"127.0.0.1:{port}").queue
    queue.push("t", b"x")
    assert queue.pop("t", timeout=0).body == b"x"
    assert "6379" in repr(queue)


def test_kvserver_instances_share_one_client_unless_dedicated(redis_url):
    prefix = f"t-{uuid.uuid4().hex}:"
    block = {"adapter": "kvserver", "options": {"url": redis_url, "prefix": prefix}}
    dedicated = {**block, "options": {**block["options"], "dedicated_pool": True}}
    container = Container(
        Config.load({"queue": {"default": block, "jobs": block, "private": dedicated}}, {})
    )
    try:
        assert container.queue().client is container.queue("jobs").client
        assert container.queue("private").client is not container.queue().client
    finally:
        container.close()
        drop_redis_prefix(redis_url, prefix)


def test_kvserver_unreachable_at_open_names_no_secret():
    port = free_port()
    url = f"redis://:hunter-s3cret@127.0.0.1:{port}/0"
    container = Container(
        Config.load({"queue": {"adapter": "kvserver", "options": {"url": url}}}, {})
    )
    with pytest.raises(ServiceUnavailableError) as info:
        container.queue()
    text = str(info.value)
    assert text.startswith("queue.default: unavailable: the key-value server is unreachable")
    assert "hunter-s3cret" not in text and str(port) not in text
    container.close()


# ---------------------------------------------------------------------- db


def test_db_hot_statements_are_server_side_prepared_on_postgresql(make_queue):
    """Push, claim and ack run as named prepared statements (parsed and planned once per
    connection), although Django opens its connections with ``prepare_threshold=None``,
    under which psycopg ignores ``prepare=True``; Django's own cursor prepares nothing."""
    queue = make_queue("db-postgres").queue
    for _ in range(2):
        queue.push("t", b"x")
        assert queue.ack(queue.pop("t", timeout=0))
    assert queue.size("t") == 0  # through Django's cursor
    prepared = queue.database.fetch_all("SELECT statement FROM pg_prepared_statements")
    kinds = {text.split()[0] for (text,) in prepared if "toolkit_queue_message" in text}
    assert kinds >= {"DELETE", "INSERT", "UPDATE"}  # (earlier tests may have added more)


def test_db_default_table_and_durability_across_containers(sqlite_dsn):
    settings = {"queue": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    container, queue = open_queue(settings)
    assert queue.table == DEFAULT_TABLE == Message._meta.db_table
    assert queue.dead_table == DeadLetter._meta.db_table
    queue.push("t", b"survives")
    container.close()
    container, queue = open_queue(settings)  # the tables exist already: open again
    message = queue.pop("t", timeout=0)
    assert message.body == b"survives" and queue.ack(message)
    container.close()


@pytest.mark.parametrize("table", ["bad-name", "drop table x;", "1abc", "a" * 64, "ok_table"])
def test_db_refuses_a_table_name_that_is_not_the_migrated_table(sqlite_dsn, table):
    settings = {"queue": {"adapter": "db", "options": {"dsn": sqlite_dsn, "table": table}}}
    container = Container(Config.load(settings, {}))
    with pytest.raises(InvalidOptionsError) as info:
        container.queue()
    assert info.value.field == "table" and table not in str(info.value)
    container.close()


def test_db_accepts_the_migrated_table_name(sqlite_dsn):
    options = {"dsn": sqlite_dsn, "table": "toolkit_queue_message"}
    container, queue = open_queue({"queue": {"adapter": "db", "options": options}})
    assert queue.table == "toolkit_queue_message"
    container.close()


def test_db_with_empty_dsn_borrows_the_db_service(sqlite_dsn):
    settings = {
        "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
        "queue": {"adapter": "db"},
    }
    container, queue = open_queue(settings)
    assert queue.database is container.db()
    queue.push("t", b"x")
    assert container.db().fetch_value("SELECT count(*) FROM toolkit_queue_message") == 1
    container.close()


def test_db_shares_the_connection_by_dsn_unless_dedicated(sqlite_dsn):
    path = sqlite_dsn
    settings = {
        "db": {"adapter": "sqlfile", "options": {"path": path}},
        "queue": {
            "default": {"adapter": "db", "options": {"dsn": path}},
            "private": {"adapter": "db", "options": {"dsn": path, "dedicated_pool": True}},
        },
    }
    container = Container(Config.load(settings, {}))
    try:
        assert container.queue().database.alias == container.db().alias
        assert container.queue("private").database.alias != container.db().alias
        # Both are the same table in the same file.
        container.queue().push("t", b"x")
        assert container.queue("private").pop("t", timeout=0).body == b"x"
    finally:
        container.close()


def test_db_sqlite_consumers_in_separate_containers_get_each_message_once(sqlite_dsn):
    settings = {"queue": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    containers = [Container(Config.load(settings, {})) for _ in range(3)]
    queues = [c.queue() for c in containers]
    for i in range(60):
        queues[0].push("t", str(i).encode())
    seen: list[bytes] = []
    lock = threading.Lock()

    def consume(queue) -> None:
        while (message := queue.pop("t", timeout=0)) is not None:
            with lock:
                seen.append(message.body)
            queue.ack(message)

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(consume, queues))
    assert sorted(seen) == sorted(str(i).encode() for i in range(60))
    for container in containers:
        container.close()


def test_db_postgres_claim_skips_locked_rows(make_queue, postgres_dsn):
    import psycopg

    opened = make_queue("db-postgres")
    queue = opened.queue
    first = queue.push("t", b"first")
    queue.push("t", b"second")
    with psycopg.connect(postgres_dsn) as conn:
        # Another transaction holds the first row (as a claim in progress would).
        conn.execute(f"SELECT id FROM {queue.table} WHERE id = %s FOR UPDATE", (int(first),))
        message = queue.pop("t", timeout=0)
        assert message is not None and message.body == b"second"  # skipped, not blocked
        assert queue.pop("t", timeout=0) is None
        conn.rollback()
    assert queue.pop("t", timeout=0).body == b"first"


def test_db_postgres_concurrent_opens_share_the_tables(postgres_dsn):
    clear_queue_tables(postgres_dsn)
    settings = {"queue": {"adapter": "db", "options": {"dsn": postgres_dsn}}}
    containers = [Container(Config.load(settings, {})) for _ in range(4)]
    try:
        with ThreadPoolExecutor(4) as pool:
            queues = list(pool.map(lambda c: c.queue(), containers))
        queues[0].push("t", b"x")
        assert queues[3].pop("t", timeout=0).body == b"x"
    finally:
        for container in containers:
            container.close()
        clear_queue_tables(postgres_dsn)


def _terminate_backend(dsn: str, pid: int) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_db_postgres_reconnects_after_the_server_drops_the_connection(make_queue, postgres_dsn):
    queue = make_queue("db-postgres").queue
    queue.push("t", b"before")
    _terminate_backend(postgres_dsn, queue.database.fetch_value("SELECT pg_backend_pid()"))
    with pytest.raises(ServiceUnavailableError) as info:
        queue.push("t", b"lost")
    assert "postgres" not in str(info.value)
    queue.push("t", b"after")  # the next call opens a new connection
    assert [queue.pop("t", timeout=0).body for _ in range(2)] == [b"before", b"after"]


def test_db_postgres_open_replaces_a_dead_connection(make_queue, postgres_dsn):
    first = make_queue("db-postgres")
    _terminate_backend(postgres_dsn, first.queue.database.fetch_value("SELECT pg_backend_pid()"))
    container, queue = open_queue(first.settings)  # same alias, same thread: a dead connection
    try:
        queue.push("t", b"x")
        assert queue.pop("t", timeout=0).body == b"x"
    finally:
        container.close()


def test_db_postgres_unreachable_names_no_secret():
    port = free_port()
    dsn = f"postgresql://app:pg-s3cret@127.0.0.1:{port}/app"
    container = Container(Config.load({"queue": {"adapter": "db", "options": {"dsn": dsn}}}, {}))
    with pytest.raises(ServiceUnavailableError) as info:
        container.queue()
    assert "pg-s3cret" not in str(info.value) and str(port) not in str(info.value)
    container.close()


# ---------------------------------------------------------------------- checks


def checks_for(settings: dict) -> list[str]:
    return [message.id for message in service_checks("queue", Config.load(settings, {}))]


def test_checks_pass_on_defaults_and_valid_settings():
    assert checks_for({}) == []
    table = {"table": "toolkit_queue_message"}
    assert checks_for({"queue": {"adapter": "db", "options": table}}) == []


def test_check_reports_bad_table_and_dsn():
    settings = {"queue": {"adapter": "db", "options": {"table": "no-good", "dsn": "mysql://x/y"}}}
    messages = service_checks("queue", Config.load(settings, {}))
    assert [m.id for m in messages] == ["toolkit_queue.E002", "toolkit_queue.E003"]
    assert all("no-good" not in m.msg and "mysql://x/y" not in m.msg for m in messages)


def test_check_reports_bad_jobs_settings():
    with override_settings(TOOLKIT_JOBS={"dispatcher": "rabbit"}):
        assert checks_for({}) == ["toolkit_queue.E004"]
    with override_settings(TOOLKIT_JOBS={"dispacher": "queue"}):
        (message,) = service_checks("queue", Config.load({}, {}))
        assert 'did you mean "dispatcher"' in message.msg
    with override_settings(TOOLKIT_JOBS={"dispatcher": "celery"}):
        assert checks_for({}) == ["toolkit_queue.E004"]  # no broker_url
    with override_settings(TOOLKIT_JOBS={"queue_instance": "jobs"}):
        assert checks_for({}) == ["toolkit_queue.E004"]
        assert checks_for({"queue": {"jobs": {"adapter": "memory"}}}) == []
