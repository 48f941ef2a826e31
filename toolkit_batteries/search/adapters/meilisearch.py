"""The ``searchengine`` adapter: a dedicated search server through its official client.

The server is Meilisearch-compatible and the client is its official Python package
(``meilisearch``, extra ``searchengine``); this module is the only one that imports it.

* **Address.** ``host`` is required, https only unless ``allow_insecure``; a private,
  loopback or link-local target (also after DNS resolution, on every connection) is
  refused unless ``allow_private`` (:mod:`toolkit_batteries.core.outbound`). The client
  sends its requests through a guarded ``requests`` session: no proxy from the
  environment, no redirects. ``api_key`` goes in the ``Authorization`` header and nowhere
  else (never in a repr, a log line or an error).
* **Documents.** Index ``<name>`` is the server's index ``<name>``. A document is stored
  as ``{"id": <key>, "doc_id": ..., "fields": {...}, "filters": {...}}``, where ``key``
  is a digest of ``doc_id`` (the server accepts only ``[A-Za-z0-9_-]`` ids, any doc_id is
  allowed here). The first write to an index in this process sets its
  ``filterableAttributes`` to ``["filters"]`` and ``searchableAttributes`` to
  ``["fields"]``.
* **Writes wait.** The server applies writes as asynchronous tasks; every write here waits
  for its task (up to :data:`TASK_TIMEOUT_MS`), so a document is searchable when
  ``index`` returns and a failed task raises an error, as on ``db``.
* **Queries** send the parsed words and ``"phrases"`` with ``matchingStrategy: "all"``,
  filters as ``filters.<key> = <value>`` / ``IN [...]``, ``offset``/``limit`` for
  cursors, highlight and crop tags for snippets and ``showRankingScore`` for scores.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, check_url, is_blocked
from toolkit_batteries.core.tracing import traced

from ..base import (
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    Document,
    FilterValue,
    Hit,
    Search,
    SearchError,
    SearchRequest,
    render_snippet,
)

with MissingExtraError.guard("search", "searchengine", "searchengine", "meilisearch"):
    import meilisearch
    import meilisearch.errors
    from meilisearch._httprequests import HttpRequests

    from toolkit_batteries.core.outbound.requests_adapter import guarded_session

__all__ = ["MeilisearchSearch", "document_key"]

#: How long a write waits for the server's task, and how often it asks.
TASK_TIMEOUT_MS = 10_000
TASK_INTERVAL_MS = 10
#: Seconds before one HTTP request gives up.
REQUEST_TIMEOUT = 10
#: Words around the match a snippet keeps.
CROP_LENGTH = 24


#: "No default": let an absent index or document raise.
_RAISE = object()


def document_key(doc_id: str) -> str:
    """Return the server-side primary key of ``doc_id`` (a fixed-length digest)."""
    return "d" + hashlib.blake2b(doc_id.encode(), digest_size=16).hexdigest()


def _literal(value: FilterValue) -> str:
    """Render a filter value in the server's filter language."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    # The filter language's string: double quotes, with \ and " escaped by a backslash.
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def filter_expression(filters: Mapping[str, tuple[FilterValue, ...]]) -> str | None:
    """Return the filter expression for checked filters (keys are identifiers)."""
    clauses = []
    for key, values in filters.items():
        if len(values) == 1:
            clauses.append(f"filters.{key} = {_literal(values[0])}")
        else:
            clauses.append(f"filters.{key} IN [{', '.join(_literal(v) for v in values)}]")
    return " AND ".join(clauses) or None


class _GuardedHttp(HttpRequests):
    """The client's request layer, sending through a guarded ``requests`` session.

    The client calls ``requests.get``/``post``/... module functions; this subclass swaps
    in the session's methods of the same name, so every connection goes through the
    outbound guard and no proxy or redirect is taken.
    """

    def __init__(self, config: Any, session: Any) -> None:
        super().__init__(config)
        self._session = session

    def send_request(self, http_method: Callable, path: str, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self._session, http_method.__name__)
        return super().send_request(method, path, *args, **kwargs)


@traced("_write", "_get", "_delete", "_clear", "_count", "_search")
class MeilisearchSearch(Search):
    """Documents on a search server, through the official ``meilisearch`` client."""

    adapter_name = "searchengine"

    def __init__(
        self,
        host: str,
        api_key: str = "",
        *,
        allow_insecure: bool = False,
        allow_private: bool = False,
        instance: str = "default",
    ) -> None:
        """Check ``host`` against the outbound rules and build the client (no request yet)."""
        super().__init__(instance=instance)
        if not host:
            raise InvalidOptionsError(
                "search", "host", "is required by the searchengine adapter", instance=instance
            )
        url = check_url(
            host,
            service="search",
            field="host",
            instance=instance,
            allow_insecure=allow_insecure,
            allow_private=allow_private,
        ).rstrip("/")
        self._session = guarded_session(allow_insecure=allow_insecure, allow_private=allow_private)
        self._session.trust_env = False
        self.client = meilisearch.Client(url, api_key or None, timeout=REQUEST_TIMEOUT)
        self._install(self.client)
        self._configured: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> MeilisearchSearch:
        """Build the client from ``host``/``api_key``; nothing is sent until the first call."""
        options = ctx.options
        if options.allow_private or options.allow_insecure:
            ctx.logger.warning(
                "search.%s: allow_private or allow_insecure is on; the search server may be "
                "reached in plaintext or on a private address",
                ctx.instance,
            )
        return cls(
            str(options.host or "").strip(),
            options.api_key,
            allow_insecure=bool(options.allow_insecure),
            allow_private=bool(options.allow_private),
            instance=ctx.instance,
        )

    def _install(self, target: Any) -> Any:
        """Route ``target``'s (a client's or an index's) requests through the guard."""
        target.http = _GuardedHttp(target.config, self._session)
        target.task_handler.http = _GuardedHttp(target.config, self._session)
        return target

    def _index(self, name: str) -> Any:
        return self._install(self.client.index(name))

    # ------------------------------------------------------------------ plumbing

    def _call(self, action: Callable[[], Any], doing: str, missing: Any = _RAISE) -> Any:
        """Run one client call; map its failures to the battery's errors (no server text).

        With ``missing``, an absent index or document answers ``missing`` instead.
        """
        try:
            return action()
        except OutboundBlockedError:
            raise self._blocked() from None
        except meilisearch.errors.MeilisearchApiError as exc:
            if missing is not _RAISE and exc.code in ("index_not_found", "document_not_found"):
                return missing
            raise SearchError(
                self.instance,
                f"the search server refused to {doing} (HTTP {exc.status_code}, {exc.code})",
            ) from None
        except (
            meilisearch.errors.MeilisearchCommunicationError,
            meilisearch.errors.MeilisearchTimeoutError,
        ) as exc:
            if is_blocked(exc):
                raise self._blocked() from None
            raise ServiceUnavailableError(
                "search", f"cannot {doing} ({type(exc).__name__})", instance=self.instance
            ) from None

    def _blocked(self) -> InvalidOptionsError:
        return InvalidOptionsError(
            "search",
            "host",
            "resolves to a private, loopback or link-local address; set allow_private",
            instance=self.instance,
        )

    def _wait(self, index: Any, info: Any, doing: str) -> Any:
        task = self._call(
            lambda: index.wait_for_task(
                info.task_uid, timeout_in_ms=TASK_TIMEOUT_MS, interval_in_ms=TASK_INTERVAL_MS
            ),
            doing,
        )
        if task.status != "succeeded":
            code = (task.error or {}).get("code", task.status)
            raise SearchError(self.instance, f"the search server failed to {doing} ({code})")
        return task

    def _prepare(self, name: str, index: Any) -> None:
        """Make ``filters`` filterable and ``fields`` searchable, once per index and process."""
        if name in self._configured:
            return
        settings = {"filterableAttributes": ["filters"], "searchableAttributes": ["fields"]}
        info = self._call(lambda: index.update_settings(settings), "configure the index")
        self._wait(index, info, "configure the index")
        with self._lock:
            self._configured.add(name)

    # ------------------------------------------------------------------ primitives

    def _write(self, index: str, documents: list[Document]) -> None:
        handle = self._index(index)
        self._prepare(index, handle)  # settings first: the documents are indexed once
        payload = [
            {
                "id": document_key(d.doc_id),
                "doc_id": d.doc_id,
                "fields": dict(d.fields),
                "filters": dict(d.filters),
            }
            for d in documents
        ]
        info = self._call(lambda: handle.add_documents(payload, primary_key="id"), "index")
        self._wait(handle, info, "index")

    def _get(self, index: str, doc_id: str) -> Document | None:
        handle = self._index(index)
        found = self._call(lambda: handle.get_document(document_key(doc_id)), "read", None)
        if found is None:
            return None
        data = dict(vars(found))
        return Document(doc_id, data.get("fields") or {}, data.get("filters") or {})

    def _delete(self, index: str, doc_id: str) -> bool:
        handle = self._index(index)
        info = self._call(lambda: handle.delete_document(document_key(doc_id)), "delete")
        task = self._wait(handle, info, "delete")
        return bool((task.details or {}).get("deletedDocuments"))

    def _clear(self, index: str) -> int:
        handle = self._index(index)
        info = self._call(handle.delete_all_documents, "clear the index")
        task = self._wait(handle, info, "clear the index")
        return int((task.details or {}).get("deletedDocuments", -1))

    def _count(self, index: str) -> int:
        stats = self._call(self._index(index).get_stats, "count", None)
        return 0 if stats is None else int(stats.number_of_documents)

    def _search(self, request: SearchRequest, offset: int) -> list[Hit]:
        handle = self._index(request.index)
        highlight = request.highlight
        params: dict[str, Any] = {
            "limit": request.limit,
            "offset": offset,
            "matchingStrategy": "all",
            "showRankingScore": True,
        }
        expression = filter_expression(request.filters)
        if expression:
            params["filter"] = expression
        if highlight:
            params.update(
                attributesToHighlight=["fields"],
                attributesToCrop=["fields"],
                cropLength=CROP_LENGTH,
                highlightPreTag=HIGHLIGHT_START,
                highlightPostTag=HIGHLIGHT_END,
                cropMarker="…",
            )
        answer = self._call(
            lambda: handle.search(request.query.engine_text(), params), "search", {}
        )
        hits = []
        for hit in answer.get("hits", []):
            snippet = ""
            if highlight:
                formatted = (hit.get("_formatted") or {}).get("fields") or {}
                texts = [t for t in formatted.values() if isinstance(t, str)]
                marked = [t for t in texts if HIGHLIGHT_START in t]
                snippet = render_snippet((marked or texts or [""])[0])
            hits.append(
                Hit(
                    str(hit.get("doc_id", "")),
                    float(hit.get("_rankingScore", 0.0)),
                    hit.get("fields") or {},
                    hit.get("filters") or {},
                    snippet,
                )
            )
        return hits

    def ping(self) -> None:
        """Ask the server's health endpoint; raise ServiceUnavailableError if it fails."""
        answer = self._call(self.client.health, "reach the search server")
        if not isinstance(answer, dict) or answer.get("status") != "available":
            raise ServiceUnavailableError(
                "search", "the search server is not available", instance=self.instance
            )

    def close(self) -> None:
        """Close the HTTP session; later calls raise ServiceUnavailableError."""
        self._session.close()
        self.client = ClosedResource(self.service_name, self.instance)  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} search.{self.instance}>"
