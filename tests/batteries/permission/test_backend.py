"""``PermissionBackend``: Django's permission questions answered by the permission rules.

``has_perm``/``has_perms`` of bearer-token users and Django users, Django's
``permission_required`` and ``PermissionRequiredMixin``, DRF's ``DjangoObjectPermissions``
on a ``ModelViewSet`` and the admin all follow one set of rules, written for ``rbac`` and
as a ``policyfile`` policy (``noop`` grants nothing). Tokens are real
(issued and verified by the auth battery's jwt adapter), users and groups are rows of the
test database.
"""

from __future__ import annotations

import json
import warnings

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, User
from django.test import Client, override_settings

from toolkit_batteries import services
from toolkit_batteries.auth.users import TokenUser

from .conftest import MODEL, SECRET

pytestmark = [pytest.mark.urls("tests.batteries.permission.urls"), pytest.mark.django_db]

BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "toolkit_batteries.permission.backends.PermissionBackend",
]
#: Django's permission names are actions like any other. Editors change entries, but
#: nobody rewrites their own (an owned-only deny); authors view only their own entries.
RULES = [
    {"Role": "editor", "Action": "admin.change_logentry"},
    {
        "Role": "*",
        "Action": "admin.change_logentry",
        "Effect": "deny",
        "OwnedOnly": True,
        "OwnedAttr": "user_id",
    },
    {"Role": "author", "Action": "admin.view_logentry", "OwnedOnly": True, "OwnedAttr": "user_id"},
    {"Role": "moderator", "Action": "admin.delete_logentry"},
    {"Role": "analyst", "Action": "reports.view"},
    {"Role": "auditor", "Action": "auth.view_group"},
]
REST_FRAMEWORK = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}


#: The same rules as a pycasbin policy on the battery's model (``owns`` on ``p.owner``).
POLICY = """\
p, editor, admin.change_logentry, allow,
p, *, admin.change_logentry, deny, user_id
p, author, admin.view_logentry, allow, user_id
p, moderator, admin.delete_logentry, allow,
p, analyst, reports.view, allow,
p, auditor, auth.view_group, allow,
"""


def _toolkit(adapter: str = "rbac", policy: str = "") -> dict:
    if adapter == "rbac":
        options: dict = {"rules": RULES}
    elif adapter == "policyfile":
        options = {"model_path": MODEL, "policy_path": policy}
    else:
        options = {}
    return {
        "auth": {"adapter": "jwt", "options": {"jwt": {"secret": SECRET}}},
        "permission": {"adapter": adapter, "options": options},
    }


@pytest.fixture(params=["rbac", "policyfile"])
def rules(request, tmp_path):
    policy = tmp_path / "policy.csv"
    policy.write_text(POLICY)
    toolkit = _toolkit(request.param, str(policy))
    with override_settings(
        TOOLKIT=toolkit, AUTHENTICATION_BACKENDS=BACKENDS, REST_FRAMEWORK=REST_FRAMEWORK
    ):
        yield
    services.reset()


def user(name: str, *groups: str, staff: bool = False) -> User:
    made = User.objects.create(username=name, is_staff=staff)
    for group in groups:
        made.groups.add(Group.objects.get_or_create(name=group)[0])
    return made


def entry(owner: User) -> LogEntry:
    return LogEntry.objects.create(user=owner, action_flag=1, object_repr=f"{owner}'s")


def token(subject: str, *roles: str) -> str:
    return services.auth().issue(subject, roles=roles).token


def token_user(subject: str, *roles: str) -> TokenUser:
    return TokenUser(services.auth().verify(token(subject, *roles)))


def test_has_perm_follows_the_rules_for_django_users_and_token_users(rules):
    ann, bob = user("ann", "editor", "author"), user("bob")
    anns, bobs = entry(ann), entry(bob)
    for who in (ann, token_user(str(ann.pk), "editor", "author")):
        assert who.has_perm("admin.change_logentry", bobs) is True
        assert who.has_perm("admin.change_logentry", anns) is False  # owned-only deny
        assert who.has_perm("admin.change_logentry") is True  # model level: the allow
        assert who.has_perm("admin.view_logentry", anns) is True  # owned-only allow
        assert who.has_perm("admin.view_logentry", bobs) is False
        # Owning some entry never grants the model-level permission: Django (the admin,
        # PermissionRequiredMixin) reads that as "every entry".
        assert who.has_perm("admin.view_logentry") is False
        assert who.has_perm("admin.delete_logentry", bobs) is False
        assert who.has_perms(["admin.change_logentry", "admin.view_logentry"], bobs) is False
        assert who.has_perms(["admin.change_logentry"], bobs) is True
    moderator = token_user("mod-1", "moderator")
    assert moderator.has_perm("admin.delete_logentry", bobs) is True
    assert moderator.has_module_perms("admin") is True
    assert token_user("nobody").has_module_perms("admin") is False
    assert bob.has_perm("admin.change_logentry") is False


def test_noop_grants_nothing_through_django(rules):
    ann = user("ann", "editor")
    with override_settings(TOOLKIT=_toolkit("noop")):
        assert ann.has_perm("admin.change_logentry", entry(ann)) is False
        assert token_user("u-1", "editor").has_perm("admin.delete_logentry") is False


def _send(client: Client, method: str, path: str, data=None, bearer: str | None = None):
    extra = {"HTTP_AUTHORIZATION": f"Bearer {bearer}"} if bearer else {}
    if data is not None:
        extra.update(data=json.dumps(data), content_type="application/json")
    return getattr(client, method)(path, **extra)


def test_drf_django_object_permissions_answer_by_the_rules(rules):
    ann, bob = user("ann", "editor"), user("bob", "editor")
    anns, bobs = entry(ann), entry(bob)
    client = Client()
    editor = token(str(ann.pk), "editor")
    changed = _send(client, "patch", f"/entries/{bobs.pk}", {"object_repr": "x"}, editor)
    assert changed.status_code == 200, changed.content
    refused = _send(client, "patch", f"/entries/{anns.pk}", {"object_repr": "x"}, editor)
    assert refused.status_code == 403  # her own entry: the owned-only deny
    assert _send(client, "delete", f"/entries/{bobs.pk}", bearer=editor).status_code == 403
    moderator = token("mod-1", "moderator")
    assert _send(client, "delete", f"/entries/{bobs.pk}", bearer=moderator).status_code == 204
    # A Django user logged in by session: the same rules, through its groups.
    session = Client()
    session.force_login(bob)
    assert _send(session, "patch", f"/entries/{anns.pk}", {"object_repr": "y"}).status_code == 200
    own = entry(bob)
    assert _send(session, "patch", f"/entries/{own.pk}", {"object_repr": "y"}).status_code == 403


def test_djangos_permission_required_and_mixin_ask_the_rules(rules):
    analyst, other = user("ann", "analyst"), user("bob")
    for path in ("/django/report", "/django/report-view"):
        client = Client()
        client.force_login(analyst)
        assert client.get(path).status_code == 200, path
        client.force_login(other)
        assert client.get(path).status_code == 403, path


def test_the_admin_follows_the_rules(rules):
    reader, stranger = user("ann", "auditor", staff=True), user("bob", staff=True)
    client = Client()
    client.force_login(reader)
    assert client.get("/admin/auth/group/").status_code == 200
    index = client.get("/admin/")
    assert index.status_code == 200 and b"/admin/auth/group/" in index.content
    assert client.get("/admin/auth/user/").status_code == 403  # no rule for users
    client.force_login(stranger)
    assert client.get("/admin/auth/group/").status_code == 403


def test_the_toolkit_decorator_no_longer_shadows_djangos_name():
    from toolkit_batteries.permission import decorators

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        decorate = decorators.permission_required("post.list")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert callable(decorate) and callable(decorators.require_permission("post.list"))
    # A star import beside Django's decorator keeps Django's name Django's.
    namespace: dict = {}
    exec(  # the two import statements under test, nothing else
        "from django.contrib.auth.decorators import permission_required\n"
        "from toolkit_batteries.permission.decorators import *\n",
        namespace,
    )
    assert namespace["permission_required"].__module__ == "django.contrib.auth.decorators"
    assert "require_permission" in namespace
