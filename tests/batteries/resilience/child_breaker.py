"""Child process: open a kvserver policy on PREFIX and report what its breaker says.

Usage: ``python -m tests.batteries.resilience.child_breaker URL PREFIX NAME``. Prints one
JSON line: the breaker state, and whether a call was refused (and the call never ran).
"""

from __future__ import annotations

import json
import sys

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.resilience import BreakerOpenError


def main() -> None:
    url, prefix, name = sys.argv[1:4]
    settings = {
        "resilience": {
            "adapter": "kvserver",
            "options": {
                "name": name,
                "breaker": {"enabled": True},
                "kvserver": {"addr": url, "prefix": prefix},
            },
        }
    }
    container = Container(Config.load(settings, {}))
    policy = container.resilience()
    ran = []
    try:
        policy.call(lambda: ran.append(1))
        refused = False
    except BreakerOpenError:
        refused = True
    print(json.dumps({"state": policy.breaker_state(), "refused": refused, "ran": bool(ran)}))
    container.close()


if __name__ == "__main__":
    main()
