"""The operator commands, once: ``manage.py outbox_relay <sub>`` and ``toolkit outbox:relay``.

Each function takes the opened outbox and returns ``(data, lines)``: ``data`` is the
``--json`` payload of the CLI contract (``status`` -> ``{pending, processed, failed,
last_error?, stalled}``, ``dlq requeue`` -> ``{id?, all, requeued}``, ``dlq purge`` ->
``{id, deleted}``, ``purge`` -> ``{deleted}``, ``dlq list`` -> a list of messages),
``lines`` the text a person reads. Both front ends print one or the other.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.argtypes import duration_seconds

from .base import Outbox

__all__ = ["before_seconds", "dlq_list", "dlq_purge", "dlq_requeue", "purge", "status"]

Output = tuple[Any, list[str]]


#: Parses ``--before`` (``168h``, ``30m``, ``90s``) and refuses a negative duration: the
#: age parser every command's ``--older-than`` uses, so the two flags read ages alike.
before_seconds = duration_seconds


def status(outbox: Outbox) -> Output:
    """Return the counts by state, the last error and whether the relay is stalled."""
    found = outbox.status()
    data = found.as_dict()
    lines = [
        f"outbox.{outbox.instance} ({outbox.adapter_name}): {found.pending} pending, "
        f"{found.processed} processed, {found.failed} failed (dead)",
        f"oldest pending: {found.oldest_pending:.1f}s"
        + (" (stalled: the relay is behind or not running)" if found.stalled else ""),
    ]
    if found.last_error:
        lines.append(f"last error: {found.last_error}")
    return data, lines


def dlq_list(outbox: Outbox, limit: int) -> Output:
    """List the dead messages, oldest first (ids, topics, attempts, errors; no payloads)."""
    records = outbox.dead_messages(limit)
    data = [record.as_dict() for record in records]
    lines = [f"{len(records)} dead message(s)"]
    lines += [
        f"{r.row}\t{r.topic}\tattempts={r.attempts}\t{r.message_id}\t{r.last_error}"
        for r in records
    ]
    return data, lines


def dlq_requeue(outbox: Outbox, row: int | None, everything: bool) -> Output:
    """Send one dead message (``--id``) or all of them (``--all``) back to pending."""
    moved = outbox.requeue_dead(None if everything else [row])  # type: ignore[list-item]
    data: dict[str, Any] = {"all": everything, "requeued": moved}
    if not everything:
        data = {"id": row, **data}
    return data, [f"requeued {moved} dead message(s)"]


def dlq_purge(outbox: Outbox, row: int) -> Output:
    """Delete one dead message for good."""
    deleted = outbox.purge_dead([row])
    return {"id": row, "deleted": deleted}, [f"deleted {deleted} dead message(s)"]


def purge(outbox: Outbox, before: float | None) -> Output:
    """Delete sent messages (and inbox marks) older than ``before`` (default retention)."""
    deleted = outbox.purge(before)
    return {"deleted": deleted}, [f"purged {deleted} sent message(s)"]
