"""The one error code -> HTTP status table, in a module that imports nothing.

The compiler (``errors:`` in a schema, the generated views) and every battery
(``toolkit_batteries.core.errors.HTTP_STATUS``, built from this plus the transport-only
codes) read it; it lives apart from :mod:`toolkit_codegen.nodes` so that importing the
batteries' errors at ``django.setup()`` does not import the compiler's node classes.
"""

from __future__ import annotations

__all__ = ["ERROR_STATUS"]

#: gRPC-canonical error codes usable in ``errors:`` and their HTTP statuses. This is the
#: one code -> status table: ``toolkit_batteries.core.errors.HTTP_STATUS`` (every battery,
#: the generated views, ``docs/http.md``) is built from it plus the transport-only codes.
ERROR_STATUS: dict[str, int] = {
    "cancelled": 499,
    "unknown": 500,
    "internal": 500,
    "data_loss": 500,
    "invalid_argument": 400,
    "failed_precondition": 400,
    "out_of_range": 400,
    "deadline_exceeded": 504,
    "not_found": 404,
    "already_exists": 409,
    "aborted": 409,
    "permission_denied": 403,
    "unauthenticated": 401,
    "resource_exhausted": 429,
    "unimplemented": 501,
    "unavailable": 503,
}
