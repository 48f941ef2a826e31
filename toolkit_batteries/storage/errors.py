"""The storage battery's errors: a policy push that failed, a refusal by the access policy,
and a key or bucket name against the rules (also Django's ``SuspiciousFileOperation``).

``storage.base``, ``storage.policy`` and ``storage.keys`` re-import them, so old import
paths keep working.
"""

from __future__ import annotations

from django.core.exceptions import SuspiciousFileOperation

from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "AccessDeniedError",
    "InvalidKeyError",
    "PolicySyncError",
]


class PolicySyncError(ToolkitError):
    """Pushing the access policy to the store failed (``sync_fail: require``)."""

    code = "failed_precondition"


class AccessDeniedError(ToolkitError, PermissionError):
    """The access policy refuses the operation to the subject."""

    code = "permission_denied"

    #: Declared: the bucket comes first in the call, the operation first in the message.
    params = ("bucket", "operation")
    template = 'storage: the access policy refuses "{operation}" in bucket "{bucket}"'


class InvalidKeyError(ToolkitError, SuspiciousFileOperation):
    """A key or bucket name breaks the storage rules (traversal, absolute, NUL, ...)."""

    code = "invalid_argument"
