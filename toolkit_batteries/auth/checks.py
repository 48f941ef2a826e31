"""Behaviour checks of ``auth``; every ID is in docs/batteries/auth.md, "Checks".

The ``jwt`` key rules (``W001``, ``E002``) are declared on the options. Here: the ``oidc``
issuer (``E003``), the revocation setting (``E004``, ``E005``) and memory stores
(``E006``, ``W002``), from :mod:`.policy`, the code the adapters open with, so ``check``
and ``services.auth()`` never disagree. Messages name instances and fields, never values.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances, warning
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

from .policy import check_leeway, check_url, development_switch
from .revocation import SETTING

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Check every ``auth`` instance's issuer, revocation store and session store."""
    for cfg, adapter in resolved_instances(config, "auth"):
        if adapter == "jwt":
            yield from _revocation_checks(cfg.instance)
        elif adapter == "oidc":
            yield from _oidc_checks(cfg.options.oidc, cfg.instance)
        elif adapter == "session":
            yield from _session_checks(cfg.instance)


def _session_checks(instance: str) -> Iterator[checks.CheckMessage]:
    if _adapter_of("session", instance, fallback=True) != "memory":
        return
    if development_switch():
        yield _memory_warning(
            f"auth.{instance}: the session adapter uses a memory session store; "
            "tokens are valid and revocable in one process only"
        )
        return
    yield error(
        "toolkit_auth.E006",
        f"auth.{instance}: the session adapter needs a shared session store, and its "
        "session store uses the memory adapter; opening auth fails",
        "use the kvserver or db session adapter, or TOOLKIT_ENV=development for a "
        "single-process development server",
    )


def _oidc_checks(options: Any, instance: str) -> Iterator[checks.CheckMessage]:
    try:
        check_url(
            options.issuer,
            "oidc.issuer",
            allow_insecure=bool(options.allow_insecure),
            instance=instance,
        )
        if not options.client_id:
            raise InvalidOptionsError("auth", "oidc.client_id", "is required", instance=instance)
        check_leeway(options.leeway, "oidc.leeway", instance)
    except InvalidOptionsError as exc:
        yield error(
            "toolkit_auth.E003",
            str(exc),
            "the oidc adapter needs an https issuer URL and the client id it issues for",
        )


def _revocation_checks(instance: str) -> Iterator[checks.CheckMessage]:
    from toolkit_batteries.core.sidesettings import SideSettingError, read_side_setting

    from .revocation import REVOCATION

    try:
        stores = read_side_setting(REVOCATION, getattr(settings, SETTING, None)) or {}
    except SideSettingError:
        yield _setting_error(instance, "is not one of the accepted forms")
        return
    value = stores.get(instance, stores.get("*"))
    if value in (None, "", "memory"):
        return
    kind, _, name = value.partition(":") if isinstance(value, str) else ("", "", "")
    if kind == "cache" and "." not in value:
        adapter = _adapter_of("cache", name or "default")
        if adapter and adapter != "kvserver":
            yield error(
                "toolkit_auth.E005",
                f"auth.{instance}: setting {SETTING} names a cache on the {adapter} adapter, "
                "which evicts entries and is emptied by clear(); revocations would be "
                "forgotten",
                'name a kvserver cache, or use "session" over a kvserver or db session store',
                f"settings.{SETTING}",
            )
        return
    if kind == "session" and "." not in value:
        if _adapter_of(kind, name or "default") == "memory":
            yield _memory_warning(
                f"auth.{instance}: {SETTING} names a {kind} store on the memory adapter; "
                "revocations stay in one process"
            )
        return
    if isinstance(value, str) and "." in value and ":" not in value:
        from toolkit_batteries.core.loading import import_dotted

        try:
            import_dotted(value)
        except (LookupError, ImportError):
            yield _setting_error(instance, "names a path that does not import")
        return
    yield _setting_error(instance, "is not one of the accepted forms")


def _setting_error(instance: str, reason: str) -> checks.CheckMessage:
    return error(
        "toolkit_auth.E004",
        f"auth.{instance}: setting {SETTING} {reason}",
        'use "memory", "cache", "cache:<instance>", "session", "session:<instance>" '
        "or a dotted path to a factory(ctx) returning a store",
        f"settings.{SETTING}",
    )


def _memory_warning(message: str) -> checks.CheckMessage:
    return warning(
        "toolkit_auth.W002",
        message,
        "use the kvserver or db adapter of that service when several processes serve",
    )


def _adapter_of(service: str, instance: str, *, fallback: bool = False) -> str:
    """Return the canonical adapter of another service's instance ('' if unknown).

    ``fallback`` reads ``default`` when ``instance`` is not configured (as the session
    adapter picks its store).
    """
    from toolkit_batteries.core.checks import toolkit_settings
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.loading import resolve_adapter

    try:
        config = Config.load(toolkit_settings(), os.environ)
        if fallback and instance not in config.instances(service):
            instance = "default"
        adapter = config.service(service, instance).adapter
        return resolve_adapter(service, adapter)[0]
    except ConfigurationError:
        return ""
