"""The flag file: parsing and the compiled rules the ``static`` adapter evaluates.

A file holds one table, ``flags``, mapping each flag name to a value or to a rule::

    {"flags": {
        "maintenance": false,
        "new_checkout": {"rollout": 25, "tenants": {"acme": true, "globex": {"rollout": 50}}},
        "theme": {"value": "dark", "tenants": {"acme": {"value": "light"}}}
    }}

The same content in TOML (``.toml``) reads ``[flags] maintenance = false`` and
``[flags.new_checkout] rollout = 25``. Rule keys: ``enabled`` (default ``true``),
``value`` (default ``true``), ``rollout`` (percent of subjects, 0-100, default all),
``seed`` (the rollout's hash seed, default the flag name), ``description``, and
``tenants`` (tenant id -> overrides of ``enabled``/``value``/``rollout``/``seed``, merged
over the flag's own keys; a bare ``true`` turns the flag on for every subject of the
tenant, a bare ``false`` off, any other bare value sets ``value``).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import MICRO_PERCENT, OFF, bucket, truthy

__all__ = ["FlagFileError", "Rule", "compile_flags", "parse_flag_file"]

_RULE_KEYS = frozenset({"enabled", "value", "rollout", "seed", "description", "tenants"})
_OVERRIDE_KEYS = frozenset({"enabled", "value", "rollout", "seed"})
_SCALARS = (bool, str, int, float)


class FlagFileError(ValueError):
    """The file does not parse or breaks a rule; the message names flags and keys only."""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Rule:
    """One flag (or one tenant's override of it), compiled for evaluation.

    Compared by identity and shown without its value, as a plain object would be.
    """

    enabled: bool
    value: Any
    #: Micro-percent bound; ``-1`` means every subject.
    rollout: int
    seed: str
    tenants: dict[str, Rule] | None = None
    #: ``enabled()``'s answer when served: precomputed (``False`` when disabled).
    on: bool = field(init=False)
    #: What a subject is appended to before hashing (see ``base.bucket``).
    prefix: str = field(init=False)

    def __post_init__(self) -> None:
        self.on = self.enabled and truthy(self.value)
        self.prefix = f"{self.seed}." if self.seed else ""

    def resolve(self, subject: str | None) -> Any:
        """Return the value served to ``subject``, or ``OFF``."""
        if not self.enabled:
            return OFF
        if self.rollout >= 0 and (subject is None or bucket(self.seed, subject) >= self.rollout):
            return OFF
        return self.value


def parse_flag_file(data: bytes, suffix: str) -> dict[str, Rule]:
    """Parse a flag file (TOML for ``.toml``, else JSON) into compiled rules."""
    try:
        if suffix.lower() == ".toml":
            tree: Any = tomllib.loads(data.decode("utf-8"))
        else:
            tree = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        kind = "TOML" if suffix.lower() == ".toml" else "JSON"
        raise FlagFileError(f"is not valid {kind}") from None
    return compile_flags(tree)


def compile_flags(tree: Any) -> dict[str, Rule]:
    """Compile the ``{"flags": {...}}`` document into one rule per flag."""
    if not isinstance(tree, Mapping):
        raise FlagFileError('must hold a table with a "flags" key')
    unknown = sorted(set(tree) - {"flags"})
    if unknown:
        raise FlagFileError(f'has an unknown top-level key "{unknown[0]}" (expected "flags")')
    flags = tree.get("flags", {})
    if not isinstance(flags, Mapping):
        raise FlagFileError('"flags" must be a table of flag names')
    return {str(name): _rule(str(name), spec) for name, spec in flags.items()}


def _rule(name: str, spec: Any) -> Rule:
    if isinstance(spec, _SCALARS):
        return Rule(enabled=True, value=spec, rollout=-1, seed=name)
    if not isinstance(spec, Mapping):
        raise FlagFileError(f'flag "{name}" must be a value or a table')
    _known(spec, _RULE_KEYS, f'flag "{name}"')
    base = _fields(spec, {"enabled": True, "value": True, "rollout": -1, "seed": name}, name)
    if "description" in spec and not isinstance(spec["description"], str):
        raise FlagFileError(f'flag "{name}": "description" must be a string')
    tenants = spec.get("tenants", {})
    if not isinstance(tenants, Mapping):
        raise FlagFileError(f'flag "{name}": "tenants" must be a table of tenant ids')
    compiled: dict[str, Rule] = {}
    for tenant, override in tenants.items():
        where = f'flag "{name}", tenant "{tenant}"'
        if isinstance(override, bool):
            override = {"enabled": True, "rollout": 100} if override else {"enabled": False}
        elif isinstance(override, _SCALARS):
            override = {"value": override}
        elif not isinstance(override, Mapping):
            raise FlagFileError(f"{where} must be a value or a table")
        _known(override, _OVERRIDE_KEYS, where)
        compiled[str(tenant)] = Rule(**_fields(override, base, name))
    return Rule(**base, tenants=compiled or None)


def _known(spec: Mapping[str, Any], keys: frozenset[str], where: str) -> None:
    unknown = sorted(set(spec) - keys)
    if unknown:
        raise FlagFileError(f'{where}: unknown key "{unknown[0]}"')


def _fields(spec: Mapping[str, Any], inherited: dict[str, Any], name: str) -> dict[str, Any]:
    fields = dict(inherited)
    if "enabled" in spec:
        if not isinstance(spec["enabled"], bool):
            raise FlagFileError(f'flag "{name}": "enabled" must be true or false')
        fields["enabled"] = spec["enabled"]
    if "value" in spec:
        if not isinstance(spec["value"], (*_SCALARS, list, Mapping)):
            raise FlagFileError(f'flag "{name}": "value" has an unsupported type')
        fields["value"] = spec["value"]
    if "rollout" in spec:
        rollout = spec["rollout"]
        if isinstance(rollout, bool) or not isinstance(rollout, (int, float)):
            raise FlagFileError(f'flag "{name}": "rollout" must be a number from 0 to 100')
        if not 0 <= rollout <= 100:
            raise FlagFileError(f'flag "{name}": "rollout" must be a number from 0 to 100')
        micro = round(rollout * (MICRO_PERCENT // 100))
        fields["rollout"] = -1 if micro >= MICRO_PERCENT else micro
    if "seed" in spec:
        if not isinstance(spec["seed"], str):
            raise FlagFileError(f'flag "{name}": "seed" must be a string')
        fields["seed"] = spec["seed"]
    return fields
