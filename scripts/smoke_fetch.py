"""Wait for a server to answer, then GET each path and print ``GET <path> -> <status> <body>``.

Used by ``scripts/demo.sh`` in ``DEMO_SMOKE=1`` mode. It watches the server's process id
while it waits, so a server that dies on start fails at once instead of after the timeout.
``--accounts`` then runs the reference application's flow: ``POST /api/register``,
``POST /api/login`` and ``GET /api/me`` with the token (printed redacted); ``--notes``
(with ``--accounts``) then uses that token on the routes compiled from the schema:
``POST /v1/notes``, ``GET /v1/notes`` (the new note must be listed), and ``GET /v1/notes``
without a token (must be 401).

Usage: ``python scripts/smoke_fetch.py BASE_URL PID TIMEOUT_SECONDS PATH... [--accounts [--notes]]``
"""

from __future__ import annotations

import json
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


def _get(url: str, data: dict | None = None, token: str = "") -> tuple[int, str]:
    status, _, body = _request(url, data, token)
    return status, body


def _request(url: str, data: dict | None = None, token: str = "") -> tuple[int, dict, str]:
    """Send the request (POST when ``data`` is given); return status, headers and body."""
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return (
                response.status,
                dict(response.headers),
                response.read().decode("utf-8", "replace"),
            )
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8", "replace")


def accounts_flow(base: str) -> tuple[bool, str]:
    """Register, log in and read ``/api/me``; print each answer.

    Return whether all passed, and the bearer token (never printed).
    """
    account = {"email": "demo@example.com", "password": "demo password 1", "name": "Demo"}
    status, body = _get(base + "/api/register", account)
    print(f"POST /api/register -> {status} {body.strip()}", flush=True)
    ok = status == 201
    credentials = {"email": account["email"], "password": account["password"]}
    status, body = _get(base + "/api/login", credentials)
    token = ""
    shown = body.strip()
    if status == 200:
        answer = json.loads(body)
        token = answer.get("token", "")
        shown = json.dumps({**answer, "token": "[redacted]"})
    print(f"POST /api/login -> {status} {shown}", flush=True)
    ok = ok and status == 200 and bool(token)
    status, body = _get(base + "/api/me", token=token)
    print(f"GET /api/me -> {status} {body.strip()}", flush=True)
    return ok and status == 200, token


def notes_flow(base: str, token: str) -> bool:
    """Create a note and list the notes with ``token``, then list without it (401)."""
    status, body = _get(base + "/v1/notes", {"title": "Try the generated API"}, token=token)
    print(f"POST /v1/notes -> {status} {body.strip()}", flush=True)
    ok = status == 200
    note_id = json.loads(body).get("id") if ok else None
    status, body = _get(base + "/v1/notes", token=token)
    print(f"GET /v1/notes -> {status} {body.strip()}", flush=True)
    listed = status == 200 and any(n.get("id") == note_id for n in json.loads(body)["items"])
    ok = ok and listed
    status, headers, body = _request(base + "/v1/notes")
    challenge = headers.get("WWW-Authenticate", "")
    print(
        f"GET /v1/notes (no token) -> {status} {body.strip()} [WWW-Authenticate: {challenge}]",
        flush=True,
    )
    return ok and status == 401 and challenge.startswith("Bearer")


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
    base, pid, timeout = argv[0].rstrip("/"), int(argv[1]), float(argv[2])
    flags = {"--accounts", "--notes"}
    paths = [arg for arg in argv[3:] if arg not in flags]
    if not wait_until_up(base, pid, timeout):
        return 1
    status_ok = True
    for path in paths:
        status, body = _get(base + path)
        print(f"GET {path} -> {status} {body.strip()}", flush=True)
        status_ok = status_ok and status == 200
    if "--accounts" in argv[3:]:
        accounts_ok, token = accounts_flow(base)
        status_ok = accounts_ok and status_ok
        if "--notes" in argv[3:]:
            status_ok = notes_flow(base, token) and status_ok
    return 0 if status_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
