"""Search benchmarks: ``query()`` at 100,000 documents against hand-written SQL, run raw.

For each database the ``db`` adapter indexes 100,000 documents (sentences of the
standard library's documentation, recombined; :mod:`tests.batteries.search.corpus`)
through ``bulk_index``, then each of 60 queries (two-word queries and two-word phrases)
runs through ``search.query(index, text, limit=10)`` and, interleaved, as the statement
a developer would write by hand (:func:`_raw_sql`) on a raw driver connection
(``sqlite3`` / ``psycopg``), the query text handed to the engine's own parser (FTS5
``MATCH``, ``websearch_to_tsquery``): the toolkit's query parser never runs on the
baseline's side, and both sides must return the same best 10 documents before timing
starts. The figure is the median (p50) latency of each side, reported as queries per
second; the target is at least 0.8x the raw query's throughput. Our side pays for query
parsing, Django's cursor, JSON decoding of the rows and snippet escaping.

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
from itertools import islice
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


def _raw_sql(dialect: str) -> str:
    """Return the hand-written statement of the baseline: the engine parses the query text.

    What a developer writes without the toolkit, for the same answer: match, rank, the
    best 11 by rank then row id, and the body highlighted for those rows only. The query
    text goes to the engine's own parser (FTS5's ``MATCH`` syntax; PostgreSQL's
    ``websearch_to_tsquery``), both of which read bare words (all must occur) and
    ``"quoted phrases"`` as the toolkit does; the toolkit's parser is never called.
    """
    from toolkit_batteries.search.adapters.db import TABLE
    from toolkit_batteries.search.models import FTS_TABLE

    if dialect == "postgresql":
        return (
            "SELECT d.doc_id, d.fields, d.filters, p.score, "
            "ts_headline(%(lang)s::regconfig, d.body, q.q, 'StartSel=[, StopSel=]') "
            "FROM (SELECT d.id, ts_rank_cd(d.search_vector, q.q)::real AS score "
            f"FROM {TABLE} d, (SELECT websearch_to_tsquery(%(lang)s::regconfig, %(text)s) AS q) q "
            "WHERE d.search_vector @@ q.q AND d.instance = %(instance)s "
            "AND d.index_name = %(index)s ORDER BY score DESC, d.id LIMIT 11) p "
            f"JOIN {TABLE} d ON d.id = p.id, "
            "(SELECT websearch_to_tsquery(%(lang)s::regconfig, %(text)s) AS q) q "
            "ORDER BY p.score DESC, p.id"
        )
    return (
        "SELECT d.doc_id, d.fields, d.filters, k.rank, "
        f"(SELECT highlight({FTS_TABLE}, 0, '[', ']') FROM {FTS_TABLE} "
        f"WHERE {FTS_TABLE} MATCH :text AND {FTS_TABLE}.rowid = k.id) "
        f"FROM (SELECT d.id, bm25({FTS_TABLE}) AS rank FROM {FTS_TABLE} "
        f"JOIN {TABLE} d ON d.id = {FTS_TABLE}.rowid WHERE {FTS_TABLE} MATCH :text "
        "AND d.instance = :instance AND d.index_name = :index "
        f"ORDER BY bm25({FTS_TABLE}), d.id LIMIT 11) k "
        f"JOIN {TABLE} d ON d.id = k.id ORDER BY k.rank, k.id"
    )


def _raw_runner(
    search: Any, execute: Callable[[str, dict], list], queries: list[str]
) -> Callable[[str], list]:
    """Return the baseline: a hand-written statement, the query text as the user typed it.

    The statement (:func:`_raw_sql`) is written once; each call binds the query text and
    runs it on the raw driver. Before timing, every query must find the same documents on
    both sides (the best 10), so the two do the same work.
    """
    sql = _raw_sql(search.dialect)
    fixed = {"lang": search.language, "instance": search.instance, "index": "bench"}

    def base(text: str) -> list:
        return execute(sql, {**fixed, "text": text})

    for text in queries:
        ours = [hit.doc_id for hit in search.query("bench", text, limit=10).hits]
        theirs = [row[0] for row in base(text)[:10]]
        if ours != theirs:
            raise AssertionError(f"search baseline disagrees with query() on {text!r}")
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

        def execute(sql: str, params: Any) -> list:
            if isinstance(params, dict):  # the hand-written baseline: named parameters
                return raw.execute(sql, params).fetchall()
            return raw.execute(sql.replace("%s", "?"), params).fetchall()

        queries = _queries(documents)
        mine, theirs = _p50s(
            lambda q: search.query("bench", q), _raw_runner(search, execute, queries), queries
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

        def execute(sql: str, params: Any) -> list:
            return raw.execute(sql, params).fetchall()

        queries = _queries(documents)
        mine, theirs = _p50s(
            lambda q: search.query("bench", q), _raw_runner(search, execute, queries), queries
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


# ---------------------------------------------------------------------- scale curves

#: Sizes of the search curve: the default run, and ``--scale`` (1M documents).
CURVE_SIZES = (10_000, 100_000)
SCALE_SIZES = (10_000, 100_000, 1_000_000)
#: A word every curve document ends with: a query matching all of them (page 1,000).
EVERYWHERE = "corpus"
DEEP_PAGE = 1000
CURVE_QUERIES = 20
#: Rounds of the query matching every document: it ranks them all (~5 s a query at 1M
#: on the shared two-core machine), so the 1M point takes 5 rounds, the others 10.
DEEP_ROUNDS = {1_000_000: 5}


def _curve_documents(count: int) -> list:
    """Return ``count`` documents like :func:`_documents`, each ending with EVERYWHERE."""
    from tests.batteries.search.corpus import paragraphs

    sentences = [
        s.strip()
        for text in paragraphs()
        for s in re.split(r"(?<=[.!?])\s+", text)
        if len(s.split()) >= 5
    ]
    rng = random.Random(27)
    return [
        (
            f"d{i}",
            {
                "body": " ".join(rng.choice(sentences) for _ in range(rng.randint(2, 4)))
                + f" {EVERYWHERE}"
            },
            {"part": i % 10},
        )
        for i in range(count)
    ]


def _timed(ours: Callable[[], Any], base: Callable[[], Any], rounds: int) -> tuple[list, list]:
    """Run both sides ``rounds`` times, alternating who goes first; return their times."""
    mine: list[float] = []
    theirs: list[float] = []
    ours(), base()  # warm
    for round_ in range(rounds):
        sides = ((base, theirs), (ours, mine)) if round_ % 2 else ((ours, mine), (base, theirs))
        for run, times in sides:
            started = time.perf_counter()
            run()
            times.append(time.perf_counter() - started)
    return mine, theirs


def _curve_points(engine: str, search: Any, execute: Callable, size: int, documents: list):
    """Measure one size: page 1 over mixed queries, and page 1 vs page 1,000 of EVERYWHERE."""
    from bench._curves import Point, percentiles
    from toolkit_batteries.search.adapters.db import search_sql
    from toolkit_batteries.search.query import parse_query

    def statement(text: str, after: Any = None, limit: int = 11, highlight: bool = True):
        return search_sql(
            search.dialect,
            search.instance,
            "bench",
            parse_query(text),
            {},
            limit,
            after,
            highlight,
            search.language,
        )

    points = []
    queries = _queries(documents[:size])[:CURVE_QUERIES]
    prepared = {q: statement(q) for q in queries}
    mine: list[float] = []
    theirs: list[float] = []
    for query in queries:
        sql, params = prepared[query]
        a, b = _timed(
            lambda q=query: search.query("bench", q), lambda s=sql, p=params: execute(s, p), 3
        )
        mine += a
        theirs += b
    points.append(Point(f"{engine} toolkit page 1", size, *percentiles(mine)))
    points.append(Point(f"{engine} raw SQL page 1", size, *percentiles(theirs)))
    # Page 1,000 of a query matching every document: the keyset of hit 9,990.
    skip = (DEEP_PAGE - 1) * 10
    sql, params = statement(EVERYWHERE, None, skip, False)
    last = execute(sql, params)[-1]
    position = [float(last[5]), int(last[6])]
    fingerprint = search._fingerprint("bench", parse_query(EVERYWHERE), {})
    cursor = search._encode_cursor(position, fingerprint)
    first_sql, first_params = statement(EVERYWHERE)
    deep_sql, deep_params = statement(EVERYWHERE, tuple(position))
    offset_sql = first_sql.replace("LIMIT %s", f"LIMIT %s OFFSET {skip}", 1)
    cases = {
        "page 1": (
            lambda: search.query("bench", EVERYWHERE),
            lambda: execute(first_sql, first_params),
        ),
        "page 1000": (
            lambda: search.query("bench", EVERYWHERE, cursor=cursor),
            lambda: execute(deep_sql, deep_params),
        ),
    }
    rounds = DEEP_ROUNDS.get(size, 10)
    for case, (ours, base) in cases.items():
        a, b = _timed(ours, base, rounds)
        points.append(Point(f"{engine} toolkit '{EVERYWHERE}' {case}", size, *percentiles(a)))
        points.append(Point(f"{engine} raw SQL '{EVERYWHERE}' {case}", size, *percentiles(b)))
    _, offsets = _timed(lambda: None, lambda: execute(offset_sql, first_params), rounds)
    points.append(
        Point(f"{engine} raw OFFSET '{EVERYWHERE}' page 1000", size, *percentiles(offsets))
    )
    return points


def _curve_lines(points: list) -> list:
    """Turn the points into bench lines: ratios with computed targets, the rest reported."""
    from bench._curves import Line

    by = {(p.series, p.size): p for p in points}
    lines = []
    for (series, size), point in by.items():
        engine = series.split(" ")[0]
        if series == f"{engine} toolkit page 1":
            raw = by[(f"{engine} raw SQL page 1", size)]
            lines.append(
                Line(
                    f"search {engine} page 1 p50 @{size:,} (q/s)",
                    1000 / point.p50_ms,
                    1000 / raw.p50_ms,
                    "q/s",
                    ">= 0.8x raw",
                    point.p50_ms <= raw.p50_ms / 0.8,
                )
            )
            lines.append(
                Line(f"search {engine} page 1 p99 @{size:,}", point.p99_ms, raw.p99_ms, "ms")
            )
        if series == f"{engine} toolkit '{EVERYWHERE}' page 1000":
            first = by[(f"{engine} toolkit '{EVERYWHERE}' page 1", size)]
            lines.append(
                Line(
                    f"search {engine} page 1000 vs page 1 p50 @{size:,}",
                    point.p50_ms,
                    first.p50_ms,
                    "ms",
                    "<= 1.5x page 1",
                    point.p50_ms <= 1.5 * first.p50_ms,
                )
            )
            offset = by[(f"{engine} raw OFFSET '{EVERYWHERE}' page 1000", size)]
            lines.append(
                Line(
                    f"search {engine} page 1000 keyset vs raw OFFSET @{size:,}",
                    point.p50_ms,
                    offset.p50_ms,
                    "ms",
                )
            )
    return lines


def _curve_sqlite(sizes: tuple[int, ...], documents: list) -> list:
    import sqlite3

    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import sqlite_entry

    folder = tempfile.mkdtemp(prefix="bench-search-curve-")
    path = os.path.join(folder, "search.sqlite3")
    alias = slot_alias(connections, sqlite_entry(path), preferred="", prefix="bench_db")
    call_command("migrate", "toolkit_search", database=alias, verbosity=0, interactive=False)
    container = Container(Config.load({"search": {"adapter": "db", "options": {"dsn": path}}}, {}))
    raw = None
    points: list = []
    try:
        search = container.search()
        raw = sqlite3.connect(path)

        def execute(sql: str, params: list) -> list:
            return raw.execute(sql.replace("%s", "?"), params).fetchall()

        filled = 0
        for size in sizes:
            _load_sqlite(raw, search, documents[filled:size])
            filled = size
            points += _curve_points("sqlite", search, execute, size, documents)
    finally:
        if raw is not None:
            raw.close()
        container.close()
        connections[alias].close()
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
    return points


def _curve_postgres(sizes: tuple[int, ...], documents: list) -> list:
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
    points: list = []
    try:
        alias = slot_alias(connections, postgres_entry(dsn), preferred="", prefix="bench_db")
        call_command("migrate", "toolkit_search", database=alias, verbosity=0, interactive=False)
        connections[alias].close()
        block = {"adapter": "db", "options": {"dsn": dsn, "dedicated_pool": True}}
        container = Container(Config.load({"search": block}, {}))
        search = container.search()
        raw = psycopg.connect(dsn, autocommit=True, prepare_threshold=None)

        def execute(sql: str, params: list) -> list:
            return raw.execute(sql, params).fetchall()

        filled = 0
        for size in sizes:
            _load_postgres(raw, search, documents[filled:size])
            filled = size
            points += _curve_points("postgres", search, execute, size, documents)
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
    return points


# ---------------------------------------------------------------------- bulk loading

#: Rows per ``executemany`` / per flush of the ``COPY`` stream when loading a curve.
LOAD_BATCH = 50_000


def _migration() -> Any:
    """Return the search migration module (its full-text DDL is reused, never copied)."""
    from importlib import import_module

    return import_module("toolkit_batteries.search.migrations.0001_initial")


def _load_rows(search: Any, documents: list) -> Any:
    """Yield the table's row values for ``documents``, as the adapter writes them."""
    import json
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    stamp = now if search.dialect == "postgresql" else now.strftime("%Y-%m-%d %H:%M:%S.%f")
    for doc_id, fields, filters in documents:
        body = "\n\n".join(text for text in fields.values() if text)
        yield (
            search.instance,
            "bench",
            doc_id,
            search.language,
            json.dumps(fields),
            json.dumps(filters),
            body,
            stamp,
        )


_LOAD_COLUMNS = "instance, index_name, doc_id, language, fields, filters, body, updated_at"


def _load_sqlite(raw: Any, search: Any, documents: list) -> None:
    """Load ``documents`` fast: ``executemany`` in big batches, the FTS5 index built after.

    The migration's insert trigger would add each row to FTS5 one by one; it is dropped
    for the load, the new rows go into the FTS table with one ``INSERT ... SELECT``, and
    the trigger is put back (the migration's own statement), all in one transaction.
    """
    from toolkit_batteries.search.adapters.db import TABLE
    from toolkit_batteries.search.models import FTS_TABLE

    trigger = next(s for s in _migration().SQLITE_FTS if "_fts_ai AFTER INSERT" in s)
    (start,) = raw.execute(f"SELECT coalesce(max(id), 0) FROM {TABLE}").fetchone()
    rows = _load_rows(search, documents)
    sql = f"INSERT INTO {TABLE} ({_LOAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    with raw:
        raw.execute("BEGIN")
        raw.execute("DROP TRIGGER toolkit_search_fts_ai")
        while batch := list(islice(rows, LOAD_BATCH)):
            raw.executemany(sql, batch)
        raw.execute(
            f"INSERT INTO {FTS_TABLE} (rowid, body) SELECT id, body FROM {TABLE} WHERE id > ?",
            (start,),
        )
        raw.execute(trigger)


def _load_postgres(raw: Any, search: Any, documents: list) -> None:
    """Load ``documents`` fast: one ``COPY``, the GIN index dropped and built after.

    The migration's trigger still computes each row's ``search_vector`` (the work a real
    load does too); keeping the GIN index up to date row by row is what is skipped: it is
    dropped before the ``COPY`` and rebuilt with the migration's own statement after.
    """
    from toolkit_batteries.search.adapters.db import TABLE

    index = _migration().POSTGRES_TSVECTOR[-1]
    raw.execute("DROP INDEX IF EXISTS toolkit_search_document_vector_gin")
    with raw.cursor() as cursor, cursor.copy(f"COPY {TABLE} ({_LOAD_COLUMNS}) FROM STDIN") as copy:
        for row in _load_rows(search, documents):
            copy.write_row(row)
    raw.execute("SET maintenance_work_mem = '512MB'")
    raw.execute(index)
    raw.execute(f"VACUUM ANALYZE {TABLE}")


def curve() -> Any:
    """Search p50/p99 by corpus size on both engines, page 1 vs page 1,000 (keyset)."""
    from bench._curves import Lines, scale_requested, write_section

    sizes = SCALE_SIZES if scale_requested() else CURVE_SIZES
    documents = _curve_documents(sizes[-1])
    points = _curve_sqlite(sizes, documents) + _curve_postgres(sizes, documents)
    mode = "--scale" if scale_requested() else "default sizes"
    write_section(
        "search",
        "search: query latency by corpus size, page 1 vs page 1,000",
        points,
        f"""`python -m bench.run search` ({mode}).
Documents: 2 to 4 real sentences of the standard library's documentation (seeded), each
ending with the word `{EVERYWHERE}`. *page 1*: {CURVE_QUERIES} two-word queries and
phrases, `limit=10`, three rounds each. *'{EVERYWHERE}' page 1 / page 1000*: a query
matching every document; page 1,000 is reached with the keyset cursor of hit 9,990
(ten rounds; five at 1,000,000 documents, where each query ranks them all). Loading (not
timed): `executemany` in batches of {LOAD_BATCH:,} then one `INSERT ... SELECT` into FTS5
(its insert trigger dropped for the load) on SQLite; one `COPY` on PostgreSQL, the GIN
index dropped before it and built after, then `VACUUM ANALYZE`. *raw SQL*: the very
statement the adapter sends (built before timing), on a raw `sqlite3` / `psycopg`
connection; *raw OFFSET*: the old way, the page-1 statement with `OFFSET 9990`.""",
    )
    return Lines(_curve_lines(points))


BENCHMARKS = (*BENCHMARKS, curve)
