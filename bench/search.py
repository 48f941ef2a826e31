"""Search benchmarks: ``query()`` at 100,000 documents against the same SQL, run raw.

For each database the ``db`` adapter indexes 100,000 documents (sentences of the
standard library's documentation, recombined; :mod:`tests.batteries.search.corpus`)
through ``bulk_index``, then each of 60 queries (two-word queries and two-word phrases)
runs through ``search.query(index, text, limit=10)`` and, interleaved, as the very SQL
statement the adapter sends (:func:`toolkit_batteries.search.adapters.db.search_sql`)
on a raw driver connection (``sqlite3`` / ``psycopg``) fetching every row. The figure is
the median (p50) latency of each side, reported as queries per second; the target is at
least 0.8x the raw query's throughput. Our side pays for query parsing, Django's cursor,
JSON decoding of the rows and snippet escaping.

* SQLite: a fresh migrated file (FTS5 + ``bm25()`` + ``snippet()``).
* PostgreSQL: a fresh migrated database next to the tests' server (tsvector + GIN,
  ``ts_rank_cd`` + ``ts_headline``), dropped afterwards.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench.foundation import Result

POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
#: Documents indexed, queries timed, and rounds (times two) of the query set per side.
DOCUMENTS = 100_000
QUERIES = 60
ROUNDS = 3


def _documents() -> list[tuple[str, dict[str, str], dict[str, Any]]]:
    """Return the 100,000 documents: 2 to 4 real sentences each, seeded."""
    from tests.batteries.search.corpus import paragraphs

    sentences = [
        s.strip()
        for text in paragraphs()
        for s in re.split(r"(?<=[.!?])\s+", text)
        if len(s.split()) >= 5
    ]
    rng = random.Random(15)
    return [
        (
            f"d{i}",
            {"body": " ".join(rng.choice(sentences) for _ in range(rng.randint(2, 4)))},
            {"part": i % 10},
        )
        for i in range(DOCUMENTS)
    ]


def _queries(documents: list) -> list[str]:
    """Return two-word queries and phrases taken from the documents, seeded."""
    from toolkit_batteries.search.query import words_of

    rng = random.Random(7)
    queries = []
    while len(queries) < QUERIES:
        words = [w for w in words_of(rng.choice(documents)[1]["body"]) if len(w) > 4]
        if len(words) < 3:
            continue
        start = rng.randrange(len(words) - 1)
        pair = f"{words[start]} {words[start + 1]}"
        queries.append(f'"{pair}"' if len(queries) % 2 else pair)
    return queries


def _p50s(ours: Callable[[str], Any], base: Callable[[str], Any], queries: list[str]) -> tuple:
    """Time every query on both sides, interleaved; return (our p50, raw p50) in seconds."""
    mine: list[float] = []
    theirs: list[float] = []
    for query in queries:  # warm both (plans, caches)
        ours(query), base(query)
    for round_ in range(ROUNDS * 2):
        # Alternate which side runs first, so neither always meets the other's warm cache.
        sides = ((base, theirs), (ours, mine)) if round_ % 2 else ((ours, mine), (base, theirs))
        for query in queries:
            for run, times in sides:
                started = time.perf_counter()
                run(query)
                times.append(time.perf_counter() - started)
    return statistics.median(mine), statistics.median(theirs)


def _result(label: str, mine: float, theirs: float) -> Result:
    return Result(
        f"search {label} query p50 at 100k docs ({mine * 1000:.2f} ms vs raw "
        f"{theirs * 1000:.2f} ms)",
        1 / mine,
        1 / theirs,
        "q/s",
        ">= 0.8x",
        1 / mine >= 0.8 / theirs,
    )


def _fill(search: Any, documents: list) -> None:
    for start in range(0, len(documents), 1000):
        search.bulk_index("bench", documents[start : start + 1000])


def _raw_runner(search: Any, execute: Callable[[str, list], list]) -> Callable[[str], list]:
    from toolkit_batteries.search.adapters.db import search_sql
    from toolkit_batteries.search.query import parse_query

    def base(text: str) -> list:
        sql, params = search_sql(
            search.dialect,
            search.instance,
            "bench",
            parse_query(text),
            {},
            11,
            0,
            True,
            search.language,
        )
        return execute(sql, params)

    return base


def bench_sqlite() -> Result:
    """Time ``query()`` on SQLite FTS5 against the same statement on raw ``sqlite3``."""
    import sqlite3

    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import sqlite_entry

    folder = tempfile.mkdtemp(prefix="bench-search-")
    path = os.path.join(folder, "search.sqlite3")
    alias = slot_alias(connections, sqlite_entry(path), preferred="", prefix="bench_db")
    call_command("migrate", "toolkit_search", database=alias, verbosity=0, interactive=False)
    container = Container(Config.load({"search": {"adapter": "db", "options": {"dsn": path}}}, {}))
    raw = None
    try:
        search = container.search()
        documents = _documents()
        _fill(search, documents)
        raw = sqlite3.connect(path)

        def execute(sql: str, params: list) -> list:
            return raw.execute(sql.replace("%s", "?"), params).fetchall()

        queries = _queries(documents)
        mine, theirs = _p50s(
            lambda q: search.query("bench", q), _raw_runner(search, execute), queries
        )
    finally:
        if raw is not None:
            raw.close()
        container.close()
        connections[alias].close()
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
    return _result("sqlite fts5", mine, theirs)


def bench_postgres() -> Result:
    """Time ``query()`` on PostgreSQL (tsvector + GIN) against the same SQL on raw psycopg."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import postgres_entry

    name = f"bench_search_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = urlunsplit(urlsplit(POSTGRES_DSN)._replace(path=f"/{name}"))
    raw = None
    container = None
    try:
        alias = slot_alias(connections, postgres_entry(dsn), preferred="", prefix="bench_db")
        call_command("migrate", "toolkit_search", database=alias, verbosity=0, interactive=False)
        connections[alias].close()
        block = {"adapter": "db", "options": {"dsn": dsn, "dedicated_pool": True}}
        container = Container(Config.load({"search": block}, {}))
        search = container.search()
        documents = _documents()
        _fill(search, documents)
        # No automatic server-side prepare: Django's connection binds on the client too,
        # and a generic plan would make the raw side slower for the wrong reason.
        raw = psycopg.connect(dsn, autocommit=True, prepare_threshold=None)
        raw.execute("ANALYZE toolkit_search_document")

        def execute(sql: str, params: list) -> list:
            return raw.execute(sql, params).fetchall()

        queries = _queries(documents)
        mine, theirs = _p50s(
            lambda q: search.query("bench", q), _raw_runner(search, execute), queries
        )
    finally:
        if raw is not None:
            raw.close()
        if container is not None:
            container.close()
        for conn in connections.all(initialized_only=True):
            if conn.settings_dict.get("NAME") == name:
                conn.close()
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return _result("postgresql tsvector", mine, theirs)


BENCHMARKS = (bench_sqlite, bench_postgres)
