"""The ``noop`` adapter (default): purges are checked, counted and discarded.

Why it says so at open (a warning on ``toolkit.cdn``): a project that goes live without
choosing ``cdn_a`` would otherwise believe its purges worked while the CDN keeps serving
stale pages. Each discarded purge is logged at DEBUG and counted in :attr:`discarded`.
"""

from __future__ import annotations

import logging
import threading
from typing import Self

from toolkit_batteries.core.adapter import OpenContext

from ..base import CDN
from ..options import CDNOptions

__all__ = ["NoopCDN"]

logger = logging.getLogger("toolkit.cdn")


class NoopCDN(CDN):
    """Purges that reach no CDN; :attr:`discarded` counts ``{"urls": n, "tags": n}``."""

    adapter_name = "noop"

    def __init__(self, options: CDNOptions | None = None, *, instance: str = "default") -> None:
        self.instance = instance
        self._lock = threading.Lock()
        self.discarded = {"urls": 0, "tags": 0}
        logger.warning(
            "cdn.%s: noop adapter: purges are discarded and no CDN is called "
            '(set "adapter": "cdn_a" to purge a real cache)',
            instance,
        )

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        return cls(ctx.options, instance=ctx.instance)

    def _purge_urls(self, urls: list[str]) -> None:
        self._discard("urls", len(urls))

    def _purge_tags(self, tags: list[str]) -> None:
        self._discard("tags", len(tags))

    def _discard(self, kind: str, count: int) -> None:
        with self._lock:
            self.discarded[kind] += count
        logger.debug("cdn.%s: noop: discarded a purge of %d %s", self.instance, count, kind)
