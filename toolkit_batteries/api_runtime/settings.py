"""``TOOLKIT_CODEGEN_APP``: the installed app the schema compiles into (default ``api``).

One reader for ``manage.py compile_schema``, ``manage.py dev`` and ``toolkit compile``,
through the decoder of every setting beside ``TOOLKIT``
(:mod:`toolkit_batteries.core.sidesettings`): the ``TOOLKIT_CODEGEN_APP`` variable
overrides the setting, and a value that is not a string fails naming the setting.
"""

from __future__ import annotations

from toolkit_batteries.core.sidesettings import SideSetting, read_side_setting

__all__ = ["CODEGEN_APP", "codegen_app_label"]

#: The declaration of ``TOOLKIT_CODEGEN_APP``.
CODEGEN_APP = SideSetting(
    "TOOLKIT_CODEGEN_APP", str, default="api", doc="the app label the schema compiles into"
)


def codegen_app_label(override: str | None = None) -> str:
    """Return the app label to compile into: ``override`` (``--app``), else the setting."""
    return override or read_side_setting(CODEGEN_APP)
