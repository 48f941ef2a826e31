"""The reference application of ``project_template/``: register, login and ``/api/me``.

The template is rendered the way ``django-admin startproject --template`` does (as
``tests/test_template.py`` does), then ``tests/reference_app/driver.py`` runs inside the
rendered project in a fresh interpreter, drives it with Django's test ``Client`` and
prints what each request answered; the tests below assert on those answers. Each run gets
its own SQLite file (``DB__DEFAULT__PATH``) and its own JWT secret from the environment.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port
from tests.reference_app.driver import PASSWORD, RESULTS_MARKER
from tests.test_template import NAME, _clean_env, render

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "reference_app" / "driver.py"
JWT_SECRET = "ref-app-test-secret-" + secrets.token_hex(24)
#: The cheapest argon2id parameters the spec allows, for runs that do not measure hashing.
CHEAP_ARGON2 = {
    "PASSWORD__DEFAULT__TIME": "1",
    "PASSWORD__DEFAULT__MEMORY": "8192",
    "PASSWORD__DEFAULT__THREADS": "1",
}
#: Each run: its scenarios and the environment it adds. They run concurrently.
RUNS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "main": (
        ("register", "register_flood", "login", "me", "rehash", "verify", "avatar"),
        {**CHEAP_ARGON2, "MAILER__DEFAULT__ADAPTER": "memory"},
    ),
    # Mid-cost parameters (~30 ms a hash): still far above a database lookup, so a
    # missing dummy verification shows, yet cheap enough for a loaded machine.
    "timing": (
        ("timing",),
        {
            "PASSWORD__DEFAULT__TIME": "1",
            "PASSWORD__DEFAULT__MEMORY": "32768",
            "PASSWORD__DEFAULT__THREADS": "2",
        },
    ),
    "logs": (("logged_flow",), {**CHEAP_ARGON2, "DJANGO_DEBUG": "1"}),
    "prod_logs": (("logged_flow",), CHEAP_ARGON2),
    # The SMTP server is down (nothing listens on the port): registration still answers.
    "mail_down": (
        ("mail_down",),
        {
            **CHEAP_ARGON2,
            "MAILER__DEFAULT__ADAPTER": "smtp",
            "MAILER__DEFAULT__HOST": "127.0.0.1",
            "MAILER__DEFAULT__PORT": str(free_port()),
            "MAILER__DEFAULT__ENCRYPTION": "none",
            "MAILER__DEFAULT__TIMEOUT": "5s",
        },
    ),
    "no_secret": (("login_only",), {**CHEAP_ARGON2, "AUTH__DEFAULT__JWT_SECRET": ""}),
    "dev_secret": (
        ("login_only",),
        {**CHEAP_ARGON2, "AUTH__DEFAULT__JWT_SECRET": "", "TOOLKIT_ENV": "dev"},
    ),
}


def drive(project: Path, db: Path, *scenarios: str, **env: str) -> dict[str, Any]:
    """Run ``scenarios`` inside ``project``; return their results."""
    child_env = _clean_env() | {
        "DJANGO_SETTINGS_MODULE": f"{NAME}.settings",
        "DB__DEFAULT__PATH": str(db),
        "DJANGO_MEDIA_ROOT": str(db.with_suffix(".media")),  # each run its own files
        "AUTH__DEFAULT__JWT_SECRET": JWT_SECRET,
        "DJANGO_ALLOWED_HOSTS": "testserver",  # the test Client's host
    }
    for key in ("DJANGO_DEBUG", "TOOLKIT_ENV"):
        child_env.pop(key, None)
    child_env.update(env)
    child_env = {k: v for k, v in child_env.items() if v != ""}
    result = subprocess.run(
        [sys.executable, str(DRIVER), str(project), *scenarios],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    line = next((ln for ln in result.stdout.splitlines() if ln.startswith(RESULTS_MARKER)), None)
    assert line is not None, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(line.removeprefix(RESULTS_MARKER))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(tmp_path_factory.mktemp("refapp") / "proj")


@pytest.fixture(scope="module")
def runs(project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run every entry of :data:`RUNS` at once, each on its own database file."""
    folder = tmp_path_factory.mktemp("refdb")
    with ThreadPoolExecutor(len(RUNS)) as pool:
        futures = {
            name: pool.submit(drive, project, folder / f"{name}.sqlite3", *scenarios, **env)
            for name, (scenarios, env) in RUNS.items()
        }
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def results(runs: dict[str, Any]) -> dict[str, Any]:
    return {**runs["main"], **runs["timing"]}


def error_of(answer: dict) -> dict:
    assert answer["headers"]["Content-Type"] == "application/json", answer
    return answer["body"]["error"]


# ------------------------------------------------------------------ register


def test_register_creates_an_account_201(results):
    r = results["register"]
    created = r["created"]
    assert created["status"] == 201
    assert created["body"] == {"email": "Ann@Example.com"}  # trimmed, case kept
    assert r["created_without_name"]["status"] == 201
    assert r["stored"] == {
        "email": "Ann@Example.com",
        "name": "Ann",
        "hash_prefix": "$argon2id$",
        "verifies": True,
        "count": 2,
    }


def test_register_answers_a_taken_email_as_a_new_one_and_keeps_the_account(results):
    """No account enumeration: the answer is a new account's (the stored one is checked
    unchanged, with its own name and password, in the test above)."""
    taken = results["register"]["taken_other_case"]
    assert taken["status"] == 201
    assert taken["body"] == {"email": "ann@EXAMPLE.com"}
    assert taken["headers"] == results["register"]["created"]["headers"]


@pytest.mark.parametrize(
    ("case", "fields"),
    [
        ("invalid_email", {"email": ["invalid email"]}),
        ("missing_email", {"email": ["required"]}),
        ("short_password", {"password": ["must be at least 8 characters"]}),
        (
            "both_bad",
            {"email": ["invalid email"], "password": ["must be at least 8 characters"]},
        ),
        ("password_not_string", {"password": ["must be a string"]}),
    ],
)
def test_register_validation_400_names_the_fields(results, case, fields):
    answer = results["register"][case]
    assert answer["status"] == 400
    assert error_of(answer) == {
        "code": "invalid_argument",
        "message": "invalid request",
        "fields": fields,
    }


def test_register_bad_json_400_and_oversized_413(results):
    r = results["register"]
    assert r["bad_json"]["status"] == 400
    assert error_of(r["bad_json"]) == {"code": "invalid_argument", "message": "invalid JSON body"}
    assert r["not_an_object"]["status"] == 400
    assert error_of(r["not_an_object"])["code"] == "invalid_argument"
    assert r["too_large"]["status"] == 413
    assert error_of(r["too_large"])["code"] == "payload_too_large"
    assert r["get_not_allowed"]["status"] == 405


# ------------------------------------------------------------------ login


def test_login_returns_a_token_200(results):
    r = results["login"]
    assert r["ok"]["status"] == 200
    assert set(r["ok"]["body"]) == {"token", "expires_at"}
    assert r["ok"]["body"]["token"].count(".") == 2  # a JWT
    assert r["ok"]["body"]["expires_at"].endswith("Z")
    assert r["claims"]["subject_is_account"] is True
    assert r["claims"]["expires_at_matches"] is True
    assert 3500 < r["claims"]["expires_in_s"] <= 3600  # one hour
    assert r["ok_other_case"]["status"] == 200


def test_registrations_are_rate_limited_per_address(results):
    """Each registration costs a hash: 20 per address, then 429 with Retry-After."""
    flood = results["register_flood"]
    # One registration before the loop, so 19 tokens are left for the taken-email retries.
    assert flood["statuses"][:19] == [201] * 19  # a taken email answers as a new one
    # Then 429s; a token refilled (one per 6 s) on a very slow machine may let one through.
    assert flood["statuses"][19:].count(429) >= 5
    assert set(flood["statuses"][19:]) <= {201, 429}
    limited = flood["limited"]
    assert limited["status"] == 429
    assert error_of(limited)["code"] == "resource_exhausted"
    assert int(limited["headers"]["Retry-After"]) >= 1
    assert flood["other_address"]["status"] == 201


def test_login_unknown_email_and_wrong_password_are_the_same_401(results):
    r = results["login"]
    wrong, unknown = r["wrong_password"], r["unknown_email"]
    assert wrong["status"] == unknown["status"] == 401
    assert wrong["body"] == unknown["body"]
    assert wrong["headers"] == unknown["headers"]
    assert wrong["headers"]["WWW-Authenticate"] == "Bearer"
    assert error_of(wrong) == {"code": "unauthenticated", "message": "invalid credentials"}


def test_login_unknown_email_takes_as_long_as_a_wrong_password(results):
    timing = results["timing"]
    assert timing["statuses"] == [401]
    ratio = timing["unknown_ms"] / timing["wrong_ms"]
    # Without the dummy verification an unknown email answers ~50x faster.
    assert 0.33 < ratio < 3, timing


def test_login_input_errors_400(results):
    r = results["login"]
    assert r["bad_json"]["status"] == 400
    assert error_of(r["missing_password"])["fields"] == {"password": ["required"]}
    assert r["not_strings"]["status"] == 400
    assert set(error_of(r["not_strings"])["fields"]) == {"email", "password"}


def test_login_is_rate_limited_per_address_and_email_429(results):
    r = results["login"]
    assert r["attempts"] == [401] * 5
    limited = r["limited"]
    assert limited["status"] == 429
    assert error_of(limited)["code"] == "resource_exhausted"
    retry_after = limited["headers"]["Retry-After"]
    assert retry_after.isdigit() and 1 <= int(retry_after) <= 12
    assert r["other_address"]["status"] == 200
    assert r["other_email_same_address"]["status"] == 401


def test_login_rehashes_after_the_parameters_change(results):
    r = results["rehash"]
    assert r["status"] == 200
    assert r["before"] == "$argon2id$v=19$m=8192,t=1,p=1$"
    assert r["after"] == "$argon2id$v=19$m=8192,t=2,p=1$"
    assert r["verifies"] is True


# ------------------------------------------------------------------ me


def test_me_returns_the_callers_account_200(results):
    r = results["me"]
    assert r["ok"]["status"] == 200
    assert r["ok"]["body"]["email"] == "erin@example.com"
    assert r["ok"]["body"]["name"] == "Erin"
    assert set(r["ok"]["body"]) == {"id", "email", "name", "verified"}
    assert r["ok"]["body"]["verified"] is False
    assert r["lowercase_scheme"]["status"] == 200


@pytest.mark.parametrize("case", ["missing", "garbage", "tampered", "basic"])
def test_me_without_a_valid_bearer_token_401(results, case):
    answer = results["me"][case]
    assert answer["status"] == 401
    assert answer["headers"]["WWW-Authenticate"] == "Bearer"
    assert error_of(answer) == {"code": "unauthenticated", "message": "authentication required"}


def test_me_other_cases(results):
    assert results["me"]["post_not_allowed"]["status"] == 405
    deleted = results["me"]["deleted_account"]
    assert deleted["status"] == 404
    assert error_of(deleted)["code"] == "not_found"


# ------------------------------------------------------------------ verification mail


def test_registration_mails_a_verification_link_and_a_taken_email_a_notice(results):
    r = results["verify"]
    new, taken = r["new"], r["taken"]
    # The same answer for a new and a taken email (no enumeration)...
    assert new["status"] == taken["status"] == 201
    assert new["body"] == {"email": "Vic@Example.com"}
    assert taken["body"] == {"email": "vic@example.COM"}
    assert new["headers"] == taken["headers"]
    # ...and exactly one mail each, both to the account's owner (its stored address).
    mails = r["mails"]
    assert [m["to"] for m in mails] == [["Vic@Example.com"], ["Vic@Example.com"]]
    assert mails[0]["subject"] == "Verify your email address"
    assert mails[1]["subject"] == "Someone tried to register with your email address"
    assert r["token_found"] is True and r["notice_has_token"] is False
    assert "https://testserver/api/verify?token=" in mails[0]["body"]
    assert "expires in 48 hours" in mails[0]["body"]
    assert "log in with your existing password" in mails[1]["body"]
    assert r["from"] == ["tkproj <noreply@localhost>"] * 2
    assert r["max_age"] == 2 * 24 * 3600


def test_verify_marks_the_account_verified_and_is_idempotent(results):
    r = results["verify"]
    assert r["me_before"]["body"]["verified"] is False
    assert r["ok"]["status"] == 200
    assert r["ok"]["body"]["email"] == "Vic@Example.com" and r["ok"]["body"]["verified"] is True
    assert "password_hash" not in r["ok"]["body"]
    assert r["again"]["status"] == 200 and r["again"]["body"]["verified"] is True
    assert r["me_after"]["body"]["verified"] is True and r["verified_at_set"] is True
    assert r["get_not_allowed"]["status"] == 405


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("tampered", "invalid"),
        ("garbage", "invalid"),
        ("other_salt", "invalid"),  # signed with SECRET_KEY, but for another purpose
        ("expired", "expired"),
        ("email_changed", "invalid"),
        ("missing", "required"),
        ("not_string", "must be a string"),
    ],
)
def test_a_bad_or_expired_token_is_a_400_on_the_token_field(results, case, problem):
    answer = results["verify"][case]
    assert answer["status"] == 400, answer
    assert error_of(answer) == {
        "code": "invalid_argument",
        "message": "invalid request",
        "fields": {"token": [problem]},
    }


def test_the_token_lifetime_is_the_setting(results):
    assert results["verify"]["aged_short"] == 400
    assert results["verify"]["wes_verified"] is False


def test_a_mail_that_cannot_be_sent_changes_neither_answer(runs):
    r = runs["mail_down"]["mail_down"]
    assert r["new"]["status"] == r["taken"]["status"] == 201
    assert r["new"]["headers"] == r["taken"]["headers"]
    # Logged with the kind and the error's type, never the mail's body (its link).
    first, second = r["warnings"]
    assert first.startswith("mail not sent kind=verification ")
    assert second.startswith("mail not sent kind=") and "registration notice" in second
    assert all("error_type=MailDeliveryError" in w and "token" not in w for w in r["warnings"])


# ------------------------------------------------------------------ avatar


def test_avatar_upload_stores_the_image_and_a_thumbnail_behind_presigned_links(results):
    r = results["avatar"]
    assert r["none_yet"]["status"] == 404
    put = r["put"]
    assert put["status"] == 200, put
    body = put["body"]
    assert set(body) == {"avatar", "thumbnail", "expires_at"}
    assert {k: body["avatar"][k] for k in ("content_type", "width", "height")} == {
        "content_type": "image/png",
        "width": 300,
        "height": 200,
    }
    assert body["thumbnail"]["content_type"] == "image/webp"
    assert (body["thumbnail"]["width"], body["thumbnail"]["height"]) == (128, 128)
    for part in ("avatar", "thumbnail"):
        assert body[part]["url"].startswith("https://testserver/media/avatars/")
        assert "&s=" in body[part]["url"]
    # The links are real: an HTTP GET serves the bytes, typed and not sniffable.
    original = r["original"]
    assert original["status"] == 200 and original["same"] is True
    assert original["type"] == "image/png" and original["nosniff"] == "nosniff"
    assert r["thumb"]["status"] == 200 and r["thumb"]["image"] == ["WEBP", 128, 128]
    # Stored through the storage battery, in bucket "avatars", under the account's id.
    pat = r["ids"]["pat"]
    assert r["keys"]["avatar"] == f"{pat}/avatar.png"
    assert r["keys"]["avatar_path"] == f"/media/avatars/{pat}/avatar.png"
    assert r["keys"]["thumbnail_path"].startswith("/media/avatars/_derived/")


def test_no_user_reads_or_replaces_another_users_avatar(results):
    r = results["avatar"]
    assert r["unsigned"] == 403  # no public access: only a minted link reads
    assert r["retargeted"] == 403  # Quinn's signature does not open Pat's object
    quinn = r["quinn_get"]
    assert quinn["status"] == 200 and quinn["body"]["avatar"]["content_type"] == "image/jpeg"
    assert f"/avatars/{r['ids']['quinn']}/avatar.jpg?" in quinn["body"]["avatar"]["url"]
    assert r["ids"]["pat"] not in json.dumps(quinn["body"])
    assert r["quinn_fetch_same"] is True
    assert r["pat_get"]["body"]["avatar"]["content_type"] == "image/png"  # still Pat's own


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("header_lies", 415, "unsupported_media_type"),  # JPEG bytes sent as image/png
        ("not_image_type", 415, "unsupported_media_type"),
        ("not_an_image", 415, "unsupported_media_type"),
        ("svg", 415, "unsupported_media_type"),
        ("too_large", 413, "payload_too_large"),
        ("too_many_pixels", 413, "payload_too_large"),
        ("empty", 400, "invalid_argument"),
    ],
)
def test_avatar_size_and_type_are_checked_on_the_bytes(results, case, status, code):
    answer = results["avatar"][case]
    assert answer["status"] == status, answer
    error = error_of(answer)
    assert error["code"] == code and set(error["fields"]) == {"avatar"}


def test_avatar_refusals_change_nothing_and_replacing_drops_the_old_files(results):
    r = results["avatar"]
    assert r["big_size"] > 4000 and r["max_bytes"] == 2 * 1024 * 1024
    assert r["no_token"]["status"] == 401
    assert r["no_token"]["headers"]["WWW-Authenticate"] == "Bearer"
    assert r["delete_not_allowed"] == 405
    assert r["unchanged"] is True  # every refused upload left the PNG in place
    assert r["replaced"]["status"] == 200
    assert r["replaced"]["body"]["avatar"]["content_type"] == "image/webp"
    pat, quinn = r["ids"]["pat"], r["ids"]["quinn"]
    assert r["new_key"] == f"{pat}/avatar.webp"
    assert r["old_link"] == 404 and r["old_thumb"] == 404
    originals = [f for f in r["files"] if not f.startswith("avatars/_derived/")]
    assert originals == sorted([f"avatars/{pat}/avatar.webp", f"avatars/{quinn}/avatar.jpg"])
    assert len([f for f in r["files"] if f.startswith("avatars/_derived/")]) == 2


# ------------------------------------------------------------------ secrets


#: register, taken, verify, login, wrong, unknown, me, bad token, no token, avatar PUT,
#: GET avatar link, GET thumbnail link, GET tampered link.
FLOW_STATUSES = [201, 201, 200, 200, 401, 401, 200, 401, 401, 200, 200, 200, 403]


@pytest.mark.parametrize("run", ["logs", "prod_logs"])
def test_no_password_token_signature_or_key_in_any_log_record(runs, run):
    """The whole flow (register, mail, verify, login, me, avatar, links) at DEBUG."""
    flow = runs[run]["logged_flow"]
    assert flow["statuses"] == FLOW_STATUSES
    records = flow["records"]
    loggers = {r["logger"] for r in records}
    # The capture saw the app, the mailer, the storage view (and with DEBUG, Django's SQL).
    assert {"toolkit.app", "toolkit.mailer", "toolkit.storage"} <= loggers
    assert ("django.db.backends" in loggers) is (run == "logs")
    assert any("login" in r["message"] for r in records)
    assert any("avatar stored" in r["message"] for r in records)
    token, verify_token = flow["token"], flow["verify_token"]
    secrets_ = [PASSWORD, token, token.split(".")[2], JWT_SECRET, flow["secret_key"]]
    secrets_ += flow["signatures"]  # presigned links' signatures
    assert len(flow["secret_key"]) >= 40 and all(len(sig) >= 40 for sig in flow["signatures"])
    mail_records = []
    for record in records:
        text = record["message"] + record["extra"]
        for secret in secrets_:
            assert secret not in text, (secret[:6], record)
        if verify_token in text or verify_token.split(":")[-1] in text:
            mail_records.append(record)
    # The verification link is the mail itself: in development the log IS the mailbox
    # (the body is logged, so the link is clickable); nowhere else, and never in production.
    if run == "logs":
        assert flow["token_source"] == "log"
        assert [r["logger"] for r in mail_records] == ["toolkit.mailer"]
        assert "Verify your email address" in mail_records[0]["message"]
    else:
        assert flow["token_source"] == "minted" and mail_records == []
        mails = [r for r in records if r["logger"] == "toolkit.mailer"]
        assert len(mails) == 2 and all("(" in r["message"] for r in mails)  # envelope, size


def test_without_a_jwt_secret_production_refuses_to_issue_tokens(runs):
    result = runs["no_secret"]["login_only"]
    assert result["register"]["status"] == 201
    login = result["login"]
    assert login["status"] == 500
    assert error_of(login) == {"code": "internal", "message": "internal error"}


def test_development_falls_back_to_a_per_project_secret(runs):
    assert runs["dev_secret"]["login_only"]["login"]["status"] == 200
