"""Child process of the two-process revocation test: ``verify`` or ``revoke`` tokens.

Tokens come on stdin, one per line (never argv). Prints one JSON line: a list with one
result per token, ``{"ok": true, ...}`` or ``{"error": "<exception class>"}``.
"""

from __future__ import annotations

import json
import sys

import django

django.setup()

from toolkit_batteries import services  # noqa: E402
from toolkit_batteries.auth import AuthError  # noqa: E402


def main() -> None:
    """Run the action named by ``argv[1]`` on every token read from stdin."""
    action = sys.argv[1]
    auth = services.auth()
    store = type(auth.revocation_store).__name__
    results = []
    for token in sys.stdin.read().split():
        try:
            if action == "verify":
                results.append({"ok": True, "subject": auth.verify(token).subject, "store": store})
            else:
                auth.revoke(token)
                results.append({"ok": True, "store": store})
        except AuthError as exc:
            results.append({"error": type(exc).__name__})
    services.close()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
