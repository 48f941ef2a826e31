"""The provider base: what every adapter that calls a provider's HTTP API shares.

django-anymail's ``base_requests`` is the model: a provider adapter holds only what is
specific to its provider (its SDK calls, its wire shapes, where its error body keeps the
code and the message); the rest is here, written once:

* **options** -- :func:`required` (a credential that must be set), :func:`endpoint` (the
  provider's URL checked by the outbound rules of :mod:`toolkit_batteries.core.outbound`,
  with the relaxations it was allowed) and :func:`warn_relaxed` (the one warning logged
  when a rule is lifted); a nested option (``remote.endpoint``) makes every message name
  its siblings (``remote.allow_insecure``, ``remote.allow_private``);
* **guarded clients** -- :func:`httpx_client`, :func:`requests_session` and
  :func:`guard_session` (for an SDK that builds its own ``requests`` session): https only
  unless ``allow_insecure``, public addresses only unless ``allow_private`` (judged on
  every resolved address at connect time), no redirects, no environment proxy, no
  transport retries (retries are the resilience policy's); :func:`read_bounded` reads
  a streamed answer up to a byte limit (after content decoding, so a compressed bomb is
  bounded too);
* **one error mapping** -- :func:`failure_of` reads any HTTP client's or SDK's exception
  (``httpx``, ``httpx2``, ``requests`` and the SDKs built on them) into a
  :class:`Failure`: the HTTP status and its :class:`Kind` (401/403 ``auth``, 404
  ``not_found``, 409 ``conflict``, 400/422 and other 4xx ``invalid``, 429
  ``rate_limited`` with the ``Retry-After`` seconds, 5xx ``unavailable``), or the
  transport's ``timeout``/``connection``, or ``malformed`` (an answer whose content
  encoding cannot be decoded), or ``blocked`` (the outbound guard refused the address).
  A battery turns the failure into its own error class with its own message (the
  toolkit's errors differ per battery; their texts are kept). ``retryable`` and
  ``retry_after`` are what the resilience policy reads;
* **redaction** -- :func:`scrub` removes the credentials (and anything the shared
  redactor recognises) from a provider's text before it reaches an error;
* **webhooks** -- :func:`signed_json` verifies a timestamped HMAC signature header
  (Stripe's ``t=..,v1=..``, Paddle's ``ts=..;h1=..``; see
  :mod:`toolkit_batteries.core.webhook_signatures`) against a tolerance on an injectable
  clock, then decodes the JSON body.

How an adapter uses it::

    from toolkit_batteries.core.outbound import provider

    key = provider.required(options.secret_key, service="payment", field="secret_key",
                            adapter="payment_a", instance=ctx.instance)
    ep = provider.endpoint(options, service="payment", default=DEFAULT_ENDPOINT,
                           instance=ctx.instance)
    provider.warn_relaxed(ctx.logger, ep)
    session = provider.requests_session(ep)          # or provider.httpx_client(ep)
    ...
    try:
        answer = sdk_call(...)
    except Exception as exc:
        failure = provider.failure_of(exc, secrets=(key,), code=..., message=...)
        if failure is None:
            raise                                   # a bug, not the provider
        if failure.kind is provider.Kind.BLOCKED:
            raise provider.blocked_error(ep) from None
        raise BatteryError(..., status=failure.status, ...) from None

Nothing here imports an HTTP client at module import: ``httpx`` and ``requests`` are
imported by the function that builds one, so ``toolkit --help`` stays fast.
"""

from __future__ import annotations

import enum
import json
import logging
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import InvalidOptionsError

from . import OutboundBlockedError, check_url, is_blocked
from .retry_after import parse_retry_after

if TYPE_CHECKING:
    import httpx
    import requests

    from toolkit_batteries.core.webhook_signatures import Scheme

__all__ = [
    "BLOCKED",
    "RETRYABLE_STATUSES",
    "Endpoint",
    "Failure",
    "Kind",
    "blocked_error",
    "endpoint",
    "error_body",
    "failure_of",
    "guard_session",
    "http_error_behind",
    "httpx_client",
    "httpx_transport",
    "kind_of_status",
    "positive",
    "read_bounded",
    "read_json",
    "requests_session",
    "required",
    "scrub",
    "signed_json",
    "warn_relaxed",
]

#: The reason of the error raised when the guard refused a resolved address.
BLOCKED = "resolves to a private, loopback or link-local address; set allow_private"
#: Statuses after which another attempt may succeed (besides every 5xx).
RETRYABLE_STATUSES = frozenset({408, 429})


# ---------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A provider URL the outbound rules allowed, with the relaxations it was allowed."""

    url: str
    service: str
    field: str
    instance: str
    allow_insecure: bool = False
    allow_private: bool = False
    skip_verify: bool = False
    #: What the relaxation options' names start with: ``"remote."`` for a nested
    #: ``remote.endpoint``, so messages name ``remote.allow_private``.
    prefix: str = ""

    def option(self, name: str) -> str:
        """Return the full name of the sibling option ``name`` (``remote.allow_private``)."""
        return self.prefix + name


def required(value: Any, *, service: str, field: str, adapter: str, instance: str) -> str:
    """Return the credential ``value`` stripped; raise naming ``field`` when it is empty."""
    text = str(value or "").strip()
    if not text:
        raise InvalidOptionsError(
            service, field, f"is required by the {adapter} adapter", instance=instance
        )
    return text


def positive(value: timedelta | float, *, service: str, field: str, instance: str) -> float:
    """Return ``value`` (a duration in seconds, or a count) as a float; raise unless > 0.

    The system check reports the same rule from the options' declarations; an adapter
    repeats it at open because a service may open where checks never ran (a script).
    """
    number = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if number <= 0:
        raise InvalidOptionsError(service, field, "must be positive", instance=instance)
    return number


def endpoint(
    options: Any,
    *,
    service: str,
    default: str,
    instance: str,
    field: str = "endpoint",
    url: str | None = None,
) -> Endpoint:
    """Check the provider URL (``options.<field>``, else ``default``) against the rules.

    ``options`` supplies ``allow_insecure``, ``allow_private`` and (when it has one)
    ``insecure_skip_verify``; ``url`` overrides the option's value. A nested ``field``
    (``remote.endpoint``, with ``options`` the ``remote`` group) makes the messages name
    the nested relaxations (``remote.allow_insecure``). The URL comes back without a
    trailing ``/``; errors name the field, never the URL.
    """
    allow_insecure = bool(getattr(options, "allow_insecure", False))
    allow_private = bool(getattr(options, "allow_private", False))
    prefix = field.rpartition(".")[0] + "." if "." in field else ""
    text = url if url is not None else getattr(options, field.rsplit(".", 1)[-1], "")
    checked = check_url(
        (text or "").strip() or default,
        service=service,
        field=field,
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
        insecure_option=f"{prefix}allow_insecure",
        private_option=f"{prefix}allow_private",
    )
    return Endpoint(
        url=checked.rstrip("/"),
        service=service,
        field=field,
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
        skip_verify=bool(getattr(options, "insecure_skip_verify", False)),
        prefix=prefix,
    )


def warn_relaxed(logger: logging.Logger | logging.LoggerAdapter[Any], ep: Endpoint) -> None:
    """Log one warning per outbound rule that ``ep`` lifts (nothing when none is)."""
    where = f"{ep.service}.{ep.instance}"
    if ep.allow_private:
        logger.warning(
            "%s: %s is on: private, loopback and link-local addresses may be dialed",
            where,
            ep.option("allow_private"),
        )
    if ep.allow_insecure:
        logger.warning("%s: %s is on: plain http is allowed", where, ep.option("allow_insecure"))
    if ep.skip_verify:
        logger.warning(
            "%s: %s is on: TLS certificates are NOT verified",
            where,
            ep.option("insecure_skip_verify"),
        )


def blocked_error(ep: Endpoint, reason: str | None = None) -> InvalidOptionsError:
    """Return the error of a call the guard refused at connect time (names no address).

    The default reason names the endpoint's own ``allow_private`` (``remote.allow_private``
    for a nested endpoint).
    """
    if reason is None:
        reason = BLOCKED.replace("allow_private", ep.option("allow_private"))
    return InvalidOptionsError(ep.service, ep.field, reason, instance=ep.instance)


# ---------------------------------------------------------------------- guarded clients


def _ssl_context(ep: Endpoint) -> ssl.SSLContext | None:
    if not ep.skip_verify:
        return None
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def httpx_transport(ep: Endpoint, *, max_connections: int = 20) -> httpx.BaseTransport:
    """Return the guarded ``httpx`` transport for ``ep`` (an SDK may wrap it)."""
    from .httpx_transport import GuardedTransport

    return GuardedTransport(
        allow_private=ep.allow_private,
        allow_insecure=ep.allow_insecure,
        ssl_context=_ssl_context(ep),
        max_connections=max_connections,
    )


def httpx_client(
    ep: Endpoint,
    *,
    timeout: float,
    max_connections: int = 20,
    headers: Mapping[str, str] | None = None,
) -> httpx.Client:
    """Return an ``httpx.Client`` on the guarded transport (no redirects, no env proxy).

    ``headers`` are sent with every request (an adapter's ``Accept`` and credentials):
    set at construction, so no request can go out without them.
    """
    import httpx

    return httpx.Client(
        transport=httpx_transport(ep, max_connections=max_connections),
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        headers=dict(headers or {}),
    )


def requests_session(ep: Endpoint) -> requests.Session:
    """Return a guarded ``requests`` session for ``ep`` (what requests-based SDKs take)."""
    from .requests_adapter import guarded_session

    return guarded_session(allow_insecure=ep.allow_insecure, allow_private=ep.allow_private)


def guard_session(session: requests.Session, ep: Endpoint) -> requests.Session:
    """Replace the transports of an SDK's own ``requests`` session by guarded ones.

    The session keeps its headers (the SDK's authentication and versions); it loses
    redirects, environment proxies and plain http (unless ``allow_insecure``).
    """
    from .requests_adapter import GuardedHTTPAdapter

    session.trust_env = False
    session.max_redirects = 0
    session.adapters.clear()
    session.mount("https://", GuardedHTTPAdapter(allow_private=ep.allow_private))
    if ep.allow_insecure:
        session.mount("http://", GuardedHTTPAdapter(allow_private=ep.allow_private))
    return session


def read_bounded(
    chunks: Iterable[bytes],
    limit: int,
    *,
    too_large: Callable[[], Exception] | None = None,
    each: Callable[[], None] | None = None,
) -> bytes:
    """Join ``chunks`` (``response.iter_bytes()``) into at most ``limit`` bytes.

    A provider decides how much it sends; the reader stops at the first chunk that passes
    ``limit`` and raises ``too_large()`` (``ValueError`` when not given) instead of
    holding an answer without bound. ``each`` runs after every chunk (e.g. to enforce a
    deadline while the answer trickles in).
    """
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise too_large() if too_large is not None else ValueError("the answer is too large")
        if each is not None:
            each()
    return bytes(body)


def read_json(response: httpx.Response, limit: int) -> Any:
    """Read a streamed ``httpx`` answer of at most ``limit`` bytes as JSON.

    Raises ``ValueError`` (``json.JSONDecodeError`` for a body that is not JSON) rather
    than reading an answer without bound.
    """
    return json.loads(read_bounded(response.iter_bytes(), limit))


# ---------------------------------------------------------------------- error mapping


class Kind(enum.StrEnum):
    """What went wrong with a provider call, whatever client or SDK made it."""

    AUTH = "auth"  # 401, 403: the credentials
    NOT_FOUND = "not_found"  # 404
    CONFLICT = "conflict"  # 409
    INVALID = "invalid"  # 400, 422 and other 4xx: the request
    RATE_LIMITED = "rate_limited"  # 429 (``retry_after`` from the header)
    UNAVAILABLE = "unavailable"  # 5xx
    TIMEOUT = "timeout"  # no answer in time (408 too)
    CONNECTION = "connection"  # the connection failed or broke
    MALFORMED = "malformed"  # the answer's content encoding cannot be decoded
    BLOCKED = "blocked"  # the outbound guard refused the address


def kind_of_status(status: int) -> Kind:
    """Return the :class:`Kind` of an HTTP error status."""
    if status in (401, 403):
        return Kind.AUTH
    if status == 404:
        return Kind.NOT_FOUND
    if status == 408:
        return Kind.TIMEOUT
    if status == 409:
        return Kind.CONFLICT
    if status == 429:
        return Kind.RATE_LIMITED
    if status >= 500:
        return Kind.UNAVAILABLE
    return Kind.INVALID


@dataclass(frozen=True, slots=True)
class Failure:
    """A provider call's failure, read from whatever raised it (no credential inside)."""

    kind: Kind
    status: int | None = None
    code: str = ""
    message: str = ""
    retry_after: float | None = None
    retryable: bool = False


def _status(exc: BaseException) -> int | None:
    """Return the HTTP status ``exc`` carries, wherever its client keeps it."""
    for name in ("status_code", "http_status", "status"):
        value = getattr(exc, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    for value in (getattr(response, "status_code", None), getattr(exc, "code", None)):
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def http_error_behind(exc: BaseException) -> BaseException | None:
    """Return the HTTP error ``exc`` stands for, or ``None`` when it carries no status.

    ``exc`` itself when it carries a status; else, when ``exc`` is a ``ValueError`` or
    ``TypeError`` an SDK raised *while reading* an HTTP error (Paddle's SDK runs
    ``int(Retry-After)`` and breaks on ``0.05``), the HTTP error it was handling: the
    provider answered, and that answer is what the battery must report.
    """
    if _status(exc) is not None:
        return exc
    context = exc.__context__
    if (
        isinstance(exc, ValueError | TypeError)
        and not exc.__suppress_context__
        and context is not None
        and _status(context) is not None
    ):
        return context
    return None


def error_body(exc: BaseException) -> Mapping[str, Any]:
    """Return the JSON object of the error answer behind ``exc`` (``{}`` when there is none).

    For an adapter that reads its provider's error code from the body itself (when the
    SDK could not). Only an answer the client already read is decoded (nothing more is
    read from the network).
    """
    behind = http_error_behind(exc)
    response = getattr(behind, "response", None)
    content = getattr(response, "_content", None)
    if not isinstance(content, bytes | bytearray) or len(content) > 1024 * 1024:
        return {}
    try:
        data = json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _header(exc: BaseException, name: str) -> Any:
    for holder in (getattr(exc, "response", None), exc):
        headers = getattr(holder, "headers", None)
        if headers is not None and hasattr(headers, "get"):
            try:
                value = headers.get(name)
            except (TypeError, AttributeError):  # pragma: no cover - odd header holders
                value = None
            if value is not None:
                return value
    return None


def _transport_kind(exc: BaseException) -> Kind | None:
    """``timeout``/``connection``/``malformed`` for a client's error (judged by class).

    Read from the class names so the base imports no SDK: ``httpx``'s and ``httpx2``'s
    ``TimeoutException``/``TransportError``, ``requests``' ``Timeout``/
    ``RequestException``, the SDKs' ``APITimeoutError``/``APIConnectionError``.
    """
    names = {klass.__name__ for klass in type(exc).__mro__}
    if "DecodingError" in names:  # httpx: a body its Content-Encoding does not decode
        return Kind.MALFORMED
    if isinstance(exc, TimeoutError) or any("Timeout" in name for name in names):
        return Kind.TIMEOUT
    if isinstance(exc, OSError) or names & {
        "TransportError",
        "RequestException",
        "APIConnectionError",
        "ConnectionError",
        "NetworkError",
    }:
        return Kind.CONNECTION
    return None


def failure_of(
    exc: BaseException,
    *,
    secrets: Iterable[str] = (),
    code: Any = "",
    message: Any = "",
    retry_statuses: frozenset[int] = RETRYABLE_STATUSES,
) -> Failure | None:
    """Read ``exc`` into a :class:`Failure`, or ``None`` when it is not a provider failure.

    ``code`` and ``message`` are what the adapter read from its provider's error body
    (the provider-specific part); ``message`` is scrubbed of ``secrets``. An SDK that
    broke while reading an HTTP error is read as that error (:func:`http_error_behind`). A status in
    ``retry_statuses`` or any 5xx, a time-out and a lost connection are ``retryable``.
    """
    if isinstance(exc, OutboundBlockedError) or is_blocked(exc):
        return Failure(Kind.BLOCKED)
    behind = http_error_behind(exc)
    status = _status(behind) if behind is not None else None
    if behind is not None and status is not None and status >= 400:
        return Failure(
            kind_of_status(status),
            status=status,
            code=str(code or ""),
            message=scrub(message, *secrets) if message else "",
            retry_after=parse_retry_after(_header(behind, "retry-after")),
            retryable=status in retry_statuses or status >= 500,
        )
    kind = _transport_kind(exc)
    if kind is None:
        return None
    return Failure(kind, retryable=kind is not Kind.MALFORMED)


def scrub(text: Any, *secrets: str, limit: int = 500) -> str:
    """Return provider text, shortened, without ``secrets`` or any other credential.

    A provider's error may echo the request's credentials, or someone else's (a proxy's
    ``Authorization`` header, a URL with a password): the shared redactor masks those.
    """
    from toolkit_batteries.core.redaction import redact_string

    out = str(text or "")
    for secret in secrets:
        if secret:
            out = out.replace(secret, "[redacted]")
    return redact_string(out)[:limit]


# ---------------------------------------------------------------------- webhooks


def signed_json(
    scheme: Scheme,
    headers: Mapping[str, str],
    body: bytes,
    secret: str,
    *,
    tolerance: float,
    now: Callable[[], float],
    fail: Callable[[str], Exception],
) -> tuple[float, Any]:
    """Verify ``body``'s signature header (``scheme``) and return ``(timestamp, JSON)``.

    Constant-time comparison, every signature of a rolled secret tried, the timestamp
    within ``tolerance`` seconds of ``now()``; ``fail(reason)`` builds the battery's error
    for a bad signature or a body that is not JSON.
    """
    from toolkit_batteries.core import webhook_signatures

    stamp = webhook_signatures.verify(
        scheme,
        headers.get(scheme.header),
        body,
        secret,
        tolerance=tolerance,
        now=now,
        fail=fail,
    )
    try:
        return float(stamp), json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise fail("body is not JSON") from None
