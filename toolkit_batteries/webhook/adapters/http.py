"""The ``http`` adapter (default): deliver now, from the caller's thread, with retries.

One ``httpx.Client`` per instance, on the toolkit's guarded transport
(``core.outbound.httpx_transport.GuardedTransport``): every address a target resolves to
is checked when connecting, the socket connects to a checked address (no DNS
rebinding), no redirect is followed and no environment proxy is used. Attempts run
under the resilience battery's :class:`~toolkit_batteries.resilience.base.Policy`
(retry layer only: ``max_retries + 1`` attempts, its backoff between them).

What is retried: connection errors and time-outs, ``408``, ``425``, ``429`` and every
``5xx`` answer. Not retried (the answer will not change): other ``4xx``, a redirect
(``3xx``, never followed: the next hop was never checked), and a refused target.

The row of a delivery that succeeds at its first attempt is written in a batch with
others (:mod:`toolkit_batteries.webhook.log_buffer`: 32 rows or 0.5 s, one ``INSERT``);
failures, retries, reads, ``close`` and sends inside the caller's transaction write at
once. That module says what a crash can cost the log (never a delivery).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import is_blocked
from toolkit_batteries.core.redaction import redact_string
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.resilience.base import Policy, PolicySettings

from ..base import Delivery, TargetRefusedError, Webhook, host_of
from ..log_buffer import DeliveryLogBuffer
from ..signing import (
    EVENT_HEADER,
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    keys_signature_header,
)

with MissingExtraError.guard("webhook", "http", "webhook", "httpx"):
    import httpx

    from toolkit_batteries.core.outbound.httpx_transport import GuardedTransport, deadline

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["HTTPWebhook"]

logger = logging.getLogger("toolkit.webhook")

#: Answers worth another attempt besides 5xx.
RETRYABLE_STATUSES = frozenset({408, 425, 429})
USER_AGENT = "django-toolkit-webhook/1"
#: Bytes of a receiver's answer read (and then dropped): deliveries need the status only.
MAX_ANSWER = 64 * 1024
_REFUSED = (
    "resolves to a private, loopback or link-local address; set allow_private_targets "
    "to deliver to it"
)


def _drain_prefix(answer: httpx.Response) -> None:
    """Read at most :data:`MAX_ANSWER` bytes of an answer whose status is known.

    The status decided the outcome already; a body that stalls past the attempt's
    deadline or breaks off only costs the connection (httpx closes it), never the result.
    """
    read = 0
    try:
        for chunk in answer.iter_raw():
            read += len(chunk)
            if read >= MAX_ANSWER:
                break
    except httpx.TransportError:
        pass  # the answer's status stands; the unusable connection is discarded


class AttemptFailed(Exception):
    """One attempt did not get a 2xx answer; ``retryable`` tells whether to try again."""

    def __init__(
        self, reason: str, *, retryable: bool, status: int | None = None, refused: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.status = status
        self.refused = refused


@traced("attempt")
class HTTPWebhook(Webhook):
    """Deliveries sent at once over httpx, retried in the caller's thread."""

    adapter_name = "http"
    row_before_dispatch = False

    def __init__(self, options: Any, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        allow = self.allow_private_targets
        self._client = httpx.Client(
            transport=GuardedTransport(
                allow_private=allow, allow_insecure=allow, max_connections=100
            ),
            follow_redirects=False,
            trust_env=False,
            timeout=self.timeout,
            headers={"User-Agent": USER_AGENT},
        )
        self._policy = self._build_policy()
        #: Rows of first-attempt successes, written in batches (:mod:`..log_buffer`).
        self._log = DeliveryLogBuffer(self.instance, self.database)

    @classmethod
    def open(cls, ctx: OpenContext) -> HTTPWebhook:
        """Check the options, reach the delivery table's database, build the client."""
        return cls(ctx.options, instance=ctx.instance, database=cls._database(ctx))

    @staticmethod
    def _database(ctx: OpenContext) -> Any:
        from toolkit_batteries.db import require_tables

        from ..models import WebhookDelivery

        if ctx.options.allow_private_targets:
            ctx.logger.warning(
                "webhook.%s: allow_private_targets is on: private, loopback and link-local "
                "targets and plain http are allowed",
                ctx.instance,
            )
        database = ctx.container.db()
        require_tables(database, WebhookDelivery, service=ctx.service, instance=ctx.instance)
        return database

    def configure(
        self, *, log_batch: int | None = None, log_interval: float | None = None, **kwargs: Any
    ) -> None:
        """See :meth:`Webhook.configure`; the retry policy is rebuilt with the changes.

        ``log_batch`` (32) and ``log_interval`` (0.5 s) bound how many delivered sends'
        rows wait in memory, and for how long, before one multi-row ``INSERT`` writes
        them (:mod:`toolkit_batteries.webhook.log_buffer` says what a crash loses);
        ``log_batch=1`` writes every row at once.
        """
        super().configure(**kwargs)
        if hasattr(self, "_client"):
            self._policy = self._build_policy()
        if log_batch is not None or log_interval is not None:
            if log_batch is not None and log_batch < 1:
                raise ValueError("log_batch must be at least 1")
            if log_interval is not None and log_interval < 0:
                raise ValueError("log_interval must not be negative")
            self._log.flush()
            self._log.batch = self._log.batch if log_batch is None else int(log_batch)
            self._log.interval = self._log.interval if log_interval is None else log_interval

    def _insert_row(self, fields: dict[str, Any]) -> None:
        """Defer a delivered first attempt's row (:mod:`..log_buffer`); insert others now."""
        if fields["status"] == "succeeded" and not self._log.must_write_now():
            self._log.add(fields)
        else:
            super()._insert_row(fields)

    def _flush_log(self) -> None:
        self._log.flush()

    def _build_policy(self) -> Policy:
        settings = PolicySettings(
            name=f"webhook.{self.instance}",
            timeout=-1.0,  # no bound on the whole: each attempt has ``timeout``
            retry=self.retry_policy,
            breaker=None,
            max_concurrent=1 << 30,
            max_queue=0,
            max_wait=0.0,
        )
        policy = Policy(settings, None, instance=self.instance, sleep=self.sleep, rng=self.rng)
        return policy.derive(retry_if=lambda exc: isinstance(exc, AttemptFailed) and exc.retryable)

    # ------------------------------------------------------------------ one attempt

    def attempt(self, delivery: Delivery, body: bytes, kind: str, keys: list[bytes]) -> int:
        """POST the delivery once, signed now; return the status or raise AttemptFailed.

        The whole attempt (connect, send, the status line and headers) runs under one
        deadline of ``timeout`` seconds, not one per read: a receiver trickling bytes
        cannot hold the thread longer. Once the status is known, at most
        :data:`MAX_ANSWER` bytes of the answer are read, within what is left of that
        deadline, and only to keep the connection reusable: a slow or broken body after
        a 2xx status is still a delivered attempt.
        """
        stamp = int(self.clock())
        headers = {
            "Content-Type": kind,
            ID_HEADER: delivery.id,
            EVENT_HEADER: delivery.event,
            TIMESTAMP_HEADER: str(stamp),
            SIGNATURE_HEADER: keys_signature_header(
                body, keys, stamp, delivery_id=delivery.id, event=delivery.event
            ),
        }
        try:
            with (
                deadline(self.timeout),
                self._client.stream(
                    "POST", delivery.target, content=body, headers=headers
                ) as answer,
            ):
                status = answer.status_code
                _drain_prefix(answer)
        except Exception as exc:
            if is_blocked(exc):
                raise AttemptFailed(_REFUSED, retryable=False, refused=True) from None
            if isinstance(exc, httpx.TransportError):
                reason = redact_string(f"{type(exc).__name__}: {exc}")[:500]
                raise AttemptFailed(reason, retryable=True) from None
            raise
        if 200 <= status < 300:
            return status
        retryable = status >= 500 or status in RETRYABLE_STATUSES
        reason = f"HTTP {status}" + (" (redirects are not followed)" if 300 <= status < 400 else "")
        raise AttemptFailed(reason, retryable=retryable, status=status)

    def _attempt_recorded(
        self, delivery: Delivery, body: bytes, kind: str, keys: list[bytes], number: int
    ) -> Delivery:
        """Run attempt ``number``, record its outcome, log a failure; re-raise it."""
        # The http adapter's row is inserted with its first outcome (one write fewer).
        size = len(body) if number == 1 and not self.row_before_dispatch else None
        try:
            status = self.attempt(delivery, body, kind, keys)
        except AttemptFailed as failed:
            last = not failed.retryable or number > self.max_retries
            self._record(
                delivery,
                "failed" if last else "retrying",
                attempts=number,
                response_status=failed.status,
                error=failed.reason,
                size=size,
            )
            logger.warning(
                "webhook.%s: delivery %s (%s) to %s, attempt %d of %d failed: %s",
                self.instance,
                delivery.id,
                delivery.event,
                host_of(delivery.target),
                number,
                self.max_retries + 1,
                failed.reason,
            )
            raise
        return self._record(
            delivery, "succeeded", attempts=number, response_status=status, size=size
        )

    def _dispatch(self, delivery: Delivery, body: bytes, kind: str, keys: list[bytes]) -> Delivery:
        """Run the first attempt directly; only a retryable failure enters the policy.

        Why: this policy has only its retry layer (no breaker, no overall timeout, no
        bulkhead bound), so for the first attempt it did nothing but cost a few
        microseconds on every delivered send (issue 27). The failed first attempt is handed
        to the policy as its own attempt 1 (re-raised, not re-sent), so the backoff before
        each retry and the attempt numbers are the policy's, as before.
        """
        started = time.monotonic()
        try:
            return self._attempt_recorded(delivery, body, kind, keys, 1)
        except AttemptFailed as failed:
            first = failed
        if not first.retryable or self.max_retries == 0:
            return self._gave_up(delivery, first, started)
        counter = iter(range(1, 1 << 30))

        def attempt() -> Delivery:
            number = next(counter)
            if number == 1:
                raise first  # sent and recorded above: the policy only schedules the rest
            return self._attempt_recorded(delivery, body, kind, keys, number)

        try:
            return self._policy.call(attempt)
        except AttemptFailed as failed:
            return self._gave_up(delivery, failed, started)

    def _gave_up(self, delivery: Delivery, failed: AttemptFailed, started: float) -> Delivery:
        """Return the recorded failure (or raise for a refused target), logging it."""
        if failed.refused:
            raise TargetRefusedError(self.instance, _REFUSED) from None
        found = self.delivery(delivery.id)
        logger.error(
            "webhook.%s: delivery %s (%s) to %s failed after %.1fs: %s",
            self.instance,
            delivery.id,
            delivery.event,
            host_of(delivery.target),
            time.monotonic() - started,
            failed.reason,
        )
        return found or delivery

    def close(self) -> None:
        """Write the deferred log rows and close the HTTP client's connections."""
        super().close()
        self._log.close()
        self._client.close()
