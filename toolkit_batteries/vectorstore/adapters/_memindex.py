"""An exact in-memory copy of SQLite namespaces, searched with numpy.

Why: a scan that calls ``sqlite-vec``'s distance function once per row of a Django model
table runs at about half the speed of sqlite-vec's own ``vec0`` table (SQLite's
per-row work dominates), and a ``vec0`` table cannot be a Django model: it needs the
extension on Django's connection and a dimension fixed in the schema. So the reader
keeps each namespace it searches as one float32 matrix and answers with a matrix-vector
product: exact, like the scan, and faster than ``vec0``.

The copy is never stale: every write to a SQLite namespace bumps its ``version`` in
``toolkit_vectorstore_namespace`` in the same transaction and stamps the rows it writes
with it; a delete also bumps ``purged``. A search first reads those counters (one indexed
lookup, in the same read transaction as any refresh): an unchanged version answers from
the copy, a newer one fetches only the rows stamped after the copy's version, a moved
``purged`` loads the namespace again.

Memory: a copy is one float32 matrix, allocated at its final size and filled block by
block (:data:`BLOCK_ROWS`) from the cursor, never next to a list of every row's BLOB, so
loading a namespace holds its vectors once. A refresh after writes builds the new
matrix while searches may still read the old one: both are held until the old is
dropped. A namespace whose matrix would pass :data:`MAX_BYTES` is not copied: it is
searched by the SQL scan (``sqlite-vec``'s distance functions, every row read per
query, nothing held; measured faster than decoding the rows into numpy in blocks,
since only the top ``k`` rows come back to Python).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import Match, Query

__all__ = ["BLOCK_ROWS", "MAX_BYTES", "MemoryIndex"]

#: Most bytes of vectors one store keeps in memory (the least recently searched
#: namespaces are dropped first; a bigger namespace is searched in SQL).
MAX_BYTES = 256 * 1024 * 1024
#: Rows read per block when loading a copy (their BLOBs are the only transient copy).
BLOCK_ROWS = 4096
#: Extra candidates re-ranked exactly for ``l2`` (the fast form loses a little precision).
_L2_SLACK = 16

_VERSION = (
    "SELECT version, purged FROM toolkit_vectorstore_namespace WHERE store = ? AND namespace = ?"
)
_COUNT = (
    "SELECT count(*) FROM toolkit_vectorstore_vector "
    "WHERE store = ? AND namespace = ? AND dimension = ?"
)
_ROWS = (
    "SELECT record_id, embedding, metadata FROM toolkit_vectorstore_vector "
    "WHERE store = ? AND namespace = ? AND dimension = ? ORDER BY record_id"
)
_NEWER = (
    "SELECT record_id, embedding, metadata FROM toolkit_vectorstore_vector "
    "WHERE store = ? AND namespace = ? AND dimension = ? AND version > ?"
)


@dataclass(frozen=True)
class _Copy:
    """One namespace as arrays: ids, vectors (n x d float32), norms, metadata."""

    version: int
    purged: int
    positions: dict[str, int]
    ids: list[str]
    matrix: Any
    norms: Any
    squares: Any
    metadata: list[dict[str, Any]]

    @property
    def size(self) -> int:
        return int(self.matrix.nbytes)


class MemoryIndex:
    """The in-memory copies of one store's namespaces, over a read connection factory."""

    def __init__(self, connection: Any, *, store: str, dimension: int) -> None:
        """Search through ``connection()``, which returns this thread's sqlean connection."""
        self._connection = connection
        self.store = store
        self.dimension = dimension
        self._copies: OrderedDict[str, _Copy] = OrderedDict()
        self._lock = threading.Lock()

    def search(self, query: Query) -> list[Match] | None:
        """Return the exact top ``k``, or ``None`` when the namespace is too big to copy."""
        copy = self._current(query.namespace)
        if copy is None:
            return None
        return _search(copy, query)

    def _current(self, namespace: str) -> _Copy | None:
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            row = conn.execute(_VERSION, (self.store, namespace)).fetchone()
            version, purged = (int(row[0]), int(row[1])) if row else (0, 0)
            with self._lock:
                copy = self._copies.get(namespace)
                if copy is not None and copy.version == version:
                    self._copies.move_to_end(namespace)
                    return copy
            params = (self.store, namespace, self.dimension)
            (count,) = conn.execute(_COUNT, params).fetchone()
            if count * self.dimension * 4 > MAX_BYTES:
                return None
            if copy is not None and copy.purged == purged:
                newer = conn.execute(_NEWER, (*params, copy.version)).fetchall()
                copy = _merge(copy, version, newer, self.dimension)
            else:
                copy = _load(version, purged, conn.execute(_ROWS, params), count, self.dimension)
        finally:
            conn.rollback()
        with self._lock:
            self._copies[namespace] = copy
            self._copies.move_to_end(namespace)
            while sum(c.size for c in self._copies.values()) > MAX_BYTES and len(self._copies) > 1:
                self._copies.popitem(last=False)
        return copy

    def clear(self) -> None:
        """Forget every copy."""
        with self._lock:
            self._copies.clear()


def _fill(buffer: Any, rows: list[tuple[Any, ...]]) -> None:
    """Decode the BLOBs of ``rows[i][1]`` into ``buffer``'s first rows (one block)."""
    block = buffer[: len(rows)]
    block.reshape(-1)[:] = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4")


def _load(version: int, purged: int, cursor: Any, count: int, dimension: int) -> _Copy:
    """Return a copy of every row ``cursor`` yields (``count`` of them, in one read).

    The matrix is allocated once at its final size and filled block by block, so the
    vectors are held once (plus one block's BLOBs while it is decoded).
    """
    matrix = np.empty((count, dimension), dtype=np.float32)
    ids: list[str] = []
    metadata: list[dict[str, Any]] = []
    while rows := cursor.fetchmany(BLOCK_ROWS):
        _fill(matrix[len(ids) :], rows)
        ids += [row[0] for row in rows]
        metadata += [json.loads(row[2]) if row[2] else {} for row in rows]
    return _build(version, purged, ids, matrix[: len(ids)], metadata)


def _merge(copy: _Copy, version: int, rows: list[tuple[Any, ...]], dimension: int) -> _Copy:
    """Return a new copy: ``copy`` with the rows written since its version put in.

    One new matrix at the final size (the old copy may be in use by another thread, so
    it is not changed): the old and the new copy are both held until the old is dropped.
    """
    positions = dict(copy.positions)
    ids, metadata = list(copy.ids), list(copy.metadata)
    added = [row for row in rows if row[0] not in positions]
    matrix = np.empty((len(ids) + len(added), dimension), dtype=np.float32)
    matrix[: len(ids)] = copy.matrix
    for record_id, blob, meta in rows:
        decoded = json.loads(meta) if meta else {}
        if record_id not in positions:
            positions[record_id] = len(ids)
            ids.append(record_id)
            metadata.append(decoded)
        matrix[positions[record_id]] = np.frombuffer(blob, dtype="<f4")
        metadata[positions[record_id]] = decoded
    return _build(version, copy.purged, ids, matrix, metadata, positions)


def _build(
    version: int,
    purged: int,
    ids: list[str],
    matrix: Any,
    metadata: list[dict[str, Any]],
    positions: dict[str, int] | None = None,
) -> _Copy:
    squares = np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)
    if positions is None:
        positions = {record_id: index for index, record_id in enumerate(ids)}
    return _Copy(version, purged, positions, ids, matrix, np.sqrt(squares), squares, metadata)


def _search(copy: _Copy, search: Query) -> list[Match]:
    """Return the exact top ``k`` among the rows ``filter`` keeps.

    The filter is a mask applied before any distance is computed: a row it excludes is
    never a candidate, whatever the distances come to (never a sentinel distance, which
    an overflowing query could reach for the kept rows too).
    """
    _namespace, vector, k, metric, filter = search
    if filter:
        keep = np.fromiter(
            (
                all(meta.get(key) == value for key, value in filter.items())
                for meta in copy.metadata
            ),
            dtype=bool,
            count=len(copy.ids),
        )
        rows = np.flatnonzero(keep)
        matrix, norms, squares = copy.matrix[rows], copy.norms[rows], copy.squares[rows]
    else:
        rows = np.arange(len(copy.ids))
        matrix, norms, squares = copy.matrix, copy.norms, copy.squares
    wanted = min(k + (_L2_SLACK if metric == "l2" else 0), len(rows))
    if wanted == 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        dots = matrix @ query
        if metric == "cosine":
            length = float(np.linalg.norm(np.asarray(vector, dtype=np.float64)))
            distances = 1.0 - dots / (norms * length)
            distances[norms == 0] = 1.0
        elif metric == "ip":
            distances = -dots.astype(np.float64)
        else:
            length_sq = float(np.dot(np.asarray(vector, dtype=np.float64), vector))
            distances = np.sqrt(np.maximum(squares - 2.0 * dots + length_sq, 0.0))
    # An overflow among kept rows ranks last, never ahead of a finite distance.
    distances = np.where(np.isnan(distances), np.inf, distances)
    if wanted < len(distances):
        # Everything tied with the last candidate comes along, so ties break by id.
        bound = np.partition(distances, wanted - 1)[wanted - 1]
        local = np.flatnonzero(distances <= bound)
    else:
        local = np.arange(len(distances))
    if metric == "l2":
        exact = matrix[local].astype(np.float64) - np.asarray(vector, dtype=np.float64)
        found = np.linalg.norm(exact, axis=1)
        scores = {int(rows[i]): float(d) for i, d in zip(local, found, strict=True)}
    else:
        scores = {int(rows[i]): float(distances[i]) for i in local}
    best = sorted(scores, key=lambda i: (scores[i], copy.ids[i]))[:k]
    return [Match(copy.ids[i], scores[i], dict(copy.metadata[i])) for i in best]
