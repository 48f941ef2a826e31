"""The ``static`` adapter: flags from a JSON or TOML file (see :mod:`..rules`).

With ``static.reload``, the file is re-read when it changes: an evaluation looks at the
clock, and at most once per :data:`CHECK_INTERVAL` (1 s) one evaluation ``stat``s the file
(modification time, size and inode, so an atomic rename counts); only a changed file is
parsed again. A file that no longer parses keeps the previous flags and logs an error
(naming the instance and the reason, never the content). Without ``static.path`` the
adapter knows no flags: every ``enabled`` answers its default.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import MICRO_PERCENT, MISSING, Flag
from ..rules import FlagFileError, Rule, parse_flag_file

__all__ = ["CHECK_INTERVAL", "StaticFlag"]

logger = logging.getLogger("toolkit.flag")

_sha256 = hashlib.sha256
_from_bytes = int.from_bytes

#: Fewest seconds between two looks at the file's metadata when ``static.reload`` is on.
CHECK_INTERVAL = 1.0


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class StaticFlag(Flag):
    """Flags compiled from a file, optionally reloaded when it changes."""

    adapter_name = "static"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        reload: bool = False,
        instance: str = "default",
        clock: Callable[[], float] = time.monotonic,
        check_interval: float = CHECK_INTERVAL,
    ) -> None:
        super().__init__(instance=instance)
        self.path = Path(path) if path else None
        self.reload = bool(reload and self.path is not None)
        self.clock = clock
        self.check_interval = check_interval
        self._rules: dict[str, Rule] = {}
        self._signature: tuple[int, int, int] | None = None
        self._next_check = float("inf")
        self._reloading = threading.Lock()
        if self.path is not None:
            self._signature = _signature(self.path)
            if self._signature is None:
                raise self._invalid("names a file that does not exist or cannot be read")
            self._rules = self._load(self.path)
            if self.reload:
                self._next_check = clock() + check_interval

    @classmethod
    def open(cls, ctx: OpenContext) -> StaticFlag:
        options = ctx.options.static
        return cls(options.path, reload=options.reload, instance=ctx.instance)

    def _invalid(self, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("flag", "static.path", reason, instance=self.instance)

    def _load(self, path: Path) -> dict[str, Rule]:
        try:
            data = path.read_bytes()
        except OSError:
            raise self._invalid("names a file that cannot be read") from None
        try:
            return parse_flag_file(data, path.suffix)
        except FlagFileError as exc:
            raise self._invalid(f"names a flag file that {exc}") from None

    # ------------------------------------------------------------------ reloading

    def _check(self) -> None:
        """Re-read the file if it changed (one thread at a time; others go on)."""
        if not self._reloading.acquire(blocking=False):
            return
        try:
            now = self.clock()
            if now < self._next_check:
                return
            self._next_check = now + self.check_interval
            assert self.path is not None
            signature = _signature(self.path)
            if signature is None or signature == self._signature:
                return
            self._signature = signature
            try:
                self._rules = self._load(self.path)
            except InvalidOptionsError as exc:
                logger.error("%s; keeping the flags loaded before", exc)
            else:
                logger.info("flag.%s: reloaded %d flags", self.instance, len(self._rules))
        finally:
            self._reloading.release()

    # ------------------------------------------------------------------ evaluation

    def enabled(
        self, name: str, *, subject: Any = None, tenant: str | None = None, default: bool = False
    ) -> bool:
        # The base class's semantics, inlined: this is the hot path.
        if self.reload and self.clock() >= self._next_check:
            self._check()
        rule = self._rules.get(name)
        if rule is None:
            return default
        if tenant and rule.tenants is not None:
            rule = rule.tenants.get(tenant, rule)
        if rule.rollout < 0 or not rule.on:
            return rule.on
        if subject is None or subject == "":
            return False
        text = rule.prefix + (subject if isinstance(subject, str) else str(subject))
        return _from_bytes(_sha256(text.encode()).digest(), "big") % MICRO_PERCENT < rule.rollout

    def _resolve(self, name: str, subject: str | None, tenant: str | None) -> Any:
        if self.reload and self.clock() >= self._next_check:
            self._check()
        rule = self._rules.get(name)
        if rule is None:
            return MISSING
        if tenant and rule.tenants is not None:
            rule = rule.tenants.get(tenant, rule)
        return rule.resolve(subject)

    def names(self) -> list[str]:
        if self.reload and self.clock() >= self._next_check:
            self._check()
        return sorted(self._rules)
