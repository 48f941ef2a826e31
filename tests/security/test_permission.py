"""Permission is secure and truthful (issue 23 item 3; issue 30 items 1 to 5; issue 24 item 3).

- ``policyfile``'s decision cache keyed a decision by subject, roles and action only, so
  once "alice may edit her own post" was cached under a casbin ABAC model (``eval`` of a
  policy rule reading ``r.obj``), alice could edit bob's post too.
- In a project made by ``toolkit new``: ``permission: check(...)`` routes without the
  battery, or on ``noop``, are a check error outside development; the schema's
  ``owner_field`` is what owned-only rules compare; another owner's object is a 404 like
  an unknown id on every verb; routes, explain, stubs and views report the
  authentication a permission check enforces; ``has_perm`` follows the rules; and the
  worked team example of ``docs/authorizers.md`` runs as written.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.cli.conftest import base_env, run_toolkit
from tests.subprocesses import run_manage, run_python_json
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.permission import Subject

#: A casbin ABAC model: each policy rule is an expression ``eval()`` runs on the request.
ABAC_MODEL = """\
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub_rule, act

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = r.act == p.act && eval(p.sub_rule)
"""


@pytest.fixture
def opened() -> Iterator[list[Container]]:
    containers: list[Container] = []
    yield containers
    for container in containers:
        container.close()


def _policyfile(tmp_path: Path, model: str, policy: str, opened: list[Container]):
    (tmp_path / "model.conf").write_text(model)
    (tmp_path / "policy.csv").write_text(policy)
    options = {
        "model_path": str(tmp_path / "model.conf"),
        "policy_path": str(tmp_path / "policy.csv"),
    }
    container = Container(
        Config.load({"permission": {"adapter": "policyfile", "options": options}}, {})
    )
    opened.append(container)
    return container.permission()


def test_abac_policy_rule_reading_the_resource_is_decided_per_resource(tmp_path, opened):
    authorizer = _policyfile(
        tmp_path, ABAC_MODEL, "p, r.obj.author_id == r.sub.id, post.edit\n", opened
    )
    alice = Subject("alice", ("editor",))
    own, bobs = SimpleNamespace(author_id="alice"), SimpleNamespace(author_id="bob")
    assert authorizer.check(alice, "post.edit", own) is True  # decided, maybe cached
    assert authorizer.check(alice, "post.edit", bobs) is False
    assert authorizer.check(alice, "post.edit", own) is True


def test_eval_in_the_matcher_is_never_cached_even_beside_owns(tmp_path, opened):
    model = ABAC_MODEL.replace("p = sub_rule, act", "p = sub_rule, act, owner").replace(
        "eval(p.sub_rule)", "owns(r.sub, r.obj, p.owner) && eval(p.sub_rule)"
    )
    authorizer = _policyfile(
        tmp_path, model, 'p, r.obj.state == "draft", post.edit, author_id\n', opened
    )
    alice = Subject("alice")
    draft = SimpleNamespace(author_id="alice", state="draft")
    published = SimpleNamespace(author_id="alice", state="published")
    assert authorizer.check(alice, "post.edit", draft) is True
    assert authorizer.check(alice, "post.edit", published) is False


# --------------------------------------------------------------------------- a rendered project
# ``toolkit new`` and a schema of its own with ``permission: check(...)`` on one object per
# verb; the template's accounts app issues the bearer tokens.

DOC_SCHEMA = """\
// A doc belongs to the account whose id is its owner.
entity Doc {
  id: uuid @primary
  title: string @validate(min_len: 1, max_len: 100)
  owner: string @validate(min_len: 1, max_len: 64)
  created_at: timestamp @default(now())
}

service DocService {
  rpc CreateDoc(
    title: string @validate(min_len: 1, max_len: 100),
    owner: string @validate(min_len: 1, max_len: 64),
  ) -> Doc {
    http: POST "/v1/docs"
    auth: required
  }

  rpc GetDoc(id: uuid) -> Doc {
    http: GET "/v1/docs/{id}"
    permission: check("doc.read", resource: Doc, owner_field: owner)
  }

  rpc UpdateDoc(id: uuid, title: string? @validate(min_len: 1, max_len: 100)) -> Doc {
    http: PATCH "/v1/docs/{id}"
    permission: check("doc.edit", resource: Doc, owner_field: owner)
  }

  rpc DeleteDoc(id: uuid) -> Doc {
    http: DELETE "/v1/docs/{id}"
    permission: check("doc.delete", resource: Doc, owner_field: owner)
  }

  rpc PinDoc(id: uuid) -> Doc {
    http: POST "/v1/docs/{id}/pin"
    permission: check("doc.edit", resource: Doc, owner_field: owner)
  }
}
"""

GUARDED_RPCS = (
    "DocService.DeleteDoc",
    "DocService.GetDoc",
    "DocService.PinDoc",
    "DocService.UpdateDoc",
)

#: Owners read, edit and delete their docs; an auditor reads every doc. No rule names the
#: owner's field: the schema's ``owner_field`` is the one place that does.
DOC_RULES = """"permission": {
        "adapter": "rbac",
        "options": {
            "rules": [
                {"Role": "*", "Action": "doc.read", "OwnedOnly": True},
                {"Role": "*", "Action": "doc.edit", "OwnedOnly": True},
                {"Role": "*", "Action": "doc.delete", "OwnedOnly": True},
                {"Role": "auditor", "Action": "doc.read"},
            ],
        },
    },"""


def _manage(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_manage(project, *args, env=env)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Return a new project with the doc schema compiled and migrated; no permission battery."""
    project = tmp_path_factory.mktemp("permission") / "notes"
    env = base_env(AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48))
    created = run_toolkit("new", "notes", "--dir", str(project), "--json", env=env)
    assert created.returncode == 0, created
    (project / "schema" / "docs.toolkit").write_text(DOC_SCHEMA)
    done = run_toolkit("compile", cwd=project, env=env)
    assert done.returncode == 0, done
    migrated = run_toolkit("db", "migrate", "--json", cwd=project, env=env)
    assert migrated.returncode == 0, migrated
    return project, env


@pytest.fixture(scope="module")
def guarded(compiled, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Return the compiled project plus ``toolkit add permission/rbac`` and the doc rules."""
    source, env = compiled
    project = tmp_path_factory.mktemp("guarded") / "notes"
    shutil.copytree(source, project)
    added = run_toolkit("add", "permission/rbac", cwd=project, env=env)
    assert added.returncode == 0, added
    settings = project / "notes" / "settings.py"
    text = settings.read_text()
    assert text.count('"permission": {"adapter": "rbac"},') == 1, text
    settings.write_text(text.replace('"permission": {"adapter": "rbac"},', DOC_RULES))
    return project, env


def test_permission_checks_without_the_battery_are_a_check_error_in_production(compiled):
    project, env = compiled
    production = _manage(project, env, "check")
    assert production.returncode != 0
    assert "toolkit_permission.E004" in production.stderr, production.stderr
    assert "the permission battery is not installed" in production.stderr
    for rpc in GUARDED_RPCS:
        assert rpc in production.stderr
    development = _manage(project, env | {"TOOLKIT_ENV": "dev"}, "check")
    assert development.returncode == 0, development.stderr
    assert "toolkit_permission.W003" in development.stderr
    assert "toolkit_permission.E004" not in development.stderr


def test_permission_checks_on_noop_are_a_check_error_and_rbac_passes(guarded):
    project, env = guarded
    noop = _manage(project, env | {"PERMISSION__DEFAULT__ADAPTER": "noop"}, "check")
    assert noop.returncode != 0
    assert "toolkit_permission.E004" in noop.stderr, noop.stderr
    assert 'permission.default uses the "noop" adapter' in noop.stderr
    assert all(rpc in noop.stderr for rpc in GUARDED_RPCS)
    rbac = _manage(project, env, "check")
    assert rbac.returncode == 0, rbac.stderr
    assert "toolkit_permission.E004" not in rbac.stderr


def test_doctor_strict_fails_on_permission_checks_that_fail_open(compiled, guarded):
    project, env = compiled
    strict = run_toolkit("doctor", "--strict", cwd=project, env=env)
    assert strict.returncode == 4, strict
    [row] = [line for line in strict.stdout.splitlines() if line.startswith("permission/checks")]
    assert "✘" in row and "permission checks fail open" in row
    assert all(rpc in row for rpc in GUARDED_RPCS[:3])
    project, env = guarded
    passing = run_toolkit("doctor", "--strict", cwd=project, env=env)
    assert "permission/checks" not in passing.stdout, passing.stdout


#: Runs in the guarded project: real accounts, real bearer tokens, Django's test client.
_DOCS_SCRIPT = """
import json, django
django.setup()
from django.test import Client
from toolkit_batteries import services

client = Client()

def call(method, path, data=None, token=None):
    extra = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    if data is not None:
        extra.update(data=json.dumps(data), content_type="application/json")
    response = getattr(client, method)(path, secure=True, **extra)
    try:
        body = response.json()
    except ValueError:
        body = None
    return [response.status_code, body]

def login(email):
    account = {"email": email, "password": "correct horse battery", "name": email}
    assert call("post", "/api/register", account)[0] == 201
    status, body = call("post", "/api/login", {"email": email, "password": account["password"]})
    assert status == 200, body
    return body["token"], call("get", "/api/me", token=body["token"])[1]["id"]

ann, ann_id = login("ann@example.com")
bob, bob_id = login("bob@example.com")
auditor = services.auth().issue("auditor-1", roles=["auditor"]).token
doc = call("post", "/v1/docs", {"title": "ann's", "owner": str(ann_id)}, ann)[1]
path, unknown = f"/v1/docs/{doc['id']}", "/v1/docs/00000000-0000-4000-8000-000000000000"
out = {"doc": doc}
for who, token in (("bob", bob), ("unknown", bob), ("auditor", auditor), ("ann", ann)):
    target = unknown if who == "unknown" else path
    out[who] = {
        "get": call("get", target, token=token),
        "patch": call("patch", target, {"title": "changed"}, token),
        "delete": call("delete", target, token=token),
    }
out["anonymous"] = call("get", path)
print(json.dumps(out))
"""


def _docs_run(project: Path, env: dict[str, str], **extra: str) -> dict:
    child = env | {"DJANGO_SETTINGS_MODULE": "notes.settings", "DJANGO_ALLOWED_HOSTS": "testserver"}
    shutil.copy(project / "db.sqlite3", project / "db.sqlite3.clean")
    try:
        return run_python_json(_DOCS_SCRIPT, cwd=project, env=child | extra, timeout=120)
    finally:
        shutil.move(project / "db.sqlite3.clean", project / "db.sqlite3")


def test_another_owners_object_is_a_404_like_an_unknown_id_on_every_verb(guarded):
    out = _docs_run(*guarded)
    not_found = out["unknown"]
    assert {verb: answer[0] for verb, answer in not_found.items()} == dict.fromkeys(
        ("get", "patch", "delete"), 404
    )
    # Bob may not read ann's doc: every verb answers exactly what an unknown id answers.
    assert out["bob"] == not_found
    # The auditor may read it: reading works, and a refused write is an honest 403.
    assert out["auditor"]["get"] == [200, out["doc"]]
    assert out["auditor"]["patch"][0] == 403
    assert out["auditor"]["patch"][1]["error"]["code"] == "permission_denied"
    assert out["auditor"]["delete"][0] == 403
    # The owner (the schema's owner_field; no rule names it) reads, edits and deletes.
    assert out["ann"]["get"] == [200, out["doc"]]
    assert out["ann"]["patch"][0] == 200 and out["ann"]["patch"][1]["title"] == "changed"
    assert out["ann"]["delete"][0] == 200
    assert out["anonymous"][0] == 401


def test_the_denied_status_setting_restores_403(guarded):
    out = _docs_run(*guarded, TOOLKIT_PERMISSION_DENIED_STATUS="403")
    assert [answer[0] for answer in out["bob"].values()] == [403, 403, 403]
    assert [answer[0] for answer in out["unknown"].values()] == [404, 404, 404]


def test_a_rule_naming_another_owner_than_the_schema_is_reported(guarded):
    project, env = guarded
    (project / "notes" / "settings_mismatch.py").write_text(
        "from .settings import *  # noqa: F403\n\n"
        'TOOLKIT["permission"]["options"]["rules"][1]["OwnedAttr"] = "title"  # noqa: F405\n'
    )
    checked = _manage(project, env | {"DJANGO_SETTINGS_MODULE": "notes.settings_mismatch"}, "check")
    assert "toolkit_permission.W004" in checked.stderr, checked.stderr
    assert 'rules[1] names OwnedAttr "title"' in checked.stderr
    assert 'DocService.UpdateDoc declares owner_field "owner"' in checked.stderr


def test_permission_checked_routes_report_the_authentication_they_enforce(compiled):
    """``permission: check`` without ``auth:`` answers 401 without a token: say so."""
    project, env = compiled
    listed = run_toolkit("--json", "routes", cwd=project, env=env)
    assert listed.returncode == 0, listed
    rows = {row["rpc"]: row for row in listed.json["data"] if "rpc" in row}  # schema rows
    assert rows["GetDoc"]["auth"] == "required"
    assert rows["GetDoc"]["permission"] == "doc.read"
    assert rows["CreateDoc"]["permission"] is None
    text = run_toolkit("routes", cwd=project, env=env).stdout
    line = next(row for row in text.splitlines() if "DocService.UpdateDoc" in row)
    assert line.endswith("auth: required, permission: doc.edit"), line
    explained = run_toolkit("--json", "explain", "DocService.GetDoc", cwd=project, env=env)
    assert explained.returncode == 0, explained
    assert explained.json["data"]["auth"]["required"] is True
    handlers = (project / "api" / "handlers.py").read_text()  # PinDoc is no CRUD rpc
    assert "DocService.PinDoc: POST /v1/docs/{id}/pin (auth: required" in handlers, handlers
    views = (project / "api" / "generated" / "views.py").read_text()
    assert '"get_doc": Bearer()' in views and '"get_doc": Public()' not in views


_HAS_PERM_SCRIPT = """
import json, django
django.setup()
from django.contrib.auth.models import Group, User
from api.models import Doc

doc = Doc.objects.create(title="t", owner="someone")
auditor = User.objects.create(username="auditor")
auditor.groups.add(Group.objects.create(name="auditor"))
plain = User.objects.create(username="plain")
print(json.dumps([auditor.has_perm("doc.read", doc), plain.has_perm("doc.read", doc)]))
"""


def test_the_template_routes_has_perm_through_the_rules(guarded):
    """The template lists PermissionBackend: a Django group is a role of the rules."""
    project, env = guarded
    child = env | {"DJANGO_SETTINGS_MODULE": "notes.settings"}
    shutil.copy(project / "db.sqlite3", project / "db.sqlite3.clean")
    try:
        answers = run_python_json(_HAS_PERM_SCRIPT, cwd=project, env=child, timeout=120)
    finally:
        shutil.move(project / "db.sqlite3.clean", project / "db.sqlite3")
    assert answers == [True, False]


# --------------------------------------------------------------------------- docs/authorizers.md
# The worked team example of "Writing an authorizer", as the page shows it.

DOCS = Path(__file__).resolve().parents[2] / "docs" / "authorizers.md"


def _page_blocks() -> list[str]:
    """Return the fenced code blocks of docs/authorizers.md, in order."""
    text = DOCS.read_text(encoding="utf-8")
    return [block.split("\n", 1)[1] for block in text.split("```")[1::2]]


_TEAM_SCRIPT = """
import json, django
django.setup()
from django.test import Client
from toolkit_batteries import services
from api.models import Membership, Team

client = Client()

def call(method, path, data=None, token=None):
    extra = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    if data is not None:
        extra.update(data=json.dumps(data), content_type="application/json")
    response = getattr(client, method)(path, secure=True, **extra)
    return [response.status_code, response.json()]

def login(email):
    account = {"email": email, "password": "correct horse battery", "name": email}
    assert call("post", "/api/register", account)[0] == 201
    status, body = call("post", "/api/login", {"email": email, "password": account["password"]})
    assert status == 200, body
    return body["token"], str(call("get", "/api/me", token=body["token"])[1]["id"])

(ann, ann_id), (bob, bob_id), (cat, cat_id) = (login(f"{n}@example.com") for n in "abc")
blue, red = Team.objects.create(name="blue"), Team.objects.create(name="red")
Membership.objects.create(team_id=blue.id, user=ann_id, role="member")
Membership.objects.create(team_id=red.id, user=bob_id, role="member")
Membership.objects.create(team_id=blue.id, user=cat_id, role="admin")
out = {}
out["create"] = call("post", "/v1/team-notes", {"team_id": str(blue.id), "title": "plan"}, ann)
note = f"/v1/team-notes/{out['create'][1]['id']}"
other = {"team_id": str(blue.id), "title": "x"}
out["outsider_create"] = call("post", "/v1/team-notes", other, bob)
for who, token in (("outsider", bob), ("member", ann), ("admin", cat)):
    out[who] = [call("get", note, token=token)[0], call("patch", note, {"title": "v2"}, token)[0]]
out["member_delete"] = call("delete", note, token=ann)[0]
out["outsider_delete"] = call("delete", note, token=bob)[0]
out["admin_delete"] = call("delete", note, token=cat)[0]
out["anonymous"] = call("get", note)[0]
print(json.dumps(out))
"""


def test_the_worked_team_example_of_writing_an_authorizer(compiled, tmp_path):
    source, env = compiled
    project = tmp_path / "notes"
    shutil.copytree(source, project)
    schema, authz, rules = (b for b in _page_blocks() if "Team" in b or "team." in b)
    (project / "schema" / "team.toolkit").write_text(schema)
    (project / "api" / "authz.py").write_text(authz)
    added = run_toolkit("add", "permission/rbac", cwd=project, env=env)
    assert added.returncode == 0, added
    settings = project / "notes" / "settings.py"
    text = settings.read_text()
    settings.write_text(text.replace('"permission": {"adapter": "rbac"},', rules.strip()))
    # The doc schema of the other tests stays; its routes need rules of their own.
    for step in (("compile",), ("db", "migrate")):
        done = run_toolkit(*step, cwd=project, env=env)
        assert done.returncode == 0, done
    child = env | {"DJANGO_SETTINGS_MODULE": "notes.settings", "DJANGO_ALLOWED_HOSTS": "testserver"}
    out = run_python_json(_TEAM_SCRIPT, cwd=project, env=child, timeout=120)
    assert out["create"][0] == 200, out["create"]
    assert out["outsider_create"] == [
        404,
        {"error": {"code": "not_found", "message": "no such team"}},
    ]
    assert out["outsider"] == [404, 404]
    assert out["member"] == [200, 200] and out["admin"] == [200, 200]
    assert (out["member_delete"], out["outsider_delete"], out["admin_delete"]) == (403, 404, 200)
    assert out["anonymous"] == 401
