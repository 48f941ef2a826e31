"""Read the environment layer of the configuration, best effort and fast.

Two spellings set a service option:

* ``<SERVICE>__<INSTANCE>__<FIELD>`` (``CACHE__DEFAULT__MAX_ENTRIES=5000``), where nested
  keys join with single underscores (``AUTH__DEFAULT__JWT_SECRET``) and ``<FIELD>`` may be
  ``ADAPTER``;
* the legacy flat ``<SERVICE>_<FIELD>`` (``DB_MAX_CONNS=20``), which sets the ``default``
  instance and earns one warning per variable.

Matching ignores case and underscores. Anything that does not resolve to a known service
and field is ignored silently, because the process environment holds many unrelated
variables. Variables starting with ``TOOLKIT_`` are never a service option: they are the
CLI switches and the ``secrets`` env adapter's secrets, plus the two project-wide
defaults :data:`PROJECT_DEFAULTS` (``TOOLKIT_REDIS_URL``: every ``kvserver`` instance
that names no server of its own; ``TOOLKIT_DATABASE_URL``: the ``db`` service's default
instance unless ``DB__DEFAULT__*`` says otherwise), which :mod:`.config` applies.

This module only *resolves* names; values are decoded later by :mod:`.config`, so a bad
value is reported once, for its service instance, naming the variable but not the value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from . import catalog
from .options import env_paths, normalize

__all__ = ["EnvLayer", "EnvValue", "InstanceEnv", "LegacyVariable", "read_environ"]

#: Prefix of the variables that are never configuration (CLI switches, env secrets).
RESERVED_PREFIX = "TOOLKIT_"

#: Folded service name -> catalog name, computed once.
_SERVICES_BY_FOLDED: dict[str, str] = {normalize(name): name for name in catalog.SERVICES}

#: The folded field name that selects the adapter.
_ADAPTER = "adapter"

#: Project-wide defaults: variable -> key of :attr:`EnvLayer.project`.
PROJECT_DEFAULTS = {"TOOLKIT_REDIS_URL": "redis_url", "TOOLKIT_DATABASE_URL": "database_url"}


@dataclass(frozen=True, slots=True)
class EnvValue:
    """One variable's raw text and its name (the source quoted in errors)."""

    variable: str
    text: str


@dataclass(slots=True)
class InstanceEnv:
    """Everything the environment sets for one service or plugin instance."""

    #: The instance name as spelled in the environment, lower-cased (used when the
    #: instance exists only in the environment).
    name: str
    adapter: EnvValue | None = None
    #: Field path (``("jwt", "secret")``) -> value.
    fields: dict[tuple[str, ...], EnvValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LegacyVariable:
    """A legacy flat variable that resolved, and the instance-aware spelling to use."""

    variable: str
    replacement: str


@dataclass(slots=True)
class EnvLayer:
    """The resolved environment layer."""

    #: Service name -> folded instance name -> settings.
    services: dict[str, dict[str, InstanceEnv]] = field(default_factory=dict)
    #: Plugin name -> folded instance name -> settings (only the adapter is ever set).
    plugins: dict[str, dict[str, InstanceEnv]] = field(default_factory=dict)
    #: Legacy variables that resolved, sorted by variable name.
    legacy: list[LegacyVariable] = field(default_factory=list)
    #: The project-wide defaults that are set (``redis_url``, ``database_url``).
    project: dict[str, EnvValue] = field(default_factory=dict)


def _instance(
    table: dict[str, dict[str, InstanceEnv]], owner: str, raw_instance: str
) -> InstanceEnv:
    instances = table.get(owner)
    if instances is None:
        instances = table[owner] = {}
    folded = normalize(raw_instance)
    entry = instances.get(folded)
    spelled = raw_instance.lower()
    if entry is None:
        entry = instances[folded] = InstanceEnv(spelled)
    elif spelled < entry.name:  # deterministic whatever the environment's order
        entry.name = spelled
    return entry


def _wins(current: EnvValue | None, variable: str) -> bool:
    """Tell whether ``variable`` replaces ``current`` for the same target.

    Two spellings of one target (``CACHE__DEFAULT__MAXENTRIES`` and
    ``CACHE__DEFAULT__MAX_ENTRIES``) are resolved by name so the result never depends on
    the order of the environment.
    """
    return current is None or variable > current.variable


def read_environ(environ: Mapping[str, str], plugins: Iterable[str] = ()) -> EnvLayer:
    """Resolve the configuration variables of ``environ``; ignore everything else.

    ``plugins`` are the plugin names declared in settings: for them only
    ``<PLUGIN>__<INSTANCE>__ADAPTER`` is read.
    """
    services_by_folded = _SERVICES_BY_FOLDED
    plugins_by_folded = {normalize(name): name for name in plugins}
    layer = EnvLayer()
    paths_of: dict[str, dict[str, tuple[str, ...]]] = {}
    legacy: list[tuple[str, str, tuple[str, ...] | None, str]] = []
    for variable, text in environ.items():
        if variable[:1] in "Tt" and variable[:8].upper() == RESERVED_PREFIX:
            key = PROJECT_DEFAULTS.get(variable.upper())
            if key is not None and text.strip() and _wins(layer.project.get(key), variable):
                layer.project[key] = EnvValue(variable, text.strip())
            continue
        if "__" in variable:
            parts = variable.split("__", 2)
            if len(parts) != 3 or not all(parts):
                continue
            head, raw_instance, raw_field = parts
            folded_head = head.lower()
            service = services_by_folded.get(folded_head)
            if service is None:
                if "_" in folded_head or "-" in folded_head:
                    folded_head = normalize(folded_head)
                    service = services_by_folded.get(folded_head)
                if service is None:
                    plugin = plugins_by_folded.get(folded_head)
                    if plugin is not None and normalize(raw_field) == _ADAPTER:
                        entry = _instance(layer.plugins, plugin, raw_instance)
                        if _wins(entry.adapter, variable):
                            entry.adapter = EnvValue(variable, text)
                    continue
            folded_field = normalize(raw_field)
            if folded_field == _ADAPTER:
                entry = _instance(layer.services, service, raw_instance)
                if _wins(entry.adapter, variable):
                    entry.adapter = EnvValue(variable, text)
                continue
            paths = paths_of.get(service)
            if paths is None:
                paths = paths_of[service] = env_paths(catalog.options_class_of(service))
            path = paths.get(folded_field)
            if path is None:
                continue
            entry = _instance(layer.services, service, raw_instance)
            if _wins(entry.fields.get(path), variable):
                entry.fields[path] = EnvValue(variable, text)
            continue
        cut = variable.find("_")
        if cut <= 0:
            continue
        service = services_by_folded.get(variable[:cut].lower())
        if service is None:
            continue
        folded_field = normalize(variable[cut + 1 :])
        if folded_field == _ADAPTER:
            legacy.append((variable, service, None, text))
            continue
        path = env_paths(catalog.options_class_of(service)).get(folded_field)
        if path is not None:
            legacy.append((variable, service, path, text))
    if legacy:
        _apply_legacy(layer, legacy)
    return layer


def _apply_legacy(
    layer: EnvLayer, legacy: list[tuple[str, str, tuple[str, ...] | None, str]]
) -> None:
    """Set the default instance from legacy variables the instance-aware form left unset."""
    legacy.sort()  # by variable name: among legacy spellings of one target, the last wins
    explicit = {
        (service, path)
        for service, instances in layer.services.items()
        if "default" in instances
        for path in (None, *instances["default"].fields)
        if path is not None or instances["default"].adapter is not None
    }
    for variable, service, path, text in legacy:
        leaf = "ADAPTER" if path is None else "_".join(path).upper()
        layer.legacy.append(LegacyVariable(variable, f"{service.upper()}__DEFAULT__{leaf}"))
        if (service, path) in explicit:
            continue
        entry = _instance(layer.services, service, "default")
        if path is None:
            entry.adapter = EnvValue(variable, text)
        else:
            entry.fields[path] = EnvValue(variable, text)
