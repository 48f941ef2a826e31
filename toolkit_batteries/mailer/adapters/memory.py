"""The ``memory`` mailer: Django's locmem backend; sent messages land in ``mail.outbox``."""

from __future__ import annotations

import copy
import threading
from typing import Any, ClassVar

from django.core import mail
from django.core.mail.backends.locmem import EmailBackend as LocMemBackend

from ..base import Mailer, Prepared

__all__ = ["MemoryMailer"]

_lock = threading.Lock()


class MemoryMailer(Mailer, LocMemBackend):
    """Appends each checked message to ``django.core.mail.outbox`` (tests, ``mail.outbox``)."""

    adapter_name: ClassVar[str] = "memory"

    def __init__(self, fail_silently: bool = False, **kwargs: Any) -> None:
        """Build as every mailer does, and make sure ``mail.outbox`` exists."""
        Mailer.__init__(self, fail_silently, **kwargs)
        if not hasattr(mail, "outbox"):
            mail.outbox = []

    def _deliver(self, prepared: list[Prepared]) -> int:
        """Append a copy of each message to the outbox, as Django's locmem backend does."""
        with _lock:
            for item in prepared:
                mail.outbox.append(copy.deepcopy(item.message))
        return len(prepared)
