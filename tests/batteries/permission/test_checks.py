"""System checks of the permission battery: IDs, and messages that never carry a value."""

from __future__ import annotations

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config

from .conftest import MODEL, POLICY, RULES


def ids(block, environ=None):
    found = service_checks("permission", Config.load({"permission": block}, environ or {}))
    return [message.id for message in found], found


def test_shared_policy_on_both_adapters_is_clean():
    assert ids({"adapter": "rbac", "options": {"rules": RULES}})[0] == []
    assert (
        ids({"adapter": "policyfile", "options": {"model_path": MODEL, "policy_path": POLICY}})[0]
        == []
    )
    assert ids({})[0] == []


def test_e002_policyfile_without_readable_files(tmp_path):
    found, messages = ids({"adapter": "policyfile"})
    assert found == ["toolkit_permission.E002", "toolkit_permission.E002"]
    hidden = str(tmp_path / "hidden-name.conf")
    found, messages = ids(
        {"adapter": "policyfile", "options": {"model_path": hidden, "policy_path": POLICY}}
    )
    assert found == ["toolkit_permission.E002"]
    assert "model_path" in messages[0].msg and "hidden-name" not in messages[0].msg


def test_e003_policyfile_files_that_do_not_load(tmp_path):
    bogus = tmp_path / "bogus-model.conf"
    bogus.write_text("not a model\n")
    found, messages = ids(
        {"adapter": "policyfile", "options": {"model_path": str(bogus), "policy_path": POLICY}}
    )
    assert found == ["toolkit_permission.E003"]
    assert "bogus-model" not in messages[0].msg


def test_w001_options_the_adapter_ignores():
    found, messages = ids(
        {
            "adapter": "policyfile",
            "options": {"model_path": MODEL, "policy_path": POLICY, "rules": RULES},
        }
    )
    assert found == ["toolkit_permission.W001"]
    assert '"rules"' in messages[0].msg
    found, _ = ids({"adapter": "rbac", "options": {"rules": RULES, "model_path": MODEL}})
    assert found == ["toolkit_permission.W001"]
    found, _ = ids({"adapter": "noop", "options": {"rules": RULES, "policy_path": POLICY}})
    assert found == ["toolkit_permission.W001", "toolkit_permission.W001"]


def test_w002_rbac_without_rules():
    found, messages = ids({"adapter": "rbac"})
    assert found == ["toolkit_permission.W002"]
    assert "denied" in messages[0].msg


def test_a_resource_roles_path_that_imports_nothing_is_e005():
    config = Config.load(
        {
            "permission": {
                "adapter": "rbac",
                "options": {
                    "rules": [{"Role": "a", "Action": "b"}],
                    "resource_roles": "no.such.hook",
                },
            }
        },
        {},
    )
    found = [m for m in service_checks("permission", config) if m.id == "toolkit_permission.E005"]
    assert len(found) == 1 and "no.such" not in found[0].msg
