"""What the ``local`` storage and media views do alike: resolve, answer a file, log an error.

Both views serve bytes from a local directory through a presigned link, so the request's
first checks (405, 404, 400 in that order), the file answer (typed from the key, with
``nosniff`` and a sandboxing CSP so a stored HTML page cannot script the site) and the
error log (method and path only: the query holds the signature) are one piece here
rather than two copies that could drift apart.
"""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Callable
from typing import Any

from django.http import FileResponse, HttpRequest, HttpResponse

from toolkit_batteries.http.errors import error_response

from .keys import InvalidKeyError, clean_key

__all__ = ["file_answer", "log_error_answer", "resolve"]


def resolve(
    request: HttpRequest, name: str, allowed: tuple[str, ...], find: Callable[[], Any]
) -> tuple[Any, str] | HttpResponse:
    """Return ``(store, key)`` for a request, or the answer that ends it.

    Both views start alike, in this order: a method outside ``allowed`` answers 405, an
    instance ``find`` does not serve 404, a path that is no valid key 400.
    """
    if (request.method or "GET") not in allowed:
        return error_response(405, headers={"Allow": ", ".join(allowed)})
    store = find()
    if store is None:
        return error_response(404)
    try:
        return store, clean_key(name)
    except InvalidKeyError as exc:
        return error_response(400, message=str(exc))


def file_answer(path: str, key: str) -> HttpResponse:
    """Answer the file at ``path`` (404 when it is not a file), typed by ``key``'s name."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - FileResponse closes it
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return error_response(404)
    kind = mimetypes.guess_type(key)[0] or "application/octet-stream"
    response = FileResponse(handle, content_type=kind)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


def log_error_answer(
    logger: logging.Logger,
    service: str,
    instance: str,
    request: HttpRequest,
    response: HttpResponse,
    note: str = "",
) -> None:
    """Log an error answer without the query, and keep it from Django's own record.

    ``django.request`` would log the request (its repr carries the signature); marking the
    response as logged stops that.
    """
    logger.warning(
        "%s.%s: %s %s answered %s" + note,
        service,
        instance,
        request.method,
        request.path,
        response.status_code,
        extra={"service": service, "instance": instance},
    )
    response._has_been_logged = True  # type: ignore[attr-defined]
