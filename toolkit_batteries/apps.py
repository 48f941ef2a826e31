"""The core app's configuration (``INSTALLED_APPS = [..., "toolkit_batteries", ...]``)."""

from __future__ import annotations

from .core.apps import ToolkitBatteriesConfig

__all__ = ["ToolkitBatteriesConfig"]
