"""``resource_roles``: rules about the resource's group ("only the note's team reads it").

The hook (:mod:`.teams`) reads team membership from the test database; the same rules
are written for ``rbac`` and as a pycasbin policy, and both adapters decide alike.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import MODEL

pytestmark = pytest.mark.django_db

HOOK = "tests.batteries.permission.teams.team_roles"


@pytest.fixture(params=["rbac", "policyfile"])
def team_authorizer(request, open_permission, tmp_path):
    if request.param == "rbac":
        options = {"rules": [{"Role": "member", "Action": "note.read"}]}
    else:
        policy = tmp_path / "policy.csv"
        policy.write_text("p, member, note.read, allow,\n")
        options = {"model_path": MODEL, "policy_path": str(policy)}
    block = {"adapter": request.param, "options": {**options, "resource_roles": HOOK}}
    return open_permission(block)


def _member(name: str, team: str | None) -> User:
    user = User.objects.create(username=name)
    if team:
        user.groups.add(Group.objects.get_or_create(name=team)[0])
    return user


def test_only_members_of_the_resources_team_may_read_it(team_authorizer):
    ann, bob = _member("ann", "blue"), _member("bob", "red")
    blue, red = {"team": "blue"}, {"team": "red"}
    for _ in range(2):  # the second round is answered from the policyfile's cache
        assert team_authorizer.check(str(ann.pk), "note.read", blue) is True
        assert team_authorizer.check(str(ann.pk), "note.read", red) is False
        assert team_authorizer.check(str(bob.pk), "note.read", red) is True
        assert team_authorizer.check(str(bob.pk), "note.read", blue) is False
    assert team_authorizer.check(str(ann.pk), "note.read") is False  # no resource, no team


def test_a_resource_roles_path_that_imports_nothing_fails_the_open(open_permission):
    block = {"adapter": "rbac", "options": {"rules": [], "resource_roles": "nowhere.at_all"}}
    with pytest.raises(InvalidOptionsError) as caught:
        open_permission(block)
    assert caught.value.field == "resource_roles"
    assert "nowhere" not in str(caught.value)


def test_resource_roles_is_an_option_of_the_configuration():
    config = Config.load(
        {"permission": {"adapter": "rbac", "options": {}}},
        {"PERMISSION__DEFAULT__RESOURCE_ROLES": HOOK},
    )
    assert config.service("permission", "default").options.resource_roles == HOOK
