"""The ``http`` adapter's deferred delivery log: rows of delivered sends, written in batches.

Why: a delivery that succeeds at its first attempt used to cost one ``INSERT`` (and, in
autocommit, one commit) per ``send``; on a local receiver that row was about a quarter of
a send (issue 27: 0.53x raw httpx). Those rows are the common case and nothing reads them
in the sender's hot path, so they are kept in memory and written together with one
multi-row ``INSERT`` (one commit) when any of these happens first:

* ``batch`` rows are waiting (``configure(log_batch=...)``, 32 by default; 1 writes
  every row at once, the old behaviour);
* the oldest waiting row is ``interval`` seconds old (``configure(log_interval=...)``,
  0.5 s by default; a timer thread writes them when no further send comes);
* the service is read (``delivery()``, ``wait()``: a caller sees its own sends) or
  closed, and when the interpreter exits normally (``atexit``).

What is never deferred: a failed or retried attempt (written at once: operators look for
those), and any row written while the caller's ``transaction.atomic()`` is open on the
log's database (the row must commit or roll back with the caller's rows).

What a crash costs: if the process dies without running ``atexit`` (``SIGKILL``, OOM, a
power cut), the log loses the rows of at most ``batch - 1`` *successful* deliveries sent
in the last ``interval`` seconds. No delivery is lost: each was already accepted by its
receiver (which deduplicates on ``Webhook-Id``). Before this change a crash between the
send and its ``INSERT`` lost that one row the same way; the window is now wider and
bounded. A batch the database refuses is retried with the next flush, row by row after a
constraint error (a reused ``delivery_id``), and at most :data:`MAX_HELD` rows are held
for a database that stays down; past that the oldest are dropped and counted in the log.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["DeliveryLogBuffer"]

logger = logging.getLogger("toolkit.webhook")

#: Rows kept in memory while the database refuses them, per instance.
MAX_HELD = 10_000


class DeliveryLogBuffer:
    """Rows waiting to be inserted into ``toolkit_webhook_delivery``, thread-safe."""

    def __init__(
        self,
        instance: str,
        database: Any,
        *,
        batch: int = 32,
        interval: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.instance = instance
        self.database = database
        self.batch = batch
        self.interval = interval
        self.clock = clock
        self._rows: list[dict[str, Any]] = []
        self._oldest = 0.0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        #: Statements sent by :meth:`flush` (one per batch): what the bench and tests count.
        self.flushes = 0
        reference = weakref.ref(self)
        self._atexit = lambda: (buffer := reference()) is not None and buffer.flush()
        atexit.register(self._atexit)

    def __len__(self) -> int:
        return len(self._rows)

    def must_write_now(self) -> bool:
        """Tell whether a row must skip the buffer: no batching, or the caller's transaction."""
        if self.batch <= 1:
            return True
        from django.db import connections

        return connections[self.database.alias].in_atomic_block

    def add(self, fields: dict[str, Any]) -> None:
        """Keep one row; write the batch if it is full or its oldest row is due."""
        with self._lock:
            if not self._rows:
                self._oldest = self.clock()
            self._rows.append(fields)
            due = len(self._rows) >= self.batch or self.clock() - self._oldest >= self.interval
            if not due and self._timer is None and self.interval > 0:
                self._timer = threading.Timer(self.interval, self._on_timer)
                self._timer.daemon = True
                self._timer.start()
        if due:
            self.flush()

    def _on_timer(self) -> None:
        from django.db import connections

        with self._lock:
            self._timer = None
        try:
            self.flush()
        finally:
            connections[self.database.alias].close()  # this thread's own connection

    def flush(self) -> int:
        """Insert every waiting row (one statement); return how many were written."""
        with self._lock:
            rows, self._rows = self._rows, []
        if not rows:
            return 0
        from django.db import DatabaseError, IntegrityError, connections, transaction

        alias = self.database.alias
        self.flushes += 1
        try:
            with transaction.atomic(using=alias):
                _insert_many(connections[alias], rows)
            return len(rows)
        except IntegrityError:
            return self._one_by_one(rows)
        except DatabaseError as exc:
            self._hold(rows, exc)
            return 0

    def _one_by_one(self, rows: list[dict[str, Any]]) -> int:
        """Insert rows separately after a constraint error; log the ones refused."""
        from django.db import DatabaseError, IntegrityError, transaction

        from .models import WebhookDelivery

        alias, written = self.database.alias, 0
        for position, fields in enumerate(rows):
            try:
                with transaction.atomic(using=alias):
                    WebhookDelivery.objects.using(alias).create(**fields)
                written += 1
            except IntegrityError as exc:
                logger.error(
                    "webhook.%s: delivery %s was sent but its log row was refused: %s",
                    self.instance,
                    fields["delivery_id"],
                    type(exc).__name__,
                )
            except DatabaseError as exc:
                self._hold(rows[position:], exc)
                break
        return written

    def _hold(self, rows: list[dict[str, Any]], exc: Exception) -> None:
        """Keep rows the database refused for the next flush, up to :data:`MAX_HELD`."""
        with self._lock:
            self._rows[:0] = rows
            dropped = max(0, len(self._rows) - MAX_HELD)
            del self._rows[:dropped]
        logger.error(
            "webhook.%s: %d delivery log rows wait for the database (%s)%s",
            self.instance,
            len(rows),
            type(exc).__name__,
            f"; {dropped} oldest dropped" if dropped else "",
        )

    def close(self) -> None:
        """Write what waits and stop the timer."""
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.flush()
        atexit.unregister(self._atexit)


def _insert_many(connection: Any, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` with one multi-row ``INSERT`` per chunk, without model instances.

    Why not ``bulk_create``: building a model per row and compiling the statement through
    the ORM cost about 75 us per row on SQLite, more than the rest of a delivered send's
    log work; here a row costs its tuple. Rows come only from ``Webhook._row_fields``
    (text, integers, ``None``, aware datetimes), so only the datetimes need the backend's
    adaptation, and a send's three equal timestamps are adapted once; a field a row lacks
    takes the model's default, as ``bulk_create`` gave it.
    """
    from .models import WebhookDelivery

    meta = WebhookDelivery._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    names = [field.name for field in fields]
    defaults = {field.name: field.get_default() for field in fields}
    stamps = [i for i, field in enumerate(fields) if field.get_internal_type() == "DateTimeField"]
    adapt = connection.ops.adapt_datetimefield_value
    adapted: dict[Any, Any] = {}
    values: list[list[Any]] = []
    for fields_of_row in rows:
        row = [fields_of_row.get(name, defaults[name]) for name in names]
        for i in stamps:
            stamp = row[i]
            if stamp is not None:
                found = adapted.get(stamp)
                row[i] = found if found is not None else adapted.setdefault(stamp, adapt(stamp))
        values.append(row)
    quote = connection.ops.quote_name
    head = (
        f"INSERT INTO {quote(meta.db_table)} "
        f"({', '.join(quote(field.column) for field in fields)}) VALUES "
    )
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    limit = connection.features.max_query_params or 30_000
    per_statement = max(1, min(1000, limit // len(fields)))
    with connection.cursor() as cursor:
        for start in range(0, len(values), per_statement):
            chunk = values[start : start + per_statement]
            cursor.execute(
                head + ", ".join([one] * len(chunk)), [value for row in chunk for value in row]
            )
