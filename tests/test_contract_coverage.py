"""Every adapter of every battery runs its battery's contract: a new adapter cannot escape.

A battery's contract variants are ``VARIANTS`` (or ``ADAPTERS``) in
``tests/batteries/<service>/conftest.py`` or ``test_contract.py``; a variant names its
adapter before any ``-`` (``db-postgres`` is the ``db`` adapter on PostgreSQL). Each name in
the battery's adapter table must appear, unless :data:`NOT_YET` lists it with the reason;
an entry there that the contract does cover fails too, so the list only shrinks.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from toolkit_batteries.core.catalog import SERVICES as CATALOG

BATTERY_TESTS = Path(__file__).parent / "batteries"

#: (service, adapter) -> why its battery's contract does not run it yet. Empty: every
#: adapter runs its battery's contract; an entry added here must say why.
NOT_YET: dict[tuple[str, str], str] = {}


def contract_variants(service: str) -> set[str] | None:
    for module in ("conftest", "test_contract"):
        try:
            found = importlib.import_module(f"tests.batteries.{service}.{module}")
        except ModuleNotFoundError:
            continue
        variants = getattr(found, "VARIANTS", None) or getattr(found, "ADAPTERS", None)
        if variants:
            return {str(name).split("-")[0] for name in variants}
    return None


def adapter_table(service: str) -> dict[str, str]:
    return importlib.import_module(f"toolkit_batteries.{service}.adapters").ADAPTERS


SERVICES = sorted(name for name in CATALOG if (BATTERY_TESTS / name).is_dir())


@pytest.mark.parametrize("service", SERVICES)
def test_every_adapter_runs_the_contract(service):
    covered = contract_variants(service)
    table = set(adapter_table(service))
    excused = {adapter for (name, adapter) in NOT_YET if name == service}
    if covered is None:
        assert table <= excused, f"{service} has no contract variants; adapters {sorted(table)}"
        return
    assert table - covered <= excused, f"{service}: {sorted(table - covered - excused)} escape"
    assert not (excused & covered), f"{service}: {sorted(excused & covered)} are covered now"


def test_the_exceptions_name_real_adapters():
    for service, adapter in NOT_YET:
        assert adapter in adapter_table(service), (service, adapter)
