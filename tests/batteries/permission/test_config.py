"""Configuration errors: they name the service, the instance and the field, never a value."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    UnknownAdapterError,
    UnknownFieldError,
)
from toolkit_batteries.permission import Subject

from .conftest import MODEL, POLICY, permission_block


def load(block):
    return Config.load({"permission": block}, {})


def test_owned_only_without_owned_attr_compares_the_routes_owner_field(open_permission):
    """``OwnedAttr`` is optional: the owner field the checked route declares is compared."""
    rule = {"Role": "editor", "Action": "post.edit", "OwnedOnly": True}
    authorizer = open_permission({"adapter": "rbac", "options": {"rules": [rule]}})
    editor = Subject("u1", ("editor",))
    post = {"owner": "u1", "author_id": "u2"}
    assert authorizer.check(editor, "post.edit", post, owner_field="owner") is True
    assert authorizer.check(editor, "post.edit", post, owner_field="author_id") is False
    assert authorizer.check(editor, "post.edit", post) is False  # no route names an owner


def test_the_routes_owner_field_wins_over_owned_attr(adapter, open_permission):
    """Where the schema and a rule name different owners, the schema's field is compared."""
    authorizer = open_permission(permission_block(adapter))
    editor = Subject("u1", ("editor",))
    post = {"owner": "u1", "author_id": "u2"}
    assert authorizer.check(editor, "post.edit", post) is False  # the rule: author_id
    assert authorizer.check(editor, "post.edit", post, owner_field="owner") is True
    assert authorizer.check(editor, "post.edit", post, owner_field="author_id") is False


@pytest.mark.parametrize("missing", ["Role", "Action"])
def test_a_rule_needs_a_role_and_an_action(missing):
    rule = {"Role": "editor", "Action": "post.read"}
    rule[missing] = ""
    with pytest.raises(InvalidOptionsError) as caught:
        load({"adapter": "rbac", "options": {"rules": [rule]}})
    assert caught.value.field == f"rules[0].{missing.lower()}"
    assert missing in str(caught.value)


def test_effect_must_be_allow_or_deny_and_the_value_is_not_echoed():
    rule = {"Role": "editor", "Action": "post.read", "Effect": "maybe-later"}
    with pytest.raises(InvalidOptionsError) as caught:
        load({"adapter": "rbac", "options": {"rules": [rule]}})
    assert "effect" in caught.value.field.lower()
    assert "maybe-later" not in str(caught.value)


def test_empty_effect_means_allow(open_permission):
    rule = {"Role": "editor", "Action": "post.read", "Effect": ""}
    authorizer = open_permission({"adapter": "rbac", "options": {"rules": [rule]}})
    assert authorizer.check(Subject("u1", ("editor",)), "post.read") is True


def test_unknown_rule_key_fails_with_a_suggestion():
    with pytest.raises(UnknownFieldError) as caught:
        load({"adapter": "rbac", "options": {"rules": [{"Role": "a", "Acton": "b"}]}})
    assert 'did you mean "rules[0].action"' in str(caught.value)


def test_rule_keys_in_snake_case_are_accepted(open_permission):
    rule = {"role": "editor", "action": "post.edit", "owned_only": True, "owned_attr": "by"}
    authorizer = open_permission({"adapter": "rbac", "options": {"rules": [rule]}})
    assert authorizer.check(Subject("u1", ("editor",)), "post.edit", {"by": "u1"}) is True


@pytest.mark.parametrize("field", ["model_path", "policy_path"])
def test_policyfile_needs_both_files(field, open_permission, tmp_path):
    options = {"model_path": MODEL, "policy_path": POLICY}
    options[field] = ""
    with pytest.raises(InvalidOptionsError) as caught:
        open_permission({"adapter": "policyfile", "options": options})
    assert caught.value.field == field
    options[field] = str(tmp_path / "secret-name-nowhere.conf")
    with pytest.raises(InvalidOptionsError) as caught:
        open_permission({"adapter": "policyfile", "options": options})
    assert caught.value.field == field
    assert "secret-name-nowhere" not in str(caught.value)


def test_policyfile_refuses_a_file_that_is_not_a_model(open_permission, tmp_path):
    bogus = tmp_path / "model.conf"
    bogus.write_text("this is not a model\n")
    with pytest.raises(InvalidOptionsError) as caught:
        open_permission(
            {"adapter": "policyfile", "options": {"model_path": str(bogus), "policy_path": POLICY}}
        )
    assert caught.value.field == "model_path"
    assert str(tmp_path) not in str(caught.value)


def test_policyfile_refuses_a_request_of_other_than_three_fields(open_permission, tmp_path):
    model = tmp_path / "model.conf"
    model.write_text(
        Path(MODEL)
        .read_text()
        .replace("r = sub, obj, act", "r = sub, act")
        .replace("owns(r.sub, r.obj, p.owner)", "true")
    )
    with pytest.raises(InvalidOptionsError, match="three fields") as caught:
        open_permission(
            {"adapter": "policyfile", "options": {"model_path": str(model), "policy_path": POLICY}}
        )
    assert caught.value.field == "model_path"


def test_policyfile_refuses_a_matcher_that_cannot_run(open_permission, tmp_path):
    model = tmp_path / "model.conf"
    model.write_text(Path(MODEL).read_text().replace("hasRole(", "noSuchFunction("))
    with pytest.raises(InvalidOptionsError, match="matcher") as caught:
        open_permission(
            {"adapter": "policyfile", "options": {"model_path": str(model), "policy_path": POLICY}}
        )
    assert caught.value.field == "model_path"


def test_vendor_alias_and_unknown_adapter(open_permission):
    authorizer = open_permission(
        {"adapter": "casbin", "options": {"model_path": MODEL, "policy_path": POLICY}}
    )
    assert authorizer.adapter_name == "policyfile"
    with pytest.raises(UnknownAdapterError):
        open_permission({"adapter": "rbca"})


def test_noop_is_the_default_and_allows_every_identified_subject(open_permission):
    authorizer = open_permission({})
    assert authorizer.adapter_name == "noop"
    assert authorizer.check("u1", "anything") is True
    assert authorizer.check(Subject("u1", ("ghost",)), "post.delete", {"author_id": "x"})
    with pytest.raises(ValueError):
        authorizer.check("", "anything")


def test_environment_selects_the_adapter(open_permission):
    authorizer = open_permission(
        {},
        {
            "PERMISSION__DEFAULT__ADAPTER": "policyfile",
            "PERMISSION__DEFAULT__MODEL_PATH": MODEL,
            "PERMISSION__DEFAULT__POLICY_PATH": POLICY,
        },
    )
    assert authorizer.adapter_name == "policyfile"
    assert authorizer.check(Subject("u1", ("member",)), "post.read") is True
