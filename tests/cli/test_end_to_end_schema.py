"""A schema with a job, a schedule, a permission check and a CRUD service, end to end.

Through the installed ``toolkit`` script only, as a user would: ``toolkit new``, a schema
file of its own in ``schema/`` (the template's schema stays), ``toolkit add permission/rbac``
plus the rules in the settings, ``toolkit compile``, ``toolkit db migrate``, ``toolkit
serve`` on a free port, then real HTTP: register and log in through the template's
accounts app, the five CRUD rpcs served by their ORM defaults (no handler code), ``403``
for a route whose role the caller lacks, ``404`` for an unknown id and for another
owner's object under ``permission: check(...)``. Last, ``toolkit schedule:run
--once`` dispatches the schedule's job into the database queue and ``toolkit queue:work
--stop-when-empty`` runs it exactly once.
"""

from __future__ import annotations

import secrets
import signal
import subprocess
import uuid
from pathlib import Path

from tests.cli.conftest import base_env, run_toolkit, start_serve
from tests.cli.test_end_to_end import _call, _wait_until_up
from tests.ports import free_port
from tests.subprocesses import run_manage

SCHEMA = """\
// A widget belongs to the account whose id is its owner.
entity Widget {
  id: uuid @primary
  name: string @validate(min_len: 1, max_len: 100)
  owner: string @validate(min_len: 1, max_len: 64)
  created_at: timestamp @default(now())
}

// Appends the number of widgets to a file: the test reads what the worker did.
job CountWidgets(path: string) {
  queue: default
  retry: max_attempts(1)
}

schedule Census {
  cron: "* * * * *"
  dispatch: CountWidgets("{marker}")
}

service WidgetService {
  rpc CreateWidget(
    name: string @validate(min_len: 1, max_len: 100),
    owner: string @validate(min_len: 1, max_len: 64),
  ) -> Widget {
    http: POST "/v1/widgets"
    auth: required
  }

  rpc GetWidget(id: uuid) -> Widget {
    http: GET "/v1/widgets/{id}"
    permission: check("widget.read", resource: Widget, owner_field: owner)
  }

  rpc ListWidgets() -> Widget {
    http: GET "/v1/widgets"
    auth: required
    paginated: true
  }

  rpc UpdateWidget(id: uuid, name: string? @validate(min_len: 1, max_len: 100)) -> Widget {
    http: PATCH "/v1/widgets/{id}"
    permission: check("widget.edit", resource: Widget, owner_field: owner)
  }

  rpc DeleteWidget(id: uuid) -> Widget {
    http: DELETE "/v1/widgets/{id}"
    permission: check("widget.delete", resource: Widget, owner_field: owner)
  }

  rpc PurgeWidget(id: uuid) -> Widget {
    http: DELETE "/v1/admin/widgets/{id}"
    auth: required(roles: {admin})
  }
}
"""

#: The user's job body, replacing the stub's ``raise NotImplementedError``.
JOB_BODY = """    from pathlib import Path

    from .models import Widget

    with Path(path).open("a") as marker:
        marker.write(f"{Widget.objects.count()}\\n")"""

#: Owners may read, edit and delete their own widgets; nobody else's (no rule: refused).
RULES = """"permission": {
        "adapter": "rbac",
        "options": {
            "rules": [
                {"Role": "*", "Action": "widget.read", "OwnedOnly": True, "OwnedAttr": "owner"},
                {"Role": "*", "Action": "widget.edit", "OwnedOnly": True, "OwnedAttr": "owner"},
                {"Role": "*", "Action": "widget.delete", "OwnedOnly": True, "OwnedAttr": "owner"},
            ],
        },
    },"""

MINT_ADMIN = (
    "from toolkit_batteries import services; "
    "print(services.auth().issue('operator-1', roles=['admin']).token)"
)


def _register_and_login(base: str, email: str) -> tuple[str, str]:
    """Return (bearer token, account id) of a new account, through the accounts app."""
    account = {"email": email, "password": "correct horse battery", "name": "E2E"}
    status, body, _ = _call(base, "POST", "/api/register", account)
    assert status == 201, body
    login = {"email": email, "password": account["password"]}
    status, body, _ = _call(base, "POST", "/api/login", login)
    assert status == 200, body
    token = body["token"]
    status, me, _ = _call(base, "GET", "/api/me", token=token)
    assert status == 200, me
    return token, me["id"]


def test_schema_with_job_schedule_permission_and_crud_end_to_end(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    marker = tmp_path / "census.txt"
    env = base_env(
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        WEB_CONCURRENCY="1",
        DJANGO_SECURE_SSL_REDIRECT="0",
        # The worker is another process than the scheduler: the queue lives in the database.
        QUEUE__DEFAULT__ADAPTER="db",
        QUEUE__DEFAULT__POLL_TIMEOUT="300ms",
    )
    created = run_toolkit("new", "shop", "--dir", str(project), "--json", env=env)
    assert created.returncode == 0, created
    template_schema = (project / "schema" / "app.toolkit").read_text()
    (project / "schema" / "widgets.toolkit").write_text(SCHEMA.replace("{marker}", str(marker)))

    added = run_toolkit("add", "permission/rbac", cwd=project, env=env)
    assert added.returncode == 0, added
    settings = project / "shop" / "settings.py"
    text = settings.read_text()
    assert text.count('"permission": {"adapter": "rbac"},') == 1, text
    settings.write_text(text.replace('"permission": {"adapter": "rbac"},', RULES))

    compiled = run_toolkit("compile", cwd=project, env=env)
    assert compiled.returncode == 0, compiled
    assert (project / "schema" / "app.toolkit").read_text() == template_schema
    handlers = (project / "api" / "handlers.py").read_text()
    widget_handlers = handlers[handlers.index("class WidgetService:") :]
    assert "def " not in widget_handlers  # plain CRUD: no stubs, the ORM defaults serve it
    jobs = project / "api" / "jobs.py"
    stub = jobs.read_text()
    assert "def count_widgets(path: str) -> None:" in stub, stub
    jobs.write_text(stub.replace("    raise NotImplementedError", JOB_BODY, 1))

    migrated = run_toolkit("db", "migrate", "--json", cwd=project, env=env)
    assert migrated.returncode == 0, migrated
    assert migrated.json["ok"] is True
    # An operator's token with the admin role, minted by the project's auth service (the
    # accounts app's logins carry no roles).
    minted = run_manage(project, "shell", "-c", MINT_ADMIN, env=env)
    assert minted.returncode == 0, minted.stderr[-2000:]
    admin = minted.stdout.split()[-1]  # after the shell's notice of its automatic imports

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(project, env, port)
    try:
        _wait_until_up(base, server)
        ann, ann_id = _register_and_login(base, "ann@example.com")
        bob, bob_id = _register_and_login(base, "bob@example.com")

        # create (twice, so the list has an order to keep) and get
        status, first, _ = _call(base, "POST", "/v1/widgets", {"name": "w1", "owner": ann_id}, ann)
        assert status == 200, first
        assert (first["name"], first["owner"]) == ("w1", ann_id)
        status, second, _ = _call(base, "POST", "/v1/widgets", {"name": "w2", "owner": ann_id}, ann)
        assert status == 200, second
        status, bobs, _ = _call(base, "POST", "/v1/widgets", {"name": "b1", "owner": bob_id}, bob)
        assert status == 200, bobs
        status, got, _ = _call(base, "GET", f"/v1/widgets/{first['id']}", token=ann)
        assert (status, got) == (200, first)

        # list: one page, stable order, then a second page by cursor
        status, page, _ = _call(base, "GET", "/v1/widgets?limit=2", token=ann)
        assert status == 200, page
        assert [w["id"] for w in page["items"]] == [first["id"], second["id"]]
        assert page["next_cursor"]
        status, rest, _ = _call(
            base, "GET", f"/v1/widgets?limit=2&cursor={page['next_cursor']}", token=ann
        )
        assert status == 200, rest
        assert [w["id"] for w in rest["items"]] == [bobs["id"]]

        # update: PATCH changes the name only
        path = f"/v1/widgets/{first['id']}"
        status, updated, _ = _call(base, "PATCH", path, {"name": "w1-renamed"}, ann)
        assert status == 200, updated
        assert (updated["name"], updated["owner"]) == ("w1-renamed", ann_id)
        status, got, _ = _call(base, "GET", path, token=ann)
        assert got["name"] == "w1-renamed"

        # permission: check(...) on an object bob may not read is a 404, as an unknown id
        # is (ids reveal nothing), and changes nothing
        status, body, _ = _call(base, "GET", path, token=bob)
        assert (status, body["error"]["code"]) == (404, "not_found"), body
        status, body, _ = _call(base, "PATCH", path, {"name": "stolen"}, bob)
        assert (status, body["error"]["code"]) == (404, "not_found"), body
        status, body, _ = _call(base, "DELETE", path, token=bob)
        assert status == 404, body
        status, got, _ = _call(base, "GET", path, token=ann)
        assert (status, got["name"]) == (200, "w1-renamed")
        # ... and needs a bearer token at all
        status, body, _ = _call(base, "GET", path)
        assert status == 401, body

        # a role the caller's token does not carry is 403 before anything happens; the
        # admin's token carries it
        purge = f"/v1/admin/widgets/{bobs['id']}"
        status, body, _ = _call(base, "DELETE", purge, token=ann)
        assert (status, body["error"]["code"]) == (403, "permission_denied"), body
        status, body, _ = _call(base, "GET", f"/v1/widgets/{bobs['id']}", token=bob)
        assert status == 200, body
        status, purged, _ = _call(base, "DELETE", purge, token=admin)
        assert (status, purged["id"]) == (200, bobs["id"]), purged
        status, body, _ = _call(base, "GET", f"/v1/widgets/{bobs['id']}", token=bob)
        assert status == 404, body

        # unknown ids are 404, on the CRUD default and on the permission's lookup
        unknown = str(uuid.uuid4())
        status, body, _ = _call(base, "GET", f"/v1/widgets/{unknown}", token=ann)
        assert (status, body["error"]["code"]) == (404, "not_found"), body
        status, body, _ = _call(base, "PATCH", f"/v1/widgets/{unknown}", {"name": "x"}, ann)
        assert status == 404, body

        # delete answers the row as it was, then it is gone
        status, deleted, _ = _call(base, "DELETE", f"/v1/widgets/{second['id']}", token=ann)
        assert (status, deleted["id"]) == (200, second["id"]), deleted
        status, body, _ = _call(base, "GET", f"/v1/widgets/{second['id']}", token=ann)
        assert status == 404, body
        status, page, _ = _call(base, "GET", "/v1/widgets", token=ann)
        assert (page["items"], page["next_cursor"]) == ([got], None)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            out, err = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            out, err = server.communicate()
            raise AssertionError(f"server ignored SIGTERM: {err[-2000:]}") from None
    assert server.returncode == 0, err[-2000:]
    assert all(token not in out + err for token in (ann, bob, admin))

    # The schedule fires its job once; a worker runs it once (one widget is left).
    listed = run_toolkit("--json", "schedule:run", "--list", cwd=project, env=env)
    assert listed.returncode == 0 and "Census" in listed.stdout, listed
    fired = run_toolkit("--json", "schedule:run", "--once", cwd=project, env=env)
    assert fired.returncode == 0 and "Census" in fired.stdout, fired
    assert not marker.exists()  # dispatched, not run
    worked = run_toolkit("queue:work", "--stop-when-empty", cwd=project, env=env)
    assert worked.returncode == 0, worked
    assert marker.read_text() == "1\n"
    again = run_toolkit("queue:work", "--stop-when-empty", cwd=project, env=env)
    assert again.returncode == 0, again
    assert marker.read_text() == "1\n"  # nothing left in the queue: it ran exactly once
