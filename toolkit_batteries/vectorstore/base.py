"""The vectorstore interface: embeddings by id, searched by cosine, L2 or inner product.

Every adapter stores ``(id, vector, metadata)`` records in named namespaces and answers
top-k queries. What must not differ between adapters lives here, once:

* **validation before anything is written**: a batch is checked whole (ids, vectors,
  metadata, size) before the adapter sees it, and each adapter writes a batch atomically,
  so a bad item never leaves half a batch behind;
* **the ``dimension``** (the ``dimension`` option, 1536 by default) is enforced on every
  write and every query, with an error naming the service, instance and field;
* **distances**, where lower is closer on every metric: ``cosine`` is ``1 - cos``,
  ``l2`` the Euclidean distance, ``ip`` the negated inner product (pgvector's ``<#>``).
  A zero vector has no direction, so its cosine distance to anything is ``1.0``; a zero
  *query* vector is refused for ``cosine``.

Errors never carry a vector, a metadata value or an id: callers' data may be private.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "MAX_BATCH",
    "MAX_K",
    "METRICS",
    "DimensionMismatchError",
    "InvalidVectorError",
    "Match",
    "Record",
    "VectorStore",
    "VectorStoreError",
]

#: The distance names a query accepts.
METRICS = ("cosine", "l2", "ip")
#: Most records one upsert, get or delete takes (a bigger batch is refused whole).
MAX_BATCH = 1000
#: Most neighbours one query returns.
MAX_K = 1000
#: Longest id, in characters (the id column).
MAX_ID_LENGTH = 255
#: Largest metadata object of one record, JSON-encoded, in bytes.
MAX_METADATA_BYTES = 65536
#: Largest dimension accepted (pgvector's limit for a stored vector).
MAX_DIMENSION = 16000
#: Namespace names: safe as a collection name on every backend.
_NAMESPACE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Metadata keys a filter may name: safe inside a JSON path on every backend.
_FILTER_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Metadata values a filter compares with (equality).
FilterValue = str | int | float | bool


class VectorStoreError(ToolkitError, ValueError):
    """A call's arguments were refused; nothing was written.

    The message names the service, the instance and the argument, never its value.
    """

    code = "invalid_vector_input"

    def __init__(self, instance: str, argument: str, reason: str) -> None:
        self.service = "vectorstore"
        self.instance = instance
        self.argument = argument
        self.reason = reason
        super().__init__(f'vectorstore.{instance}: "{argument}" {reason}')


class DimensionMismatchError(VectorStoreError):
    """A vector's length is not the store's ``dimension`` option."""

    code = "dimension_mismatch"

    def __init__(self, instance: str, argument: str, got: int, expected: int) -> None:
        self.got = got
        self.expected = expected
        super().__init__(
            instance,
            argument,
            f'has {got} dimensions; the store\'s "dimension" option is {expected}',
        )


class InvalidVectorError(VectorStoreError):
    """A vector holds a value that is not a finite number (NaN, infinity, a string)."""

    code = "invalid_vector"


@dataclass(frozen=True, slots=True)
class Record:
    """One stored embedding: its id, its values and its metadata."""

    id: str
    vector: tuple[float, ...]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Match:
    """One query answer: lower ``distance`` is closer (see the module docstring)."""

    id: str
    distance: float
    metadata: dict[str, Any] = field(default_factory=dict)


#: What upsert takes per item: a Record, or an ``(id, vector[, metadata])`` tuple.
Item = Record | tuple[str, Sequence[float]] | tuple[str, Sequence[float], Mapping[str, Any]]


class VectorStore(Service):
    """Embedding storage and similarity search (the ``vectorstore`` service).

    Adapters implement the primitives ``_upsert``, ``_delete``, ``_get``, ``_query``,
    ``_count``, ``_namespaces`` and ``_drop``; arguments reach them validated.
    """

    service_name: ClassVar[str] = "vectorstore"

    def __init__(self, *, dimension: int = 1536, instance: str = "default") -> None:
        self.instance = instance
        self.dimension = int(dimension)
        if not 0 < self.dimension <= MAX_DIMENSION:
            from toolkit_batteries.core.errors import InvalidOptionsError

            raise InvalidOptionsError(
                "vectorstore",
                "dimension",
                f"must be between 1 and {MAX_DIMENSION}",
                instance=instance,
            )

    # ------------------------------------------------------------------ operations

    def upsert(self, items: Iterable[Item], *, namespace: str = "default") -> int:
        """Insert or replace records by id, all or none; return how many were written.

        A batch is 1 to :data:`MAX_BATCH` items with distinct ids; every vector has the
        store's ``dimension`` and finite values; metadata is a JSON object. One bad item
        refuses the whole batch before anything is written.
        """
        ns = self._namespace(namespace)
        records = [self._record(item, index) for index, item in enumerate(_listed(items))]
        self._batch(len(records), "items")
        seen: set[str] = set()
        for index, record in enumerate(records):
            if record.id in seen:
                raise VectorStoreError(self.instance, f"items[{index}].id", "repeats an earlier id")
            seen.add(record.id)
        self._upsert(ns, records)
        return len(records)

    def delete(self, ids: Iterable[str], *, namespace: str = "default") -> int:
        """Delete records by id; return how many existed."""
        ns = self._namespace(namespace)
        keys = self._ids(ids)
        return self._delete(ns, keys)

    def get(self, ids: Iterable[str], *, namespace: str = "default") -> list[Record]:
        """Return the stored records among ``ids``, in the order asked (missing ones left out)."""
        ns = self._namespace(namespace)
        keys = self._ids(ids)
        found = {record.id: record for record in self._get(ns, keys)}
        return [found[key] for key in dict.fromkeys(keys) if key in found]

    def query(
        self,
        vector: Sequence[float],
        *,
        k: int = 10,
        metric: str = "cosine",
        filter: Mapping[str, FilterValue] | None = None,
        namespace: str = "default",
        exact: bool = False,
        ef_search: int | None = None,
        probes: int | None = None,
    ) -> list[Match]:
        """Return the ``k`` records closest to ``vector``, closest first.

        ``filter`` keeps records whose metadata has each key equal to the given value
        (strings, numbers, booleans). Ties are broken by id, so answers are stable.
        Where an approximate index serves the query (pgvector HNSW or IVFFlat, see
        ``create_index``), ``ef_search`` / ``probes`` trade speed for recall for this
        query only and ``exact=True`` scans every vector instead; adapters without an
        approximate index answer exactly and ignore them.
        """
        ns = self._namespace(namespace)
        for name, value, top in (("ef_search", ef_search, 1000), ("probes", probes, 32768)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top
            ):
                raise VectorStoreError(self.instance, name, f"must be an integer from 1 to {top}")
        if not isinstance(exact, bool):
            raise VectorStoreError(self.instance, "exact", "must be true or false")
        tuning = QueryTuning(exact=exact, ef_search=ef_search, probes=probes)
        if metric not in METRICS:
            raise VectorStoreError(self.instance, "metric", f"must be one of {', '.join(METRICS)}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise VectorStoreError(self.instance, "k", f"must be an integer from 1 to {MAX_K}")
        values = self._vector(vector, "vector")
        if metric == "cosine" and not any(values):
            raise InvalidVectorError(
                self.instance, "vector", "is all zeros, which has no cosine distance"
            )
        return self._query_tuned(Query(ns, values, k, metric, self._filter(filter)), tuning)

    def count(self, *, namespace: str = "default") -> int:
        """Return how many records ``namespace`` holds."""
        return self._count(self._namespace(namespace))

    def namespaces(self) -> list[str]:
        """Return the namespaces that hold at least one record, sorted."""
        return sorted(self._namespaces())

    def drop_namespace(self, namespace: str) -> int:
        """Delete every record of ``namespace``; return how many there were."""
        return self._drop(self._namespace(namespace))

    # ------------------------------------------------------------------ checks

    def _namespace(self, namespace: Any) -> str:
        if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
            raise VectorStoreError(
                self.instance, "namespace", "must be 1-64 letters, digits, '_' or '-'"
            )
        return namespace

    def _batch(self, size: int, argument: str) -> None:
        if size == 0:
            raise VectorStoreError(self.instance, argument, "is empty")
        if size > MAX_BATCH:
            raise VectorStoreError(
                self.instance, argument, f"holds {size} items; the limit is {MAX_BATCH} per call"
            )

    def _ids(self, ids: Iterable[str]) -> list[str]:
        if isinstance(ids, str):
            raise VectorStoreError(self.instance, "ids", "must be a list of ids, not one string")
        keys = _listed(ids)
        self._batch(len(keys), "ids")
        for index, key in enumerate(keys):
            self._id(key, f"ids[{index}]")
        return keys

    def _id(self, key: Any, argument: str) -> str:
        if not isinstance(key, str) or not key or len(key) > MAX_ID_LENGTH:
            raise VectorStoreError(
                self.instance, argument, f"must be a non-empty string of at most {MAX_ID_LENGTH}"
            )
        return key

    def _vector(self, vector: Any, argument: str) -> tuple[float, ...]:
        """Return ``vector`` as floats, refusing what float32 storage cannot hold."""
        if isinstance(vector, str | bytes | Mapping) or not hasattr(vector, "__len__"):
            raise InvalidVectorError(self.instance, argument, "must be a sequence of numbers")
        if len(vector) != self.dimension:
            raise DimensionMismatchError(self.instance, argument, len(vector), self.dimension)
        try:
            values = tuple(map(float, vector))
        except (TypeError, ValueError):
            raise InvalidVectorError(self.instance, argument, "must hold numbers only") from None
        # The common case in C calls (a query of 384 floats spent ~0.1 ms in per-value
        # generators): plain floats whose sum is finite hold no NaN or infinity, and with
        # none, min and max bound every value. Anything else takes the checks below.
        plain = set(map(type, vector)) <= _PLAIN_NUMBERS and math.isfinite(sum(values))
        if plain and min(values) >= -FLOAT32_MAX and max(values) <= FLOAT32_MAX:
            return values
        if any(isinstance(value, str | bytes | bool) for value in vector):
            raise InvalidVectorError(self.instance, argument, "must hold numbers only")
        if not all(math.isfinite(value) for value in values):
            raise InvalidVectorError(self.instance, argument, "holds NaN or infinity")
        if any(abs(value) > FLOAT32_MAX for value in values):
            # Stored and searched as float32: a larger value becomes infinity there.
            raise InvalidVectorError(
                self.instance, argument, "holds a value outside the float32 range (about 3.4e38)"
            )
        return values

    def _record(self, item: Any, index: int) -> Record:
        where = f"items[{index}]"
        if isinstance(item, Record):
            key, vector, metadata = item.id, item.vector, item.metadata
        elif isinstance(item, tuple) and len(item) in (2, 3):
            key, vector = item[0], item[1]
            metadata = item[2] if len(item) == 3 else {}
        else:
            raise VectorStoreError(
                self.instance, where, "must be a Record or an (id, vector[, metadata]) tuple"
            )
        self._id(key, f"{where}.id")
        values = self._vector(vector, f"{where}.vector")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, Mapping):
            raise VectorStoreError(self.instance, f"{where}.metadata", "must be a JSON object")
        try:
            encoded = json.dumps(dict(metadata), allow_nan=False, sort_keys=True)
        except (TypeError, ValueError):
            raise VectorStoreError(
                self.instance, f"{where}.metadata", "must be JSON-serialisable (no NaN)"
            ) from None
        if len(encoded.encode()) > MAX_METADATA_BYTES:
            raise VectorStoreError(
                self.instance, f"{where}.metadata", f"is over {MAX_METADATA_BYTES} bytes as JSON"
            )
        return Record(key, values, json.loads(encoded))

    def _filter(self, filter: Mapping[str, Any] | None) -> dict[str, FilterValue]:
        if filter is None:
            return {}
        if not isinstance(filter, Mapping):
            raise VectorStoreError(self.instance, "filter", "must be a mapping of key to value")
        checked: dict[str, FilterValue] = {}
        for key, value in filter.items():
            if not isinstance(key, str) or not _FILTER_KEY.match(key):
                raise VectorStoreError(
                    self.instance, "filter", "keys must be 1-64 letters, digits, '_' or '-'"
                )
            if not isinstance(value, str | int | float) or (
                isinstance(value, float) and not math.isfinite(value)
            ):
                raise VectorStoreError(
                    self.instance,
                    f"filter.{key}",
                    "must be a string, a finite number or a boolean",
                )
            checked[key] = value
        return checked

    # ------------------------------------------------------------------ primitives

    def _upsert(self, namespace: str, records: list[Record]) -> None:
        raise NotImplementedError

    def _delete(self, namespace: str, ids: list[str]) -> int:
        raise NotImplementedError

    def _get(self, namespace: str, ids: list[str]) -> list[Record]:
        raise NotImplementedError

    def _query_tuned(self, query: Query, tuning: QueryTuning) -> list[Match]:
        """Run ``_query`` with ``tuning``; adapters without an approximate index ignore it."""
        return self._query(query)

    def _query(self, query: Query) -> list[Match]:
        raise NotImplementedError

    def _count(self, namespace: str) -> int:
        raise NotImplementedError

    def _namespaces(self) -> list[str]:
        raise NotImplementedError

    def _drop(self, namespace: str) -> int:
        raise NotImplementedError


class Query(NamedTuple):
    """One checked search as the adapter primitives receive it.

    The five parts travel together through every layer (``query`` -> ``_query_tuned`` ->
    an adapter's exact or approximate path), so they are one value instead of the same
    five parameters on each; a tuple, so a path that needs them all unpacks it in a line.
    """

    namespace: str
    vector: tuple[float, ...]
    k: int
    metric: str
    filter: dict[str, FilterValue]


@dataclass(frozen=True)
class QueryTuning:
    """Per-query knobs of an approximate index (checked by ``query``)."""

    exact: bool = False
    ef_search: int | None = None
    probes: int | None = None


#: The largest finite float32: every adapter stores and searches vectors as float32.
FLOAT32_MAX = 3.4028234663852886e38
#: Element types :meth:`VectorStore._vector` checks in one pass (bool is refused).
_PLAIN_NUMBERS = frozenset({float, int})


def _listed(items: Iterable[Any]) -> list[Any]:
    """Return ``items`` as a list (a generator is read once)."""
    return items if isinstance(items, list) else list(items)


def norm(vector: Sequence[float]) -> float:
    """Return the Euclidean length of ``vector``."""
    return math.sqrt(math.fsum(value * value for value in vector))


def distance(stored: Sequence[float], query: Sequence[float], metric: str) -> float:
    """Return the exact distance of ``stored`` from ``query`` (the reference scan)."""
    if metric == "l2":
        return math.sqrt(math.fsum((a - b) * (a - b) for a, b in zip(stored, query, strict=True)))
    dot = math.fsum(a * b for a, b in zip(stored, query, strict=True))
    if metric == "ip":
        return -dot
    lengths = norm(stored) * norm(query)
    return 1.0 if lengths == 0 else 1.0 - dot / lengths
