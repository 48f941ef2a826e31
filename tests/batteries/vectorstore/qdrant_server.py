"""A strict stand-in for Qdrant's REST API, on the shared provider-server base.

No Qdrant server runs on this machine (no Debian or PyPI package ships the binary), so the
``vecengine`` adapter's server mode (``url`` option, qdrant-client with ``prefer_grpc``
off) is tested against this server, which speaks the documented REST wire format of the
calls a client makes, refuses what Qdrant refuses, and records every request:

* ``GET /`` (no key needed), ``GET /collections``, ``GET|PUT|DELETE /collections/{name}``,
  ``GET /collections/{name}/exists``;
* ``PUT /collections/{name}/points`` (upsert a ``points`` list), ``POST .../points``
  (retrieve by ``ids``), ``POST .../points/delete`` (by ids or ``filter``),
  ``POST .../points/count``, ``POST .../points/query`` and the older
  ``POST .../points/search``, with payload filters (``must``/``should``/``must_not``,
  nested filters, ``match`` ``value``/``any``/``except``, numeric ``range``, ``has_id``).

Answers use Qdrant's envelope ``{"result", "status": "ok", "time"}``; refusals its error
body ``{"status": {"error": "..."}, "time"}`` with Qdrant's wording and status:

* no ``api-key`` header (nor ``Authorization: Bearer``): 401, another key: 401, each as
  Qdrant's plain-text body (its auth middleware answers before any JSON);
* a body that is not ``application/json``: 400 ``Content type error``; not JSON (``NaN``
  included): 400 ``Format error in JSON body: ...``; an unknown or missing field or a value
  of the wrong type (a float in ``match.value``, a point id that is neither an unsigned
  integer nor a UUID): 400 ``Format error in JSON body: ...``; a ``size`` or ``limit`` out
  of range: 422 ``Validation error in JSON body: ...``; a body over 32 MiB: 400;
* an unknown collection: 404 ``Not found: Collection `x` doesn't exist!``; an existing one
  created again: 409; a vector name the collection lacks or a vector of another dimension:
  400 ``Wrong input: ...``.

Semantics kept: ``Cosine`` vectors are stored normalized (as Qdrant does), values as
float32; ``Euclid`` scores are distances (ascending), ``Cosine``/``Dot`` similarities
(descending); ids come back as hyphenated UUIDs. **A write without** ``wait=true`` is
acknowledged (``"status": "acknowledged"``) and applied only when the test calls
:meth:`QdrantServer.settle`, so an adapter that reads its write back without waiting
fails. A request the stand-in does not implement (``prefetch``, sparse vectors, a
``batch`` upsert) is answered 501 naming it, never silently served.
"""

from __future__ import annotations

import json
import math
import struct
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

__all__ = ["QdrantServer"]

#: Qdrant's default ``service.max_request_size_mb`` (32), in bytes.
MAX_BODY = 32 * 1024 * 1024
DISTANCES = ("Cosine", "Euclid", "Dot", "Manhattan")
#: Paths Qdrant serves without a key (its auth middleware's whitelist).
OPEN_PATHS = ("/", "/healthz", "/readyz", "/livez")
_FORBIDDEN_NAME_CHARS = set('<>:"/\\|?*\0\x1f')

_CREATE_FIELDS = {
    "vectors", "shard_number", "sharding_method", "replication_factor",
    "write_consistency_factor", "on_disk_payload", "payload", "id_tracker", "hnsw_config",
    "wal_config", "optimizers_config", "quantization_config", "sparse_vectors",
    "strict_mode_config", "metadata",
}  # fmt: skip
_VECTOR_PARAMS = {
    "size", "distance", "hnsw_config", "quantization_config", "on_disk", "memory",
    "datatype", "multivector_config",
}  # fmt: skip
_QUERY_FIELDS = {
    "shard_key", "prefetch", "query", "using", "filter", "params", "score_threshold",
    "limit", "offset", "with_vector", "with_payload", "lookup_from",
}  # fmt: skip
_SEARCH_FIELDS = {
    "shard_key", "vector", "filter", "params", "limit", "offset", "with_payload",
    "with_vector", "score_threshold",
}  # fmt: skip
_FILTER_FIELDS = {"should", "min_should", "must", "must_not"}
_FIELD_CONDITION = {
    "key", "match", "range", "geo_bounding_box", "geo_radius", "geo_polygon",
    "values_count", "is_empty", "is_null",
}  # fmt: skip


class Refused(Exception):
    """A request Qdrant would refuse: carries the answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.answer: Answer = (status, {"status": {"error": message}, "time": 0.0})


def _format(message: str) -> Refused:
    return Refused(400, f"Format error in JSON body: {message}")


def _unimplemented(what: str) -> Refused:
    return Refused(501, f"the Qdrant stand-in does not implement {what}")


def _object(value: Any, where: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict:
    """Return ``value`` as a JSON object with only ``allowed`` keys (serde's refusals)."""
    if not isinstance(value, dict):
        raise _format(f"invalid type: expected struct at `{where}`")
    for name in value:
        if name not in allowed:
            expected = ", ".join(f"`{n}`" for n in sorted(allowed))
            raise _format(f"unknown field `{name}`, expected one of {expected}")
    for name in required:
        if name not in value:
            raise _format(f"missing field `{name}`")
    return value


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _unsigned(value: Any, where: str, *, minimum: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _format(f"invalid value at `{where}`: expected usize")
    if value < minimum:
        reason = f"{where}: value {value} invalid, must be {minimum} or larger"
        raise Refused(422, f"Validation error in JSON body: [{reason}]")
    return value


def _point_id(value: Any) -> int | str:
    """Return a point id as Qdrant keeps it (an unsigned integer or a hyphenated UUID)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        try:
            return str(uuid.UUID(value))
        except ValueError:
            pass
    raise _format(
        "value is not a valid point ID, valid values are either an unsigned integer or a UUID"
    )


def _f32(values: list[float]) -> list[float]:
    return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values)))


def _dense(value: Any, where: str) -> list[float]:
    if isinstance(value, dict):
        raise _unimplemented(f"sparse or multi vectors (`{where}`)")
    if not isinstance(value, list) or not all(_number(v) for v in value):
        raise _format(f"invalid type at `{where}`: expected a sequence of floats")
    return [float(v) for v in value]


def _normalized(vector: list[float]) -> list[float]:
    length = math.sqrt(sum(v * v for v in vector))
    return vector if length < 1e-12 else [v / length for v in vector]


def _score(distance: str, stored: list[float], query: list[float]) -> float:
    if distance == "Cosine":
        query = _normalized(query)
    if distance == "Euclid":
        return math.sqrt(sum((a - b) ** 2 for a, b in zip(stored, query, strict=True)))
    if distance == "Manhattan":
        return sum(abs(a - b) for a, b in zip(stored, query, strict=True))
    return sum(a * b for a, b in zip(stored, query, strict=True))


def _values_at(payload: dict, key: str) -> list[Any]:
    """Return the payload values at the dotted ``key`` (a list's items each count)."""
    found: list[Any] = [payload]
    for part in key.split("."):
        found = [item[part] for item in found if isinstance(item, dict) and part in item]
    flat: list[Any] = []
    for value in found:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


def _equal(stored: Any, wanted: Any) -> bool:
    """Qdrant's ``match``: a bool matches a bool, an integer an integer, a string a string."""
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return isinstance(stored, bool) and isinstance(wanted, bool) and stored == wanted
    if isinstance(wanted, int):
        return isinstance(stored, int) and stored == wanted
    return isinstance(stored, str) and stored == wanted


@dataclass
class Point:
    id: int | str
    version: int
    vectors: dict[str, list[float]]
    payload: dict[str, Any]


@dataclass
class Collection:
    name: str
    #: Vector name -> (size, distance); the unnamed vector is ``""``.
    vectors: dict[str, tuple[int, str]]
    named: bool
    points: dict[int | str, Point] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        params = {name: {"size": s, "distance": d} for name, (s, d) in self.vectors.items()}
        return {
            "status": "green",
            "optimizer_status": "ok",
            "indexed_vectors_count": 0,
            "points_count": len(self.points),
            "segments_count": 1,
            "config": {
                "params": {
                    "vectors": params if self.named else params.get("", {}),
                    "shard_number": 1,
                    "replication_factor": 1,
                    "write_consistency_factor": 1,
                    "on_disk_payload": True,
                },
                "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000},
                "optimizer_config": {"default_segment_number": 0, "flush_interval_sec": 5},
                "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0},
            },
            "payload_schema": {},
        }


class QdrantServer(ProviderServer):
    """The server, its collections, the writes not yet applied and the requests received."""

    content_types = ("application/json",)
    max_body = MAX_BODY

    def __init__(self, api_key: str) -> None:
        super().__init__(api_key)
        self.collections: dict[str, Collection] = {}
        #: Writes acknowledged without ``wait=true``, applied by :meth:`settle`.
        self.pending: list[Callable[[], None]] = []
        self.operations = 0
        self._state = threading.RLock()

    def start(self) -> QdrantServer:
        super().start()
        return self

    def settle(self) -> int:
        """Apply the writes acknowledged without ``wait=true``; return how many."""
        with self._state:
            pending, self.pending = self.pending, []
            for apply in pending:
                apply()
            return len(pending)

    # ------------------------------------------------------------------ refusals

    def authorized(self, headers: dict[str, str]) -> bool:
        key = headers.get("api-key")
        bearer = headers.get("authorization", "")
        if key is None and bearer.startswith("Bearer "):
            key = bearer[len("Bearer ") :]
        return key is None or key == self.key  # no key at all: malformed() answers 401

    def unauthorized(self) -> tuple[Any, ...]:
        return 401, b"Invalid API key or JWT", {"Content-Type": "text/plain; charset=utf-8"}

    def bad_request(self, message: str) -> Answer:
        return Refused(400, message).answer

    def too_large(self, size: int) -> Answer:
        return self.bad_request(
            f"JSON payload ({size} bytes) is larger than allowed (limit: {MAX_BODY} bytes)."
        )

    def malformed(self, request: Received) -> Any:
        if request.path not in OPEN_PATHS and not (
            "api-key" in request.headers
            or request.headers.get("authorization", "").startswith("Bearer ")
        ):
            message = b"Must provide an API key or an Authorization bearer token"
            return 401, message, {"Content-Type": "text/plain; charset=utf-8"}
        if request.method in ("PUT", "POST", "PATCH") and self._takes_body(request):
            if request.content_type != "application/json":
                return self.bad_request("Content type error")
            try:
                json.loads(request.raw or b"", parse_constant=_no_constant)
            except ValueError as exc:
                return self.bad_request(f"Format error in JSON body: {exc}")
        return None

    @staticmethod
    def _takes_body(request: Received) -> bool:
        segments = [s for s in request.path.split("/") if s]
        return len(segments) >= 2 and segments[0] == "collections"

    # ------------------------------------------------------------------ routes

    def answer(self, handler: Any, request: Received) -> None:
        try:
            with self._state:
                result = self.route(request)
        except Refused as refusal:
            return handler.send_json(*refusal.answer)
        if isinstance(result, tuple):
            return handler.send_json(*result)
        handler.send_json(200, {"result": result, "status": "ok", "time": 0.0001})

    def route(self, request: Received) -> Any:
        method, segments = request.method, [s for s in request.path.split("/") if s]
        if not segments and method == "GET":
            return 200, {"title": "qdrant - vector search engine", "version": "1.15.0"}
        if segments == ["collections"] and method == "GET":
            return {"collections": [{"name": name} for name in self.collections]}
        if len(segments) < 2 or segments[0] != "collections":
            return 404, b"", {"Content-Type": "text/plain; charset=utf-8"}
        name, rest = segments[1], segments[2:]
        if not 1 <= len(name) <= 255 or set(name) & _FORBIDDEN_NAME_CHARS:
            raise Refused(422, "Validation error in path parameters: [name: invalid]")
        body, wait = request.body, request.query.get("wait", ["false"])[-1] == "true"
        routes: dict[tuple[str, tuple[str, ...]], Callable[[], Any]] = {
            ("GET", ()): lambda: self._collection(name).info(),
            ("GET", ("exists",)): lambda: {"exists": name in self.collections},
            ("PUT", ()): lambda: self._create(name, body),
            ("DELETE", ()): lambda: self.collections.pop(name, None) is not None,
            ("PUT", ("points",)): lambda: self._upsert(name, body, wait),
            ("POST", ("points",)): lambda: self._retrieve(name, body),
            ("POST", ("points", "delete")): lambda: self._delete(name, body, wait),
            ("POST", ("points", "count")): lambda: self._count(name, body),
            ("POST", ("points", "query")): lambda: self._query(name, body),
            ("POST", ("points", "search")): lambda: self._search(name, body),
        }
        action = routes.get((method, tuple(rest)))
        if action is None:
            return 404, b"", {"Content-Type": "text/plain; charset=utf-8"}
        return action()

    def _collection(self, name: str) -> Collection:
        found = self.collections.get(name)
        if found is None:
            raise Refused(404, f"Not found: Collection `{name}` doesn't exist!")
        return found

    def _write(self, apply: Callable[[], None], wait: bool) -> dict[str, Any]:
        self.operations += 1
        if wait:
            apply()
            return {"operation_id": self.operations, "status": "completed"}
        self.pending.append(apply)
        return {"operation_id": self.operations, "status": "acknowledged"}

    # ------------------------------------------------------------------ collections

    def _create(self, name: str, body: Any) -> bool:
        body = _object(body, "", _CREATE_FIELDS)
        vectors = body.get("vectors") or {}
        named = not ("size" in vectors or "distance" in vectors)
        config: dict[str, tuple[int, str]] = {}
        for vector_name, params in vectors.items() if named else [("", vectors)]:
            where = f"vectors.{vector_name}" if named else "vectors"
            params = _object(params, where, _VECTOR_PARAMS, ("size", "distance"))
            if params["distance"] not in DISTANCES:
                raise _format(
                    f"unknown variant `{params['distance']}`, expected one of "
                    + ", ".join(f"`{d}`" for d in DISTANCES)
                )
            size = params["size"]
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise _format(f"invalid value at `{where}.size`: expected u64")
            if not 1 <= size <= 65536:
                reason = f"{where}.size: value {size} invalid, must be from 1 to 65536"
                raise Refused(422, f"Validation error in JSON body: [{reason}]")
            config[vector_name] = (size, params["distance"])
        if name in self.collections:
            raise Refused(409, f"Wrong input: Collection `{name}` already exists!")
        self.collections[name] = Collection(name, config, named)
        return True

    # ------------------------------------------------------------------ points

    def _vectors(self, collection: Collection, value: Any, where: str) -> dict[str, list[float]]:
        given = value if isinstance(value, dict) else {"": value}
        vectors = {}
        for vector_name, raw in given.items():
            values = _dense(raw, f"{where}.{vector_name}" if vector_name else where)
            if vector_name not in collection.vectors:
                raise Refused(400, f"Wrong input: Not existing vector name error: {vector_name}")
            size, distance = collection.vectors[vector_name]
            if len(values) != size:
                raise Refused(
                    400,
                    f"Wrong input: Vector dimension error: expected dim: {size}, got {len(values)}",
                )
            vectors[vector_name] = _f32(_normalized(values) if distance == "Cosine" else values)
        return vectors

    def _upsert(self, name: str, body: Any, wait: bool) -> dict[str, Any]:
        collection = self._collection(name)
        if isinstance(body, dict) and "batch" in body:
            raise _unimplemented("the `batch` form of an upsert")
        body = _object(
            body, "", {"points", "shard_key", "update_filter", "update_mode"}, ("points",)
        )
        if "update_filter" in body or body.get("update_mode") not in (None, "upsert"):
            raise _unimplemented("`update_filter` or `update_mode`")
        if not isinstance(body["points"], list):
            raise _format("invalid type at `points`: expected a sequence")
        points = []
        for index, raw in enumerate(body["points"]):
            raw = _object(raw, f"points[{index}]", {"id", "vector", "payload"}, ("id", "vector"))
            payload = raw.get("payload")
            if payload is not None and not isinstance(payload, dict):
                raise _format(f"invalid type at `points[{index}].payload`: expected a map")
            vectors = self._vectors(collection, raw["vector"], f"points[{index}].vector")
            points.append((_point_id(raw["id"]), vectors, dict(payload or {})))

        def apply() -> None:
            for point_id, vectors, payload in points:
                collection.points[point_id] = Point(point_id, self.operations, vectors, payload)

        return self._write(apply, wait)

    def _shown(
        self, collection: Collection, point: Point, with_payload: Any, with_vector: Any
    ) -> dict:
        if with_vector is True:
            names = list(point.vectors)
        elif isinstance(with_vector, list):
            for vector_name in with_vector:
                if vector_name not in collection.vectors:
                    raise Refused(
                        400, f"Wrong input: Not existing vector name error: {vector_name}"
                    )
            names = [n for n in with_vector if n in point.vectors]
        elif with_vector in (False, None):
            names = []
        else:
            raise _format("invalid type at `with_vector`: expected a bool or a sequence")
        if with_payload not in (True, False, None):
            raise _unimplemented("payload selectors in `with_payload`")
        vector: Any = {n: point.vectors[n] for n in names} if names else None
        if vector is not None and not collection.named:
            vector = vector.get("")
        return {
            "id": point.id,
            "payload": point.payload if with_payload else None,
            "vector": vector,
        }

    def _retrieve(self, name: str, body: Any) -> list[dict]:
        collection = self._collection(name)
        body = _object(body, "", {"shard_key", "ids", "with_payload", "with_vector"}, ("ids",))
        if not isinstance(body["ids"], list):
            raise _format("invalid type at `ids`: expected a sequence")
        ids = list(dict.fromkeys(_point_id(value) for value in body["ids"]))
        with_payload = body.get("with_payload", True)
        return [
            self._shown(collection, collection.points[key], with_payload, body.get("with_vector"))
            for key in ids
            if key in collection.points
        ]

    def _selected(self, collection: Collection, body: Any) -> list[int | str]:
        if isinstance(body, dict) and "points" in body:
            body = _object(body, "", {"points", "shard_key"})
            if not isinstance(body["points"], list):
                raise _format("invalid type at `points`: expected a sequence")
            return [_point_id(value) for value in body["points"]]
        body = _object(body, "", {"filter", "shard_key"}, ("filter",))
        check = self._filter(body["filter"], "filter")
        return [key for key, point in collection.points.items() if check(point)]

    def _delete(self, name: str, body: Any, wait: bool) -> dict[str, Any]:
        collection = self._collection(name)
        keys = self._selected(collection, body)

        def apply() -> None:
            for key in keys:
                collection.points.pop(key, None)

        return self._write(apply, wait)

    def _count(self, name: str, body: Any) -> dict[str, int]:
        collection = self._collection(name)
        body = _object(body or {}, "", {"shard_key", "filter", "exact"})
        check = self._filter(body.get("filter"), "filter")
        return {"count": sum(1 for point in collection.points.values() if check(point))}

    # ------------------------------------------------------------------ search

    def _query(self, name: str, body: Any) -> dict[str, Any]:
        collection = self._collection(name)
        body = _object(body, "", _QUERY_FIELDS)
        for unsupported in ("prefetch", "lookup_from"):
            if body.get(unsupported) is not None:
                raise _unimplemented(f"`{unsupported}`")
        query = body.get("query")
        if isinstance(query, dict):
            query = _object(query, "query", {"nearest"}, ("nearest",))["nearest"]
        if query is None:
            raise _unimplemented("a query without a vector (points by id order)")
        points = self._nearest(
            collection,
            body.get("using") or "",
            _dense(query, "query"),
            body,
        )
        return {"points": points}

    def _search(self, name: str, body: Any) -> list[dict]:
        collection = self._collection(name)
        body = _object(body, "", _SEARCH_FIELDS, ("vector", "limit"))
        vector = body["vector"]
        using = ""
        if isinstance(vector, dict):
            vector = _object(vector, "vector", {"name", "vector"}, ("name", "vector"))
            using, vector = vector["name"], vector["vector"]
        return self._nearest(collection, using, _dense(vector, "vector"), body)

    def _nearest(self, collection: Collection, using: str, query: list[float], body: dict) -> list:
        if using not in collection.vectors:
            raise Refused(400, f"Wrong input: Not existing vector name error: {using}")
        size, distance = collection.vectors[using]
        if len(query) != size:
            raise Refused(
                400, f"Wrong input: Vector dimension error: expected dim: {size}, got {len(query)}"
            )
        limit = _unsigned(body.get("limit", 10), "limit", minimum=1)
        offset = _unsigned(body.get("offset") or 0, "offset")
        threshold = body.get("score_threshold")
        if threshold is not None and not _number(threshold):
            raise _format("invalid type at `score_threshold`: expected f32")
        check = self._filter(body.get("filter"), "filter")
        query = _f32(query)
        ascending = distance in ("Euclid", "Manhattan")
        scored = []
        for point in collection.points.values():
            if using in point.vectors and check(point):
                score = _score(distance, point.vectors[using], query)
                if threshold is None or (score <= threshold if ascending else score >= threshold):
                    scored.append((score, point))
        scored.sort(key=lambda pair: pair[0] if ascending else -pair[0])
        found = []
        for score, point in scored[offset : offset + limit]:
            shown = self._shown(
                collection, point, body.get("with_payload", False), body.get("with_vector")
            )
            found.append({**shown, "version": point.version, "score": score})
        return found

    # ------------------------------------------------------------------ filters

    def _filter(self, value: Any, where: str) -> Callable[[Point], bool]:
        """Compile a Qdrant ``Filter`` into a predicate (refusing what Qdrant refuses)."""
        if value is None:
            return lambda point: True
        value = _object(value, where, _FILTER_FIELDS)
        if value.get("min_should") is not None:
            raise _unimplemented("`min_should`")
        clauses = {}
        for clause in ("must", "should", "must_not"):
            given = value.get(clause)
            given = [] if given is None else given if isinstance(given, list) else [given]
            clauses[clause] = [
                self._condition(c, f"{where}.{clause}[{i}]") for i, c in enumerate(given)
            ]

        def check(point: Point) -> bool:
            return (
                all(c(point) for c in clauses["must"])
                and (not clauses["should"] or any(c(point) for c in clauses["should"]))
                and not any(c(point) for c in clauses["must_not"])
            )

        return check

    def _condition(self, value: Any, where: str) -> Callable[[Point], bool]:
        if not isinstance(value, dict):
            raise _format("data did not match any variant of untagged enum Condition")
        if "has_id" in value:
            ids = {_point_id(v) for v in _object(value, where, {"has_id"})["has_id"]}
            return lambda point: point.id in ids
        if set(value) & _FILTER_FIELDS:
            return self._filter(value, where)
        if "key" not in value:
            raise _format("data did not match any variant of untagged enum Condition")
        value = _object(value, where, _FIELD_CONDITION, ("key",))
        key = value["key"]
        if not isinstance(key, str):
            raise _format(f"invalid type at `{where}.key`: expected a string")
        given = [n for n in ("match", "range") if value.get(n) is not None]
        if len(given) != 1 or set(value) - {"key", "match", "range"}:
            raise _unimplemented(f"this condition at `{where}` (only one `match` or `range`)")
        if given == ["range"]:
            bounds = _object(value["range"], f"{where}.range", {"lt", "gt", "gte", "lte"})
            if not all(_number(v) for v in bounds.values() if v is not None):
                raise _unimplemented("datetime ranges")
            return lambda point: any(
                _number(v) and _within(v, bounds) for v in _values_at(point.payload, key)
            )
        return self._match(value["match"], key, f"{where}.match")

    def _match(self, value: Any, key: str, where: str) -> Callable[[Point], bool]:
        def variant(item: Any) -> bool:
            return isinstance(item, bool | str) or (isinstance(item, int) and item >= -(2**63))

        if isinstance(value, dict) and set(value) == {"value"}:
            wanted = value["value"]
            if not variant(wanted):
                raise _format("data did not match any variant of untagged enum Match")
            return lambda point: any(_equal(v, wanted) for v in _values_at(point.payload, key))
        if isinstance(value, dict) and len(value) == 1 and set(value) <= {"any", "except"}:
            ((kind, items),) = value.items()
            if not isinstance(items, list) or not all(
                variant(i) and not isinstance(i, bool) for i in items
            ):
                raise _format("data did not match any variant of untagged enum Match")
            if kind == "any":
                return lambda point: any(
                    _equal(v, i) for v in _values_at(point.payload, key) for i in items
                )
            return lambda point: (
                not any(_equal(v, i) for v in _values_at(point.payload, key) for i in items)
            )
        if isinstance(value, dict) and set(value) & {"text", "phrase"}:
            raise _unimplemented("full-text `match`")
        raise _format("data did not match any variant of untagged enum Match")


def _within(value: float, bounds: dict[str, Any]) -> bool:
    checks = {
        "lt": lambda b: value < b,
        "gt": lambda b: value > b,
        "lte": lambda b: value <= b,
        "gte": lambda b: value >= b,
    }
    return all(checks[name](b) for name, b in bounds.items() if b is not None)


def _no_constant(name: str) -> Any:
    raise ValueError(f"expected value (`{name}` is not JSON) at line 1")
