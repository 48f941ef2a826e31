"""A rendered project's ``has_perm`` asks the permission battery, by environment alone.

The template lists ``PermissionBackend`` in ``AUTHENTICATION_BACKENDS``. With
``PERMISSION__DEFAULT__ADAPTER=rbac`` and its rules in ``PERMISSION__DEFAULT__RULES`` (no
code change), a Django user (roles: its groups) and a bearer-token user (roles: the
token's) are answered by the same rules, in ``has_perm`` and in the admin; without the
variables the template's ``noop`` grants nothing through Django.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.subprocesses import run_python_json
from tests.test_template import NAME, _clean_env, render_migrated

RULES = [
    {"Role": "auditor", "Action": "auth.view_group"},
    {"Role": "editor", "Action": "notes.edit"},
]

CHILD = r"""
import json

import django
django.setup()
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import Client

from toolkit_batteries import services
from toolkit_batteries.auth.users import TokenUser

User.objects.filter(username__in=["ann", "bob"]).delete()
ann = User.objects.create_user("ann", password="a long passphrase 42", is_staff=True)
ann.groups.add(Group.objects.get_or_create(name="auditor")[0])
bob = User.objects.create_user("bob", password="a long passphrase 42", is_staff=True)
auth = services.auth()
editor = TokenUser(auth.verify(auth.issue("u-1", roles=("editor",)).token))
reader = TokenUser(auth.verify(auth.issue("u-2", roles=("reader",)).token))
client = Client(HTTP_HOST="localhost")
client.force_login(ann)
ann_groups = client.get("/admin/auth/group/").status_code
client.force_login(bob)
bob_groups = client.get("/admin/auth/group/").status_code
print(json.dumps({
    "backends": settings.AUTHENTICATION_BACKENDS,
    "adapter": services.permission().adapter_name,
    "django_user": [ann.has_perm("auth.view_group"), bob.has_perm("auth.view_group")],
    "token_user": [editor.has_perm("notes.edit"), reader.has_perm("notes.edit")],
    "has_perms": editor.has_perms(["notes.edit", "auth.view_group"]),
    "admin": [ann_groups, bob_groups],
}))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_migrated(tmp_path_factory.mktemp("permissions") / "proj")


def _run(project: Path, **env: str) -> dict:
    child_env = _clean_env() | {"TOOLKIT_ENV": "dev", "DJANGO_SETTINGS_MODULE": f"{NAME}.settings"}
    return run_python_json(CHILD, cwd=project, env=child_env | env, timeout=120)


def test_the_environment_puts_django_permissions_under_the_rbac_rules(project):
    found = _run(
        project,
        PERMISSION__DEFAULT__ADAPTER="rbac",
        PERMISSION__DEFAULT__RULES=json.dumps(RULES),
    )
    assert "toolkit_batteries.permission.backends.PermissionBackend" in found["backends"]
    assert found["adapter"] == "rbac"
    assert found["django_user"] == [True, False]  # ann's group "auditor"; bob has none
    assert found["token_user"] == [True, False]  # the token's role "editor"
    assert found["has_perms"] is False  # the editor token holds no auth.view_group
    assert found["admin"] == [200, 403]


def test_the_templates_noop_grants_nothing_through_django(project):
    found = _run(project)
    assert found["adapter"] == "noop"
    assert found["django_user"] == [False, False]
    assert found["token_user"] == [False, False]
    assert found["admin"] == [403, 403]
