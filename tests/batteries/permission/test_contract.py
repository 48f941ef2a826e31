"""The contract every permission adapter keeps.

:class:`TestEveryAuthorizer` runs on every adapter of the battery (``noop`` included): the
authorizer interface, argument checks, subjects from auth claims, the ``roles`` map, and
the decision table, which is all-allow on ``noop`` and the shared policy's elsewhere.
:class:`TestPermissionContract` runs on the adapters that enforce a policy: the same policy
(``conftest.RULES`` for ``rbac``; ``model.conf`` + ``policy.csv`` for ``policyfile``) must
give the same decision on every check below.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from toolkit_batteries.auth import Claims, TokenUser
from toolkit_batteries.core.errors import ToolkitError
from toolkit_batteries.permission import Authorizer, PermissionDeniedError, Subject

from .conftest import ADAPTERS, permission_block

ALICE = "u-alice"
BOB = "u-bob"


def post(author: object, **extra: object) -> dict[str, object]:
    return {"id": "p1", "author_id": author, **extra}


class TestPermissionContract:
    def test_is_an_authorizer_of_the_permission_service(self, authorizer, adapter):
        assert isinstance(authorizer, Authorizer)
        assert authorizer.adapter_name == adapter
        assert "permission.default" in repr(authorizer)

    def test_a_matching_allow_rule_allows(self, authorizer):
        assert authorizer.check(Subject(ALICE, ("member",)), "post.read") is True

    def test_no_matching_rule_denies(self, authorizer):
        member = Subject(ALICE, ("member",))
        assert authorizer.check(member, "post.edit", post(ALICE)) is False
        assert authorizer.check(member, "post.destroy-everything") is False
        assert authorizer.check(Subject(ALICE), "post.read") is False

    def test_role_wildcard_matches_every_subject(self, authorizer):
        assert authorizer.check(Subject(ALICE), "post.list") is True
        assert authorizer.check(Subject(ALICE, ("ghost",)), "post.list") is True
        assert authorizer.check(ALICE, "post.list") is True

    def test_action_wildcard_matches_every_action(self, authorizer):
        admin = Subject(ALICE, ("admin",))
        for action in ("post.read", "post.delete", "billing.refund", "anything at all"):
            assert authorizer.check(admin, action) is True, action

    def test_unknown_role_gets_nothing(self, authorizer):
        ghost = Subject(ALICE, ("ghost", "Admin", "admin "))
        assert authorizer.check(ghost, "post.read") is False
        assert authorizer.check(ghost, "post.edit", post(ALICE)) is False

    def test_deny_wins_over_allow(self, authorizer):
        # an action wildcard deny beats an action wildcard allow
        assert authorizer.check(Subject(ALICE, ("admin", "suspended")), "post.read") is False
        assert authorizer.check(Subject(ALICE, ("suspended", "admin")), "post.list") is False
        # a named deny beats a named allow, whatever the role order
        for roles in (("editor", "moderator"), ("moderator", "editor")):
            assert authorizer.check(Subject(ALICE, roles), "post.delete") is False
        assert authorizer.check(Subject(ALICE, ("moderator",)), "post.delete") is True

    def test_owned_only_allows_the_owner_only(self, authorizer):
        editor = Subject(ALICE, ("editor",))
        assert authorizer.check(editor, "post.edit", post(ALICE)) is True
        assert authorizer.check(editor, "post.edit", post(BOB)) is False

    def test_owned_only_without_an_owner_does_not_match(self, authorizer):
        editor = Subject(ALICE, ("editor",))
        assert authorizer.check(editor, "post.edit") is False
        assert authorizer.check(editor, "post.edit", post(None)) is False
        assert authorizer.check(editor, "post.edit", {"id": "p1"}) is False
        assert authorizer.check(editor, "post.edit", SimpleNamespace(id="p1")) is False

    def test_owner_attribute_of_an_object_compared_as_text(self, authorizer):
        editor = Subject("42", ("editor",))
        assert authorizer.check(editor, "post.edit", SimpleNamespace(author_id=42)) is True
        assert authorizer.check(editor, "post.edit", SimpleNamespace(author_id=43)) is False
        assert authorizer.check(editor, "post.edit", SimpleNamespace(author_id="42")) is True

    def test_owned_only_deny_refuses_the_owner_only(self, authorizer):
        editor = Subject(ALICE, ("editor",))
        assert authorizer.check(editor, "post.publish", post(ALICE)) is False
        assert authorizer.check(editor, "post.publish", post(BOB)) is True
        assert authorizer.check(editor, "post.publish") is True

    def test_holds_means_allowed_on_some_object(self, authorizer):
        """The model-level question: without a resource, or on an object the caller owns."""
        assert authorizer.holds(Subject("u1", ("editor",)), "post.edit") is True  # own posts
        assert authorizer.holds(Subject("u1", ("editor",)), "post.publish") is True  # others'
        assert authorizer.holds(Subject("u1", ("member",)), "post.edit") is False
        assert authorizer.holds(Subject("u1", ("admin", "suspended")), "post.read") is False
        assert authorizer.holds(Subject("u1", ("editor",)), "post.delete") is False  # deny

    def test_repeated_checks_keep_their_answer(self, authorizer):
        editor = Subject(ALICE, ("editor",))
        for _ in range(3):
            assert authorizer.check(editor, "post.edit", post(ALICE)) is True
            assert authorizer.check(editor, "post.edit", post(BOB)) is False
            assert authorizer.check(Subject(BOB, ("editor",)), "post.edit", post(BOB)) is True

    def test_subject_from_auth_claims_and_token_user(self, authorizer):
        claims = Claims(
            subject=ALICE,
            roles=("editor",),
            expires_at=datetime.now(UTC) + timedelta(minutes=5),
        )
        assert authorizer.check(claims, "post.edit", post(ALICE)) is True
        assert authorizer.check(TokenUser(claims), "post.edit", post(ALICE)) is True
        assert authorizer.check(TokenUser(claims), "post.edit", post(BOB)) is False

    def test_require_raises_permission_denied(self, authorizer):
        authorizer.require(Subject(ALICE, ("member",)), "post.read")
        with pytest.raises(PermissionDeniedError) as caught:
            authorizer.require(Subject(ALICE, ("member", "secret-role")), "post.delete")
        assert isinstance(caught.value, ToolkitError)
        assert caught.value.code == "permission_denied"
        assert "post.delete" in str(caught.value)
        assert "secret-role" not in str(caught.value) and ALICE not in str(caught.value)

    def test_bad_arguments_are_refused(self, authorizer):
        with pytest.raises(ValueError, match="action"):
            authorizer.check(Subject(ALICE, ("admin",)), "")
        with pytest.raises(ValueError, match="subject"):
            authorizer.check(Subject("", ("admin",)), "post.read")
        with pytest.raises(TypeError):
            authorizer.check(object(), "post.read")

    def test_roles_map_limits_asserted_roles(self, adapter, open_permission):
        authorizer = open_permission(
            permission_block(adapter, roles={ALICE: ["admin", "member"], BOB: ["member"]})
        )
        assert authorizer.check(Subject(ALICE, ("admin",)), "post.delete") is True
        # bob asserts admin, but may only be granted member
        assert authorizer.check(Subject(BOB, ("admin",)), "post.delete") is False
        assert authorizer.check(Subject(BOB, ("admin", "member")), "post.read") is True
        # a subject without an entry holds no role at all (role "*" rules still match)
        assert authorizer.check(Subject("u-carol", ("admin",)), "post.read") is False
        assert authorizer.check(Subject("u-carol", ("admin",)), "post.list") is True

    def test_roles_map_never_adds_roles(self, adapter, open_permission):
        authorizer = open_permission(permission_block(adapter, roles={ALICE: ["admin"]}))
        assert authorizer.check(Subject(ALICE), "post.read") is False
        assert authorizer.check(Subject(ALICE, ("admin",)), "post.read") is True

    def test_both_adapters_give_the_same_decision_table(self, open_permission):
        subjects = [
            Subject(ALICE, roles)
            for roles in (
                (),
                ("member",),
                ("editor",),
                ("moderator",),
                ("admin",),
                ("editor", "moderator"),
                ("admin", "suspended"),
                ("ghost",),
            )
        ]
        actions = ("post.read", "post.list", "post.edit", "post.publish", "post.delete", "x")
        resources = (None, post(ALICE), post(BOB))
        tables = []
        for name in ("rbac", "policyfile"):
            authorizer = open_permission(permission_block(name))
            tables.append(
                [authorizer.check(s, a, r) for s in subjects for a in actions for r in resources]
            )
        assert tables[0] == tables[1]
        assert any(tables[0]) and not all(tables[0])


SUBJECTS = [
    Subject(ALICE, roles)
    for roles in ((), ("member",), ("editor",), ("admin", "suspended"), ("ghost",))
]
ACTIONS = ("post.read", "post.edit", "post.publish", "post.delete", "x")
RESOURCES = (None, post(ALICE), post(BOB))


@pytest.fixture(params=ADAPTERS)
def every(request, open_permission):
    """``(adapter, authorizer)`` on every adapter of the battery's table."""
    return request.param, open_permission(permission_block(request.param))


class TestEveryAuthorizer:
    def test_is_an_authorizer_named_after_its_adapter(self, every):
        adapter, authorizer = every
        assert isinstance(authorizer, Authorizer)
        assert authorizer.adapter_name == adapter
        assert "permission.default" in repr(authorizer)

    def test_bad_arguments_are_refused(self, every):
        _, authorizer = every
        with pytest.raises(ValueError, match="action"):
            authorizer.check(Subject(ALICE, ("admin",)), "")
        with pytest.raises(ValueError, match="subject"):
            authorizer.check(Subject("", ("admin",)), "post.read")
        with pytest.raises(TypeError):
            authorizer.check(object(), "post.read")

    def test_the_decision_table(self, every, open_permission):
        """``noop`` allows every check; a policy adapter decides as the shared policy says."""
        adapter, authorizer = every
        table = [authorizer.check(s, a, r) for s in SUBJECTS for a in ACTIONS for r in RESOURCES]
        if adapter == "noop":
            assert all(table)
            assert all(authorizer.holds(s, a) for s in SUBJECTS for a in ACTIONS)
        else:
            reference = open_permission(permission_block("rbac"))
            expected = [
                reference.check(s, a, r) for s in SUBJECTS for a in ACTIONS for r in RESOURCES
            ]
            assert table == expected and any(table) and not all(table)

    def test_require_agrees_with_check(self, every):
        _, authorizer = every
        for subject in SUBJECTS:
            for action in ACTIONS:
                if authorizer.check(subject, action):
                    authorizer.require(subject, action)
                else:
                    with pytest.raises(PermissionDeniedError):
                        authorizer.require(subject, action)

    def test_subject_from_auth_claims_and_token_user(self, every):
        adapter, authorizer = every
        claims = Claims(
            subject=ALICE, roles=("editor",), expires_at=datetime.now(UTC) + timedelta(minutes=5)
        )
        assert authorizer.check(claims, "post.edit", post(ALICE)) is True
        assert authorizer.check(TokenUser(claims), "post.edit", post(BOB)) is (adapter == "noop")
