"""The view that serves the ``local`` adapter's objects (presigned and public links).

Mount it where ``url_base`` points (default ``MEDIA_URL``)::

    path("media/", include("toolkit_batteries.storage.urls")),          # instance default
    path("files/", include(storage_urls("uploads"))),                   # another instance

A request with a signature (``?e=&t=&s=``) is checked against its method (``HEAD``
counts as ``GET``), path and lifetime; a valid one acts as the server, an invalid or
expired one answers 403. A request without one acts for the request's user
(``anonymous`` when there is none) and obeys the access policy: ``GET``/``HEAD`` need
``read``, ``PUT`` needs ``write`` (new object) or ``update`` (overwrite), ``DELETE``
needs ``delete``; an unsigned ``PUT`` or ``DELETE`` by a signed-in user also passes
Django's CSRF check. In the legacy private mode (no policy) every unsigned request answers
403. A ``PUT`` stores at most the link's signed ``max_bytes`` (``m``), or
:data:`~toolkit_batteries.storage.base.DEFAULT_MAX_PUT_BYTES` (100 MiB): a larger body
answers 413, refused on its ``Content-Length`` before a byte is read, and nothing is
stored. Bad keys answer
400; a missing object 404 (after the access check, so existence does not leak).
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from toolkit_batteries.core.errors import UnknownInstanceError
from toolkit_batteries.http.errors import error_response

from .answers import file_answer, log_error_answer, resolve
from .base import DEFAULT_MAX_PUT_BYTES
from .policy import AccessDeniedError, subject_of

__all__ = ["serve"]

logger = logging.getLogger("toolkit.storage")

_ALLOWED = ("GET", "HEAD", "PUT", "DELETE")


def _storage(instance: str) -> Any:
    from toolkit_batteries import services

    from .adapters.local import LocalStorage

    try:
        storage = services.storage(instance)
    except UnknownInstanceError:
        return None
    return storage if isinstance(storage, LocalStorage) else None


class _TooLarge(Exception):
    """The body of a ``PUT`` grew past its bound while it was read."""


class _Bounded:
    """A reader of the request body that refuses to read past ``limit`` bytes.

    ``Content-Length`` is checked first; this counts what is actually read, so a body
    longer than its header (or one without a header) cannot push past the bound either.
    The adapter writes to a temporary file and renames it only at the end, so an upload
    stopped here leaves nothing behind.
    """

    def __init__(self, request: HttpRequest, limit: int) -> None:
        self._request = request
        self._left = limit

    def read(self, size: int = -1) -> bytes:
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        chunk = self._request.read(want)
        self._left -= len(chunk)
        if self._left < 0:
            raise _TooLarge
        return chunk


def _put(view: Any, key: str, request: HttpRequest, max_bytes: int) -> HttpResponse:
    """Store the request body at ``key``, at most ``max_bytes`` of it (else 413)."""
    too_large = f"the body is over {max_bytes} bytes"
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or "0")
    except ValueError:
        return error_response(400, message="invalid Content-Length header")
    if declared > max_bytes:
        return error_response(413, message=too_large)
    try:
        view.put(key, _Bounded(request, max_bytes), content_type=request.content_type or "")
    except _TooLarge:
        return error_response(413, message=too_large)
    return HttpResponse(status=201)


def _csrf_failure(request: HttpRequest) -> HttpResponse | None:
    from django.middleware.csrf import CsrfViewMiddleware

    middleware = CsrfViewMiddleware(lambda r: HttpResponse())
    middleware.process_request(request)
    return middleware.process_view(request, None, (), {})


@csrf_exempt
def serve(request: HttpRequest, name: str, instance: str = "default") -> HttpResponse:
    """Serve, store or delete one object of a ``local`` storage (see the module doc).

    An error answer to a signed request is logged here, without the query, and kept from
    Django's own ``django.request`` record, which carries the request (and its repr the
    signature).
    """
    response = _serve(request, name, instance)
    if response.status_code >= 400 and "s" in request.GET:
        log_error_answer(logger, "storage", instance, request, response, " to a presigned request")
    return response


def _serve(request: HttpRequest, name: str, instance: str) -> HttpResponse:
    found = resolve(request, name, _ALLOWED, lambda: _storage(instance))
    if isinstance(found, HttpResponse):
        return found
    storage, key = found
    method = request.method or "GET"
    query = request.GET
    max_bytes = DEFAULT_MAX_PUT_BYTES
    if "s" in query:
        bound = query.get("m", "")
        if method == "DELETE" or not storage.verify(
            method, key, query.get("e", ""), query.get("t", ""), query.get("s", ""), bound
        ):
            return error_response(403, message="the link is invalid or expired")
        view = storage  # the server's own, through the capability it minted
        if bound:
            max_bytes = int(bound)  # verified digits, signed by the server
    else:
        subject = subject_of(getattr(request, "user", None))
        # A signed-in user's cookie could be ridden by another site: CSRF applies then.
        if (
            subject is not None
            and method in ("PUT", "DELETE")
            and (failure := _csrf_failure(request)) is not None
        ):
            return failure
        view = storage.as_subject(subject)
    try:
        if method in ("GET", "HEAD"):
            view.authorize("read", key)
            return file_answer(storage.path(key), key)
        if method == "PUT":
            return _put(view, key, request, max_bytes)
        view.authorize("delete", key)
        if not storage._raw_exists(key):
            return error_response(404)
        view.delete(key)
        return HttpResponse(status=204)
    except AccessDeniedError:
        return error_response(403)
