"""System checks over ``settings.TOOLKIT`` and the environment (``manage.py check``).

* ``toolkit_batteries.E001``: a configured service or plugin does not validate. Every
  problem is reported (one message each), not only the first one ``Config.load`` raises.
* ``toolkit_<service>.E001`` (registered by each battery's
  :class:`~toolkit_batteries.core.apps.BatteryConfig`): an instance's adapter does not
  resolve (unknown name, missing extra, wrong base class).
* Then every shape rule the battery's options declare (:mod:`.option_kinds`), walked by
  :func:`declared_option_messages` for each configured instance and reported under the
  rule's own ID (``toolkit_cache.E004``...), before the battery's behaviour checks.

Messages come from the errors' own text, which names services, instances, fields and
adapters and never a value.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from django.core import checks

from .errors import ConfigurationError

if TYPE_CHECKING:
    from django.apps import AppConfig

    from .config import Config, ServiceConfig
    from .option_checks import declared_option_messages, service_checks

# ``django.setup()`` imports this module (the apps register its checks), so the configuration
# layer (``config``, ``options``, ``option_checks``...) is imported when a check first runs.

__all__ = [
    "TAG",
    "battery_check",
    "check_configuration",
    "declared_option_messages",
    "error",
    "resolved_instances",
    "service_checks",
    "toolkit_settings",
    "warning",
]

#: The tag every toolkit check is registered under (``manage.py check --tag toolkit``).
TAG = "toolkit"
_OBJ = "settings.TOOLKIT"


def toolkit_settings() -> Any:
    """Return ``settings.TOOLKIT`` (``{}`` when unset)."""
    from django.conf import settings

    return getattr(settings, "TOOLKIT", None) or {}


def check_configuration(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """Report every service or plugin whose configuration does not validate."""
    from .config import Config

    problems = Config.validate(toolkit_settings(), os.environ)
    return [
        checks.Error(str(problem), obj=_OBJ, id="toolkit_batteries.E001") for problem in problems
    ]


def battery_check(
    service: str,
    app_config: AppConfig,
    extra: Callable[[Config], Iterable[checks.CheckMessage]] | None = None,
) -> Callable[..., list[checks.CheckMessage]]:
    """Build the check of one battery: every configured instance's adapter resolves.

    Only the battery's own ``TOOLKIT`` block is loaded, so another service's broken block
    does not hide this one's result (``toolkit_batteries.E001`` reports that). When this
    service's block itself does not load, the check reports nothing for the same reason.
    ``extra(config)`` adds the battery's own checks.
    """
    check_id = f"toolkit_{service}.E001"

    def check(
        app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
    ) -> list[checks.CheckMessage]:
        # By label, not identity: restoring an INSTALLED_APPS override brings back the
        # earlier AppConfig objects without running ready() again, so the instance this
        # check was registered with may no longer be the installed one.
        if app_configs is not None and app_config.label not in {a.label for a in app_configs}:
            return []
        from .config import Config
        from .loading import resolve_adapter
        from .option_checks import declared_option_messages
        from .options import normalize

        raw = toolkit_settings()
        own = {key: value for key, value in raw.items() if normalize(str(key)) == service}
        try:
            config = Config.load(own, os.environ)
        except ConfigurationError:
            return []
        messages: list[checks.CheckMessage] = []
        for instance in config.instances(service):
            adapter = config.service(service, instance).adapter
            try:
                resolve_adapter(service, adapter)
            except ConfigurationError as exc:
                text = str(exc).removeprefix(f"{service}: ")
                messages.append(
                    checks.Error(f"{service}.{instance}: {text}", obj=_OBJ, id=check_id)
                )
            except Exception as exc:  # a broken adapter module must not crash `check`
                messages.append(
                    checks.Error(
                        f'{service}.{instance}: adapter "{adapter}" failed to import '
                        f"({type(exc).__name__})",
                        obj=_OBJ,
                        id=check_id,
                    )
                )
        messages.extend(declared_option_messages(config, service))
        if extra is not None:
            messages.extend(extra(config))
        return messages

    check.__name__ = check.__qualname__ = f"check_{service}_adapters"
    return check


def battery_deploy_check(service: str, package: str) -> Callable[..., list[checks.CheckMessage]]:
    """Build the deploy-only check of one battery: ``<package>.checks.deploy_checks(config)``.

    It runs under ``manage.py check --deploy`` (which ``toolkit serve`` runs outside
    development), given only the battery's own ``TOOLKIT`` block, like :func:`battery_check`.
    """

    def check(
        app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
    ) -> list[checks.CheckMessage]:
        from importlib import import_module

        from .config import Config
        from .options import normalize

        own = {k: v for k, v in toolkit_settings().items() if normalize(str(k)) == service}
        try:
            config = Config.load(own, os.environ)
        except ConfigurationError:
            return []  # toolkit_batteries.E001 reports it
        return list(import_module(f"{package}.checks").deploy_checks(config))

    check.__name__ = check.__qualname__ = f"check_{service}_deploy"
    return check


# --------------------------------------------------------------------------- battery helpers
# The pieces every battery's ``checks.battery_checks(config)`` is made of, so each battery
# states only what is its own (ids, hints, its bounds).


def resolved_instances(config: Config, service: str) -> Iterator[tuple[ServiceConfig, str]]:
    """Yield each configured instance of ``service`` with its canonical adapter name.

    Instances whose adapter does not resolve are skipped: ``toolkit_<service>.E001``
    reports them, so a battery's own checks never report one instance twice.
    """
    from .loading import resolve_adapter

    for instance in config.instances(service):
        cfg = config.service(service, instance)
        try:
            adapter, _ = resolve_adapter(service, cfg.adapter)
        except ConfigurationError:
            continue
        yield cfg, adapter


def error(check_id: str, message: str, hint: str | None = None, obj: str = _OBJ) -> checks.Error:
    """Return a ``checks.Error`` on ``settings.TOOLKIT``, the object every battery check names."""
    return checks.Error(message, hint=hint, obj=obj, id=check_id)


def warning(
    check_id: str, message: str, hint: str | None = None, obj: str = _OBJ
) -> checks.Warning:
    """Return a ``checks.Warning`` on ``settings.TOOLKIT`` (see :func:`error`)."""
    return checks.Warning(message, hint=hint, obj=obj, id=check_id)


def __getattr__(name: str) -> Any:
    """Re-export :mod:`.option_checks`' helpers (batteries import them from here) on use."""
    if name in ("declared_option_messages", "service_checks"):
        from . import option_checks

        return getattr(option_checks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
