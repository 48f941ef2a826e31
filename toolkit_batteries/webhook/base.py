"""The webhook service: signed HTTP deliveries with retries, recorded in a table.

::

    hook = services.webhook()
    delivery = hook.send("https://hooks.example.com/orders", {"id": 42},
                         event="order.paid", secret=endpoint.secret)
    delivery.status        # "succeeded", "failed" (http) or "queued" (queue)

The base class does what must not differ between adapters: it checks the target
against the outbound rules (``core.outbound``: https, public addresses only unless
``allow_private_targets``), encodes the payload, creates the delivery's row
(:class:`~toolkit_batteries.webhook.models.WebhookDelivery`) and hands the delivery to
the adapter's ``_dispatch``: ``http`` sends it now, retrying with the resilience
battery's policy; ``queue`` pushes it as a job for a worker. Receivers check deliveries
with :meth:`Webhook.verify` or :func:`toolkit_batteries.webhook.verify`.

The secret is an argument of every ``send`` (one per endpoint, usually from your own
table or the ``secrets`` service): it is never an option, never stored in the delivery
row, never logged and never in a ``repr``.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import urlsplit

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.groups import ResilienceRetryPolicy, RetryPolicy
from toolkit_batteries.core.outbound.log_redaction import redact_url

from .errors import TargetRefusedError, WebhookError
from .signing import DEFAULT_TOLERANCE, Secrets, secret_list
from .signing import verify as verify_signature

__all__ = [
    "Delivery",
    "TargetRefusedError",
    "Webhook",
    "WebhookError",
    "host_of",
    "seconds",
]

logger = logging.getLogger("toolkit.webhook")

#: Longest event name (it is a header value and a column).
MAX_EVENT_LENGTH = 200
#: Longest target URL (the column's width).
MAX_TARGET_LENGTH = 2048
#: Allowed targets remembered per instance (the memo is emptied when it is full).
MAX_ALLOWED_TARGETS = 1024


def seconds(value: Any, *, service: str, field: str, instance: str) -> float:
    """Return an option's duration in seconds; refuse a negative one naming the field."""
    result = value.total_seconds() if isinstance(value, timedelta) else float(value or 0)
    if result < 0:
        raise InvalidOptionsError(service, field, "must not be negative", instance=instance)
    return result


def host_of(target: str) -> str:
    """Return ``scheme://host[:port]`` of a target: what logs show (paths may hold tokens)."""
    parts = urlsplit(target)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


@dataclass(frozen=True, slots=True)
class Delivery:
    """What became of one ``send``: the row's view, never the secret or the body."""

    id: str
    target: str
    event: str
    status: str
    attempts: int = 0
    response_status: int | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        """Tell whether the receiver answered 2xx."""
        return self.status == "succeeded"

    @property
    def final(self) -> bool:
        """Tell whether no further attempt will be made."""
        return self.status in ("succeeded", "failed")

    def __repr__(self) -> str:
        return (
            f"Delivery(id={self.id!r}, event={self.event!r}, target={host_of(self.target)!r}, "
            f"status={self.status!r}, attempts={self.attempts})"
        )


class Webhook(Service):
    """Signed webhook delivery (spec: ``webhook``); adapters implement ``_dispatch``."""

    service_name: ClassVar[str] = "webhook"
    #: Insert the delivery's row before ``_dispatch`` (``queue``: the job must find it);
    #: ``http`` inserts it with the first attempt's outcome instead, one write fewer.
    row_before_dispatch: ClassVar[bool] = True

    def __init__(
        self,
        options: Any,
        *,
        instance: str = "default",
        database: Any = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        def secs(field: str) -> float:
            return seconds(
                getattr(options, field), service="webhook", field=field, instance=instance
            )

        self.options = options
        self.instance = instance
        #: Seconds one attempt may take (connect, send, answer): ``timeout``, 10 s.
        self.timeout = secs("timeout") or 10.0
        #: Seconds a signature's timestamp may drift (``replay_tolerance``, 5 min).
        self.replay_tolerance = secs("replay_tolerance") or DEFAULT_TOLERANCE
        retries = int(options.max_retries)
        if retries < 0:
            raise InvalidOptionsError(
                "webhook", "max_retries", "must not be negative", instance=instance
            )
        #: Retries after the first attempt (``max_retries``).
        self.max_retries = retries
        #: Permit private, loopback and link-local targets, and plain http (local receivers).
        self.allow_private_targets = bool(options.allow_private_targets)
        #: The :class:`~toolkit_batteries.db.Database` holding the delivery rows.
        self.database = database
        self.clock = clock
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.retry_policy: RetryPolicy = ResilienceRetryPolicy()
        #: Targets ``check_target`` allowed, and what it returned: a sender posts to a few
        #: endpoints over and over, and the rules read only the URL's text and options set
        #: here (addresses are checked again on every connection, by the transport).
        self._allowed: dict[str, str] = {}
        self._last_keys: tuple[str, list[bytes]] | None = None
        self.configure()
        self._closed = False

    def configure(
        self,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Inject the backoff shape, sleep, random source or clock from code (tests, tuning).

        ``retry`` is the resilience battery's retry policy (``ResilienceRetryPolicy``:
        50 ms base, x2, 2 s cap, 10 % jitter by default); its ``max_attempts`` is always
        ``max_retries + 1``, the option being the one place the count is set.
        """
        if retry is not None:
            self.retry_policy = retry
        self.retry_policy = replace(self.retry_policy, max_attempts=self.max_retries + 1)
        if sleep is not None:
            self.sleep = sleep
        if rng is not None:
            self.rng = rng
        if clock is not None:
            self.clock = clock

    # ------------------------------------------------------------------ sending

    def send(
        self,
        target: str,
        payload: Any,
        *,
        event: str,
        secret: Secrets,
        content_type: str | None = None,
        delivery_id: str | None = None,
    ) -> Delivery:
        """Deliver ``payload`` to ``target`` as event ``event``, signed with ``secret``.

        ``payload`` is bytes (sent as is) or a JSON value (encoded compactly, sent as
        ``application/json``). ``secret`` is one secret or a list (during a rotation every
        secret signs). Raises :class:`TargetRefusedError` for a target the outbound rules
        refuse, before anything is sent or recorded; delivery failures are not raised but
        recorded, and returned in :class:`Delivery`.
        """
        self._check_open()
        url = self._allowed.get(target) if isinstance(target, str) else None
        if url is None:
            url = self.check_target(target)
            if len(self._allowed) >= MAX_ALLOWED_TARGETS:
                self._allowed.clear()
            self._allowed[target] = url
        if not isinstance(event, str) or not event or len(event) > MAX_EVENT_LENGTH:
            raise ValueError(f"event must be 1 to {MAX_EVENT_LENGTH} characters")
        if any(ch in event for ch in "\r\n\x00"):
            raise ValueError("event must not contain line breaks or NUL")
        keys = self._keys_of(secret)
        body, kind = encode_payload(payload, content_type)
        ident = delivery_id or os.urandom(16).hex()  # 128 random bits, as a uuid4's hex
        if not ident.isascii() or not ident.isprintable() or not 1 <= len(ident) <= 64:
            raise ValueError("delivery_id must be 1 to 64 printable ASCII characters")
        if self.row_before_dispatch:
            self._create_row(ident, url, event, len(body))
        return self._dispatch(Delivery(ident, url, event, "queued"), body, kind, keys)

    def _keys_of(self, secret: Secrets) -> list[bytes]:
        """Return ``secret_list(secret)``, remembering the last text secret's keys.

        Why: a sender passes the same endpoint secret send after send, and decoding a
        ``whsec_`` secret costs more than signing. One entry only, so a secret that was
        rotated out is not kept beyond the next send with another one.
        """
        if isinstance(secret, str):
            last = self._last_keys
            if last is not None and last[0] == secret:
                return last[1]
            keys = secret_list(secret)
            self._last_keys = (secret, keys)
            return keys
        return secret_list(secret)

    def check_target(self, target: str) -> str:
        """Return ``target`` if the outbound rules allow it, else raise TargetRefusedError.

        The rules of ``core.outbound.check_url``: an http(s) URL without credentials or
        fragment (a query is allowed: many receivers take a token there), https unless
        ``allow_private_targets``, and not a ``localhost`` name or a non-public literal
        address unless ``allow_private_targets``. Names are judged again on every address
        they resolve to when the connection is made.
        """
        from toolkit_batteries.core.outbound import check_url

        if not isinstance(target, str):
            raise TypeError("target must be a URL string")
        if len(target) > MAX_TARGET_LENGTH:
            raise TargetRefusedError(self.instance, f"is longer than {MAX_TARGET_LENGTH}")
        if "#" in target:
            raise TargetRefusedError(self.instance, "must not have a fragment")
        text, _, query = target.strip().partition("?")
        allow = self.allow_private_targets
        try:
            check_url(
                text,
                service="webhook",
                field="target",
                instance=self.instance,
                allow_insecure=allow,
                allow_private=allow,
                insecure_option="allow_private_targets",
                private_option="allow_private_targets",
            )
        except InvalidOptionsError as exc:
            reason = str(exc).split('"target" ', 1)[-1]
            raise TargetRefusedError(self.instance, reason) from None
        return f"{text}?{query}" if query else text

    def _dispatch(self, delivery: Delivery, body: bytes, kind: str, keys: list[bytes]) -> Delivery:
        raise NotImplementedError

    # ------------------------------------------------------------------ receiving

    def verify(self, headers: Mapping[str, Any] | Any, body: bytes, secret: Secrets) -> int:
        """Verify a received delivery with this instance's ``replay_tolerance`` and clock.

        Returns the signed timestamp; raises
        :class:`~toolkit_batteries.webhook.signing.SignatureError` otherwise.
        """
        return verify_signature(
            headers, body, secret, tolerance=self.replay_tolerance, now=self.clock
        )

    # ------------------------------------------------------------------ the rows

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def _rows(self) -> Any:
        from .models import WebhookDelivery

        return WebhookDelivery.objects.using(self.database.alias)

    def _create_row(self, ident: str, target: str, event: str, size: int, **outcome: Any) -> None:
        self._insert_row(self._row_fields(ident, target, event, size, **outcome))

    def _row_fields(
        self, ident: str, target: str, event: str, size: int, **outcome: Any
    ) -> dict[str, Any]:
        now = self._now()
        if outcome.get("status") == "succeeded":
            outcome["delivered_at"] = now
        return {
            "delivery_id": ident,
            "instance": self.instance,
            "adapter": self.adapter_name,
            "target": redact_url(target),  # a query often holds the receiver's token
            "event": event,
            "body_size": size,
            "created_at": now,
            "updated_at": now,
            **{"status": "queued", **outcome},
        }

    def _insert_row(self, fields: dict[str, Any]) -> None:
        """Insert a delivery's row now (``http`` defers a first-attempt success's row)."""
        self._rows().create(**fields)

    def _flush_log(self) -> None:
        """Write deferred rows before a read (only ``http`` defers any)."""

    def _record(
        self,
        delivery: Delivery,
        status: str,
        *,
        attempts: int,
        response_status: int | None = None,
        error: str = "",
        size: int | None = None,
    ) -> Delivery:
        """Write the outcome of attempt number ``attempts`` and return the new view.

        With ``size`` (the body's) the row is inserted with the outcome, else updated.
        """
        changes: dict[str, Any] = {
            "status": status,
            "attempts": attempts,
            "response_status": response_status,
            "last_error": error,
        }
        if size is not None:
            self._create_row(delivery.id, delivery.target, delivery.event, size, **changes)
        else:
            now = self._now()
            changes["updated_at"] = now
            if status == "succeeded":
                changes["delivered_at"] = now
            self._rows().filter(delivery_id=delivery.id).update(**changes)
        # Built directly: ``dataclasses.replace`` costs more than the rest of this view.
        return Delivery(
            delivery.id, delivery.target, delivery.event, status, attempts, response_status, error
        )

    def delivery(self, delivery_id: str) -> Delivery | None:
        """Return the recorded state of a delivery, or ``None`` if there is no such row.

        Its ``target`` is the stored one: the query, if any, reads ``?[redacted]``.
        """
        self._flush_log()
        row = self._rows().filter(delivery_id=delivery_id).first()
        if row is None:
            return None
        return Delivery(
            row.delivery_id,
            row.target,
            row.event,
            row.status,
            row.attempts,
            row.response_status,
            row.last_error,
        )

    def wait(self, delivery_id: str, timeout: float = 10.0, interval: float = 0.02) -> Delivery:
        """Poll the row until the delivery is final (or ``timeout`` passes); return it."""
        give_up = time.monotonic() + timeout
        while True:
            found = self.delivery(delivery_id)
            if (found is not None and found.final) or time.monotonic() >= give_up:
                if found is None:
                    raise WebhookError(f"webhook.{self.instance}: no such delivery")
                return found
            time.sleep(interval)

    # ------------------------------------------------------------------ lifecycle

    def _check_open(self) -> None:
        if self._closed:
            raise WebhookError(f"webhook.{self.instance}: the service is closed")

    def close(self) -> None:
        """Refuse further sends; adapters release their client or queue."""
        self._closed = True
        self._last_keys = None  # the remembered secret goes with the service

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} webhook.{self.instance} timeout={self.timeout:g}s "
            f"max_retries={self.max_retries}>"
        )


def encode_payload(payload: Any, content_type: str | None) -> tuple[bytes, str]:
    """Return ``(body, content type)``: bytes as given, anything else as compact JSON."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload), content_type or "application/octet-stream"
    try:
        text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"payload must be bytes or a JSON value ({exc})") from None
    return text.encode("utf-8"), content_type or "application/json"
