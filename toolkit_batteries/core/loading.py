"""Find the class behind an adapter name (style anchors, section 6; kombu's alias tables).

``resolve_adapter("cache", "redis")`` returns ``("kvserver", KVServerCache)``. A name is
looked up, ignoring case, in this order:

1. the battery's ``ADAPTERS`` table (``toolkit_batteries.<service>.adapters``): canonical
   name -> dotted path;
2. the battery's own ``ALIASES`` table (alias -> canonical);
3. the product names of the service's catalog row (real product names -> canonical
   names, :data:`VENDOR_ALIASES` across services), used only where the canonical target
   exists in that battery's ``ADAPTERS``;
4. a name containing a dot is a dotted path to any class with an ``open`` class method,
   which is how third-party adapters plug in without registering anything.

If the battery declares a base class, the resolved class must subclass it. A battery
without an ``adapters`` module yet has an empty table. Anything else fails with
:class:`~toolkit_batteries.core.errors.UnknownAdapterError`, which lists the available
names and suggests the closest one. Resolutions are cached; :func:`clear_cache` forgets
them (tests that add tables at run time call it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any

from . import catalog
from .adapter import Service
from .errors import MissingExtraError, UnknownAdapterError, UnknownServiceError

__all__ = [
    "SQL_ALIASES",
    "VENDOR_ALIASES",
    "AdapterTable",
    "adapter_paths",
    "adapter_table",
    "base_class_of",
    "clear_cache",
    "import_dotted",
    "resolve_adapter",
    "table_entry",
]

#: Real product names accepted as aliases of the neutral canonical names (DESIGN.md
#: "Names"), derived from the catalog's products (:mod:`.catalog` is the one list). A
#: tuple lists the adapters of that name across services, in catalog order (``stripe`` is
#: ``billing_a`` in billing, ``payment_a`` in payment); each battery resolves a product
#: name only to the adapter its own catalog row gives it.
VENDOR_ALIASES: dict[str, tuple[str, ...]] = catalog.product_aliases()

#: The SQL names that all select a battery's one ``db`` adapter (it runs on either
#: database); a battery whose ``db`` adapter takes them spreads this into its ``ALIASES``
#: (``{**SQL_ALIASES, ...}``), so the list is written once.
SQL_ALIASES: dict[str, str] = dict.fromkeys(
    ("sql", "sqlserver", "sqlfile", "postgres", "postgresql", "sqlite", "sqlite3"), "db"
)


def adapter_paths(package: str, adapters: str) -> dict[str, str]:
    """Return a battery's ``ADAPTERS`` table (canonical name -> dotted path) from one line.

    ``adapter_paths(__name__, "memory.MemoryCache llm_a=anthropic.AnthropicAI")`` in
    ``toolkit_batteries.<service>.adapters`` gives ``{"memory": "<package>.memory.MemoryCache",
    "llm_a": "<package>.anthropic.AnthropicAI"}``: each entry is ``module.Class`` inside
    ``package``, the module's name being the canonical name unless ``name=`` says another
    (a module named after its product). Order is kept (default first, as in the catalog).
    Only strings are built, so a battery's vendor SDKs are imported when an adapter opens,
    never by ``django.setup()``; every path is still checked when it is first resolved.
    """
    table: dict[str, str] = {}
    for entry in adapters.split():
        name, named, target = entry.rpartition("=")
        module, dot, cls = target.partition(".")
        name = name if named else module
        if not (name.isidentifier() and module and dot and cls) or name in table:
            raise ValueError(f'{package}: adapter entry "{entry}" is not [name=]module.Class once')
        table[name] = f"{package}.{target}"
    return table


_lock = threading.Lock()
_resolved: dict[tuple[str, str], tuple[str, type]] = {}
_tables: dict[str, AdapterTable] = {}


@dataclass(frozen=True, slots=True)
class AdapterTable:
    """One battery's adapter names, as the resolver sees them."""

    service: str
    #: Canonical name -> dotted path, in the battery's order.
    adapters: dict[str, str]
    #: Lower-cased accepted name (canonical or alias) -> canonical name.
    names: dict[str, str]
    #: The class every adapter must subclass, or ``None``.
    base: type | None

    def available(self) -> list[str]:
        """Return every accepted name: canonical names first, then aliases, sorted."""
        canonical = sorted(self.adapters)
        aliases = sorted(name for name in self.names if name not in self.adapters)
        return canonical + aliases


def clear_cache() -> None:
    """Forget cached tables and resolutions."""
    with _lock:
        _resolved.clear()
        _tables.clear()


def resolve_adapter(service: str, name: str) -> tuple[str, type]:
    """Return ``(canonical_name, adapter_class)`` for ``name`` in ``service``.

    Raises :class:`UnknownAdapterError` for a name no table resolves, or a class that is
    not an adapter of the service; :class:`MissingExtraError` when the adapter's optional
    dependency is not installed.
    """
    key = (service, name)
    found = _resolved.get(key)
    if found is not None:
        return found
    table = adapter_table(service)
    text = name.strip() if isinstance(name, str) else ""
    entry = table_entry(service, name)
    if entry is not None:
        canonical, path = entry
    else:
        path = text
        canonical = next((c for c, p in table.adapters.items() if p == text), text)
    cls = _import_adapter(table, text, path)
    found = (canonical, cls)
    with _lock:
        _resolved[key] = found
    return found


def table_entry(service: str, name: Any) -> tuple[str, str] | None:
    """Return ``(canonical name, dotted path)`` of an adapter name ``service`` lists.

    ``None`` means ``name`` is a dotted path of the caller's own (to import and check);
    any other name raises :class:`UnknownAdapterError`. Nothing is imported, so settings
    helpers can name a backend before Django is set up.
    """
    table = adapter_table(service)
    text = name.strip() if isinstance(name, str) else ""
    canonical = table.names.get(text.lower())
    if canonical is not None:
        return canonical, table.adapters[canonical]
    if "." not in text:
        raise UnknownAdapterError(service, text or repr(name), table.available())
    return None


def adapter_table(service: str) -> AdapterTable:
    """Return the (cached) adapter table of ``service``."""
    table = _tables.get(service)
    if table is not None:
        return table
    if service not in catalog.SERVICES:
        raise UnknownServiceError(service, catalog.SERVICES)
    module = _optional_module(f"{catalog.SERVICES[service].package}.adapters")
    adapters: dict[str, str] = dict(getattr(module, "ADAPTERS", {}) or {})
    names = {canonical.lower(): canonical for canonical in adapters}
    for alias, target in (getattr(module, "ALIASES", {}) or {}).items():
        if target in adapters:
            names.setdefault(alias.lower(), target)
    for target, products in catalog.SERVICES[service].products.items():
        if target in adapters:
            for product in products:
                names.setdefault(product, target)
    table = AdapterTable(service, adapters, names, base_class_of(service, module))
    with _lock:
        _tables[service] = table
    return table


def base_class_of(service: str, adapters_module: ModuleType | None = None) -> type | None:
    """Return the class every adapter of ``service`` must subclass, or ``None``.

    Looked up as ``BASE_CLASS`` (a class or a dotted path) in the adapters module, then in
    ``<battery>.base``; failing both, the one root class in ``<battery>.base`` that
    subclasses :class:`~toolkit_batteries.core.adapter.Service` with this ``service_name``.
    """
    package = catalog.SERVICES[service].package
    declared = getattr(adapters_module, "BASE_CLASS", None)
    base_module = _optional_module(f"{package}.base")
    if declared is None:
        declared = getattr(base_module, "BASE_CLASS", None)
    if isinstance(declared, str):
        declared = import_dotted(declared)
    if isinstance(declared, type):
        return declared
    if base_module is None:
        return None
    # ``type(obj)``, not ``inspect.isclass``: a module-level lazy object (Django's
    # ``settings``) would be evaluated by an ``isinstance`` check.
    candidates = [
        obj
        for obj in list(vars(base_module).values())
        if issubclass(type(obj), type)
        and obj.__module__ == base_module.__name__
        and issubclass(obj, Service)
        and obj.service_name == service
    ]
    roots = [c for c in candidates if not any(o is not c and issubclass(c, o) for o in candidates)]
    return roots[0] if len(roots) == 1 else None


def import_dotted(path: str) -> Any:
    """Import ``"package.module.Attribute"``; like Django's ``import_string``.

    Unlike ``import_string`` it lets an import error raised *inside* the target module
    propagate (a missing vendor SDK must surface as itself, not as "no such adapter").
    Raises :class:`LookupError` when the module or attribute does not exist.
    """
    module_path, _, attribute = path.rpartition(".")
    if not module_path or not attribute:
        raise LookupError(f'"{path}" is not a dotted path')
    module = _optional_module(module_path)
    if module is None:
        raise LookupError(f'no module named "{module_path}"')
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise LookupError(f'module "{module_path}" has no attribute "{attribute}"') from None


def _optional_module(path: str) -> ModuleType | None:
    """Import ``path``, or return ``None`` if it (or a parent package) does not exist."""
    try:
        return import_module(path)
    except MissingExtraError:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (path == missing or path.startswith(missing + ".")):
            return None
        raise


def _import_adapter(table: AdapterTable, name: str, path: str) -> type:
    service = table.service
    try:
        cls = import_dotted(path)
    except LookupError as exc:
        raise UnknownAdapterError(service, name, table.available(), reason=str(exc)) from None
    if not isinstance(cls, type) or not callable(getattr(cls, "open", None)):
        raise UnknownAdapterError(
            service, name, table.available(), reason=f'"{path}" is not a class with open(ctx)'
        )
    if table.base is not None and not issubclass(cls, table.base):
        raise UnknownAdapterError(
            service,
            name,
            table.available(),
            reason=f'"{path}" is not a subclass of {table.base.__module__}.'
            f"{table.base.__qualname__}",
        )
    return cls
