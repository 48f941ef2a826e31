"""Make unsafe HTTP requests safe to retry with an ``Idempotency-Key`` header.

::

    from toolkit_batteries.idempotency.decorators import idempotent

    @idempotent                              # or @idempotent(required=True, instance="api")
    def create_order(request): ...

    MIDDLEWARE = [..., "toolkit_batteries.idempotency.decorators.IdempotencyMiddleware"]

On ``POST``, ``PUT``, ``PATCH`` and ``DELETE`` carrying the header (the behaviour follows
the IETF ``Idempotency-Key`` header draft):

=====================================================  ==================================
first request with a key                               runs the view; a response below
                                                       500 is stored (status, headers,
                                                       body) for the store's ``ttl``
retry with the same key and the same request           the stored response, plus
                                                       ``Idempotent-Replayed: true``
same key while the first request still runs            409 ``already_exists``,
                                                       ``Retry-After: 1``
same key, different method, path, query or body        422 ``failed_precondition``
no header and ``required=True``                        400 ``invalid_argument``
header empty, over 255 characters or not printable     400 ``invalid_argument``
the store is unreachable                               503 ``unavailable`` (fails closed:
                                                       never runs the view twice)
=====================================================  ==================================

A view that raises, or answers 500 or more, or streams its response, releases the key,
so a retry runs again. ``Set-Cookie`` is not replayed. Safe methods pass through.

Keys are scoped: the stored record is named by a hash of the scope and the header, where
the scope is the authenticated user's primary key (Django's ``request.user``) or empty
for anonymous requests, so two users' identical keys never meet. Pass ``scope=`` (a
callable taking the request) to scope by tenant, API client or anything else.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse, HttpResponseBase

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.http import error_response

from .base import Reservation, ReservationState

__all__ = [
    "HEADER",
    "REPLAYED_HEADER",
    "UNSAFE_METHODS",
    "IdempotencyMiddleware",
    "idempotent",
]

logger = logging.getLogger("toolkit.idempotency")

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_KEY_LENGTH = 255
#: Response headers never stored for replay.
_NOT_REPLAYED = frozenset({"set-cookie", REPLAYED_HEADER.lower()})
_HANDLED = "_toolkit_idempotency_handled"


@dataclass(frozen=True, slots=True)
class Policy:
    """How one decorated view (or the middleware) applies idempotency."""

    instance: str = "default"
    required: bool = False
    ttl: timedelta | float | None = None
    in_flight_ttl: timedelta | float | None = None
    methods: frozenset[str] = UNSAFE_METHODS
    scope: Callable[[HttpRequest], str] | None = None


def default_scope(request: HttpRequest) -> str:
    """Return the authenticated user's primary key, or an empty string."""
    user = getattr(request, "user", None)
    if user is not None and getattr(user, "is_authenticated", False):
        return f"user:{user.pk}"
    return ""


def fingerprint(request: HttpRequest) -> str:
    """Return a hash of the method, the full path (with query) and the body."""
    digest = hashlib.sha256()
    digest.update(request.method.encode() if request.method else b"")
    digest.update(b"\n" + request.get_full_path().encode() + b"\n")
    digest.update(request.body)
    return digest.hexdigest()


# ---------------------------------------------------------------------- the two halves


def _begin(request: HttpRequest, policy: Policy) -> Reservation | HttpResponse | None:
    """Reserve the request's key.

    Return ``None`` to run the view plainly, a response to answer at once, or the owned
    reservation: run the view, then :func:`_finish`.
    """
    if request.method not in policy.methods or getattr(request, _HANDLED, False):
        return None
    raw = request.headers.get(HEADER)
    if raw is None:
        if policy.required:
            return error_response(400, "invalid_argument", f"the {HEADER} header is required")
        return None
    key = raw.strip()
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        return error_response(
            400,
            "invalid_argument",
            f"the {HEADER} header must be 1 to {MAX_KEY_LENGTH} printable characters",
        )
    setattr(request, _HANDLED, True)
    scope = (policy.scope or default_scope)(request)
    stored_key = "http:" + hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest()
    mine = fingerprint(request)
    from toolkit_batteries import services

    try:
        store = services.idempotency(policy.instance)
        reservation = store.reserve(stored_key, policy.in_flight_ttl, fingerprint=mine)
    except ServiceUnavailableError:
        logger.warning(
            "idempotency store unavailable; refusing %s %s", request.method, request.path
        )
        return error_response(
            503, "unavailable", "the idempotency store is unavailable", headers={"Retry-After": "1"}
        )
    if reservation.state is not ReservationState.NEW and reservation.fingerprint != mine:
        return error_response(
            422,
            "failed_precondition",
            f"this {HEADER} was already used with a different request (method, path or body)",
        )
    if reservation.state is ReservationState.IN_PROGRESS:
        return error_response(
            409,
            "already_exists",
            f"a request with this {HEADER} is still in progress",
            headers={"Retry-After": "1"},
        )
    if reservation.state is ReservationState.COMPLETED:
        return _replay(reservation.response)
    return reservation


def _finish(reservation: Reservation, response: HttpResponseBase, policy: Policy) -> None:
    """Store ``response`` for replay, or release the key when it must not be replayed."""
    try:
        if response.streaming or response.status_code >= 500:
            reservation.release()
            return
        render = getattr(response, "render", None)
        if callable(render) and not getattr(response, "is_rendered", True):
            render()
        if not reservation.commit(_record(response), ttl=policy.ttl):
            logger.warning("idempotency reservation expired before the response was stored")
    except ServiceUnavailableError:
        logger.warning("idempotency store unavailable; the response was not stored")


def _abort(reservation: Reservation) -> None:
    try:
        reservation.release()
    except ServiceUnavailableError:
        logger.warning("idempotency store unavailable; the key stays reserved until its ttl")


def _record(response: HttpResponseBase) -> bytes:
    """Encode status, replayable headers and body: a JSON line, a newline, the body."""
    head = {
        "status": response.status_code,
        "headers": [[k, v] for k, v in response.items() if k.lower() not in _NOT_REPLAYED],
    }
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + response.content


def _replay(stored: bytes) -> HttpResponse:
    head_raw, _, body = bytes(stored).partition(b"\n")
    head = json.loads(head_raw)
    response = HttpResponse(body, status=head["status"])
    for name, value in head["headers"]:
        response[name] = value
    response[REPLAYED_HEADER] = "true"
    return response


# ---------------------------------------------------------------------- public API


def _policy(**kwargs: Any) -> Policy:
    methods: Iterable[str] = kwargs.pop("methods", UNSAFE_METHODS)
    return Policy(methods=frozenset(m.upper() for m in methods), **kwargs)


def idempotent(
    view: Callable[..., Any] | None = None,
    *,
    instance: str = "default",
    required: bool = False,
    ttl: timedelta | float | None = None,
    in_flight_ttl: timedelta | float | None = None,
    methods: Iterable[str] = UNSAFE_METHODS,
    scope: Callable[[HttpRequest], str] | None = None,
) -> Any:
    """Decorate a Django view (sync or async) to honour the ``Idempotency-Key`` header.

    ``instance`` picks the idempotency service; ``required`` answers 400 when the header
    is missing; ``ttl`` is how long a stored response is replayed (default: the
    service's ``ttl``); ``in_flight_ttl`` bounds how long a crashed request keeps its key
    reserved (default: the service's ``ttl``); ``methods`` are the methods handled;
    ``scope`` names who a key belongs to (default: the authenticated user).
    """
    policy = _policy(
        instance=instance,
        required=required,
        ttl=ttl,
        in_flight_ttl=in_flight_ttl,
        methods=methods,
        scope=scope,
    )

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        if iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                started = await sync_to_async(_begin)(request, policy)
                if started is None or isinstance(started, HttpResponseBase):
                    return started if started is not None else await func(request, *args, **kwargs)
                reservation = started
                try:
                    response = await func(request, *args, **kwargs)
                except BaseException:
                    await sync_to_async(_abort)(reservation)
                    raise
                await sync_to_async(_finish)(reservation, response, policy)
                return response

            return async_wrapper

        @functools.wraps(func)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            started = _begin(request, policy)
            if started is None:
                return func(request, *args, **kwargs)
            if isinstance(started, HttpResponseBase):
                return started
            reservation = started
            try:
                response = func(request, *args, **kwargs)
            except BaseException:
                _abort(reservation)
                raise
            _finish(reservation, response, policy)
            return response

        return wrapper

    return decorate(view) if view is not None else decorate


class IdempotencyMiddleware:
    """Apply :func:`idempotent`'s defaults to every request (sync and async stacks).

    Place it after ``AuthenticationMiddleware`` so keys are scoped by user. A view that
    is also decorated is handled once, by the middleware.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.policy = Policy()
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        """Reserve, run the rest of the stack, then store or release."""
        if self._async:
            return self._acall(request)
        started = _begin(request, self.policy)
        if started is None:
            return self.get_response(request)
        if isinstance(started, HttpResponseBase):
            return started
        reservation = started
        try:
            response = self.get_response(request)
        except BaseException:
            _abort(reservation)
            raise
        _finish(reservation, response, self.policy)
        return response

    async def _acall(self, request: HttpRequest) -> Any:
        started = await sync_to_async(_begin)(request, self.policy)
        if started is None:
            return await self.get_response(request)
        if isinstance(started, HttpResponseBase):
            return started
        reservation = started
        try:
            response = await self.get_response(request)
        except BaseException:
            await sync_to_async(_abort)(reservation)
            raise
        await sync_to_async(_finish)(reservation, response, self.policy)
        return response
