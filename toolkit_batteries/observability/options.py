"""Options of the ``observability`` service (traces and metrics)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import opens, relation
from toolkit_batteries.core.options import option, options_class

__all__ = ["ObservabilityOptions"]


_OTLP_HINT = (
    "set endpoint to the collector's host:port; plaintext (insecure) only to localhost, "
    "TLS otherwise"
)


def _unused(options: ObservabilityOptions) -> str | None:
    """Name the collector options set on an adapter that sends nothing."""
    names = ("endpoint", "headers", "ca_file", "cert_file", "key_file")
    unused = [f'"{name}"' for name in names if getattr(options, name)]
    if not unused:
        return None
    return f"option(s) {', '.join(unused)} have no effect with the {{adapter}} adapter"


@options_class
class ObservabilityOptions:
    """Options of ``observability``; adapters ``stdout`` (default), ``noop`` and ``otlp``."""

    __checks__ = (
        opens(
            "toolkit_observability.E002",
            "toolkit_batteries.observability.target:otlp_base_url",
            adapters=("otlp",),
            hint=_OTLP_HINT,
        ),
        relation(
            "toolkit_observability.W001",
            _unused,
            unless=("otlp",),
            warning=True,
            hint="select adapter otlp to export to a collector",
        ),
    )

    endpoint: str = option("", doc="collector host:port")
    service_name: str = option("toolkit", doc="name of the emitting service")
    insecure: bool = option(False, doc="disable TLS; allowed only for loopback endpoints")
    set_globals: bool = option(False, doc="register the provider as the global default")
    verbose: bool = option(False, doc="debug logging")
    ca_file: str = option("", doc="PEM CA bundle path")
    cert_file: str = option("", doc="PEM client certificate path")
    key_file: str = option("", doc="PEM client key path")
    headers: dict[str, str] = option(
        {}, secret=True, doc="outbound request headers; values often carry credentials"
    )
    sample_ratio: float = option(0.0, min=0, max=1, doc="trace sampling probability in [0, 1]")
    attr_value_limit: int = option(
        0, doc="cap on string attribute values; 0 = the built-in default"
    )
