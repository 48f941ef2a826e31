"""Configuration: built-in defaults < ``settings.TOOLKIT`` < environment.

Every one of the 37 catalog services has a ``default`` instance built from its declared
defaults and its catalog default adapter. ``settings.TOOLKIT`` may configure any instance,
either as one ``{adapter, options}`` envelope (the ``default`` instance) or as a map of
instance name to envelope; settings are decoded strictly (an unknown service or option key
fails with a "did you mean"). The environment then overlays single fields
(``CACHE__DEFAULT__MAX_ENTRIES``, see :mod:`.env`) best effort. Third-party services live
under ``TOOLKIT["plugins"]`` as strict envelopes whose options pass through raw.

The shape of ``settings.TOOLKIT`` (blocks, instances, envelopes) is read by
:mod:`.config_blocks`; this module decodes and layers the values. Nothing here ever
formats an option value into an error or a log line, and
:meth:`Config.redacted_services` is the display path for the resolved configuration.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from . import catalog
from .config_blocks import (
    _SERVICE_NAMES,
    _SERVICES_BY_FOLDED,
    DEFAULT_INSTANCE,
    PLUGINS_KEY,
    _Block,
    _plugin_error,
    _Problems,
    _service_blocks,
    _split_plugins,
    _split_top_level,
)
from .config_blocks import ENVELOPE_KEYS as ENVELOPE_KEYS
from .env import EnvLayer, EnvValue, InstanceEnv, read_environ
from .errors import (
    ConfigurationError,
    InvalidOptionsError,
    UnknownInstanceError,
    UnknownServiceError,
)
from .options import (
    Where,
    build_options,
    decode_mapping,
    decode_text,
    field_specs,
    normalize,
    options_to_dict,
)
from .redaction import redact, redact_string

#: What :func:`_build_instances` builds: a service's or a plugin's config.
_Built = TypeVar("_Built")

__all__ = ["Config", "PluginConfig", "ServiceConfig"]

logger = logging.getLogger("toolkit.config")

#: The source named in errors about values that came from settings.
SETTINGS_SOURCE = "settings.TOOLKIT"
#: The key of :attr:`ServiceConfig.sources` for the adapter (options may be named "adapter").
ADAPTER_SOURCE = "@adapter"


@dataclass(frozen=True, slots=True, repr=False)
class ServiceConfig:
    """The resolved configuration of one service instance."""

    service: str
    instance: str
    #: Adapter name as configured (canonical, vendor alias, or dotted path).
    adapter: str
    #: The service's options dataclass, every layer applied.
    options: Any
    #: Where each value came from: :data:`ADAPTER_SOURCE` or a dotted option path -> the
    #: layer (``settings.TOOLKIT`` or an environment variable's name); what is absent is
    #: a built-in default. ``config show`` prints it.
    sources: Mapping[str, str] = field(default_factory=lambda: types.MappingProxyType({}))

    def __repr__(self) -> str:
        """Render without secrets, so logging a ``ServiceConfig`` is safe."""
        return (
            f"ServiceConfig(service={self.service!r}, instance={self.instance!r}, "
            f"adapter={redact_string(self.adapter)!r}, options={options_to_dict(self.options)!r})"
        )


@dataclass(frozen=True, slots=True, repr=False)
class PluginConfig:
    """A third-party service: a strict envelope around raw options the plugin validates."""

    name: str
    instance: str
    adapter: str
    #: A deep, read-only copy of the settings' options (mappings are ``MappingProxyType``,
    #: lists are tuples).
    options: Mapping[str, Any]

    def __repr__(self) -> str:
        """Render without secrets, so logging a ``PluginConfig`` is safe."""
        return (
            f"PluginConfig(name={self.name!r}, instance={self.instance!r}, "
            f"adapter={redact_string(self.adapter)!r}, options={redact(self.options)!r})"
        )


# --------------------------------------------------------------------------- building


def _set_path(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def _leaf_paths(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Return the dotted path of every value given in a decoded settings tree."""
    paths: list[str] = []
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            paths.extend(_leaf_paths(value, f"{prefix}{key}."))
        else:
            paths.append(prefix + key)
    return paths


#: The adapter and option a ``TOOLKIT_DATABASE_URL`` scheme selects for ``db.default``.
_DATABASE_SCHEMES = {
    "postgres": ("sqlserver", "dsn"),
    "postgresql": ("sqlserver", "dsn"),
    "sqlite": ("sqlfile", "path"),
}


def _database_default(value: EnvValue) -> tuple[str, str, str]:
    """Return (adapter, option, value) for ``TOOLKIT_DATABASE_URL``; never echo the URL."""
    scheme, sep, rest = value.text.partition("://")
    target = _DATABASE_SCHEMES.get(scheme.strip().lower()) if sep else None
    if target is None:
        raise InvalidOptionsError(
            "db",
            "dsn",
            "must be a postgres://, postgresql:// or sqlite:/// URL",
            source=value.variable,
        )
    adapter, option_name = target
    if option_name == "path":
        # sqlite:///relative/file and sqlite:////absolute/file, as dj-database-url reads them
        if not rest.startswith("/") or rest == "/":
            raise InvalidOptionsError(
                "db",
                "path",
                "a sqlite URL needs a file: sqlite:///db.sqlite3",
                source=value.variable,
            )
        return adapter, option_name, rest[1:]
    return adapter, option_name, value.text


def _kvserver_prefix(cls: type) -> tuple[str, ...]:
    """Return where an options class keeps its server address: ``()`` or ``("kvserver",)``."""
    specs = field_specs(cls)
    if "addr" in specs:
        return ()
    nested = specs.get("kvserver")
    if nested is not None and nested.nested is not None and "addr" in field_specs(nested.nested):
        return ("kvserver",)
    return ("",)  # no address field: nothing to inherit


def _inherit_redis_url(
    cls: type, adapter: str, tree: dict[str, Any], project: Mapping[str, EnvValue]
) -> str | None:
    """Give a ``kvserver`` instance that names no server ``TOOLKIT_REDIS_URL`` as its addr.

    Return the dotted path set, or ``None``. An instance's own ``addr`` (or, on the flat
    services, ``url``) from settings or its variables wins; the block services' reserved
    ``kvserver.url`` does not count (it is ignored).
    """
    redis = project.get("redis_url")
    if redis is None or adapter.strip().lower() not in ("kvserver", "redis"):
        return None
    prefix = _kvserver_prefix(cls)
    if prefix == ("",):
        return None
    node: Any = tree
    for part in prefix:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            break
    given = node if isinstance(node, dict) else {}
    own = ("addr", "url") if not prefix else ("addr",)
    if any(given.get(name) for name in own):
        return None
    _set_path(tree, (*prefix, "addr"), redis.text)
    return ".".join((*prefix, "addr"))


def _build_service(
    service: str,
    block: _Block,
    env: InstanceEnv | None,
    project: Mapping[str, EnvValue] | None = None,
) -> ServiceConfig:
    """Apply settings, the project-wide defaults, then environment to one instance."""
    cls = catalog.options_class_of(service)
    project = project or {}
    database_url = (
        project.get("database_url") if service == "db" and block.name == "default" else None
    )
    if (
        env is None
        and block.adapter is None
        and block.options is None
        and database_url is None
        and "redis_url" not in project
    ):
        return _default_service(service, cls, block.name)
    where = Where(service, block.name, SETTINGS_SOURCE)
    adapter = block.adapter
    if adapter is not None and not isinstance(adapter, str):
        raise where.invalid("adapter", "expected a string")
    tree = decode_mapping(cls, block.options, where)
    provenance = dict.fromkeys(_leaf_paths(tree), SETTINGS_SOURCE)
    if adapter is not None:
        provenance[ADAPTER_SOURCE] = SETTINGS_SOURCE
    own_database = env is not None and (
        env.adapter is not None or {("dsn",), ("path",)} & set(env.fields)
    )
    if database_url is not None and not own_database:
        # Below the instance's own DB__DEFAULT__* variables, above settings.TOOLKIT.
        adapter, option_name, value = _database_default(database_url)
        tree.pop("dsn", None)
        tree.pop("path", None)
        provenance.pop("dsn", None)
        provenance.pop("path", None)
        tree[option_name] = value
        provenance[ADAPTER_SOURCE] = provenance[option_name] = database_url.variable
    sources: dict[str, str] = {}
    if env is not None:
        if env.adapter is not None:
            adapter = env.adapter.text.strip()
            provenance[ADAPTER_SOURCE] = env.adapter.variable
        for path, value in sorted(env.fields.items(), key=lambda item: item[1].variable):
            env_where = Where(service, block.name, value.variable)
            _set_path(tree, path, decode_text(cls, path, value.text, env_where))
            sources[".".join(path)] = value.variable
        provenance.update(sources)
    adapter = adapter or catalog.SERVICES[service].default_adapter
    inherited = _inherit_redis_url(cls, adapter, tree, project)
    if inherited is not None:
        provenance[inherited] = project["redis_url"].variable
    try:
        options = build_options(cls, tree, where)
    except InvalidOptionsError as exc:
        source = sources.get(exc.field)
        if source is None:
            raise
        raise InvalidOptionsError(
            service, exc.field, exc.reason, instance=block.name, source=source
        ) from None
    check = getattr(options, "validate", None)
    if callable(check):
        check(Where(service, block.name))
    return ServiceConfig(service, block.name, adapter, options, types.MappingProxyType(provenance))


#: Options class -> its all-defaults instance. Options are frozen, so one built instance
#: serves every load; this keeps ``Config.load`` cheap for the many untouched services.
_DEFAULTS: dict[type, Any] = {}


def _default_service(service: str, cls: type, instance: str) -> ServiceConfig:
    """Return an instance configured only by built-in defaults."""
    options = _DEFAULTS.get(cls)
    if options is None:
        options = _DEFAULTS[cls] = build_options(cls, {}, Where(service, instance))
    check = getattr(options, "validate", None)
    if callable(check):
        check(Where(service, instance))
    return ServiceConfig(service, instance, catalog.SERVICES[service].default_adapter, options)


def _freeze(value: Any) -> Any:
    """Return a read-only view of a deep-copied plain-data value."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    return value


# --------------------------------------------------------------------------- resolution


@dataclass(slots=True)
class _Resolved:
    services: dict[str, dict[str, ServiceConfig]]
    plugins: dict[str, dict[str, PluginConfig]]
    problems: _Problems
    env: EnvLayer


def _build_plugin(name: str, block: _Block, env: InstanceEnv | None) -> PluginConfig:
    adapter = block.adapter
    if adapter is not None and not isinstance(adapter, str):
        raise _plugin_error(name, block.name, '"adapter" must be a string')
    if env is not None and env.adapter is not None:
        adapter = env.adapter.text.strip()
    if not adapter or not adapter.strip():
        raise _plugin_error(name, block.name, '"adapter" is required (a non-empty string)')
    options = block.options
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise _plugin_error(name, block.name, '"options" must be a mapping')
    return PluginConfig(name, block.name, adapter.strip(), _freeze(copy.deepcopy(dict(options))))


def _resolve(settings: Mapping[str, Any] | None, environ: Mapping[str, str] | None) -> _Resolved:
    """Resolve every layer, gathering every problem instead of stopping at the first."""
    problems = _Problems()
    if settings is None:
        settings = {}
    if environ is None:
        environ = os.environ
    if not isinstance(settings, Mapping):
        problems.add("", "", ConfigurationError("TOOLKIT must be a mapping of service blocks"))
        settings = {}
    blocks, raw_plugins = _split_top_level(settings, problems)
    plugin_blocks = _split_plugins(raw_plugins, problems)
    env = read_environ(environ, plugin_blocks)

    services: dict[str, dict[str, ServiceConfig]] = {}
    for service in _SERVICE_NAMES:
        instances = _service_blocks(service, blocks.get(service), problems)
        if instances is None:
            continue
        services[service] = _build_instances(
            service,
            instances,
            env.services.get(service, {}),
            functools.partial(_build_service, service, project=env.project),
            problems,
        )

    plugins: dict[str, dict[str, PluginConfig]] = {}
    for name, plugin_instances in plugin_blocks.items():
        plugins[name] = _build_instances(
            f"{PLUGINS_KEY}.{name}",
            {normalize(block.name): block for block in plugin_instances},
            env.plugins.get(name, {}),
            functools.partial(_build_plugin, name),
            problems,
        )
    return _Resolved(services, plugins, problems, env)


def _build_instances(
    where: str,
    blocks: dict[str, _Block],
    env_instances: Mapping[str, InstanceEnv],
    build: Callable[[_Block, InstanceEnv | None], _Built],
    problems: _Problems,
) -> dict[str, _Built]:
    """Build every instance of one service or plugin, by its spelled name.

    The instances are the settings blocks (by folded name) plus those only the environment
    names; one that fails is reported under ``where`` and left out, so services and
    plugins alike gather every problem in one pass instead of stopping at the first.
    """
    for folded, env_instance in env_instances.items():
        if folded not in blocks:
            blocks[folded] = _Block(env_instance.name)
    built: dict[str, _Built] = {}
    for folded, block in blocks.items():
        try:
            built[block.name] = build(block, env_instances.get(folded))
        except ConfigurationError as exc:
            problems.add(where, block.name, exc)
    return built


# --------------------------------------------------------------------------- the config


def _readonly(table: dict[str, dict[str, Any]]) -> Mapping[str, Mapping[str, Any]]:
    return types.MappingProxyType(
        {name: types.MappingProxyType(dict(items)) for name, items in table.items()}
    )


def _redact_free_maps(cls: type, rendered: dict[str, Any]) -> dict[str, Any]:
    """Mask secret-looking keys inside free-form map options (headers and the like).

    Declared secrets are already masked by ``options_to_dict``; a map that is not declared
    secret can still carry a credential under a key such as ``Authorization``.
    """
    for name, spec in field_specs(cls).items():
        value = rendered.get(name)
        if spec.secret or value is None:
            continue
        if spec.kind in ("map", "map_list"):
            rendered[name] = redact(value)
        elif spec.kind in ("nested", "optional_nested") and isinstance(value, dict):
            _redact_free_maps(spec.nested, value)  # type: ignore[arg-type]
        elif spec.kind == "list_nested":
            for item in value:
                _redact_free_maps(spec.nested, item)  # type: ignore[arg-type]
        elif spec.kind == "map_nested":
            for item in value.values():
                _redact_free_maps(spec.nested, item)  # type: ignore[arg-type]
    return rendered


#: The mapping :meth:`Config.of` loaded last, a deep copy of it, the environment and the
#: result. ``settings.py`` derives up to seven slots from one ``TOOLKIT`` and the container
#: loads it again at first use; each repeat is served from here while the very same
#: mapping still equals its copy and the environment is unchanged (a ``Config`` is
#: immutable, so sharing it is safe).
_last_of: tuple[Mapping[str, Any], Any, dict[str, str], Config] | None = None


def _load_repeated(settings: Mapping[str, Any]) -> Config:
    """Return ``Config.load(settings, os.environ)``, reusing the last result when unchanged."""
    global _last_of
    environ = dict(os.environ)
    last = _last_of
    if last is not None and last[0] is settings and last[2] == environ and last[1] == settings:
        return last[3]
    config = Config.load(settings, environ)
    try:
        snapshot = copy.deepcopy(settings)
    except Exception:  # an uncopyable value: load every time, as without the cache
        return config
    _last_of = (settings, snapshot, environ, config)
    return config


class Config:
    """The whole configuration, immutable once loaded."""

    __slots__ = ("_plugins", "_services")

    def __init__(
        self,
        services: dict[str, dict[str, ServiceConfig]],
        plugins: dict[str, dict[str, PluginConfig]] | None = None,
    ) -> None:
        """Wrap resolved tables; use :meth:`load` to build them from settings and env."""
        self._services = _readonly(services)
        self._plugins = _readonly(plugins or {})

    @classmethod
    def load(
        cls, settings: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
    ) -> Config:
        """Build the configuration from defaults, a ``TOOLKIT`` dict and an environment.

        ``settings=None`` means no settings; ``environ=None`` means ``os.environ``. Raises
        the first problem in (service, instance) order; :meth:`validate` lists them all.
        """
        resolved = _resolve(settings, environ)
        for legacy in resolved.env.legacy:
            logger.warning(
                "legacy environment variable %s: use %s instead (the flat form is deprecated)",
                legacy.variable,
                legacy.replacement,
            )
        errors = resolved.problems.sorted()
        if errors:
            raise errors[0]
        return cls(resolved.services, resolved.plugins)

    @classmethod
    def of(cls, config: Config | Mapping[str, Any] | None = None) -> Config:
        """Return ``config`` as a :class:`Config`: the one the slot derivations read.

        ``settings.py`` calls ``django_databases(TOOLKIT)``, ``django_cache_settings``
        and ``django_task_settings`` with the ``TOOLKIT`` mapping (loaded here with the
        process environment, so ``SERVICE__INSTANCE__FIELD`` overrides apply); a loaded
        ``Config`` passes through; ``None`` reads ``settings.TOOLKIT`` of a configured
        Django (none at all otherwise).
        """
        if isinstance(config, Config):
            return config
        if config is None:
            from django.conf import settings

            config = getattr(settings, "TOOLKIT", None) if settings.configured else None
        if config is None or cls is not Config:
            return cls.load(config, os.environ)
        return _load_repeated(config)

    @classmethod
    def validate(
        cls, settings: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
    ) -> list[ConfigurationError]:
        """Return every configuration problem (one per failing instance), for system checks."""
        return _resolve(settings, environ).problems.sorted()

    @property
    def services(self) -> Mapping[str, Mapping[str, ServiceConfig]]:
        """Return the read-only map service -> instance -> configuration."""
        return self._services

    def service(self, name: str, instance: str = DEFAULT_INSTANCE) -> ServiceConfig:
        """Return one service instance's configuration."""
        instances = self._services.get(name)
        if instances is None:
            canonical = _SERVICES_BY_FOLDED.get(normalize(name))
            if canonical is None:
                raise UnknownServiceError(name, _SERVICE_NAMES)
            name, instances = canonical, self._services[canonical]
        found = instances.get(instance)
        if found is None:
            found = _by_folded(instances, instance)
            if found is None:
                raise UnknownInstanceError(name, instance, instances)
        return found

    def instances(self, name: str) -> tuple[str, ...]:
        """Return the configured instance names of a service (always includes default)."""
        instances = self._services.get(name)
        if instances is None:
            canonical = _SERVICES_BY_FOLDED.get(normalize(name))
            if canonical is None:
                raise UnknownServiceError(name, _SERVICE_NAMES)
            instances = self._services[canonical]
        return (DEFAULT_INSTANCE, *sorted(i for i in instances if i != DEFAULT_INSTANCE))

    def plugin(self, name: str, instance: str = DEFAULT_INSTANCE) -> PluginConfig:
        """Return one plugin instance's configuration."""
        instances = self._plugins.get(name) or _by_folded(self._plugins, name)
        if instances is None:
            raise UnknownServiceError(name, self._plugins)
        found = instances.get(instance) or _by_folded(instances, instance)
        if found is None:
            raise UnknownInstanceError(f"{PLUGINS_KEY}.{name}", instance, instances)
        return found

    def plugin_names(self) -> tuple[str, ...]:
        """Return the configured plugin names, sorted."""
        return tuple(sorted(self._plugins))

    def redacted_services(self) -> dict[str, Any]:
        """Return every service and plugin as display-safe plain data.

        Shape: ``{service: {instance: {"adapter", "options"}}, "plugins": {...}}``; secrets,
        URL passwords and credential-looking values are masked.
        """
        result: dict[str, Any] = {}
        for service, instances in self._services.items():
            result[service] = {
                instance: {
                    "adapter": redact_string(config.adapter),
                    "options": _redact_free_maps(
                        type(config.options), options_to_dict(config.options)
                    ),
                }
                for instance, config in instances.items()
            }
        result[PLUGINS_KEY] = {
            name: {
                instance: {
                    "adapter": redact_string(config.adapter),
                    "options": redact(config.options),
                }
                for instance, config in instances.items()
            }
            for name, instances in self._plugins.items()
        }
        return result


def _by_folded(table: Mapping[str, Any], name: str) -> Any:
    folded = normalize(name)
    for key, value in table.items():
        if normalize(key) == folded:
            return value
    return None
