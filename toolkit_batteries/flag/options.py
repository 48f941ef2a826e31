"""Options of the ``flag`` service (feature flags); options nest under the adapter name."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import file_exists, positive, private_file, url
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["DEFAULT_ENDPOINT", "FlagOptions", "RemoteConfigFlagOptions", "StaticFlagOptions"]

#: The remote configuration service's REST API base URL (``remotecfg.endpoint`` unset).
DEFAULT_ENDPOINT = "https://firebaseremoteconfig.googleapis.com"


@options_class
class StaticFlagOptions:
    """The ``static.`` block: flags read from a file."""

    path: str = option("", doc="flag file path")
    reload: bool = option(False, doc="reload the file when it changes")


@options_class
class RemoteConfigFlagOptions(OutboundSwitches):
    """The ``remotecfg.`` block: flags read from a remote configuration service."""

    project_id: str = option("", doc="project id")
    service_account: str = option("", doc="path to the service-account JSON key file")
    timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")
    endpoint: str = option("", doc="overrides the service's REST API base URL")
    ttl: Duration = option(timedelta(seconds=60), doc="how long a fetched template is fresh")


@options_class
class FlagOptions:
    """Options of ``flag``; adapters ``static`` (default) and ``remotecfg``."""

    __checks__ = (
        positive(
            "toolkit_flag.E005",
            adapters=("remotecfg",),
            hint="use a positive duration, or leave it unset for the default",
        ).on("remotecfg.timeout", "remotecfg.ttl"),
        file_exists(
            "toolkit_flag.E002",
            adapters=("static",),
            hint="point static.path at a JSON or TOML flag file, or leave it unset",
        ).on("static.path"),
        file_exists(
            "toolkit_flag.E003",
            missing="is required",
            adapters=("remotecfg",),
            hint="set it to the path of the service-account JSON key file",
        ).on("remotecfg.service_account"),
        private_file(
            "toolkit_flag.W001", adapters=("remotecfg",), hint="chmod 600 the key file"
        ).on("remotecfg.service_account"),
        url(
            "toolkit_flag.E004",
            insecure="remotecfg.allow_insecure",
            private="remotecfg.allow_private",
            default=DEFAULT_ENDPOINT,
            adapters=("remotecfg",),
            hint="use an https:// URL; http needs remotecfg.allow_insecure and a "
            "loopback or private host remotecfg.allow_private",
        ).on("remotecfg.endpoint"),
    )

    static: StaticFlagOptions = option(StaticFlagOptions(), doc="options of the static adapter")
    remotecfg: RemoteConfigFlagOptions = option(
        RemoteConfigFlagOptions(), doc="options of the remotecfg adapter"
    )
