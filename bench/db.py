"""db benchmarks: ``services.db()`` over Django's connection against plain Django and psycopg.

Since the ``db`` battery wraps ``django.db.connections[alias]`` instead of keeping its own
pool, its cost is the wrapper's: placeholder checking, error mapping and row handling on
top of Django's cursor. Three ways of running the same single-row primary-key ``SELECT``
on the real PostgreSQL, in the same process, interleaved:

* ``services.db().fetch_one(...)`` (the battery);
* ``with connections[alias].cursor() as c: c.execute(...); c.fetchone()`` (plain Django,
  as Django code writes it: a cursor per query);
* ``conn.execute(...).fetchone()`` on one raw psycopg connection (no Django, no toolkit;
  psycopg's own idiom, also a cursor per query).

Targets: at least 0.9x plain Django; against raw psycopg, at least 0.9x of the ratio plain
Django itself reaches (Django's cursor wrapper, connection health checks and row
conversion are the distance to psycopg, and moving the battery onto Django's connections
is what buys ``transaction.atomic`` for battery writes).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable

from bench._measure import rate
from bench.foundation import Result

POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
QUERIES = 5_000
ROUNDS = 5


def _best_of(runs: dict[str, Callable[[int], None]]) -> dict[str, float]:
    """Interleave the runners ``ROUNDS`` times; keep each one's best rate."""
    best = dict.fromkeys(runs, 0.0)
    for _ in range(ROUNDS):
        for name, run in runs.items():
            best[name] = max(best[name], rate(run, QUERIES))
    return best


def bench_fetch_one() -> list[Result]:
    """Time a primary-key lookup through the battery, plain Django and raw psycopg."""
    import psycopg
    from django.db import connections

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    table = f"bench_db_{uuid.uuid4().hex[:8]}"
    container = Container(
        Config.load({"db": {"adapter": "sqlserver", "options": {"dsn": POSTGRES_DSN}}}, {})
    )
    raw = psycopg.connect(POSTGRES_DSN, autocommit=True)
    try:
        raw.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, name text)")
        raw.execute(f"INSERT INTO {table} SELECT g, 'row ' || g FROM generate_series(1, 1000) g")
        db = container.db()
        sql = f"SELECT id, name FROM {table} WHERE id = %s"
        connection = connections[db.alias]

        def battery(n: int) -> None:
            for i in range(n):
                db.fetch_one(sql, (i % 1000 + 1,))

        def plain_django(n: int) -> None:
            for i in range(n):
                with connection.cursor() as cursor:
                    cursor.execute(sql, (i % 1000 + 1,))
                    cursor.fetchone()

        def raw_psycopg(n: int) -> None:
            for i in range(n):
                raw.execute(sql, (i % 1000 + 1,)).fetchone()

        best = _best_of({"battery": battery, "django": plain_django, "psycopg": raw_psycopg})
    finally:
        raw.execute(f"DROP TABLE IF EXISTS {table}")
        raw.close()
        container.close()
    ratio_django = best["battery"] / best["django"]
    ratio_raw = best["battery"] / best["psycopg"]
    django_raw = best["django"] / best["psycopg"]
    return [
        Result(
            "db fetch_one vs plain Django cursor (PG)",
            best["battery"],
            best["django"],
            "q/s",
            ">= 0.9x",
            ratio_django >= 0.9,
            number=",.0f",
        ),
        Result(
            "db fetch_one vs raw psycopg (PG)",
            best["battery"],
            best["psycopg"],
            "q/s",
            f">= 0.9 x Django's own {django_raw:.2f}x",
            ratio_raw >= 0.9 * django_raw,
            number=",.0f",
        ),
    ]


class _Line:
    """Adapt a list of results to bench.run's one-``line()`` protocol."""

    def __init__(self, results: list[Result]) -> None:
        self.results = results

    def line(self) -> str:
        return "\n".join(result.line() for result in self.results)


def fetch_one() -> _Line:
    """Run :func:`bench_fetch_one` for ``python -m bench.run db``."""
    return _Line(bench_fetch_one())


BENCHMARKS = [fetch_one]
