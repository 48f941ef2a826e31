"""The contract between the container and an adapter.

An adapter is a class with an ``open`` class method. The container calls it on the first
accessor call for a ``(service, instance)`` pair with an :class:`OpenContext`, and later
calls ``close()`` on the returned object (if it has one) when the container closes::

    class KVServerLock(Lock):
        @classmethod
        def open(cls, ctx: OpenContext) -> KVServerLock:
            client = ctx.pools.kvserver(ctx.service, ctx.options, instance=ctx.instance)
            return cls(client, ctx.options)

``open`` may do I/O (connect, ping) and may raise; a failed open is not cached, so the next
accessor call tries again. An adapter that needs another service asks the container for it
inside ``open`` (``ctx.container.db()``); that dependency then opens first and, since the
container closes in reverse open order, closes after its dependant.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, Self

from .errors import ConfigurationError, ServiceUnavailableError

if TYPE_CHECKING:
    from .container import Container
    from .pools import PoolRegistry

__all__ = ["ClosedResource", "OpenContext", "Service"]


@dataclass(frozen=True, slots=True)
class OpenContext:
    """Everything an adapter's ``open`` needs, and nothing global."""

    #: Service name from the catalog (``"db"``).
    service: str
    #: Instance name (``"default"``, ``"primary"``).
    instance: str
    #: The canonical adapter name that was resolved (``"sqlserver"`` for ``"postgres"``).
    adapter: str
    #: The service's options dataclass instance (a raw mapping for plugins).
    options: Any
    #: The container that is opening the service; use it to reach dependencies.
    container: Container
    #: The container's shared SQL pools and key-value clients.
    pools: PoolRegistry

    @property
    def logger(self) -> logging.Logger:
        """Return the standard logger for this service (``toolkit.<service>``)."""
        return logging.getLogger(f"toolkit.{self.service}")

    def kvserver_client(self) -> Any:
        """Return the container's shared client for this instance's ``kvserver`` block.

        What every adapter with a ``kvserver`` option block borrows in ``open``, written
        once: the pool registry keys clients by server, so instances on one server share a
        client, and the block's address errors name this service and instance.
        """
        return self.pools.kvserver(self.service, self.options.kvserver, instance=self.instance)

    def sibling_name(self, service: str) -> str:
        """Return the instance of ``service`` this one depends on.

        The rule every battery built on another follows (auth over session, scheduler
        over lock, geo over ratelimit): the instance of the same name when ``service``
        configures one, else ``default``.
        """
        configured = self.container.config.instances(service)
        return self.instance if self.instance in configured else "default"

    def sibling(self, service: str, refusal: str) -> Any:
        """Open :meth:`sibling_name`'s instance of ``service`` through the container.

        A configuration error of the dependency is re-raised as this service's, worded by
        ``refusal`` (formatted with the dependency's ``name`` and the error, ``exc``), so
        the message says why this service needed it.
        """
        name = self.sibling_name(service)
        try:
            return getattr(self.container, service)(name)
        except ConfigurationError as exc:
            reason = refusal.format(name=name, exc=exc)
            raise ConfigurationError(f"{self.service}.{self.instance}: {reason}") from exc


class Service:
    """Mixin base of every battery's interface class.

    It carries the identity the container gave the instance and a no-op ``close``.
    Battery base classes subclass it (alongside Django's own base class where one exists,
    such as ``BaseCache``) and declare the operations; adapters implement ``open`` and the
    operations.
    """

    #: The catalog name of the service this class implements (set by the battery base).
    service_name: ClassVar[str] = ""
    #: The canonical adapter name (set by each adapter class).
    adapter_name: ClassVar[str] = ""

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open the adapter for ``ctx``; subclasses must override."""
        raise NotImplementedError(f"{cls.__qualname__} must implement open(ctx)")

    def close(self) -> None:
        """Release what the adapter holds; the default holds nothing."""


class ClosedResource:
    """Stand-in for whatever a closed adapter held: any use raises ServiceUnavailableError.

    Swapping the held object for this one on close costs the hot path nothing, where a
    ``closed`` flag would be read on every call.
    """

    __slots__ = ("_instance", "_service")

    def __init__(self, service: str, instance: str) -> None:
        self._service = service
        self._instance = instance

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise ServiceUnavailableError(self._service, "it is closed", instance=self._instance)

    def __getattr__(self, name: str) -> Any:
        self._refuse()

    __enter__ = __exit__ = __call__ = __getitem__ = __contains__ = __len__ = _refuse
