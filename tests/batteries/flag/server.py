"""The Remote Config service the flag tests run against, and flag tables as templates.

:class:`FakeRemoteConfig` is :class:`tests.support.remote_config_server.RemoteConfigServer`,
the strict stand-in of Firebase Remote Config (its token grant and v1 REST API, Google's
error bodies, ETag / If-Match); the name stays for the fixtures that use it.
:func:`template_of` translates the contract's flag table into a server template.
"""

from __future__ import annotations

from typing import Any

from tests.support.remote_config_server import EMAIL, PROJECT, SCOPE, RemoteConfigServer

__all__ = ["EMAIL", "PROJECT", "SCOPE", "FakeRemoteConfig", "template_of"]

FakeRemoteConfig = RemoteConfigServer


# ---------------------------------------------------------------------- templates


def template_of(flags: dict[str, Any], version: str = "1") -> dict[str, Any]:
    """Translate the contract's flag table into a server template with the same meaning.

    Each flag is a value or ``{"value", "enabled", "rollout", "tenants"}`` as in the
    static file; tenant conditions come before rollout conditions, as precedence needs.
    """
    parameters: dict[str, Any] = {}
    conditions: list[dict[str, Any]] = []
    rollouts: list[dict[str, Any]] = []
    for name, spec in flags.items():
        if not isinstance(spec, dict):
            spec = {"value": spec}
        value = spec.get("value", True)
        kind = (
            "BOOLEAN"
            if isinstance(value, bool)
            else "NUMBER"
            if isinstance(value, (int, float))
            else "STRING"
        )
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        off = "false" if kind == "BOOLEAN" else None
        parameter: dict[str, Any] = {"valueType": kind, "conditionalValues": {}}
        enabled = spec.get("enabled", True)
        rollout = spec.get("rollout")
        if not enabled or rollout is not None:
            parameter["defaultValue"] = (
                {"value": off} if off is not None else {"useInAppDefault": True}
            )
        else:
            parameter["defaultValue"] = {"value": text}
        if enabled and rollout is not None:
            cname = f"rollout_{name}"
            upper = round(rollout * 1_000_000) - 1
            rollouts.append(
                {
                    "name": cname,
                    "condition": {
                        "orCondition": {
                            "conditions": [
                                {
                                    "andCondition": {
                                        "conditions": [
                                            {
                                                "percent": {
                                                    "percentOperator": "BETWEEN",
                                                    "seed": spec.get("seed", name),
                                                    "microPercentRange": {
                                                        "microPercentLowerBound": -1,
                                                        "microPercentUpperBound": upper,
                                                    },
                                                }
                                            }
                                        ]
                                    }
                                }
                            ]
                        }
                    },
                }
            )
            parameter["conditionalValues"][cname] = {"value": text}
        for tenant, override in (spec.get("tenants") or {}).items():
            cname = f"tenant_{name}_{tenant}"
            conditions.append(
                {
                    "name": cname,
                    "condition": {
                        "customSignal": {
                            "customSignalOperator": "STRING_EXACTLY_MATCHES",
                            "customSignalKey": "tenant",
                            "targetCustomSignalValues": [tenant],
                        }
                    },
                }
            )
            if override is True:
                parameter["conditionalValues"][cname] = {"value": text}
            elif override is False:
                parameter["conditionalValues"][cname] = (
                    {"value": off} if off is not None else {"useInAppDefault": True}
                )
            else:
                parameter["conditionalValues"][cname] = {"value": str(override["value"])}
        parameters[name] = parameter
    return {
        "parameters": parameters,
        "conditions": conditions + rollouts,
        "version": {"versionNumber": version},
    }
