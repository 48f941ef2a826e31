"""The core Django app and the base class of every battery's app.

The core app is ``"toolkit_batteries"`` in ``INSTALLED_APPS`` (label
``toolkit_batteries``); its ``ready()`` registers the configuration check and rebuilds
:mod:`toolkit_batteries.services` when the ``TOOLKIT`` setting changes.

A battery's ``apps.py`` is a few lines::

    from toolkit_batteries.core.apps import BatteryConfig

    class CacheConfig(BatteryConfig):
        name = "toolkit_batteries.cache"
        verbose_name = "toolkit: cache"      # optional; label defaults to "toolkit_cache"

``BatteryConfig.ready()`` registers the battery's check (``toolkit_<service>.E001``: each
configured instance's adapter resolves) plus what :meth:`BatteryConfig.battery_checks`
returns: by default the ``battery_checks(config)`` function of the battery's ``checks``
module, if it has one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar

from django.apps import AppConfig
from django.core import checks

if TYPE_CHECKING:
    from .config import Config

__all__ = ["BatteryConfig", "ToolkitBatteriesConfig"]


def _deferred_check(module: str, name: str) -> Callable[..., Any]:
    """Return a check that imports ``.<module>.<name>`` when it first runs, then calls it.

    ``django.setup()`` only registers checks; the modules that implement them (regexes and
    dataclasses built at import) are paid for by ``manage.py check``, not by every process.
    Built once at import, so a repeated ``ready()`` registers the same object again.
    """

    def check(app_configs: Any = None, **kwargs: Any) -> Any:
        return getattr(import_module(f"{__package__}.{module}"), name)(app_configs, **kwargs)

    check.__name__ = check.__qualname__ = name
    return check


_SHARED_STATE = _deferred_check("topology", "check_shared_state")
_SHARED_STATE_DEPLOY = _deferred_check("topology", "check_shared_state_deploy")
_UNSUPPORTED_OPTIONS = _deferred_check("unsupported", "check_unsupported_options")


class ToolkitBatteriesConfig(AppConfig):
    """The core app: configuration checks and the settings-aware registry's wiring."""

    name = "toolkit_batteries"
    label = "toolkit_batteries"
    verbose_name = "toolkit"

    def ready(self) -> None:
        """Register the configuration check; rebuild services when ``TOOLKIT`` changes."""
        from .. import services
        from .checks import TAG, check_configuration

        checks.register(check_configuration, TAG)
        # Memory state in a multi-process deployment: one check for every such service.
        checks.register(_SHARED_STATE, TAG)
        checks.register(_SHARED_STATE_DEPLOY, TAG, deploy=True)
        # Spec options redis-py cannot honour are refused, never accepted and ignored.
        checks.register(_UNSUPPORTED_OPTIONS, TAG)
        services.connect_signals()


class BatteryConfig(AppConfig):
    """Base of every battery's app config: label, verbose name and checks from the name."""

    #: Not an app by itself; subclasses become their module's default config again, so a
    #: battery's ``apps.py`` may import this class without confusing Django's discovery.
    default = False
    default_auto_field = "django.db.models.BigAutoField"
    #: The catalog service; derived from ``name`` (``toolkit_batteries.cache`` -> ``cache``).
    service: ClassVar[str] = ""
    #: Set when the battery's ``checks`` module has ``deploy_checks(config)``: checks only
    #: ``manage.py check --deploy`` runs (a development key or a stub provider in production).
    has_deploy_checks: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Fill ``service``, ``label`` and ``verbose_name`` from ``name`` when not given."""
        super().__init_subclass__(**kwargs)
        if "default" not in cls.__dict__:
            cls.default = True
        name = cls.__dict__.get("name")
        if not name:
            return
        if not cls.__dict__.get("service"):
            cls.service = name.rpartition(".")[2]
        if "label" not in cls.__dict__:
            cls.label = f"toolkit_{cls.service}"
        if "verbose_name" not in cls.__dict__:
            cls.verbose_name = f"toolkit: {cls.service}"

    def ready(self) -> None:
        """Register this battery's checks, replacing any earlier registration.

        ``ready()`` runs again whenever ``INSTALLED_APPS`` is overridden (tests do this);
        without the replacement every override would add one more copy of each check.
        """
        from .checks import TAG, battery_check, battery_deploy_check

        # The registry ``checks.register`` adds to (a test may point it at its own).
        registry = getattr(checks.register, "__self__", None) or checks.registry.registry
        # Deploy-only checks live in their own set (``deployment_checks``). The earlier
        # ones are found by their mark, not remembered: a test may save and restore the
        # registry's sets, and whatever they hold then is what must not be doubled.
        for registered in (registry.registered_checks, registry.deployment_checks):
            mine = [c for c in registered if getattr(c, "toolkit_battery", None) == self.service]
            for old in mine:
                registered.discard(old)
        check = battery_check(self.service, self, self.battery_checks)
        check.toolkit_battery = self.service  # type: ignore[attr-defined]
        checks.register(check, TAG)
        if self.has_deploy_checks:
            deploy = battery_deploy_check(self.service, self.name)
            deploy.toolkit_battery = self.service  # type: ignore[attr-defined]
            checks.register(deploy, TAG, deploy=True)

    def battery_checks(self, config: Config) -> Iterable[checks.CheckMessage]:
        """Return the battery's own check messages for a loaded configuration.

        The default calls ``<battery>.checks.battery_checks(config)`` when that exists.
        """
        try:
            module = import_module(f"{self.name}.checks")
        except ModuleNotFoundError as exc:
            if exc.name in (f"{self.name}.checks", self.name):
                return []
            raise
        hook = getattr(module, "battery_checks", None)
        return list(hook(config)) if callable(hook) else []
