"""Drive a rendered project's reference application with Django's test Client.

Run by ``tests/test_reference_app.py`` in a fresh interpreter, inside the rendered
project (its own settings, apps and database)::

    python driver.py <project_dir> <scenario> [<scenario> ...]

Each scenario returns plain data; the driver prints ``RESULT <json>`` (one line, on
stdout) mapping scenario names to their results, and the test asserts on them. Nothing
here asserts: a scenario records what the application answered.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

PASSWORD = "correct horse battery staple"
RESULTS_MARKER = "RESULT "


def answer(response: Any) -> dict[str, Any]:
    """Summarise a response: status, JSON body (or text) and the headers tests look at."""
    try:
        body: Any = json.loads(response.content or b"null")
    except ValueError:
        body = response.content.decode("utf-8", "replace")
    headers = {
        name: response.headers[name]
        for name in ("Retry-After", "WWW-Authenticate", "Content-Type")
        if name in response.headers
    }
    return {"status": response.status_code, "body": body, "headers": headers}


def client(address: str = "10.0.0.1") -> Any:
    """Return a test client whose every request comes over HTTPS, as in production.

    The project redirects plain HTTP outside development.
    """
    from django.test import Client

    class HttpsClient(Client):
        def generic(self, *args: Any, **kwargs: Any) -> Any:
            kwargs["secure"] = True
            return super().generic(*args, **kwargs)

    return HttpsClient(REMOTE_ADDR=address)


def post(path: str, data: Any, *, raw: bytes | None = None, address: str = "10.0.0.1") -> dict:
    payload = raw if raw is not None else json.dumps(data).encode()
    return answer(client(address).post(path, payload, content_type="application/json"))


def get_me(authorization: str | None) -> dict:
    extra = {"HTTP_AUTHORIZATION": authorization} if authorization is not None else {}
    return answer(client().get("/api/me", **extra))


def register(
    email: str, password: str = PASSWORD, *, address: str = "10.0.0.1", **extra: Any
) -> dict:
    return post("/api/register", {"email": email, "password": password, **extra}, address=address)


def login(email: str, password: str = PASSWORD, address: str = "10.0.0.1") -> dict:
    return post("/api/login", {"email": email, "password": password}, address=address)


# ------------------------------------------------------------------ scenarios


def scenario_register() -> dict[str, Any]:
    from accounts.models import Account

    from toolkit_batteries import services

    out: dict[str, Any] = {}
    out["created"] = register(" Ann@Example.com ", name="Ann")
    out["created_without_name"] = register("bob@example.com")
    # The taken email with another password and name: the account must stay Ann's.
    out["taken_other_case"] = register("ann@EXAMPLE.com", PASSWORD + " 2", name="Mallory")
    out["bad_json"] = post("/api/register", None, raw=b"{not json")
    out["not_an_object"] = post("/api/register", [1, 2])
    out["invalid_email"] = register("no-at-sign")
    out["missing_email"] = post("/api/register", {"password": PASSWORD})
    out["short_password"] = register("carol@example.com", "7chars!")
    out["both_bad"] = register("nope", "short")
    out["password_not_string"] = post("/api/register", {"email": "d@example.com", "password": 1})
    out["too_large"] = post("/api/register", None, raw=b'{"email": "' + b"x" * 1_100_000 + b'"}')
    out["get_not_allowed"] = answer(client().get("/api/register"))
    account = Account.objects.get(email__iexact="ann@example.com")
    out["stored"] = {
        "email": account.email,
        "name": account.name,
        "hash_prefix": account.password_hash[:10],
        "verifies": services.password().verify(PASSWORD, account.password_hash),
        "count": Account.objects.count(),
    }
    return out


def scenario_register_flood() -> dict[str, Any]:
    """Register from one address until the limiter answers 429 (taken emails included)."""
    register("flood@example.com", address="10.7.7.7")
    statuses = [register("flood@example.com", address="10.7.7.7")["status"] for _ in range(25)]
    return {
        "statuses": statuses,
        "limited": register("new@example.com", address="10.7.7.7"),
        "other_address": register("other@example.com", address="10.7.7.8"),
    }


def scenario_login() -> dict[str, Any]:
    from toolkit_batteries import services

    out: dict[str, Any] = {}
    from accounts.models import Account

    register("dana@example.com", name="Dana")
    account_id = str(Account.objects.get(email__iexact="dana@example.com").id)
    out["ok"] = login("dana@example.com")
    out["ok_other_case"] = login("DANA@example.com ", address="10.0.0.2")
    token = out["ok"]["body"]["token"]
    claims = services.auth().verify(token)
    expires = datetime.fromisoformat(out["ok"]["body"]["expires_at"])
    out["claims"] = {
        "subject_is_account": claims.subject == account_id,
        "expires_in_s": (expires - datetime.now(UTC)).total_seconds(),
        "expires_at_matches": abs((claims.expires_at - expires).total_seconds()) < 1,
    }
    out["wrong_password"] = login("dana@example.com", "not the password", address="10.0.0.3")
    out["unknown_email"] = login("nobody@example.com", address="10.0.0.3")
    out["bad_json"] = post("/api/login", None, raw=b"[")
    out["missing_password"] = post("/api/login", {"email": "dana@example.com"})
    out["not_strings"] = post("/api/login", {"email": 5, "password": ["x"]})
    # Rate limit: a burst of 5 attempts per address and email, then 429.
    attempts = [login("dana@example.com", "guess", address="10.9.9.9")["status"] for _ in range(5)]
    out["attempts"] = attempts
    out["limited"] = login("dana@example.com", address="10.9.9.9")  # even the right password
    out["other_address"] = login("dana@example.com", address="10.9.9.10")
    out["other_email_same_address"] = login("nobody@example.com", address="10.9.9.9")
    return out


def scenario_me() -> dict[str, Any]:
    from accounts.models import Account

    out: dict[str, Any] = {}
    register("erin@example.com", name="Erin")
    token = login("erin@example.com")["body"]["token"]
    out["ok"] = get_me(f"Bearer {token}")
    out["lowercase_scheme"] = get_me(f"bearer {token}")
    out["missing"] = get_me(None)
    out["garbage"] = get_me("Bearer not.a.jwt")
    head, payload, signature = token.split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    out["tampered"] = get_me(f"Bearer {head}.{payload}.{flipped}")
    out["basic"] = get_me("Basic ZXJpbjpwdw==")
    out["post_not_allowed"] = answer(
        client().post("/api/me", b"{}", content_type="application/json")
    )
    register("gone@example.com")
    gone = login("gone@example.com", address="10.0.0.5")["body"]["token"]
    Account.objects.filter(email="gone@example.com").delete()
    out["deleted_account"] = get_me(f"Bearer {gone}")
    return out


def scenario_rehash() -> dict[str, Any]:
    """Raise argon2's time parameter; the next login stores a hash made with it."""
    from accounts.models import Account

    from toolkit_batteries import services

    register("fay@example.com")
    before = Account.objects.get(email="fay@example.com").password_hash
    # The environment is the top configuration layer; the next container reads it.
    os.environ["PASSWORD__DEFAULT__TIME"] = str(services.password().parameters.time + 1)
    services.reset()
    status = login("fay@example.com", address="10.0.0.6")["status"]
    after = Account.objects.get(email="fay@example.com").password_hash
    still = services.password().verify(PASSWORD, after)
    head = lambda encoded: "$".join(encoded.split("$")[:4]) + "$"  # noqa: E731
    return {"status": status, "before": head(before), "after": head(after), "verifies": still}


def scenario_timing() -> dict[str, Any]:
    """Median login time for an unknown email and for a wrong password."""
    register("gil@example.com")
    login("warm-up@example.com", address="10.1.0.1")  # the dummy hash is made once
    unknown, wrong, statuses = [], [], set()
    for i in range(5):
        start = time.perf_counter()
        status_a = login(f"nobody{i}@example.com", address=f"10.2.0.{i}")["status"]
        unknown.append(time.perf_counter() - start)
        start = time.perf_counter()
        status_b = login("gil@example.com", "wrong password", address=f"10.3.0.{i}")["status"]
        wrong.append(time.perf_counter() - start)
        statuses |= {status_a, status_b}
    return {
        "unknown_ms": statistics.median(unknown) * 1e3,
        "wrong_ms": statistics.median(wrong) * 1e3,
        "statuses": sorted(statuses),
    }


def scenario_logged_flow() -> dict[str, Any]:
    """Run the whole flow with every logger at DEBUG; return every record, rendered."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(level=logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(keep)
    root.setLevel(logging.DEBUG)
    for name in list(logging.root.manager.loggerDict):
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        if not logger.propagate:
            logger.addHandler(keep)

    from accounts import verification
    from accounts.models import Account

    statuses = [
        register("hal@example.com", name="Hal")["status"],
        register("hal@example.com")["status"],
    ]
    # The verification link as a developer finds it: in the mailer's log record (in
    # production the body is not logged; the token is then minted here).
    logged = [
        r.__dict__.get("body", "")
        for r in records
        if r.name == "toolkit.mailer" and r.__dict__.get("subject") == "Verify your email address"
    ]
    verify_token = token_in(logged[0]) if logged and logged[0] else None
    token_source = "log" if verify_token else "minted"
    if verify_token is None:
        verify_token = verification.make_token(Account.objects.get(email="hal@example.com"))
    statuses.append(verify(verify_token)["status"])
    ok = login("hal@example.com")
    token = ok["body"]["token"]
    statuses += [
        ok["status"],
        login("hal@example.com", PASSWORD + "!")["status"],
        login("nobody@example.com")["status"],
        get_me(f"Bearer {token}")["status"],
        get_me(f"Bearer {token}x")["status"],
        get_me("Bearer")["status"],
    ]
    uploaded = put_avatar(token, image("PNG", (90, 90)))
    links = [uploaded["body"][part]["url"] for part in ("avatar", "thumbnail")]
    statuses += [uploaded["status"], *(fetch(link)["status"] for link in links)]
    # A tampered link is refused, and logged (without its query) by the storage view.
    statuses.append(fetch(links[0][:-2] + "xx")["status"])
    signatures = [re.search(r"[?&]s=([^&]+)", link).group(1) for link in links]  # type: ignore[union-attr]
    rendered = []
    for record in records:
        fields = {k: v for k, v in record.__dict__.items() if k not in ("msg", "args")}
        rendered.append(
            {
                "logger": record.name,
                "level": record.levelname,
                "message": record.getMessage(),
                "extra": repr(fields),
            }
        )
    from django.conf import settings

    return {
        "statuses": statuses,
        "token": token,
        "verify_token": verify_token,
        "token_source": token_source,
        "signatures": signatures,
        "secret_key": settings.SECRET_KEY,
        "records": rendered,
    }


def outbox() -> list[Any]:
    """Return the messages the ``memory`` mailer holds (``MAILER__DEFAULT__ADAPTER=memory``)."""
    from django.core import mail

    return list(getattr(mail, "outbox", []))


def mail_summary(message: Any) -> dict[str, Any]:
    return {"to": list(message.to), "subject": message.subject, "body": message.body}


def token_in(body: str) -> str | None:
    """Return the verification token of the link in a mail body, if it has one."""
    from urllib.parse import unquote

    found = re.search(r"[?&]token=([^\s&]+)", body)
    return unquote(found.group(1)) if found else None


def verify(token: Any, address: str = "10.0.0.1") -> dict:
    return post("/api/verify", {"token": token}, address=address)


def scenario_verify() -> dict[str, Any]:
    """Register, read the mails, verify with good, bad and expired tokens."""
    from accounts import verification
    from accounts.models import Account
    from django.conf import settings
    from django.core import signing
    from django.test import override_settings

    out: dict[str, Any] = {}
    before = len(outbox())
    out["new"] = register("Vic@Example.com", name="Vic", address="10.4.0.1")
    out["taken"] = register("vic@example.COM", PASSWORD + "x", name="Mallory", address="10.4.0.2")
    mails = outbox()[before:]
    out["mails"] = [mail_summary(m) for m in mails]
    out["from"] = [m.from_email for m in mails]
    token = token_in(mails[0].body) if mails else None
    out["token_found"] = token is not None
    out["notice_has_token"] = bool(len(mails) > 1 and token_in(mails[1].body))
    out["verify_url"] = settings.ACCOUNTS_VERIFY_URL
    vic_token = login("vic@example.com", address="10.4.0.3")["body"]["token"]
    out["me_before"] = get_me(f"Bearer {vic_token}")
    account = Account.objects.get(email__iexact="vic@example.com")
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    out["tampered"] = verify(flipped)
    out["garbage"] = verify("not-a-token")
    out["missing"] = post("/api/verify", {})
    out["not_string"] = verify(12)
    out["other_salt"] = verify(signing.dumps({"a": str(account.id), "e": "vic@example.com"}))
    max_age = settings.ACCOUNTS_VERIFY_MAX_AGE
    out["max_age"] = max_age
    expired = verification.make_token(account, clock=lambda: time.time() - max_age - 5)
    out["expired"] = verify(expired)
    # The lifetime is the setting's: a 100 s old token is expired under 50, valid under 200.
    aged = verification.make_token(account, clock=lambda: time.time() - 100)
    with override_settings(ACCOUNTS_VERIFY_MAX_AGE=50):
        out["aged_short"] = verify(aged)["status"]
    out["get_not_allowed"] = answer(client().get("/api/verify"))
    out["ok"] = verify(token)
    out["again"] = verify(token)
    out["me_after"] = get_me(f"Bearer {vic_token}")
    out["verified_at_set"] = Account.objects.get(pk=account.pk).verified_at is not None
    # A token stops verifying once the address it was mailed to is not the account's.
    register("wes@example.com", address="10.4.0.4")
    wes = Account.objects.get(email="wes@example.com")
    wes_token = verification.make_token(wes)
    Account.objects.filter(pk=wes.pk).update(email="wes2@example.com")
    out["email_changed"] = verify(wes_token)
    out["wes_verified"] = Account.objects.get(pk=wes.pk).verified_at is not None
    return out


def image(fmt: str, size: tuple[int, int] = (64, 48), *, noise: bool = False) -> bytes:
    """Return an image made by Pillow (``noise``: random pixels, so it compresses badly)."""
    from PIL import Image

    if noise:
        picture = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        picture = Image.new("RGB", size, (200, 30, 60))
    buffer = io.BytesIO()
    picture.save(buffer, fmt)
    return buffer.getvalue()


def put_avatar(token: str | None, data: bytes, content_type: str = "image/png") -> dict:
    extra = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return answer(client().put("/api/me/avatar", data, content_type=content_type, **extra))


def get_avatar(token: str) -> dict:
    return answer(client().get("/api/me/avatar", HTTP_AUTHORIZATION=f"Bearer {token}"))


def fetch(url: str) -> dict[str, Any]:
    """GET a link the app handed out (absolute), as any HTTP client would."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    response = client().get(f"{parts.path}?{parts.query}" if parts.query else parts.path)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return {
        "status": response.status_code,
        "type": response.headers.get("Content-Type", ""),
        "nosniff": response.headers.get("X-Content-Type-Options", ""),
        "body": body,
    }


def image_of(data: bytes) -> list[Any]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as picture:
        return [picture.format, picture.width, picture.height]


def scenario_avatar() -> dict[str, Any]:
    """Upload avatars for two users; fetch the links; try every refusal."""
    from urllib.parse import urlsplit

    from accounts.models import Account
    from django.conf import settings
    from django.test import override_settings

    out: dict[str, Any] = {}
    register("pat@example.com", address="10.5.0.1")
    register("quinn@example.com", address="10.5.0.2")
    pat = login("pat@example.com", address="10.5.0.3")["body"]["token"]
    quinn = login("quinn@example.com", address="10.5.0.4")["body"]["token"]
    pat_id = str(Account.objects.get(email="pat@example.com").id)
    quinn_id = str(Account.objects.get(email="quinn@example.com").id)
    out["ids"] = {"pat": pat_id, "quinn": quinn_id}
    out["none_yet"] = get_avatar(pat)
    png = image("PNG", (300, 200))
    out["put"] = put_avatar(pat, png)
    urls = out["put"]["body"]
    original = fetch(urls["avatar"]["url"])
    out["original"] = {**original, "same": original["body"] == png, "body": None}
    thumb = fetch(urls["thumbnail"]["url"])
    out["thumb"] = {**thumb, "image": image_of(thumb["body"]), "body": None}
    path_only = urlsplit(urls["avatar"]["url"]).path
    out["unsigned"] = fetch(path_only)["status"]
    out["keys"] = {
        "avatar": Account.objects.get(pk=pat_id).avatar,
        "avatar_path": path_only,
        "thumbnail_path": urlsplit(urls["thumbnail"]["url"]).path,
    }
    # Quinn's own avatar: a JPEG. Links of one never open the other's objects.
    jpeg = image("JPEG", (40, 40))
    out["quinn_put"] = put_avatar(quinn, jpeg, "image/jpeg")
    quinn_url = urlsplit(out["quinn_put"]["body"]["avatar"]["url"])
    out["retargeted"] = fetch(f"{path_only}?{quinn_url.query}")["status"]
    out["quinn_get"] = get_avatar(quinn)
    out["quinn_fetch_same"] = fetch(out["quinn_get"]["body"]["avatar"]["url"])["body"] == jpeg
    out["pat_get"] = get_avatar(pat)
    # Refusals.
    out["no_token"] = put_avatar(None, png)
    out["header_lies"] = put_avatar(pat, jpeg, "image/png")
    out["not_image_type"] = put_avatar(pat, b"hello", "text/plain")
    out["not_an_image"] = put_avatar(pat, b"\x89PNG\r\n\x1a\n but not really", "image/png")
    out["svg"] = put_avatar(pat, b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml")
    out["empty"] = put_avatar(pat, b"", "image/png")
    out["max_bytes"] = settings.ACCOUNTS_AVATAR_MAX_BYTES
    with override_settings(ACCOUNTS_AVATAR_MAX_BYTES=4000):
        big = image("PNG", (80, 80), noise=True)
        out["big_size"] = len(big)
        out["too_large"] = put_avatar(pat, big)
    with override_settings(ACCOUNTS_AVATAR_MAX_PIXELS=100 * 100):
        out["too_many_pixels"] = put_avatar(pat, image("PNG", (101, 100)))
    out["unchanged"] = fetch(get_avatar(pat)["body"]["avatar"]["url"])["body"] == png
    out["delete_not_allowed"] = answer(
        client().delete("/api/me/avatar", HTTP_AUTHORIZATION=f"Bearer {pat}")
    )["status"]
    # Replacing a PNG by a WebP: the old file (and its thumbnail) is gone, links 404.
    webp = image("WEBP", (50, 60))
    out["replaced"] = put_avatar(pat, webp, "image/webp")
    out["old_link"] = fetch(urls["avatar"]["url"])["status"]
    out["old_thumb"] = fetch(urls["thumbnail"]["url"])["status"]
    out["new_key"] = Account.objects.get(pk=pat_id).avatar
    root = settings.MEDIA_ROOT
    out["files"] = sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, names in os.walk(root)
        for name in names
    )
    return out


def scenario_mail_down() -> dict[str, Any]:
    """Register a new and a taken email while the SMTP server is unreachable."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logging.getLogger("toolkit").addHandler(Keep(level=logging.INFO))
    new = register("zed@example.com", address="10.6.0.1")
    taken = register("ZED@example.com", PASSWORD + "!", address="10.6.0.2")
    warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    return {"new": new, "taken": taken, "warnings": warnings}


def scenario_login_only() -> dict[str, Any]:
    """Register and log in once: how the app behaves under the current secret settings."""
    return {"register": register("ivy@example.com"), "login": login("ivy@example.com")}


SCENARIOS: dict[str, Callable[[], dict[str, Any]]] = {
    name.removeprefix("scenario_"): function
    for name, function in dict(globals()).items()
    if name.startswith("scenario_")
}


def main(argv: list[str]) -> int:
    """Set the project up, migrate its database, run the scenarios, print the results."""
    project, names = argv[0], argv[1:]
    sys.path.insert(0, project)
    os.chdir(project)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    results = {name: SCENARIOS[name]() for name in names}
    print(RESULTS_MARKER + json.dumps(results, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
