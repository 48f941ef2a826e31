"""What only the ``policyfile`` adapter has: reload, the decision cache and its limits."""

from __future__ import annotations

import shutil

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.permission import Subject

from .conftest import MODEL, POLICY


@pytest.fixture
def files(tmp_path):
    model, policy = tmp_path / "model.conf", tmp_path / "policy.csv"
    shutil.copy(MODEL, model)
    shutil.copy(POLICY, policy)
    return model, policy


def open_files(open_permission, model, policy):
    return open_permission(
        {"adapter": "policyfile", "options": {"model_path": str(model), "policy_path": str(policy)}}
    )


def test_reload_reads_the_policy_again_and_forgets_cached_decisions(open_permission, files):
    model, policy = files
    authorizer = open_files(open_permission, model, policy)
    member = Subject("u1", ("member",))
    assert authorizer.check(member, "post.read") is True
    policy.write_text(policy.read_text() + "p, member, post.read, deny,\n")
    assert authorizer.check(member, "post.read") is True  # not reloaded yet
    authorizer.reload()
    assert authorizer.check(member, "post.read") is False


def test_a_failed_reload_keeps_the_old_policy(open_permission, files):
    model, policy = files
    authorizer = open_files(open_permission, model, policy)
    model.write_text("garbage\n")
    with pytest.raises(InvalidOptionsError):
        authorizer.reload()
    assert authorizer.check(Subject("u1", ("member",)), "post.read") is True


def test_a_matcher_reading_the_resource_directly_is_never_cached(open_permission, files):
    model, policy = files
    model.write_text(
        model.read_text().replace(
            "owns(r.sub, r.obj, p.owner)", 'owns(r.sub, r.obj, p.owner) && r.obj["kind"] != "x"'
        )
    )
    authorizer = open_files(open_permission, model, policy)
    admin = Subject("u1", ("admin",))
    assert authorizer.check(admin, "post.read", {"kind": "y"}) is True
    assert authorizer.check(admin, "post.read", {"kind": "x"}) is False
    assert authorizer.check(admin, "post.read", {"kind": "y"}) is True


def test_owner_attributes_come_from_the_policy(open_permission, files):
    model, policy = files
    policy.write_text(policy.read_text() + "p, reviewer, post.review, allow, reviewer_id\n")
    authorizer = open_files(open_permission, model, policy)
    reviewer = Subject("u1", ("reviewer",))
    both = {"author_id": "u2", "reviewer_id": "u1"}
    assert authorizer.check(reviewer, "post.review", both) is True
    assert authorizer.check(reviewer, "post.review", {**both, "reviewer_id": "u3"}) is False
    assert authorizer.check(reviewer, "post.review", both) is True


def test_standard_casbin_rbac_with_grouping_lines(open_permission, tmp_path):
    model = tmp_path / "model.conf"
    model.write_text(
        "[request_definition]\nr = sub, obj, act\n"
        "[policy_definition]\np = sub, act\n"
        "[role_definition]\ng = _, _\n"
        "[policy_effect]\ne = some(where (p.eft == allow))\n"
        "[matchers]\nm = g(r.sub.id, p.sub) && r.act == p.act\n"
    )
    policy = tmp_path / "policy.csv"
    policy.write_text("p, writers, post.edit\ng, u1, writers\n")
    authorizer = open_files(open_permission, model, policy)
    assert authorizer.check("u1", "post.edit") is True
    assert authorizer.check("u2", "post.edit") is False
