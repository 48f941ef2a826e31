"""Wait for a server to answer, then GET each path and print ``GET <path> -> <status> <body>``.

Used by ``scripts/demo.sh`` in ``DEMO_SMOKE=1`` mode. It watches the server's process id
while it waits, so a server that dies on start fails at once instead of after the timeout.

Usage: ``python scripts/smoke_fetch.py BASE_URL PID TIMEOUT_SECONDS PATH...``
"""

from __future__ import annotations

import os
import sys
import time
import urllib.error
import urllib.request


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def wait_until_up(base: str, pid: int, timeout: float) -> bool:
    """Poll ``base`` until it answers; give up when the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            print(f"smoke: the server (pid {pid}) exited before it answered", file=sys.stderr)
            return False
        try:
            _get(base + "/healthz")
            return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    print(f"smoke: the server did not answer within {timeout:g}s", file=sys.stderr)
    return False


def main(argv: list[str]) -> int:
    """Fetch every path once the server is up; return 1 if any answer is not 200."""
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    base, pid, timeout, paths = argv[0].rstrip("/"), int(argv[1]), float(argv[2]), argv[3:]
    if not wait_until_up(base, pid, timeout):
        return 1
    status_ok = True
    for path in paths:
        status, body = _get(base + path)
        print(f"GET {path} -> {status} {body.strip()}", flush=True)
        status_ok = status_ok and status == 200
    return 0 if status_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
