"""System checks of the ``observability`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_observability.E002``: an ``otlp`` instance whose ``endpoint`` is missing or
  malformed, ``insecure`` (or an ``http://`` endpoint) towards a non-loopback host, or
  only one of ``cert_file`` / ``key_file``.
* ``toolkit_observability.W001``: ``headers`` or TLS files set on an adapter that sends
  nothing (``stdout``, ``noop``), where they have no effect.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``observability`` instance's collector settings."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "observability"):
        options = cfg.options
        if adapter != "otlp":
            unused = [
                f
                for f in ("endpoint", "headers", "ca_file", "cert_file", "key_file")
                if getattr(options, f)
            ]
            if unused:
                found.append(
                    checks.Warning(
                        f"observability.{cfg.instance}: option(s) "
                        + ", ".join(f'"{f}"' for f in unused)
                        + f" have no effect with the {adapter} adapter",
                        hint="select adapter otlp to export to a collector",
                        obj=_OBJ,
                        id="toolkit_observability.W001",
                    )
                )
    return found
