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
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from toolkit_batteries.core.errors import UnknownInstanceError
from toolkit_batteries.http.errors import error_response
from toolkit_batteries.storage.answers import file_answer, log_error_answer, resolve

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
        log_error_answer(logger, "media", instance, request, response)
    return response


def _serve(request: HttpRequest, name: str, instance: str) -> HttpResponse:
    found = resolve(request, name, ("GET", "HEAD"), lambda: _store(instance))
    if isinstance(found, HttpResponse):
        return found
    store, key = found
    query = request.GET
    if not store.verify("GET", key, query.get("e", ""), query.get("t", ""), query.get("s", "")):
        return error_response(403, message="the link is invalid or expired")
    response = file_answer(store.path(key), key)
    if response.status_code == 200:
        response["Cache-Control"] = "private, max-age=60"
    return response
