"""The ``queue`` adapter: deliveries travel as jobs on the queue battery.

``send`` records the delivery and pushes one job call (topic ``jobs:webhooks``, job
``toolkit.webhook.deliver``); a worker makes one attempt per job, exactly as the ``http``
adapter makes one. A retryable failure pushes the next attempt with the resilience
policy's backoff as the push's ``delay``; the last failure records ``failed`` and pushes
a dead letter to ``dead_letter_topic`` (when set). Which queue:

* ``queue_adapter`` and ``queue_opts`` both unset: the project's ``queue`` service
  (``services.queue()``), so ``manage.py queue_work --queue webhooks`` runs deliveries;
* otherwise a queue of the webhook's own, opened with adapter ``queue_adapter`` (if
  empty: ``db`` when ``queue_opts.dsn`` is set, ``kvserver`` when ``queue_opts.url`` is,
  else ``memory``) and options ``queue_opts`` (every ``queue`` option), closed with the
  webhook; ``manage.py webhook_work`` (or :meth:`QueueWebhook.worker`) runs it.

The secret travels with the job sealed by the ``crypto`` service (AES-GCM), so the
queue's rows and its admin page never hold it in clear; producer and worker must share
the crypto key (they share settings). The associated data of the seal binds the
delivery id, target, event, content type and the body's SHA-256 (:func:`sealed_context`):
whoever can write to the queue cannot rewrite a job to have another target, event or
body signed with the endpoint's real secret. The worker refuses such a job (the
delivery is recorded ``failed``, nothing is sent, nothing retried).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.queue.jobs.dispatch import topic_for
from toolkit_batteries.queue.jobs.payload import encode
from toolkit_batteries.resilience.backoff import backoff

from ..base import Delivery, host_of
from .http import AttemptFailed, HTTPWebhook

if TYPE_CHECKING:
    from toolkit_batteries.queue import Queue
    from toolkit_batteries.queue.jobs.worker import Worker

__all__ = ["JOB_NAME", "JOB_QUEUE", "QueueWebhook"]

logger = logging.getLogger("toolkit.webhook")

#: The job every delivery attempt is a call of.
JOB_NAME = "toolkit.webhook.deliver"
#: The job queue name (topic ``jobs:webhooks``).
JOB_QUEUE = "webhooks"


class QueueWebhook(HTTPWebhook):
    """Deliveries as queue jobs; :meth:`run_job` is one attempt on a worker."""

    adapter_name = "queue"
    row_before_dispatch = True  # the worker's attempts update the row send() inserted

    def __init__(
        self,
        options: Any,
        *,
        queue: Queue,
        crypto: Any,
        owns_queue: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(options, **kwargs)
        #: The queue the jobs ride on.
        self.queue = queue
        self.crypto = crypto
        self.topic = topic_for(JOB_QUEUE)
        self.dead_letter_topic = str(options.dead_letter_topic or "").strip()
        self._owns_queue = owns_queue

    @classmethod
    def open(cls, ctx: OpenContext) -> QueueWebhook:
        """Reach the table, the crypto service and the queue (borrowed or of its own)."""
        from toolkit_batteries.core.loading import resolve_adapter
        from toolkit_batteries.queue.options import QueueOptions

        database = cls._database(ctx)
        options = ctx.options
        name = str(options.queue_adapter or "").strip()
        owns = bool(name) or options.queue_opts is not None
        if owns:
            queue_options = options.queue_opts or QueueOptions()
            adapter, queue_cls = resolve_adapter("queue", name or _implied(queue_options))
            sub = OpenContext(
                "queue",
                f"webhook-{ctx.instance}",
                adapter,
                queue_options,
                ctx.container,
                ctx.pools,
            )
            queue = queue_cls.open(sub)
        else:
            queue = ctx.container.queue()
        try:
            crypto = ctx.container.crypto()
            return cls(
                options,
                instance=ctx.instance,
                database=database,
                queue=queue,
                crypto=crypto,
                owns_queue=owns,
            )
        except BaseException:
            if owns:
                queue.close()
            raise

    # ------------------------------------------------------------------ producing

    def _job_body(
        self, delivery: Delivery, body: bytes, kind: str, sealed: list[str], attempt: int
    ) -> bytes:
        return encode(
            JOB_NAME,
            kwargs={
                "instance": self.instance,
                "id": delivery.id,
                "target": delivery.target,
                "event": delivery.event,
                "content_type": kind,
                "body": base64.b64encode(body).decode("ascii"),
                "secrets": sealed,
                "attempt": attempt,
            },
        )

    def _dispatch(self, delivery: Delivery, body: bytes, kind: str, keys: list[bytes]) -> Delivery:
        aad = sealed_context(delivery.id, delivery.target, delivery.event, kind, body)
        sealed = [self.crypto.encrypt(key, aad=aad) for key in keys]
        self.queue.push(self.topic, self._job_body(delivery, body, kind, sealed, 1))
        return delivery

    # ------------------------------------------------------------------ the worker side

    def run_job(
        self,
        *,
        id: str,
        target: str,
        event: str,
        content_type: str,
        body: str,
        secrets: list[str],
        attempt: int,
        **_: Any,
    ) -> str:
        """Make attempt ``attempt`` of a delivery; schedule the next or bury it.

        Returns the recorded status. Never raises for a failed attempt: the retry is
        this adapter's own push (the delay comes from the resilience policy), so the
        queue worker acknowledges the job either way.
        """
        from toolkit_batteries.crypto.base import DecryptionError

        delivery = Delivery(id, target, event, "sending", attempt - 1)
        raw = base64.b64decode(body)
        aad = sealed_context(id, target, event, content_type, raw)
        try:
            keys = [self.crypto.decrypt(token, aad=aad) for token in secrets]
        except DecryptionError:
            # The job's target, event, body or content type is not what was sealed.
            reason = "the queued job was altered (its seal does not match); nothing was sent"
            self._record(delivery, "failed", attempts=attempt, error=reason)
            logger.error("webhook.%s: delivery %s refused: %s", self.instance, delivery.id, reason)
            return "failed"
        try:
            self._attempt_recorded(delivery, raw, content_type, keys, attempt)
        except AttemptFailed as failed:
            if failed.retryable and attempt <= self.max_retries:
                delay = backoff(attempt, self.retry_policy, self.rng)
                self.queue.push(
                    self.topic,
                    self._job_body(delivery, raw, content_type, secrets, attempt + 1),
                    delay=delay,
                )
                return "retrying"
            self._bury(delivery, raw, content_type, attempt, failed.reason)
            return "failed"
        return "succeeded"

    def _bury(self, delivery: Delivery, body: bytes, kind: str, attempts: int, reason: str) -> None:
        logger.error(
            "webhook.%s: delivery %s (%s) to %s failed after %d attempt(s): %s",
            self.instance,
            delivery.id,
            delivery.event,
            host_of(delivery.target),
            attempts,
            reason,
        )
        if not self.dead_letter_topic:
            return
        letter = {
            "id": delivery.id,
            "instance": self.instance,
            "target": delivery.target,
            "event": delivery.event,
            "attempts": attempts,
            "error": reason,
            "content_type": kind,
            "body": base64.b64encode(body).decode("ascii"),
        }
        self.queue.push(self.dead_letter_topic, json.dumps(letter).encode("utf-8"))

    def worker(self, **kwargs: Any) -> Worker:
        """Return a queue :class:`~toolkit_batteries.queue.jobs.worker.Worker` for this queue.

        Its job registry holds the delivery job bound to this instance, so it works in
        any process and container; keyword arguments go to ``Worker`` (``concurrency``,
        ``once``, ``stop_when_empty``, ``max_jobs`` ...).
        """
        from toolkit_batteries.queue.jobs.registry import JobRegistry
        from toolkit_batteries.queue.jobs.worker import Worker

        jobs = JobRegistry()

        def deliver(**call: Any) -> str:
            return self.run_job(**call)

        jobs.register(deliver, name=JOB_NAME, queue=JOB_QUEUE)
        kwargs.setdefault("name", f"webhook-{self.instance}")
        return Worker(self.queue, queues=(JOB_QUEUE,), jobs=jobs, **kwargs)

    def close(self) -> None:
        """Close the HTTP client, and the queue when it is the webhook's own."""
        super().close()
        if self._owns_queue:
            self.queue.close()


def sealed_context(delivery_id: str, target: str, event: str, kind: str, body: bytes) -> bytes:
    """Return the associated data sealing a job's secrets to what the job delivers.

    Length-prefixed fields (id, target, event, content type) and the body's SHA-256, so
    no field can be shifted into another.
    """
    parts = [delivery_id, target, event, kind]
    encoded = b"".join(len(p.encode()).to_bytes(4, "big") + p.encode() for p in parts)
    return b"toolkit-webhook-job-v2" + encoded + hashlib.sha256(body).digest()


def _implied(options: Any) -> str:
    """Return the queue adapter ``queue_opts`` implies when ``queue_adapter`` is empty.

    A ``dsn`` means ``db``, a ``url`` ``kvserver``; otherwise ``memory``.
    """
    if str(options.dsn or "").strip():
        return "db"
    if str(options.url or "").strip():
        return "kvserver"
    return "memory"
