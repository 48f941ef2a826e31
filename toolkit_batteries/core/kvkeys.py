"""What a ``kvserver`` adapter keeping its records under one key prefix is built from.

``lock`` and ``idempotency`` store each record as one expiring key ``<prefix><name>``,
change it with Lua scripts registered once, and answer "how long is left" with ``PTTL``.
The wiring around that (borrow the container's client and its display-safe address,
default the prefix per instance, translate a lost server, close by swapping the client
and scripts for :class:`~toolkit_batteries.core.adapter.ClosedResource`, a repr naming the
address without credentials) is declared here once; an adapter states its prefix and its
scripts and writes only its operations::

    class KVServerLock(KVServerKeys, Lock):
        default_prefix = "toolkit:lock:{instance}:"
        scripts = {"_release_script": _RELEASE}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .adapter import ClosedResource, OpenContext
from .transport import kv_unreachable

__all__ = ["KVServerKeys", "SharedClientOpen", "ms"]


def ms(seconds: float) -> int:
    """Return ``seconds`` as whole milliseconds, at least 1 (``PX 0`` is an error)."""
    return max(1, int(seconds * 1000))


class KVServerKeys:
    """Mixin (first base) of a ``kvserver`` adapter whose records are prefixed keys."""

    #: Key prefix used when the ``prefix`` option is empty (``{instance}`` is filled in).
    default_prefix: ClassVar[str] = ""
    #: Lua scripts registered on the client when the adapter is built: attribute -> source.
    scripts: ClassVar[Mapping[str, str]] = {}

    service_name: ClassVar[str]
    instance: str

    def _use_client(self, client: Any, *, prefix: str, target: str) -> None:
        """Keep ``client`` (a ``redis.Redis``), the key prefix and the display-safe target.

        Called from the adapter's ``__init__`` after the battery base's (which sets
        ``instance``). Nothing connects: registering a script only hashes it.
        """
        self._client = client
        self.prefix = prefix or self.default_prefix.format(instance=self.instance)
        self.target = target
        self._unreachable = kv_unreachable(self.service_name, self.instance)
        for name, source in self.scripts.items():
            setattr(self, name, client.register_script(source))

    @staticmethod
    def borrow(
        ctx: OpenContext, options: Any, *, url: str = "", dedicated: bool = False
    ) -> tuple[Any, str]:
        """Return the container's shared client for ``options`` and its display-safe address.

        ``url`` wins over ``options.addr``; ``dedicated`` gives a client nobody else shares.
        A ``require_tls`` violation raises before any client exists.
        """
        from .pools import resolve_kv_address

        address = resolve_kv_address(ctx.service, options, instance=ctx.instance, url=url)
        client = ctx.pools.kvserver(
            ctx.service, options, instance=ctx.instance, url=url, dedicated=dedicated
        )
        return client, address.describe()

    def ttl_ms(self, key: str) -> int | None:
        """Return the milliseconds ``key``'s record has left, or ``None`` when it is absent."""
        with self._unreachable:
            left = self._client.pttl(self.prefix + key)
        return left if left >= 0 else None

    def close(self) -> None:
        """Stop using the client; the container's registry closes it."""
        closed = ClosedResource(self.service_name, self.instance)
        self._client = closed
        for name in self.scripts:
            setattr(self, name, closed)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.service_name}.{self.instance} {self.target}>"


class SharedClientOpen:
    """Mixin (first base) whose ``open()`` builds ``cls(client, settings, prefix=, instance=)``.

    For a ``kvserver`` adapter holding no keys of its own kind (``eventbus``,
    ``ratelimit``): the container's shared client for ``kvserver.*``, the block's
    ``prefix`` and the battery's settings parsed from the options by ``settings_of``
    (which raises the battery's configuration error). The class states only that.
    """

    #: ``settings_of(options, instance=...)``: the battery's parsed settings.
    settings_of: ClassVar[Callable[..., Any]]

    @classmethod
    def open(cls, ctx: OpenContext) -> Any:
        """Borrow the container's client for ``kvserver.*``, with the parsed settings."""
        settings = cls.settings_of(ctx.options, instance=ctx.instance)
        prefix = ctx.options.kvserver.prefix
        return cls(ctx.kvserver_client(), settings, prefix=prefix, instance=ctx.instance)  # type: ignore[call-arg]
