"""Options of the ``i18n`` service (message catalogs); options nest under the adapter name."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import positive, required, url
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["EmbedI18nOptions", "I18nOptions", "RemoteI18nOptions"]


_REMOTE_HINT = (
    "use an https:// URL; http needs remote.allow_insecure and a loopback or private host "
    "remote.allow_private"
)
_NOT_POSITIVE = '{where}: option "remote.timeout" or "remote.max_in_flight" is not positive'


@options_class
class EmbedI18nOptions:
    """The ``embed.`` block: catalogs read from a directory."""

    dir: str = option("", doc="catalog directory")
    fallback: str = option("", doc="fallback locale")


@options_class
class RemoteI18nOptions(OutboundSwitches):
    """The ``remote.`` block: catalogs fetched from a translation service."""

    endpoint: str = option("", doc="remote base URL")
    api_key: str = option("", secret=True, doc="remote credential")
    timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")
    max_in_flight: int = option(1000, doc="cap on concurrent requests")


@options_class
class I18nOptions:
    """Options of ``i18n``; adapters ``embed`` (default) and ``remote``."""

    __checks__ = (
        required("toolkit_i18n.E003", "is required", adapters=("remote",), hint=_REMOTE_HINT).on(
            "remote.endpoint"
        ),
        url(
            "toolkit_i18n.E003",
            adapters=("remote",),
            insecure="remote.allow_insecure",
            private="remote.allow_private",
            hint=_REMOTE_HINT,
        ).on("remote.endpoint"),
        positive(
            "toolkit_i18n.E004",
            adapters=("remote",),
            each=False,
            message=_NOT_POSITIVE,
            hint="use positive values, or leave them unset for the defaults",
        ).on("remote.timeout", "remote.max_in_flight"),
    )

    embed: EmbedI18nOptions = option(EmbedI18nOptions(), doc="options of the embed adapter")
    remote: RemoteI18nOptions = option(RemoteI18nOptions(), doc="options of the remote adapter")
