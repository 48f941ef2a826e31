"""The container: one lazily opened object per (service, instance), closed in reverse.

``Container(config)`` is the spec's ``container.New(cfg)``. It has one accessor per catalog
service, named as the service (``cache()``, ``db()``, ``eventbus()``, ...), each taking an
optional instance name::

    container = Container(Config.load(settings.TOOLKIT, os.environ))
    container.cache().set("k", "v")
    container.db("primary")
    container.close()

Lifecycle (spec, "States and transitions"):

* A service is unopened until its accessor is first called. That call resolves the
  adapter (:func:`~toolkit_batteries.core.loading.resolve_adapter`), builds an
  :class:`~toolkit_batteries.core.adapter.OpenContext` and calls ``cls.open(ctx)``.
  Success is cached; a failure is not, so the next call tries again. Two threads asking
  for the same unopened service open it once (a lock per (service, instance)); the hot
  path of an opened service takes no lock.
* An adapter that needs another service asks for it inside ``open``
  (``ctx.container.db()``), so the dependency finishes opening first. :meth:`close`
  walks the open order backwards, which therefore closes dependants before their
  dependencies; each object is closed once (by identity), then the shared pools.
* Each close runs on a worker thread bounded by :data:`CLOSE_TIMEOUT` seconds, or by the
  time left before the caller's deadline. Every failure is collected and raised at the
  end as one ``ExceptionGroup`` of ``CloseTimeoutError``, ``ClosePanicError`` and the
  adapters' own ``ToolkitError``\\ s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import catalog
from .adapter import OpenContext
from .config import Config
from .errors import (
    ClosePanicError,
    CloseTimeoutError,
    ConfigurationError,
    ToolkitError,
    UnknownAdapterError,
)
from .loading import import_dotted, resolve_adapter
from .plugins import plugin_factory, registered_plugins
from .pools import PoolRegistry
from .slots import Held

if TYPE_CHECKING:
    # The accessors are generated from the catalog at import time; this stub (written from
    # the same catalog, outside ``core/``) types them. Nothing is imported at run time, and
    # the kernel names no battery.
    from toolkit_batteries._accessors import Accessors as _Accessors
else:
    _Accessors = object

__all__ = ["CLOSE_TIMEOUT", "Container", "ContainerClosedError"]

#: Seconds each service's close may take when :meth:`Container.close` has no deadline
#: (spec: "Each service close has a 5s time-out unless the context has a deadline").
#: Read at close time, so tests may lower it.
CLOSE_TIMEOUT: float = 5.0

DEFAULT_INSTANCE = "default"
#: The label under which plugins are recorded (``plugins.<name>``), as in settings.
PLUGIN_PREFIX = "plugins."
_MISSING: Any = object()


class ContainerClosedError(ToolkitError, RuntimeError):
    """An accessor was called after :meth:`Container.close`; build a new container."""

    code = "container_closed"


class _Opened(NamedTuple):
    service: str
    instance: str
    obj: Any


class Container(_Accessors):
    """Lazily opened services for one configuration; close it when the process stops."""

    # Slots keep the accessors' hot path specialisable (an instance dict with this many
    # attributes defeats CPython's method-call fast path) and give each service's dict of
    # opened instances its own slot, ``_live_<service>``.
    __slots__ = (
        "__weakref__",
        "_closed",
        "_config",
        "_guard",
        "_held",
        "_live",
        "_local",
        "_locks",
        "_order",
        "_pairs",
        "_plugins",
        "_pools",
        *(f"_live_{name}" for name in catalog.SERVICES),
    )

    def __init__(self, config: Config | None = None) -> None:
        """Wrap ``config`` (``None``: built-in defaults only); nothing opens yet."""
        self._config = config if config is not None else Config.load({}, {})
        self._pools = PoolRegistry()
        #: service -> instance -> opened object. Each inner dict is also a slot
        #: (``_live_cache``) so that the generated accessors read it in one step.
        self._live: dict[str, dict[str, Any]] = {name: {} for name in catalog.SERVICES}
        for name, live in self._live.items():
            setattr(self, f"_live_{name}", live)
        #: plugin name -> instance -> opened object.
        self._plugins: dict[str, dict[str, Any]] = {}
        #: (service, instance) -> an object Django's handler holds (see core.slots.Held).
        self._held: dict[tuple[str, str], Held[Any]] = {}
        self._order: list[_Opened] = []
        self._pairs: list[tuple[str, str]] = []
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._local = threading.local()
        self._closed = False

    # ------------------------------------------------------------------ inspection

    @property
    def config(self) -> Config:
        """Return the configuration this container opens services from."""
        return self._config

    @property
    def pools(self) -> PoolRegistry:
        """Return the shared SQL pools and key-value clients of this container."""
        return self._pools

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` has run."""
        return self._closed

    def opened(self) -> tuple[tuple[str, str], ...]:
        """Return the (service, instance) pairs opened so far, in open order.

        Plugins appear as ``("plugins.<name>", instance)``. The record survives
        :meth:`close`, so a report written after shutdown still lists what ran.
        """
        with self._guard:
            return tuple(self._pairs)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Container {state}, {len(self._pairs)} opened>"

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ plugins

    def plugin(self, name: str, instance: str = DEFAULT_INSTANCE) -> Any:
        """Return the plugin ``name`` (``TOOLKIT["plugins"][name]``), opening it on first call.

        The adapter is a factory registered with
        :func:`~toolkit_batteries.core.plugins.register_plugin`, or a dotted path to a
        class with ``open(ctx)`` or to any callable taking the context.
        """
        try:
            return self._plugins[name][instance]
        except KeyError:
            return self._open_plugin(name, instance)

    def _open_plugin(self, name: str, instance: str) -> Any:
        self._refuse_if_closed(f"{PLUGIN_PREFIX}{name}", instance)
        cfg = self._config.plugin(name, instance)
        with self._guard:
            live = self._plugins.setdefault(cfg.name, {})
            self._plugins.setdefault(name, live)
        label = f"{PLUGIN_PREFIX}{cfg.name}"

        def factory() -> Any:
            build = _plugin_builder(label, cfg.adapter)
            ctx = OpenContext(cfg.name, cfg.instance, cfg.adapter, cfg.options, self, self._pools)
            return build(ctx)

        return self._open_once(label, cfg.instance, instance, live, factory)

    # ------------------------------------------------------------------ opening

    def _open(self, service: str, instance: str) -> Any:
        """Open ``service``/``instance`` (the accessors' slow path).

        A service whose object Django's handler holds (``caches[alias]``, one per thread)
        is never cached in the accessors' dict: its :class:`Held` getter is asked each
        time, so ``services.cache()`` is always the object ``caches["default"]`` is.
        """
        held = self._held.get((service, instance))
        if held is not None:
            return held.get()
        self._refuse_if_closed(service, instance)
        cfg = self._config.service(service, instance)

        def factory() -> Any:
            adapter, cls = resolve_adapter(service, cfg.adapter)
            ctx = OpenContext(service, cfg.instance, adapter, cfg.options, self, self._pools)
            return cls.open(ctx)

        return self._open_once(service, cfg.instance, instance, self._live[service], factory)

    def _open_once(
        self,
        label: str,
        instance: str,
        requested: str,
        live: dict[str, Any],
        factory: Callable[[], Any],
    ) -> Any:
        """Run ``factory`` once per (label, instance) across threads; cache its success."""
        key = (label, instance)
        stack: list[tuple[str, str]] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        if key in stack:
            chain = " -> ".join(f"{s}.{i}" for s, i in [*stack[stack.index(key) :], key])
            raise ConfigurationError(f"toolkit: dependency cycle while opening: {chain}")
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
        with lock:
            obj = live.get(instance, self._held.get(key, _MISSING))
            if obj is _MISSING:
                self._refuse_if_closed(label, instance)
                stack.append(key)
                try:
                    obj = factory()
                finally:
                    stack.pop()
                with self._guard:
                    kept = not self._closed
                    if kept:
                        self._order.append(_Opened(label, instance, obj))
                        self._pairs.append(key)
                        if isinstance(obj, Held):
                            self._held[key] = self._held[(label, requested)] = obj
                        else:
                            live[instance] = obj
                if not kept:
                    # close() ran while this open was in flight: do not leak the object.
                    _close_one(label, instance, obj, None)
                    self._refuse_if_closed(label, instance)
            if isinstance(obj, Held):
                return obj.get()
            if requested != instance:  # an instance name spelled differently
                with self._guard:
                    if not self._closed:
                        live[requested] = obj
            return obj

    def _refuse_if_closed(self, label: str, instance: str) -> None:
        if self._closed:
            raise ContainerClosedError(
                f"toolkit: the container is closed; {label}.{instance} cannot open "
                "(build a new Container, or use toolkit_batteries.services)"
            )

    # ------------------------------------------------------------------ closing

    def close(self, deadline: float | None = None) -> None:
        """Close every opened service, last opened first, then the shared pools.

        ``deadline`` is an absolute :func:`time.monotonic` instant; without one each close
        may take :data:`CLOSE_TIMEOUT` seconds. Every failure is collected and raised at
        the end as ``ExceptionGroup("toolkit: close failed", [...])``. Calling again does
        nothing; accessors raise :class:`ContainerClosedError` afterwards.
        """
        with self._guard:
            if self._closed:
                return
            self._closed = True
            opened, self._order = self._order, []
            for live in self._live.values():
                live.clear()
            self._plugins.clear()
            self._held.clear()
        errors: list[Exception] = []
        seen: set[int] = set()
        for entry in reversed(opened):
            if id(entry.obj) in seen or isinstance(entry.obj, Held):
                continue  # Django owns what its handlers hold
            seen.add(id(entry.obj))
            error = _close_one(entry.service, entry.instance, entry.obj, deadline)
            if error is not None:
                errors.append(error)
        del opened, seen
        try:
            failures = self._pools.close(deadline)
        except BaseException as exc:  # the registry must not hide the services' failures
            failures = [exc]
        errors.extend(_as_close_error("pools", "shared", exc) for exc in failures)
        if errors:
            raise ExceptionGroup("toolkit: close failed", errors)


def _close_one(service: str, instance: str, obj: Any, deadline: float | None) -> Exception | None:
    """Close ``obj`` on a worker thread within its limit; return the failure, if any."""
    closer = getattr(obj, "close", None)
    if not callable(closer):
        return None
    if getattr(obj, "close_in_caller_thread", False):
        # Thread-bound resources (Django's connections) can only be closed where they
        # were opened; such closes are quick and local, so no time limit is needed.
        try:
            closer()
        except Exception as exc:
            return _as_close_error(service, instance, exc)
        return None
    limit = CLOSE_TIMEOUT if deadline is None else max(0.0, deadline - time.monotonic())
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            closer()
        except BaseException as exc:  # reported to the caller, never lost in the thread
            outcome.append(exc)

    worker = threading.Thread(target=run, name=f"toolkit-close-{service}.{instance}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        return CloseTimeoutError(service, instance, limit)
    return _as_close_error(service, instance, outcome[0]) if outcome else None


def _as_close_error(service: str, instance: str, exc: BaseException) -> Exception:
    """Keep a ToolkitError as it is; wrap anything else in ClosePanicError."""
    if isinstance(exc, ToolkitError):
        return exc
    error = ClosePanicError(service, instance, exc)
    error.__cause__ = exc
    return error


def _plugin_builder(label: str, adapter: str) -> Callable[[OpenContext], Any]:
    """Return the callable that builds plugin ``adapter``: registered, or a dotted path."""
    factory = plugin_factory(adapter)
    if factory is not None:
        return factory
    if "." in adapter:
        try:
            target = import_dotted(adapter)
        except LookupError as exc:
            raise UnknownAdapterError(
                label, adapter, registered_plugins(), reason=str(exc)
            ) from None
        opener = getattr(target, "open", None) if isinstance(target, type) else None
        if callable(opener):
            return opener
        if callable(target):
            return target
        raise UnknownAdapterError(
            label, adapter, registered_plugins(), reason=f'"{adapter}" is not callable'
        )
    raise UnknownAdapterError(label, adapter, registered_plugins())


# ---------------------------------------------------------------------- accessors

_ACCESSOR_SOURCE = """\
def {name}(self, instance="default"):
    try:
        return self._live_{name}[instance]
    except KeyError:
        return self._open("{name}", instance)
"""


def _accessor(spec: catalog.ServiceSpec) -> Callable[..., Any]:
    """Build the accessor of one catalog service.

    The body is compiled from source (as :mod:`dataclasses` does) so the hot path is one
    attribute read and one dict lookup with the service's dict named literally.
    """
    if not spec.name.isidentifier():
        raise RuntimeError(f"catalog name {spec.name!r} is not an identifier")
    namespace: dict[str, Any] = {}
    # A fixed template; the only substituted text is a catalog name (a Python identifier).
    exec(_ACCESSOR_SOURCE.format(name=spec.name), {}, namespace)
    function = namespace[spec.name]
    function.__doc__ = spec.accessor_doc
    function.__module__ = __name__
    function.__qualname__ = f"Container.{spec.name}"
    function.__annotations__ = {"instance": "str", "return": "Any"}
    return function


def _install_accessors() -> None:
    for spec in catalog.SERVICES.values():
        if spec.name in Container.__dict__:
            raise RuntimeError(f"Container already defines {spec.name!r}")
        setattr(Container, spec.name, _accessor(spec))


_install_accessors()
