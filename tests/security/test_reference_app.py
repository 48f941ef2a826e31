"""Issue 12 defect 10: the reference application teaches no account enumeration, no
cross-user reads and no client-steered cursors.

On the landed template ``/api/register`` answered ``409`` for a taken email (and faster,
without hashing), the sample ``Note`` had no owner so every user read every note, and
pagination cursors were plain base64 a client could rewrite. The project is rendered and
compiled as a user would (``compile_schema``, ``migrate``), then driven in a fresh
interpreter with Django's test client over HTTPS (production settings).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.subprocesses import run_python
from tests.test_template import NAME, TEST_JWT_SECRET, _clean_env, manage, render

#: Mid-cost argon2id (~30 ms a hash): far above a lookup, cheap enough for a loaded machine.
ARGON2 = {
    "PASSWORD__DEFAULT__TIME": "1",
    "PASSWORD__DEFAULT__MEMORY": "32768",
    "PASSWORD__DEFAULT__THREADS": "2",
}

_SCRIPT = r"""
import base64, json, statistics, time, django
django.setup()
from django.test import Client
from accounts.models import Account

out = {}
seen = [0]

def call(method, path, data=None, token=None):
    seen[0] += 1  # every request from its own address: the register limiter stays out of it
    extra = {"REMOTE_ADDR": f"10.1.{seen[0] // 250}.{seen[0] % 250 + 1}"}
    if token:
        extra["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    if data is not None:
        extra.update(data=json.dumps(data), content_type="application/json")
    response = getattr(Client(), method)(path, secure=True, **extra)
    headers = {k: v for k, v in response.headers.items() if k not in ("Date",)}
    return {"status": response.status_code, "body": response.json(), "headers": headers}

def register(email, password="correct horse battery", name="Ann"):
    return call("post", "/api/register", {"email": email, "password": password, "name": name})

def token_of(email, password="correct horse battery"):
    return call("post", "/api/login", {"email": email, "password": password})["body"]["token"]

# --- register: a taken email answers as a new one, after the same work
out["new"] = register("ann@example.com")
out["taken"] = register("ANN@example.com", password="another password", name="Mallory")
account = Account.objects.get(email__iexact="ann@example.com")
out["kept"] = {"name": account.name, "count": Account.objects.count()}
out["owner_can_log_in"] = call(
    "post", "/api/login", {"email": "ann@example.com", "password": "correct horse battery"}
)["status"]
out["newcomer_cannot"] = call(
    "post", "/api/login", {"email": "ann@example.com", "password": "another password"}
)["status"]
new, taken = [], []
for n in range(7):
    start = time.perf_counter()
    register(f"fresh{n}@example.com")
    new.append(time.perf_counter() - start)
    start = time.perf_counter()
    register("ann@example.com")
    taken.append(time.perf_counter() - start)
out["timing"] = {"new_ms": statistics.median(new) * 1e3, "taken_ms": statistics.median(taken) * 1e3}

# --- notes: each user reads only their own
register("bob@example.com", name="Bob")
ann, bob = token_of("ann@example.com"), token_of("bob@example.com")
note = call("post", "/v1/notes", {"title": "ann's secret"}, ann)
out["note"] = note
out["ann_list"] = [n["title"] for n in call("get", "/v1/notes", token=ann)["body"]["items"]]
out["bob_list"] = call("get", "/v1/notes", token=bob)["body"]
out["bob_get"] = call("get", f"/v1/notes/{note['body']['id']}", token=bob)
out["ann_get"] = call("get", f"/v1/notes/{note['body']['id']}", token=ann)["status"]

# --- cursors: signed; an altered or forged one is a 400 on the cursor field
for title in ("two", "three"):
    call("post", "/v1/notes", {"title": title}, ann)
first = call("get", "/v1/notes?limit=2", token=ann)["body"]
cursor = first["next_cursor"]
out["next_page"] = call("get", f"/v1/notes?limit=2&cursor={cursor}", token=ann)
payload, _, signature = cursor.rpartition(".")
flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
out["bad_signature"] = call("get", f"/v1/notes?limit=2&cursor={payload}.{flipped}", token=ann)
# A position of the client's choosing, in the handler's own format, without a signature.
forged = base64.urlsafe_b64encode(
    json.dumps({"at": "1970-01-01T00:00:00+00:00", "id": "00000000-0000-0000-0000-000000000000"})
    .encode()
).rstrip(b"=").decode()
out["unsigned"] = call("get", f"/v1/notes?limit=2&cursor={forged}", token=ann)
out["other_payload"] = call("get", f"/v1/notes?limit=2&cursor={forged}.{signature}", token=ann)
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    project = render(tmp_path_factory.mktemp("secure-ref") / "proj")
    env = {"AUTH__DEFAULT__JWT_SECRET": TEST_JWT_SECRET}
    for step in (("compile_schema",), ("migrate", "--no-input")):
        done = manage(project, *step, **env)
        assert done.returncode == 0, done.stdout + done.stderr
    child = (
        _clean_env()
        | env
        | ARGON2
        | {"DJANGO_SETTINGS_MODULE": f"{NAME}.settings", "DJANGO_ALLOWED_HOSTS": "testserver"}
    )
    stdout = run_python(_SCRIPT, cwd=project, env=child, timeout=180)
    line = next(ln for ln in stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_register_answers_a_taken_email_exactly_as_a_new_one(results: dict[str, Any]) -> None:
    new, taken = results["new"], results["taken"]
    assert new["status"] == taken["status"] == 201
    assert new["body"] == {"email": "ann@example.com"}
    assert taken["body"] == {"email": "ANN@example.com"}  # the caller's own input, echoed
    assert new["headers"] == taken["headers"]
    # Only the first registration made an account; the second changed nothing.
    assert results["kept"] == {"name": "Ann", "count": 1}
    assert results["owner_can_log_in"] == 200 and results["newcomer_cannot"] == 401
    # The same work: a taken email still pays for a hash (it answered ~50x faster before).
    timing = results["timing"]
    assert timing["taken_ms"] > timing["new_ms"] / 3, timing


def test_a_user_never_reads_another_users_notes(results: dict[str, Any]) -> None:
    note = results["note"]
    assert note["status"] == 200 and note["body"]["title"] == "ann's secret"
    assert results["ann_list"] == ["ann's secret"] and results["ann_get"] == 200
    assert results["bob_list"] == {"items": [], "next_cursor": None}
    # Another user's note is "no such note", exactly as an id that does not exist.
    assert results["bob_get"]["status"] == 404
    assert results["bob_get"]["body"]["error"]["code"] == "not_found"


def test_a_tampered_or_forged_pagination_cursor_is_a_400_on_the_cursor_field(
    results: dict[str, Any],
) -> None:
    page = results["next_page"]
    assert page["status"] == 200 and [n["title"] for n in page["body"]["items"]] == ["three"]
    for case in ("bad_signature", "unsigned", "other_payload"):
        answer = results[case]
        assert answer["status"] == 400, (case, answer)
        assert answer["body"]["error"]["code"] == "invalid_argument"
        assert answer["body"]["error"]["fields"] == {"cursor": ["invalid"]}
