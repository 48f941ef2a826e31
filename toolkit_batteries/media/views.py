"""The view serving the ``local`` media adapter's presigned URLs (mount it at ``base_url``).

Only presigned ``GET``/``HEAD`` requests are served: the signature (``?e=&t=&s=``, minted
by :meth:`~toolkit_batteries.media.Media.url`) is checked against the path and its
lifetime; a missing, invalid or expired one answers 403, a bad key 400, a missing object
404 (after the signature check, so existence does not leak). Answers carry
``X-Content-Type-Options: nosniff`` and a sandboxing ``Content-Security-Policy``.
Errors are logged without the query (it holds the signature).
"""

from __future__ import annotations

import logging
import mimetypes
from typing import Any

from django.http import FileResponse, HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from toolkit_batteries.core.errors import UnknownInstanceError
from toolkit_batteries.http.errors import error_response
from toolkit_batteries.storage.keys import InvalidKeyError, clean_key

__all__ = ["serve"]

logger = logging.getLogger("toolkit.media")


def _store(instance: str) -> Any:
    from toolkit_batteries import services

    from .adapters.local import LocalMedia

    try:
        media = services.media(instance)
    except UnknownInstanceError:
        return None
    return media.store if isinstance(media, LocalMedia) else None


@csrf_exempt
def serve(request: HttpRequest, name: str, instance: str = "default") -> HttpResponse:
    """Serve one object of a ``local`` media instance through its presigned URL."""
    response = _serve(request, name, instance)
    if response.status_code >= 400:
        logger.warning(
            "media.%s: %s %s answered %s",
            instance,
            request.method,
            request.path,
            response.status_code,
            extra={"service": "media", "instance": instance},
        )
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def _serve(request: HttpRequest, name: str, instance: str) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return error_response(405, headers={"Allow": "GET, HEAD"})
    store = _store(instance)
    if store is None:
        return error_response(404)
    try:
        key = clean_key(name)
    except InvalidKeyError as exc:
        return error_response(400, message=str(exc))
    query = request.GET
    if not store.verify("GET", key, query.get("e", ""), query.get("t", ""), query.get("s", "")):
        return error_response(403, message="the link is invalid or expired")
    try:
        handle = open(store.path(key), "rb")  # noqa: SIM115 - FileResponse closes it
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return error_response(404)
    kind = mimetypes.guess_type(key)[0] or "application/octet-stream"
    response = FileResponse(handle, content_type=kind)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=60"
    return response
