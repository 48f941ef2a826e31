"""System checks of the ``auth`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
``toolkit_auth.E001`` (the adapter resolves):

* ``toolkit_auth.W001``: the ``jwt`` adapter has neither ``jwt.secret`` nor ``jwt.keys``;
  opening ``auth`` will fail until the environment provides one (a warning, not an
  error, so a build step without secrets still passes ``check``).
* ``toolkit_auth.E002``: the ``jwt`` options break a rule: a secret under 32 bytes, a
  ``jwt.keys`` entry without ``kid`` or with a repeated one, ``jwt.active_kid`` naming no
  listed key, a ``jwt.leeway`` negative or over 5 minutes, a ``jwt.max_ttl`` under
  one second.
* ``toolkit_auth.E003``: the ``oidc`` adapter without ``oidc.issuer`` or
  ``oidc.client_id``, with an http / loopback / private issuer and no
  ``oidc.allow_insecure``, or with an ``oidc.leeway`` negative or over 5 minutes.
* ``toolkit_auth.E004``: ``TOOLKIT_AUTH_REVOCATION`` is not one of the accepted forms.
* ``toolkit_auth.E005``: ``TOOLKIT_AUTH_REVOCATION`` names a cache that is not a
  ``kvserver`` cache (the ``memory`` cache evicts, the ``db`` cache culls and truncates:
  revocations would be forgotten); opening refuses it too.
* ``toolkit_auth.E006``: the ``session`` adapter over a ``memory`` session store outside
  development (``TOOLKIT_ENV`` not ``dev``/``test``/``development``); opening refuses it.
* ``toolkit_auth.W002``: revocations or session tokens live in a ``memory`` store (the
  ``session`` adapter over a ``memory`` session store in development, or
  ``TOOLKIT_AUTH_REVOCATION`` naming a ``memory`` session store): other processes do
  not see them.

The shared rules come from :mod:`.policy`, the same code the adapters open with, so
``check`` and ``services.auth()`` never disagree. Messages name instances and fields,
never values.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core import checks

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

from .policy import build_keyring, check_leeway, check_url, development_switch
from .revocation import SETTING

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Check every ``auth`` instance's options and the revocation setting."""
    from toolkit_batteries.core.loading import resolve_adapter

    for instance in config.instances("auth"):
        cfg = config.service("auth", instance)
        try:
            adapter, _ = resolve_adapter("auth", cfg.adapter)
        except ConfigurationError:
            continue  # toolkit_auth.E001 reports it
        if adapter == "jwt":
            yield from _jwt_checks(cfg.options.jwt, cfg.instance)
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
    yield checks.Error(
        f"auth.{instance}: the session adapter needs a shared session store, and its "
        "session store uses the memory adapter; opening auth fails",
        hint="use the kvserver or db session adapter, or TOOLKIT_ENV=development for a "
        "single-process development server",
        obj=_OBJ,
        id="toolkit_auth.E006",
    )


def _jwt_checks(options: Any, instance: str) -> Iterator[checks.CheckMessage]:
    if not options.secret and not options.keys:
        yield checks.Warning(
            f"auth.{instance}: jwt.secret is not set and jwt.keys is empty; opening auth "
            "will fail until one is provided",
            hint=f"set AUTH__{instance.upper()}__JWT_SECRET (at least 32 random bytes) in the "
            "environment, or list jwt.keys",
            obj=_OBJ,
            id="toolkit_auth.W001",
        )
        return
    try:
        build_keyring(options, instance)
    except InvalidOptionsError as exc:
        yield checks.Error(
            str(exc),
            hint="see docs/batteries/auth.md, section Options",
            obj=_OBJ,
            id="toolkit_auth.E002",
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
        yield checks.Error(
            str(exc),
            hint="the oidc adapter needs an https issuer URL and the client id it issues for",
            obj=_OBJ,
            id="toolkit_auth.E003",
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
            yield checks.Error(
                f"auth.{instance}: setting {SETTING} names a cache on the {adapter} adapter, "
                "which evicts entries and is emptied by clear(); revocations would be "
                "forgotten",
                hint='name a kvserver cache, or use "session" over a kvserver or db session store',
                obj=f"settings.{SETTING}",
                id="toolkit_auth.E005",
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
    return checks.Error(
        f"auth.{instance}: setting {SETTING} {reason}",
        hint='use "memory", "cache", "cache:<instance>", "session", "session:<instance>" '
        "or a dotted path to a factory(ctx) returning a store",
        obj=f"settings.{SETTING}",
        id="toolkit_auth.E004",
    )


def _memory_warning(message: str) -> checks.CheckMessage:
    return checks.Warning(
        message,
        hint="use the kvserver or db adapter of that service when several processes serve",
        obj=_OBJ,
        id="toolkit_auth.W002",
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
