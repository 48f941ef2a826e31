"""Open a battery the real way (settings, then ``Config``, then a ``Container``) in a test.

The ``open_battery`` fixture (tests/conftest.py) hands out a :class:`BatteryOpener`; every
container it opened is closed at teardown, so a battery conftest writes only the block
that selects its adapter, never the plumbing around it.
"""

from __future__ import annotations

from typing import Any


class BatteryOpener:
    """``open_battery(service, block)`` -> the opened service; containers closed later."""

    def __init__(self) -> None:
        self.containers: list[Any] = []

    def container(self, settings: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
        """Return a Container loaded from ``settings`` (and ``environ``), closed at teardown."""
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        container = Container(Config.load(settings, environ or {}))
        self.containers.append(container)
        return container

    def __call__(
        self,
        service: str,
        block: dict[str, Any] | None = None,
        *,
        instance: str | None = None,
        environ: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> Any:
        """Open ``service`` configured by ``block`` (under ``instance`` when named).

        ``settings`` adds other services' blocks (a ``db`` the battery writes to, ...);
        without ``block`` the service's own entry comes from ``settings``.
        """
        full = dict(settings or {})
        if block is not None:
            full[service] = block if instance is None else {instance: block}
        return getattr(self.container(full, environ), service)(instance or "default")

    @property
    def last(self) -> Any:
        """The container the latest call opened (to reach a sibling service or close it)."""
        return self.containers[-1]

    def close(self) -> None:
        """Close every container opened, newest first."""
        while self.containers:
            self.containers.pop().close()
