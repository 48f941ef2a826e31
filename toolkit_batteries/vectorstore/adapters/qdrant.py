"""The ``vecengine`` adapter: a dedicated vector database through its official Python client.

The engine is Qdrant, through ``qdrant-client`` (``pip install "django-toolkit[vecengine]"``).
The ``url`` option picks where it runs:

* empty: the client's in-process engine, in memory (one process, gone at close);
* ``file:///var/lib/app/vectors``: the in-process engine, persisted in that directory
  (one process at a time holds it);
* ``https://vectors.internal:6333``: a Qdrant server, with ``api_key`` sent as its API
  key; ``http://`` only with ``allow_insecure``. A vector database is infrastructure the
  operator names, like a DSN, so a private address is allowed; the URL may not carry
  credentials, a query or a fragment.

Layout: one collection per ``(instance, namespace)``, named
``toolkit_<instance>__<namespace>``, created on the first upsert with the store's
``dimension``. A query chooses its metric, while a Qdrant collection fixes the distance
of each vector, so every point carries three named vectors, ``cosine``, ``l2`` and
``ip`` (three times the memory of one). A zero vector has no direction: it is stored
without its ``cosine`` vector, so cosine queries leave it out. Point ids are UUIDv5 of
the record id; the id itself and the metadata travel in the payload.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import unquote, urlsplit

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
    ToolkitError,
)
from toolkit_batteries.core.tracing import traced

from ..base import DimensionMismatchError, Match, Query, Record, VectorStore

try:
    from qdrant_client import QdrantClient, models
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("vectorstore", "vecengine", "vecengine", "qdrant_client") from exc

__all__ = ["QdrantVectorStore"]

#: The UUID namespace point ids are derived in (UUIDv5 of the record id).
POINT_NAMESPACE = uuid.UUID("5b0f6c1e-8a7d-4e55-9a51-7d1c3f2b9e40")
_DISTANCES = {
    "cosine": models.Distance.COSINE,
    "l2": models.Distance.EUCLID,
    "ip": models.Distance.DOT,
}


def point_id(record_id: str) -> str:
    """Return the point id (a UUID) of ``record_id``."""
    return str(uuid.uuid5(POINT_NAMESPACE, record_id))


def client_for(options: Any, *, instance: str) -> QdrantClient:
    """Return a client for the ``url`` option (see the module docstring)."""
    url = str(options.url or "").strip()
    if not url:
        return QdrantClient(location=":memory:")
    if url.lower().startswith("file:"):
        path = unquote(urlsplit(url).path)
        if not path.startswith("/"):
            raise InvalidOptionsError(
                "vectorstore", "url", "must be file:///<absolute path>", instance=instance
            )
        return QdrantClient(path=path)
    from toolkit_batteries.core.outbound import check_url

    checked = check_url(
        url,
        service="vectorstore",
        field="url",
        instance=instance,
        allow_insecure=bool(options.allow_insecure),
        allow_private=True,
    )
    return QdrantClient(
        url=checked,
        api_key=str(options.api_key or "") or None,
        prefer_grpc=False,
        timeout=10,
        check_compatibility=False,  # no request at open: the first call connects
    )


@traced("_upsert", "_delete", "_drop", "_get", "_count", "_namespaces", "_query")
class QdrantVectorStore(VectorStore):
    """Embeddings in a Qdrant engine, one collection per namespace."""

    adapter_name = "vecengine"

    def __init__(
        self, client: QdrantClient, *, dimension: int = 1536, instance: str = "default"
    ) -> None:
        """Use ``client`` (any ``QdrantClient``: in-process or a server)."""
        super().__init__(dimension=dimension, instance=instance)
        self.client = client
        self._prefix = f"toolkit_{instance}__"

    @classmethod
    def open(cls, ctx: OpenContext) -> QdrantVectorStore:
        """Build the client; nothing is sent until the first call."""
        if ctx.options.allow_insecure:
            ctx.logger.warning("vectorstore.%s: allow_insecure is on", ctx.instance)
        client = client_for(ctx.options, instance=ctx.instance)
        return cls(client, dimension=ctx.options.dimension, instance=ctx.instance)

    def _collection(self, namespace: str) -> str:
        return self._prefix + namespace

    def _call(self, doing: str, action: Any) -> Any:
        """Run ``action``; engine failures become ServiceUnavailableError (no URL, no key).

        A server's refusal names its HTTP status and what it means (``HTTP 401: auth``),
        so an operator tells a rejected ``api_key`` from a server that is down; the
        server's error text stays out (it may echo ids or payload values).
        """
        try:
            return action()
        except (ValueError, TypeError, KeyError, ToolkitError):
            raise
        except Exception as exc:
            from toolkit_batteries.core.outbound.provider import failure_of

            failure = failure_of(exc)
            if failure is not None and failure.status is not None:
                reason = f"HTTP {failure.status}: {failure.kind}"
            else:
                reason = type(exc).__name__
            raise ServiceUnavailableError(
                self.service_name, f"cannot {doing} ({reason})", instance=self.instance
            ) from None

    def _exists(self, namespace: str) -> bool:
        name = self._collection(namespace)
        return bool(self._call("reach the engine", lambda: self.client.collection_exists(name)))

    def _ensure(self, namespace: str) -> None:
        name = self._collection(namespace)
        if self._exists(namespace):
            info = self._call("read a collection", lambda: self.client.get_collection(name))
            vectors = info.config.params.vectors
            size = vectors["ip"].size if isinstance(vectors, dict) else vectors.size
            if size != self.dimension:
                raise DimensionMismatchError(self.instance, "namespace", size, self.dimension)
            return
        config = {
            metric: models.VectorParams(size=self.dimension, distance=distance)
            for metric, distance in _DISTANCES.items()
        }
        self._call(
            "create a collection",
            lambda: self.client.create_collection(name, vectors_config=config),
        )

    # ------------------------------------------------------------------ primitives

    def _upsert(self, namespace: str, records: list[Record]) -> None:
        self._ensure(namespace)
        points = []
        for record in records:
            values = list(record.vector)
            vectors = {"l2": values, "ip": values}
            if any(values):
                vectors["cosine"] = values
            payload = {"id": record.id, "metadata": record.metadata}
            points.append(
                models.PointStruct(id=point_id(record.id), vector=vectors, payload=payload)
            )
        name = self._collection(namespace)
        self._call("write vectors", lambda: self.client.upsert(name, points=points, wait=True))

    def _retrieve(self, namespace: str, ids: list[str], vectors: bool) -> list[Any]:
        if not self._exists(namespace):
            return []
        name = self._collection(namespace)
        wanted = [point_id(key) for key in ids]
        return self._call(
            "read vectors",
            lambda: self.client.retrieve(
                name, ids=wanted, with_payload=True, with_vectors=["ip"] if vectors else False
            ),
        )

    def _delete(self, namespace: str, ids: list[str]) -> int:
        found = self._retrieve(namespace, ids, vectors=False)
        if not found:
            return 0
        name = self._collection(namespace)
        selector = models.PointIdsList(points=[point.id for point in found])
        self._call(
            "delete vectors",
            lambda: self.client.delete(name, points_selector=selector, wait=True),
        )
        return len(found)

    def _get(self, namespace: str, ids: list[str]) -> list[Record]:
        return [
            Record(
                point.payload["id"],
                tuple(float(value) for value in point.vector["ip"]),
                dict(point.payload.get("metadata") or {}),
            )
            for point in self._retrieve(namespace, ids, vectors=True)
        ]

    def _query(self, query: Query) -> list[Match]:
        namespace, vector, k, metric, filter = query
        if not self._exists(namespace):
            return []
        conditions: list[Any] = []
        for key, value in filter.items():
            if isinstance(value, float):
                condition = models.FieldCondition(
                    key=f"metadata.{key}", range=models.Range(gte=value, lte=value)
                )
            else:
                condition = models.FieldCondition(
                    key=f"metadata.{key}", match=models.MatchValue(value=value)
                )
            conditions.append(condition)
        query_filter = models.Filter(must=conditions) if conditions else None
        name = self._collection(namespace)
        points = self._call(
            "search vectors",
            lambda: (
                self.client.query_points(
                    name,
                    query=list(vector),
                    using=metric,
                    limit=k,
                    query_filter=query_filter,
                    with_payload=True,
                ).points
            ),
        )
        matches = [
            Match(
                point.payload["id"],
                _distance(metric, point.score),
                point.payload.get("metadata") or {},
            )
            for point in points
        ]
        matches.sort(key=lambda match: (match.distance, match.id))
        return matches

    def _count(self, namespace: str) -> int:
        if not self._exists(namespace):
            return 0
        name = self._collection(namespace)
        return int(self._call("count vectors", lambda: self.client.count(name, exact=True).count))

    def _namespaces(self) -> list[str]:
        found = self._call("list collections", lambda: self.client.get_collections().collections)
        names = [c.name[len(self._prefix) :] for c in found if c.name.startswith(self._prefix)]
        return [name for name in names if self._count(name) > 0]

    def _drop(self, namespace: str) -> int:
        count = self._count(namespace)
        if count:
            name = self._collection(namespace)
            self._call("delete a namespace", lambda: self.client.delete_collection(name))
        return count

    # ------------------------------------------------------------------ lifetime

    def ping(self) -> None:
        """Round-trip to the engine; raise ServiceUnavailableError when it is down."""
        self._call("reach the engine", lambda: self.client.get_collections())

    def close(self) -> None:
        """Close the client (an in-memory engine's data goes with it)."""
        client, self.client = self.client, ClosedResource(self.service_name, self.instance)  # type: ignore[assignment]
        if not isinstance(client, ClosedResource):
            client.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} vectorstore.{self.instance}>"


def _distance(metric: str, score: float) -> float:
    """Return the engine's score as this battery's distance (lower is closer)."""
    if metric == "cosine":
        return 1.0 - float(score)
    if metric == "ip":
        return -float(score)
    return float(score)
