"""The permission battery's errors: an action refused (HTTP ``403``) and a guarded view
that names no action (a configuration error).

``permission.base`` and ``permission.drf`` re-import them, so old import paths keep working.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ConfigurationError, ToolkitError

__all__ = [
    "PermissionActionMissingError",
    "PermissionDeniedError",
]


class PermissionDeniedError(ToolkitError):
    """The subject may not perform the action; HTTP layers answer ``403``.

    The message names the action, never the subject's roles or the resource.
    """

    code = "permission_denied"
    template = 'permission denied for action "{action}"'


class PermissionActionMissingError(ConfigurationError):
    """A view guarded by :class:`HasPermission` names no action for a request."""

    code = "invalid_configuration"
