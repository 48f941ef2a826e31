"""The ``db`` adapter: embeddings as rows of a Django model, on SQLite or PostgreSQL.

* The table is :class:`~toolkit_batteries.vectorstore.models.StoredVector`
  (``toolkit_vectorstore_vector``), created by ``manage.py migrate``; opening checks that
  it exists (:func:`~toolkit_batteries.db.require_tables`) and never runs DDL. Every
  instance shares it; rows carry their ``store`` (the instance name).
* An empty ``dsn`` borrows the container's ``db`` service; a ``dsn`` is reached through
  the ``DATABASES`` alias of that database (:func:`~toolkit_batteries.db.database_for`).
  Writes run on Django's connection for that alias, so an upsert inside the caller's
  ``transaction.atomic()`` commits or rolls back with the caller's rows, and a batch is
  one transaction of its own otherwise: all of it is written or none.
* Searching is an exact scan (recall 1.0), by the best engine the database has
  (:func:`search_kind`):

  - ``pgvector``: PostgreSQL's ``vector`` column with pgvector's distance operators;
  - ``sqlarray``: PostgreSQL without pgvector: a ``double precision[]`` column, distances
    computed in SQL;
  - ``sqlite-vec``: SQLite, read through a connection of the ``sqlean.py`` driver opened
    on the same file, read-only (``PRAGMA query_only``): the interpreter's own
    ``sqlite3`` often cannot load extensions (``enable_load_extension`` is compiled out
    of many builds). A namespace is searched in an exact in-memory copy kept fresh by a
    version counter (:mod:`._memindex`), or, when it is too big to copy, by a scan with
    ``sqlite-vec``'s distance functions. The reader sees committed rows: inside an open
    ``transaction.atomic()`` the adapter scans on Django's connection instead, so a caller
    always reads its own writes;
  - ``python``: SQLite without ``sqlite-vec`` installed: the rows are read through
    Django's connection and compared in Python.
"""

from __future__ import annotations

import heapq
import importlib.util
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.tracing import traced

from ..base import (
    Match,
    Query,
    QueryTuning,
    Record,
    VectorStore,
    VectorStoreError,
    distance,
    norm,
)
from ..fields import pack, to_floats

if TYPE_CHECKING:
    from toolkit_batteries.db import Database

__all__ = ["TABLE", "DBVectorStore", "SqliteVecReader", "search_kind"]

#: The table every record lives in (the model's ``db_table``).
TABLE = "toolkit_vectorstore_vector"
#: The per-namespace write counters of SQLite stores (the model's ``db_table``).
VERSIONS = "toolkit_vectorstore_namespace"
_BUMP = (
    f"INSERT INTO {VERSIONS} (store, namespace, version, purged) VALUES (%s, %s, 1, 0) "
    f"ON CONFLICT (store, namespace) DO UPDATE SET version = {VERSIONS}.version + 1"
)
_PURGE = (
    f"INSERT INTO {VERSIONS} (store, namespace, version, purged) VALUES (%s, %s, 1, 1) "
    f"ON CONFLICT (store, namespace) DO UPDATE SET version = {VERSIONS}.version + 1, "
    f"purged = {VERSIONS}.purged + 1"
)
_CURRENT = f"SELECT version FROM {VERSIONS} WHERE store = %s AND namespace = %s"

_COLUMNS = "store, namespace, record_id, dimension, norm, embedding, metadata, updated_at, version"
_UPDATE = (
    "ON CONFLICT (store, namespace, record_id) DO UPDATE SET dimension = excluded.dimension, "
    "norm = excluded.norm, embedding = excluded.embedding, metadata = excluded.metadata, "
    "updated_at = excluded.updated_at, version = excluded.version"
)
#: The embedding parameter's cast per search kind (the metadata cast is jsonb on PG).
_CAST = {"pgvector": "%s::vector", "sqlarray": "%s::double precision[]"}

#: Distance expressions by search kind and metric; ``{q}`` is the query parameter.
_PG_DISTANCE = {
    "pgvector": {
        "cosine": "CASE WHEN norm = 0 THEN 1.0 ELSE embedding <=> {q}::vector END",
        "l2": "embedding <-> {q}::vector",
        "ip": "embedding <#> {q}::vector",
    },
    "sqlarray": {
        "cosine": (
            "CASE WHEN norm = 0 THEN 1.0 ELSE 1.0 - (SELECT sum(a * b) FROM "
            "unnest(embedding, {q}::double precision[]) AS u(a, b)) / (norm * {n}) END"
        ),
        "l2": (
            "sqrt((SELECT sum((a - b) * (a - b)) FROM "
            "unnest(embedding, {q}::double precision[]) AS u(a, b)))"
        ),
        "ip": "-(SELECT sum(a * b) FROM unnest(embedding, {q}::double precision[]) AS u(a, b))",
    },
}
#: pgvector's operator and index operator class per metric (the approximate path).
_OPERATOR = {"cosine": "<=>", "l2": "<->", "ip": "<#>"}
_OPCLASS = {"cosine": "vector_cosine_ops", "l2": "vector_l2_ops", "ip": "vector_ip_ops"}
_SQLITE_VEC_DISTANCE = {
    "cosine": "coalesce(vec_distance_cosine(embedding, ?), 1.0)",
    "l2": "vec_distance_l2(embedding, ?)",
    "ip": "-(1.0 - coalesce(vec_distance_cosine(embedding, ?), 1.0)) * norm * ?",
}


def _models() -> tuple[Any, ...]:
    """Return the model classes; imported late, once Django's apps are ready."""
    from toolkit_batteries.vectorstore.models import NamespaceVersion, StoredVector

    return StoredVector, NamespaceVersion


def search_kind(database: Database) -> str:
    """Return how ``database`` is searched: pgvector, sqlarray, sqlite-vec or python."""
    if database.dialect == "postgresql":
        udt = database.fetch_value(
            "SELECT udt_name FROM information_schema.columns "
            "WHERE table_name = %s AND column_name = 'embedding' "
            "AND table_schema = ANY (current_schemas(false))",
            (TABLE,),
        )
        return "pgvector" if udt == "vector" else "sqlarray"
    return "sqlite-vec" if SqliteVecReader.available() else "python"


class SqliteVecReader:
    """Read-only ``sqlean.py`` connections with ``sqlite-vec`` loaded, one per thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        self._opened: list[Any] = []
        self._lock = threading.Lock()

    @staticmethod
    def available() -> bool:
        """Return whether the ``sqlean.py`` driver and ``sqlite-vec`` are installed."""
        import importlib.util

        return all(importlib.util.find_spec(name) for name in ("sqlean", "sqlite_vec"))

    def connection(self) -> Any:
        """Return this thread's reader connection, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            import sqlean
            import sqlite_vec

            conn = sqlean.connect(self.path, timeout=5, check_same_thread=False)
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._lock:
                self._opened.append(conn)
        return conn

    def fetch_all(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """Run one read-only query and return its rows."""
        conn = self.connection()
        cursor = conn.execute(sql, params)
        try:
            return cursor.fetchall()
        finally:
            cursor.close()
            conn.rollback()  # end the read transaction, so the next query sees new commits

    def close(self) -> None:
        """Close every thread's reader connection."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()


@traced("_upsert", "_delete", "_drop", "_get", "_count", "_namespaces", "_query")
class DBVectorStore(VectorStore):
    """Embeddings as rows of the ``StoredVector`` model, searched by an exact scan."""

    adapter_name = "db"

    def __init__(
        self,
        database: Database,
        *,
        dimension: int = 1536,
        instance: str = "default",
        clock: Callable[[], float] = time.time,
        index: str = "hnsw",
        index_metric: str = "cosine",
        ef_search: int = 200,
        probes: int = 10,
        index_build_memory: int = 0,
    ) -> None:
        """Use ``database`` (a :class:`~toolkit_batteries.db.Database`) whose table exists."""
        super().__init__(dimension=dimension, instance=instance)
        self.database = database
        self.clock = clock
        #: The approximate index (pgvector): hnsw, ivfflat or none, and what it serves.
        self.index = index or "hnsw"
        self.index_metric = index_metric or "cosine"
        self.ef_search = ef_search
        self.probes = probes
        #: MiB of ``maintenance_work_mem`` for ``create_index()`` (0: the server's own).
        self.index_build_memory = index_build_memory
        with self._guarded("read the table's column type"):
            #: pgvector, sqlarray, sqlite-vec or python (see the module docstring).
            self.kind = search_kind(database)
        self._reader: SqliteVecReader | None = None
        self._index: Any = None
        if self.kind == "sqlite-vec":
            self._reader = SqliteVecReader(str(database.django_connection.settings_dict["NAME"]))
            if importlib.util.find_spec("numpy"):
                from ._memindex import MemoryIndex

                self._index = MemoryIndex(
                    self._reader.connection, store=instance, dimension=self.dimension
                )

    @classmethod
    def open(cls, ctx: OpenContext) -> DBVectorStore:
        """Reach the database (borrowed or by ``dsn``); refuse it without the table."""
        from toolkit_batteries.db import database_for, require_tables

        database = database_for(ctx)
        require_tables(database, *_models(), service=ctx.service, instance=ctx.instance)
        options = ctx.options
        return cls(
            database,
            dimension=options.dimension,
            instance=ctx.instance,
            index=options.index,
            index_metric=options.index_metric,
            ef_search=options.ef_search,
            probes=options.probes,
            index_build_memory=options.index_build_memory,
        )

    @contextmanager
    def _guarded(self, doing: str) -> Iterator[None]:
        """Turn "cannot use the database now" into ServiceUnavailableError."""
        with self.database.unavailable(self.service_name, self.instance, doing):
            yield

    @property
    def _postgres(self) -> bool:
        return self.kind in ("pgvector", "sqlarray")

    def _write(
        self, namespace: str, doing: str, action: Callable[[int], int], *, purge: bool = False
    ) -> int:
        """Run ``action(version)`` in one transaction with the namespace's counters.

        On SQLite the namespace's version is bumped first (and ``purged`` too for a
        delete) and ``action`` stamps its rows with the new version; PostgreSQL passes 0.
        """
        from django.db import transaction

        with self._guarded(doing), transaction.atomic(using=self.database.alias):
            version = 0
            if not self._postgres:
                self.database.execute(_PURGE if purge else _BUMP, (self.instance, namespace))
                version = int(self.database.fetch_value(_CURRENT, (self.instance, namespace)))
            return action(version)

    # ------------------------------------------------------------------ writes

    def _stored(self, vector: tuple[float, ...]) -> Any:
        if self.kind == "pgvector":
            return "[" + ",".join(map(repr, vector)) + "]"
        if self.kind == "sqlarray":
            return list(vector)
        return pack(vector)

    def _upsert(self, namespace: str, records: list[Record]) -> None:
        embedding = _CAST.get(self.kind, "%s")
        metadata = "%s::jsonb" if self._postgres else "%s"
        sql = (
            f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES "
            f"(%s, %s, %s, %s, %s, {embedding}, {metadata}, %s, %s) {_UPDATE}"
        )
        now = self.clock()
        rows = [
            (
                self.instance,
                namespace,
                record.id,
                self.dimension,
                norm(record.vector),
                self._stored(record.vector),
                json.dumps(record.metadata, sort_keys=True),
                now,
            )
            for record in records
        ]

        def write(version: int) -> int:
            return self.database.execute_many(sql, [(*row, version) for row in rows])

        self._write(namespace, "write vectors", write)

    def _delete(self, namespace: str, ids: list[str]) -> int:
        marks = ", ".join(["%s"] * len(ids))
        sql = f"DELETE FROM {TABLE} WHERE store = %s AND namespace = %s AND record_id IN ({marks})"
        params = (self.instance, namespace, *ids)
        return self._write(
            namespace, "delete vectors", lambda _: self.database.execute(sql, params), purge=True
        )

    def _drop(self, namespace: str) -> int:
        sql = f"DELETE FROM {TABLE} WHERE store = %s AND namespace = %s"
        params = (self.instance, namespace)
        return self._write(
            namespace,
            "delete a namespace",
            lambda _: self.database.execute(sql, params),
            purge=True,
        )

    # ------------------------------------------------------------------ reads

    def _get(self, namespace: str, ids: list[str]) -> list[Record]:
        marks = ", ".join(["%s"] * len(ids))
        sql = (
            f"SELECT record_id, embedding, metadata FROM {TABLE} WHERE store = %s "
            f"AND namespace = %s AND dimension = %s AND record_id IN ({marks})"
        )
        with self._guarded("read vectors"):
            rows = self.database.fetch_all(sql, (self.instance, namespace, self.dimension, *ids))
        return [Record(key, to_floats(value) or (), _json(meta)) for key, value, meta in rows]

    def _count(self, namespace: str) -> int:
        sql = f"SELECT count(*) FROM {TABLE} WHERE store = %s AND namespace = %s"
        with self._guarded("count vectors"):
            return int(self.database.fetch_value(sql, (self.instance, namespace)) or 0)

    def _namespaces(self) -> list[str]:
        sql = f"SELECT DISTINCT namespace FROM {TABLE} WHERE store = %s"
        with self._guarded("list namespaces"):
            return [row[0] for row in self.database.fetch_all(sql, (self.instance,))]

    # ------------------------------------------------------------------ approximate index

    @property
    def index_name(self) -> str:
        """Return the name of the approximate index of this dimension, kind and metric."""
        return f"toolkit_vec_{self.index}_{self.index_metric}_{self.dimension}"

    def create_index(self) -> str:
        """Build the approximate index (pgvector) this store's queries use; return its name.

        A partial expression index over the rows of this ``dimension`` (the column has no
        fixed dimension, the index needs one): ``CREATE INDEX IF NOT EXISTS ... USING hnsw
        ((embedding::vector(N)) vector_cosine_ops) WHERE dimension = N``, shared by every
        store of that dimension. HNSW (``m`` 16, ``ef_construction`` 64) can be built on
        an empty table and follows later writes; IVFFlat learns its ``lists`` (rows / 1000,
        at least 1) from the rows present, so build it after loading. It is DDL, run on
        request (never at open); it blocks writes to the table while it builds.

        An HNSW build is fast only while its graph fits in ``maintenance_work_mem``
        (PostgreSQL's default is 64 MB; 200,000 x 384 needs about 400 MB): past it
        pgvector writes the rest element by element, several times slower. The
        ``index_build_memory`` option (MiB) raises it with ``SET LOCAL`` for this build
        only, in the build's own transaction; 0 leaves the server's setting.
        """
        if self.kind != "pgvector":
            raise VectorStoreError(
                self.instance,
                "index",
                f"an approximate index needs PostgreSQL with pgvector (this store is {self.kind})",
            )
        if self.index == "none":
            raise VectorStoreError(self.instance, "index", 'is "none": no index to create')
        dimension = int(self.dimension)
        ops = _OPCLASS[self.index_metric]
        if self.index == "hnsw":
            method = "hnsw"
            params = "m = 16, ef_construction = 64"
        else:
            method = "ivfflat"
            count_sql = f"SELECT count(*) FROM {TABLE} WHERE dimension = {dimension}"
            with self._guarded("count vectors"):
                rows = int(self.database.fetch_value(count_sql) or 0)
            params = f"lists = {max(1, rows // 1000)}"
        sql = (
            f"CREATE INDEX IF NOT EXISTS {self.index_name} ON {TABLE} USING {method} "
            f"((embedding::vector({dimension})) {ops}) WITH ({params}) "
            f"WHERE dimension = {dimension}"
        )
        from django.db import transaction

        with (
            self._guarded("create the vector index"),
            transaction.atomic(using=self.database.alias),
        ):
            if self.index_build_memory:
                memory = int(self.index_build_memory)
                self.database.execute(f"SET LOCAL maintenance_work_mem = '{memory}MB'")
            self.database.execute(sql)
        with self._guarded("analyze the vectors table"):
            # Fresh statistics once the index is committed, so the planner weighs it
            # against the (store, namespace) b-tree with real row counts.
            self.database.execute(f"ANALYZE {TABLE}")
        return self.index_name

    def _query_tuned(self, query: Query, tuning: QueryTuning) -> list[Match]:
        """Query through the approximate index when it serves this query, else exactly."""
        if (
            self.kind != "pgvector"
            or tuning.exact
            or self.index == "none"
            or query.metric != self.index_metric
        ):
            return self._query(query)
        return self._query_approximate(query, tuning)

    def _query_approximate(self, query: Query, tuning: QueryTuning) -> list[Match]:
        """Order by the index's own expression, with its knobs ``SET LOCAL`` for this query.

        The inner query's ``ORDER BY`` is the indexed expression (so the planner can walk
        the index); iterative scans (pgvector 0.8) keep walking until ``k`` rows pass the
        store, namespace and metadata filters. The outer query restores the exact
        contract: ties by id, a zero vector's cosine distance is 1.
        """
        namespace, vector, k, metric, filter = query
        dimension = int(self.dimension)
        cast = f"::vector({dimension})"
        operator = _OPERATOR[metric]
        where = f"dimension = {dimension} AND store = %s AND namespace = %s"
        params: list[Any] = [self._stored(vector), self.instance, namespace]
        if filter:
            where += " AND metadata @> %s::jsonb"
            params.append(json.dumps(filter))
        zero = "a.distance"
        if metric == "cosine":
            zero = "CASE WHEN a.norm = 0 THEN 1.0 ELSE a.distance END"
        sql = (
            f"SELECT a.record_id, {zero} AS found, a.metadata FROM ("
            f"SELECT record_id, norm, metadata, "
            f"(embedding{cast}) {operator} (%s{cast}) AS distance FROM {TABLE} "
            f"WHERE {where} ORDER BY distance LIMIT %s) a ORDER BY found, a.record_id"
        )
        params.append(k)
        if self.index == "hnsw":
            knob, value = "hnsw.ef_search", int(tuning.ef_search or self.ef_search)
        else:
            knob, value = "ivfflat.probes", int(tuning.probes or self.probes)
        family = knob.partition(".")[0]
        # ``SET LOCAL`` for this query alone: one round trip outside a transaction
        # (``Database.fetch_all_with_settings``), four with BEGIN/COMMIT (issue 27).
        tuned = {knob: str(value), f"{family}.iterative_scan": "relaxed_order"}
        with self._guarded("search vectors"):
            rows = self.database.fetch_all_with_settings(tuned, sql, params)
        return [Match(key, float(found), _json(meta)) for key, found, meta in rows]

    # ------------------------------------------------------------------ exact search

    def _query(self, query: Query) -> list[Match]:
        if self._postgres:
            return self._query_postgres(query)
        if self._reader is not None and not self.database.django_connection.in_atomic_block:
            return self._query_sqlite_vec(query)
        return self._query_python(query)

    def _query_postgres(self, query: Query) -> list[Match]:
        namespace, vector, k, metric, filter = query
        expression = _PG_DISTANCE[self.kind][metric].format(q="%s", n="%s")
        params: list[Any] = [self._stored(vector)]
        if "{n}" in _PG_DISTANCE[self.kind][metric]:
            params.append(norm(vector))
        where = "store = %s AND namespace = %s AND dimension = %s"
        params += [self.instance, namespace, self.dimension]
        if filter:
            where += " AND metadata @> %s::jsonb"
            params.append(json.dumps(filter))
        sql = (
            f"SELECT record_id, {expression} AS distance, metadata FROM {TABLE} "
            f"WHERE {where} ORDER BY distance, record_id LIMIT %s"
        )
        params.append(k)
        with self._guarded("search vectors"):
            rows = self.database.fetch_all(sql, params)
        return [Match(key, float(found), _json(meta)) for key, found, meta in rows]

    def _query_sqlite_vec(self, query: Query) -> list[Match]:
        assert self._reader is not None
        import sqlean

        try:
            if self._index is not None:
                found = self._index.search(query)
                if found is not None:
                    return found
            return self._scan_sqlite_vec(query)
        except sqlean.Error as exc:  # locked past the timeout, file gone, disk error
            raise ServiceUnavailableError(
                self.service_name,
                f"cannot search vectors ({type(exc).__name__})",
                instance=self.instance,
            ) from None

    def _scan_sqlite_vec(self, query: Query) -> list[Match]:
        namespace, vector, k, metric, filter = query
        assert self._reader is not None
        params: list[Any] = [pack(vector)]
        if metric == "ip":
            params.append(norm(vector))
        where = "store = ? AND namespace = ? AND dimension = ?"
        params += [self.instance, namespace, self.dimension]
        for key, value in filter.items():
            where += " AND json_extract(metadata, ?) = ?"
            params += [f'$."{key}"', value]
        sql = (
            f"SELECT record_id, {_SQLITE_VEC_DISTANCE[metric]} AS distance, metadata "
            f"FROM {TABLE} WHERE {where} ORDER BY distance, record_id LIMIT ?"
        )
        params.append(k)
        rows = self._reader.fetch_all(sql, params)
        return [Match(key, float(found), _json(meta)) for key, found, meta in rows]

    def _query_python(self, query: Query) -> list[Match]:
        namespace, vector, k, metric, filter = query
        where = "store = %s AND namespace = %s AND dimension = %s"
        params: list[Any] = [self.instance, namespace, self.dimension]
        for key, value in filter.items():
            where += " AND json_extract(metadata, %s) = %s"
            params += [f'$."{key}"', value]
        sql = f"SELECT record_id, embedding, metadata FROM {TABLE} WHERE {where}"
        with self._guarded("search vectors"):
            rows = self.database.fetch_all(sql, params)
        scored = (
            (distance(to_floats(value) or (), vector, metric), key, meta)
            for key, value, meta in rows
        )
        best = heapq.nsmallest(k, scored, key=lambda row: (row[0], row[1]))
        return [Match(key, found, _json(meta)) for found, key, meta in best]

    # ------------------------------------------------------------------ lifetime

    def ping(self) -> None:
        """Round-trip to the database; raise ServiceUnavailableError when it is down."""
        with self._guarded("reach the database"):
            self.database.fetch_value("SELECT 1")

    def close(self) -> None:
        """Close the reader connections; the database connection is Django's."""
        if self._index is not None:
            self._index.clear()
        if self._reader is not None:
            self._reader.close()
        self.database = ClosedResource(self.service_name, self.instance)  # type: ignore[assignment]

    def __repr__(self) -> str:
        closed = isinstance(self.database, ClosedResource)
        alias = "(closed)" if closed else self.database.alias
        return f"<{type(self).__name__} vectorstore.{self.instance} {self.kind} alias {alias}>"


def _json(value: Any) -> dict[str, Any]:
    """Return stored metadata (JSON text or an already decoded object) as a dict."""
    if value is None:
        return {}
    if isinstance(value, str | bytes):
        return json.loads(value)
    return dict(value)
