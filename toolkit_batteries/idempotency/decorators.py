"""Make unsafe HTTP requests safe to retry with an ``Idempotency-Key`` header.

::

    from toolkit_batteries.idempotency.decorators import idempotent

    @idempotent                              # or @idempotent(required=True, instance="api")
    def create_order(request): ...

    MIDDLEWARE = [..., "toolkit_batteries.idempotency.decorators.IdempotencyMiddleware"]

On ``POST``, ``PUT``, ``PATCH`` and ``DELETE`` carrying the header (the behaviour follows
the IETF ``Idempotency-Key`` header draft):

=====================================================  ==================================
first request with a key                               runs the view; its response is
                                                       stored (status, headers, body) for
                                                       the store's ``ttl``, unless it is
                                                       401, 403, 408, 429 or 5xx
retry with the same key and the same request           the stored response, plus
                                                       ``Idempotent-Replayed: true``
same key while the first request still runs            409 ``already_exists``,
                                                       ``Retry-After: 1``
same key, different method, path, query or body        400 ``failed_precondition``
no header and ``required=True``                        400 ``invalid_argument``
header empty, over 255 characters or not printable     400 ``invalid_argument``
the store is unreachable                               503 ``unavailable`` (fails closed:
                                                       never runs the view twice)
=====================================================  ==================================

A view that raises, streams its response, or answers 401, 403, 408, 429 or 500 and
more releases the key, so a retry runs again (an answer about the credential, the
clock or the load is not the request's result). ``Set-Cookie`` is not replayed. Safe
methods pass through.

Keys are scoped by the caller, so two callers' identical keys never meet. The scope is
built from every identity the request carries, before the view runs (so it holds
whether this code runs before or after the view's authentication, under the middleware,
and around DRF views):

* a bearer token the toolkit's auth verifies (``request.auth`` when
  ``bearer_required`` already ran, else ``services.auth(auth_instance).verify``): its
  issuer and subject, so a retry with a refreshed token still replays;
* any other ``Authorization`` header (another scheme, or a token that does not verify):
  a hash of the header, so only the same credential meets the record;
* a user Django authenticated (``request.user``, the session): its primary key;
* the value of ``scope=`` (a callable taking the request), when given: a tenant, an API
  client... It narrows the scope and never widens it past the caller.

A request that carries none of them (an anonymous caller, no explicit scope) runs the
view without idempotency: nothing is stored for it, so an anonymous answer can never be
replayed to anyone. The stored key is ``http:<hash of the scope>:<key>``.
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

from toolkit_batteries.core.errors import ServiceUnavailableError, ToolkitError, http_status
from toolkit_batteries.http import error_response

from .base import Reservation, ReservationState

__all__ = [
    "HEADER",
    "NEVER_STORED",
    "REPLAYED_HEADER",
    "UNSAFE_METHODS",
    "IdempotencyMiddleware",
    "caller_scope",
    "idempotent",
    "storable",
    "stored_key",
]

logger = logging.getLogger("toolkit.idempotency")

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_KEY_LENGTH = 255
#: Statuses never stored (and 500 and more): about the credential, time or load, not the
#: request's result, so a retry must run again.
NEVER_STORED = frozenset({401, 403, 408, 429})
#: Response headers never stored for replay.
_NOT_REPLAYED = frozenset({"set-cookie", REPLAYED_HEADER.lower()})
_HANDLED = "_toolkit_idempotency_handled"
#: Set on the battery's own answers (409 in progress, 400, 503): never stored.
_OWN_ANSWER = "_toolkit_idempotency_answer"
#: Hex digits of the scope hash in a stored key (128 bits).
_SCOPE_HEX = 32
_HTTP_PREFIX = "http:"
#: Longest client key stored as is; a longer one is stored as its SHA-256.
_PLAIN_KEY_LENGTH = MAX_KEY_LENGTH - len(_HTTP_PREFIX) - _SCOPE_HEX - 1


@dataclass(frozen=True, slots=True)
class Policy:
    """How one decorated view (or the middleware) applies idempotency."""

    instance: str = "default"
    required: bool = False
    ttl: timedelta | float | None = None
    in_flight_ttl: timedelta | float | None = None
    methods: frozenset[str] = UNSAFE_METHODS
    scope: Callable[[HttpRequest], str] | None = None
    auth_instance: str = "default"


def caller_scope(request: HttpRequest, auth_instance: str = "default") -> str:
    """Return who is calling, from every identity the request carries; empty if none.

    See the module's docstring for the parts. The bearer token is verified here when no
    earlier layer did, so the scope does not depend on where the view authenticates.
    """
    return _joined(_identities(request, auth_instance))


def _joined(parts: list[str]) -> str:
    """Join scope parts unambiguously (JSON), or return ``""`` when there are none."""
    return json.dumps(parts, ensure_ascii=False) if parts else ""


def _identities(request: HttpRequest, auth_instance: str) -> list[str]:
    parts: list[str] = []
    header = request.META.get("HTTP_AUTHORIZATION", "")
    subject = _bearer_subject(request, header, auth_instance)
    if subject is not None:
        parts.append(f"bearer:{subject}")
    elif header:
        parts.append("credential:" + hashlib.sha256(header.encode()).hexdigest())
    user = getattr(request, "user", None)
    if (
        user is not None
        and getattr(user, "is_authenticated", False)
        and not hasattr(user, "claims")  # a TokenUser is the bearer subject above
    ):
        parts.append(f"user:{user.pk}")
    return parts


def _bearer_subject(request: HttpRequest, header: str, auth_instance: str) -> str | None:
    """Return ``issuer NUL subject`` of a verified toolkit bearer token, else ``None``."""
    from toolkit_batteries.auth.base import AuthError, Claims

    claims = getattr(request, "auth", None)
    if not isinstance(claims, Claims):
        from toolkit_batteries.auth.bearer import BearerRefused, bearer_token

        try:
            token = bearer_token(header)
        except BearerRefused:
            return None
        if token is None:
            return None
        from toolkit_batteries import services

        try:
            claims = services.auth(auth_instance).verify(token)
        except (AuthError, ToolkitError):
            # Refused, or auth not configured or down: the header's hash scopes it instead.
            return None
    issuer = claims.extra.get("iss", "") if claims.extra else ""
    return f"{issuer}\0{claims.subject}"


def stored_key(scope: str, key: str) -> str:
    """Return the store key of ``key`` for ``scope``: ``http:<scope hash>:<key>``."""
    digest = hashlib.sha256(scope.encode()).hexdigest()[:_SCOPE_HEX]
    if len(key) > _PLAIN_KEY_LENGTH:
        key = "sha256-" + hashlib.sha256(key.encode()).hexdigest()
    return f"{_HTTP_PREFIX}{digest}:{key}"


def _answer(status_code: str, message: str, **kwargs: Any) -> HttpResponse:
    """Return the battery's own error answer (status from the shared table), marked unstored."""
    response = error_response(http_status(status_code), status_code, message, **kwargs)
    setattr(response, _OWN_ANSWER, True)
    return response


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
            return _answer("invalid_argument", f"the {HEADER} header is required")
        return None
    key = raw.strip()
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        return _answer(
            "invalid_argument",
            f"the {HEADER} header must be 1 to {MAX_KEY_LENGTH} printable characters",
        )
    parts = _identities(request, policy.auth_instance)
    if policy.scope is not None and (explicit := policy.scope(request)):
        parts.append(f"explicit:{explicit}")
    scope = _joined(parts)
    if not scope:
        return None  # an anonymous caller: nothing is stored for it
    setattr(request, _HANDLED, True)
    mine = fingerprint(request)
    from toolkit_batteries import services

    try:
        store = services.idempotency(policy.instance)
        reservation = store.reserve(stored_key(scope, key), policy.in_flight_ttl, fingerprint=mine)
    except ServiceUnavailableError:
        logger.warning(
            "idempotency store unavailable; refusing %s %s", request.method, request.path
        )
        return _answer(
            "unavailable", "the idempotency store is unavailable", headers={"Retry-After": "1"}
        )
    if reservation.state is not ReservationState.NEW and reservation.fingerprint != mine:
        return _answer(
            "failed_precondition",
            f"this {HEADER} was already used with a different request (method, path or body)",
        )
    if reservation.state is ReservationState.IN_PROGRESS:
        return _answer(
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
        if not storable(response):
            reservation.release()
            return
        render = getattr(response, "render", None)
        if callable(render) and not getattr(response, "is_rendered", True):
            render()
        if not reservation.commit(_record(response), ttl=policy.ttl):
            logger.warning(
                "idempotency response not stored (the reservation expired or was evicted)"
            )
    except ServiceUnavailableError:
        logger.warning("idempotency store unavailable; the response was not stored")


def storable(response: HttpResponseBase) -> bool:
    """Tell whether ``response`` may be replayed: not streamed, not the battery's own
    answer, not 401, 403, 408, 429 or 5xx."""
    status = response.status_code
    return not (
        response.streaming
        or getattr(response, _OWN_ANSWER, False)
        or status >= 500
        or status in NEVER_STORED
    )


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
    auth_instance: str = "default",
) -> Any:
    """Decorate a Django view (sync or async) to honour the ``Idempotency-Key`` header.

    ``instance`` picks the idempotency service; ``required`` answers 400 when the header
    is missing; ``ttl`` is how long a stored response is replayed (default: the
    service's ``ttl``); ``in_flight_ttl`` bounds how long a crashed request keeps its key
    reserved (default: the service's ``ttl``); ``methods`` are the methods handled;
    ``scope`` (a callable taking the request) narrows who a key belongs to, beyond the
    caller's identity, and makes anonymous requests idempotent; ``auth_instance`` is the
    auth instance that verifies bearer tokens for the scope.
    """
    policy = _policy(
        instance=instance,
        required=required,
        ttl=ttl,
        in_flight_ttl=in_flight_ttl,
        methods=methods,
        scope=scope,
        auth_instance=auth_instance,
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

    Place it after ``AuthenticationMiddleware`` so session users are part of the scope;
    bearer tokens are verified here (see the module's docstring). A view that is also
    decorated is handled once, by the middleware; an anonymous request it lets through
    may still be handled by a decorator with an explicit ``scope``.
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
