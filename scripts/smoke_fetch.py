"""Wait for a server to answer, then GET each path and print ``GET <path> -> <status> <body>``.

Used by ``scripts/demo.sh`` in ``DEMO_SMOKE=1`` mode. It watches the server's process id
while it waits, so a server that dies on start fails at once instead of after the timeout.
``--accounts`` then runs the reference application's flow: ``POST /api/register``,
``POST /api/login`` and ``GET /api/me`` with the token (printed redacted); ``--notes``
(with ``--accounts``) then uses that token on the routes compiled from the schema:
``POST /v1/notes``, ``GET /v1/notes`` (the new note must be listed), and ``GET /v1/notes``
without a token (must be 401).

``--mail-log FILE`` (with ``--accounts``) adds the content batteries: after registering,
the verification mail is looked for in the server's log (FILE: the ``log`` mailer writes
it there in development), its link's token is POSTed to ``/api/verify``; after login a
PNG is uploaded with ``PUT /api/me/avatar`` and both presigned links it answers
(the avatar and its thumbnail) are fetched with plain GETs. Tokens and signatures are
printed redacted; at the end the server log is scanned for the password, the bearer
token and the links' signatures (any one found fails the run).

Usage: ``python scripts/smoke_fetch.py BASE_URL PID TIMEOUT_SECONDS PATH...
[--accounts [--notes] [--mail-log FILE]]``
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

PASSWORD = "demo password 1"


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
    body = json.dumps(data).encode() if data is not None else None
    status, answer_headers, raw = _send(url, body, headers, token)
    return status, answer_headers, raw.decode("utf-8", "replace")


def _send(
    url: str, body: bytes | None, headers: dict, token: str = "", method: str | None = None
) -> tuple[int, dict, bytes]:
    if token:
        headers = {**headers, "Authorization": f"Bearer {token}"}
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def accounts_flow(base: str) -> tuple[bool, str]:
    """Register, log in and read ``/api/me``; print each answer.

    Return whether all passed, and the bearer token (never printed).
    """
    account = {"email": "demo@example.com", "password": PASSWORD, "name": "Demo"}
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


def _redacted(url: str) -> str:
    """Return a presigned link with its signature (``s``) and stamp (``t``) masked."""
    return re.sub(r"([?&](?:s|t)=)[^&]+", r"\1[redacted]", url)


def _png(width: int = 96, height: int = 64) -> bytes:
    """Return a real PNG (an RGB gradient), made without any imaging library."""
    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in (x * 2 % 256, y * 4 % 256, 128))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def find_verification_link(log: Path, timeout: float = 10) -> str:
    """Wait for the verification mail in the server log; return its link ("" if none)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        if "subject 'Verify your email address'" in text:
            found = re.search(r"https?://\S+[?&]token=[^\s&]+", text)
            if found:
                return found.group(0)
        time.sleep(0.2)
    return ""


def verify_flow(base: str, log: Path) -> tuple[bool, str]:
    """Find the verification mail in the log and POST its token to ``/api/verify``."""
    link = find_verification_link(log)
    if not link:
        print("mail: no verification mail in the server log", flush=True)
        return False, ""
    shown = re.sub(r"token=[^\s&]+", "token=[redacted]", link)
    print(f"mail: verification mail found in the server log: {shown}", flush=True)
    token = urllib.parse.unquote(link.split("token=", 1)[1])
    status, body = _get(base + "/api/verify", {"token": token})
    print(f"POST /api/verify -> {status} {body.strip()}", flush=True)
    return status == 200 and json.loads(body).get("verified") is True, token


def avatar_flow(base: str, token: str) -> tuple[bool, list[str]]:
    """Upload a PNG avatar, then GET both presigned links it answers with."""
    png = _png()
    status, _, raw = _send(
        base + "/api/me/avatar", png, {"Content-Type": "image/png"}, token, method="PUT"
    )
    if status != 200:
        print(f"PUT /api/me/avatar -> {status} {raw.decode('utf-8', 'replace')}", flush=True)
        return False, []
    answer = json.loads(raw)
    links = [answer["avatar"]["url"], answer["thumbnail"]["url"]]
    shown = {
        **answer,
        "avatar": {**answer["avatar"], "url": _redacted(links[0])},
        "thumbnail": {**answer["thumbnail"], "url": _redacted(links[1])},
    }
    print(f"PUT /api/me/avatar -> {status} {json.dumps(shown)}", flush=True)
    ok = True
    for link, expected in zip(links, ("image/png", "image/webp"), strict=True):
        status, headers, data = _send(link, None, {})
        kind = headers.get("Content-Type", "")
        path = urllib.parse.urlsplit(_redacted(link))
        print(f"GET {path.path}?{path.query} -> {status} {kind} {len(data)} bytes", flush=True)
        ok = ok and status == 200 and kind == expected
        if expected == "image/png":
            ok = ok and data == png
    signatures = [urllib.parse.parse_qs(urllib.parse.urlsplit(u).query)["s"][0] for u in links]
    return ok, signatures


def scan_log(log: Path, secrets: dict[str, str]) -> bool:
    """Tell whether the server log holds none of ``secrets`` (printing which one it holds)."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    found = [name for name, value in secrets.items() if value and value in text]
    for name in found:
        print(f"smoke: the server log holds the {name}", file=sys.stderr, flush=True)
    if not found:
        print(f"smoke: no secret in the server log ({', '.join(secrets)})", flush=True)
    return not found


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
    rest = list(argv[3:])
    log: Path | None = None
    if "--mail-log" in rest:
        at = rest.index("--mail-log")
        log = Path(rest[at + 1])
        del rest[at : at + 2]
    paths = [arg for arg in rest if arg not in flags]
    if not wait_until_up(base, pid, timeout):
        return 1
    status_ok = True
    for path in paths:
        status, body = _get(base + path)
        print(f"GET {path} -> {status} {body.strip()}", flush=True)
        status_ok = status_ok and status == 200
    if "--accounts" in rest:
        accounts_ok, token = accounts_flow(base)
        status_ok = accounts_ok and status_ok
        secrets = {"password": PASSWORD, "bearer token": token}
        if log is not None:
            verified, _ = verify_flow(base, log)
            avatar_ok, signatures = avatar_flow(base, token)
            status_ok = verified and avatar_ok and status_ok
            for n, signature in enumerate(signatures, 1):
                secrets[f"link signature {n}"] = signature
        if "--notes" in rest:
            status_ok = notes_flow(base, token) and status_ok
        if log is not None:
            time.sleep(0.5)  # the access log of the last requests
            status_ok = scan_log(log, secrets) and status_ok
    return 0 if status_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
