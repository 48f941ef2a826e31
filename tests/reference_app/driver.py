"""Drive a rendered project's reference application with Django's test Client.

Run by ``tests/test_reference_app.py`` in a fresh interpreter, inside the rendered
project (its own settings, apps and database)::

    python driver.py <project_dir> <scenario> [<scenario> ...]

Each scenario returns plain data; the driver prints ``RESULT <json>`` (one line, on
stdout) mapping scenario names to their results, and the test asserts on them. Nothing
here asserts: a scenario records what the application answered.
"""

from __future__ import annotations

import json
import logging
import os
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

    statuses = [
        register("hal@example.com", name="Hal")["status"],
        register("hal@example.com")["status"],
    ]
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
    return {"statuses": statuses, "token": token, "records": rendered}


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
