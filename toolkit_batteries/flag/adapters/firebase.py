"""Firebase Remote Config (adapter ``firebase``, canonical ``remotecfg``): server templates.

Wire format (the service's documented v1 REST API, the shape its server-side SDKs read):

* **Token.** The service-account key file (``remotecfg.service_account``: ``client_email``,
  ``private_key``, ``private_key_id``, ``token_uri``, ``project_id``) signs an RS256 JWT
  assertion (``iss`` the client email, ``scope`` :data:`SCOPE`, ``aud`` the token URI,
  one hour) that is POSTed form-encoded to ``token_uri`` with
  ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``; the answer's
  ``access_token`` is kept until a minute before ``expires_in``.
* **Template.** ``GET {endpoint}/v1/projects/{project_id}/namespaces/firebase-server/
  serverRemoteConfig`` with ``Authorization: Bearer <token>`` answers
  ``{"parameters": {name: {"defaultValue": {"value": "..."} | {"useInAppDefault": true},
  "conditionalValues": {condition: {...}}, "valueType": "BOOLEAN"|"NUMBER"|"STRING"|
  "JSON"}}, "conditions": [{"name": ..., "condition": {...}}], "version": {...}}``.
* **Evaluation** (in process, like the server SDKs): the first condition, in the
  template's order, that is true and that the parameter has a conditional value for picks
  the value, else the default value. Conditions: ``orCondition``/``andCondition``
  (``{"conditions": [...]}``), ``true``, ``false``, ``percent`` (``percentOperator``
  ``LESS_OR_EQUAL``/``GREATER_THAN``/``BETWEEN`` over the subject's bucket, see
  :func:`~toolkit_batteries.flag.base.bucket`, with ``seed``, ``microPercent`` or
  ``microPercentRange``) and ``customSignal`` (``STRING_*``, ``NUMERIC_*``,
  ``SEMANTIC_VERSION_*`` operators). The signals are ``randomization_id`` and ``subject``
  (the subject) and ``tenant`` (the tenant id).

The template is cached for ``remotecfg.ttl`` (default 60 s). The first evaluation after
it goes stale fetches again on the evaluating thread (one at a time; other threads keep
answering from the cached template, or wait for the very first fetch). When the fetch
fails the cached template stays in service (stale), a warning is logged, and the next
attempt waits another ``ttl``. With no template at all (the service was never reached),
evaluations answer their defaults and log an error; :meth:`FirebaseFlag.ping` raises
``ServiceUnavailableError``.

Outbound calls (token URI and endpoint) are https only unless ``remotecfg.allow_insecure``
and never reach a loopback, private or link-local address, judged on the resolved
addresses at connect time, unless ``remotecfg.allow_private``; redirects and environment
proxies are not followed. The private key and the access token never appear in a repr,
a log line or an error.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import quote

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import (
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.outbound.service_account import ServiceAccount, TokenCache
from toolkit_batteries.core.tracing import traced

from ..base import MICRO_PERCENT, MISSING, Flag, bucket, truthy
from ..options import DEFAULT_ENDPOINT

with MissingExtraError.guard("flag", "remotecfg", "remotecfg", "httpx, pyjwt"):
    import httpx
    import jwt as pyjwt

__all__ = ["MAX_TEMPLATE_BYTES", "SCOPE", "TEMPLATE_PATH", "FirebaseFlag"]

logger = logging.getLogger("toolkit.flag")

#: OAuth scope of the access token.
SCOPE = "https://www.googleapis.com/auth/firebase.remoteconfig"
#: Token URI used when the key file names none.
#: The template's path under the endpoint (``{project}`` is URL-quoted).
TEMPLATE_PATH = "/v1/projects/{project}/namespaces/firebase-server/serverRemoteConfig"
#: Largest template or token answer read.
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024
#: Deepest condition nesting evaluated (deeper is false), as the service's SDKs do.
MAX_DEPTH = 10
_NO_TOKEN = partial(ValueError, "the token endpoint answered without an access token")


class _Template:
    """A fetched template, compiled for evaluation."""

    __slots__ = ("conditions", "parameters", "version")

    def __init__(self, data: Any) -> None:
        if not isinstance(data, Mapping):
            raise ValueError("the template is not an object")
        parameters = data.get("parameters") or {}
        conditions = data.get("conditions") or []
        if not isinstance(parameters, Mapping) or not isinstance(conditions, list):
            raise ValueError("the template's parameters or conditions have the wrong shape")
        self.conditions: list[tuple[str, Mapping[str, Any]]] = []
        for entry in conditions:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                raise ValueError("a condition has no name")
            condition = entry.get("condition")
            self.conditions.append(
                (entry["name"], condition if isinstance(condition, Mapping) else {})
            )
        self.parameters: dict[str, Mapping[str, Any]] = {}
        for name, parameter in parameters.items():
            if not isinstance(parameter, Mapping):
                raise ValueError("a parameter is not an object")
            self.parameters[str(name)] = parameter
        version = data.get("version") or {}
        self.version = str(version.get("versionNumber", "")) if isinstance(version, Mapping) else ""


def _typed(value: Any, value_type: Any) -> Any:
    """Convert a served string by the parameter's ``valueType``."""
    text = "" if value is None else str(value)
    if value_type == "BOOLEAN":
        return truthy(text)
    if value_type == "NUMBER":
        try:
            number = float(text)
        except ValueError:
            return 0
        return int(number) if number.is_integer() and "." not in text else number
    if value_type == "JSON":
        try:
            return json.loads(text)
        except ValueError:
            return None
    return text


@traced("_fetch")
class FirebaseFlag(Flag):
    """Flags from the remote configuration service, cached for ``ttl`` and served stale."""

    adapter_name = "remotecfg"

    def __init__(
        self,
        *,
        account: ServiceAccount,
        project_id: str,
        endpoint: provider.Endpoint,
        timeout: float,
        ttl: float,
        instance: str = "default",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(instance=instance)
        self._tokens = TokenCache(account, SCOPE)
        self._project_id = project_id
        self._url = endpoint.url + TEMPLATE_PATH.format(project=quote(project_id, safe=""))
        self.ttl = ttl
        self.clock = clock
        self._client = provider.httpx_client(endpoint, timeout=timeout, max_connections=4)
        self._template: _Template | None = None
        self._fetched_at = 0.0
        self._fresh_until = float("-inf")
        self._refreshing = threading.Lock()
        self.stale = False

    @classmethod
    def open(cls, ctx: OpenContext) -> FirebaseFlag:
        options = ctx.options.remotecfg
        instance = ctx.instance
        account = ServiceAccount(
            options.service_account,
            service="flag",
            field="remotecfg.service_account",
            instance=instance,
        )
        project_id = account.project(options.project_id, field="remotecfg.project_id")
        # Both URLs on the provider base's rules; messages name remotecfg.allow_*.
        endpoint = provider.endpoint(
            options,
            service="flag",
            default=DEFAULT_ENDPOINT,
            instance=instance,
            field="remotecfg.endpoint",
        )
        account.token_uri = provider.endpoint(
            options,
            service="flag",
            default="",
            instance=instance,
            field="remotecfg.service_account",
            url=account.token_uri,
        ).url
        rules = {"service": "flag", "instance": instance}
        timeout = provider.positive(options.timeout, field="remotecfg.timeout", **rules)
        ttl = provider.positive(options.ttl, field="remotecfg.ttl", **rules)
        provider.warn_relaxed(ctx.logger, endpoint)
        return cls(
            account=account,
            project_id=project_id,
            endpoint=endpoint,
            timeout=timeout,
            ttl=ttl,
            instance=instance,
        )

    def close(self) -> None:
        self._client.close()

    # ------------------------------------------------------------------ fetching

    def _read(self, response: httpx.Response) -> Any:
        return provider.read_json(response, MAX_TEMPLATE_BYTES)

    def _exchange(self, token_uri: str, form: dict[str, str]) -> Any:
        with self._client.stream("POST", token_uri, data=form) as response:
            if response.status_code != 200:
                raise ValueError(f"the token endpoint answered HTTP {response.status_code}")
            return self._read(response)

    def _fetch(self) -> _Template:
        token = self._tokens.get(self._exchange, _NO_TOKEN)
        with self._client.stream(
            "GET", self._url, headers={"Authorization": f"Bearer {token}"}
        ) as response:
            if response.status_code in (401, 403):
                self._tokens.forget(token)
            if response.status_code != 200:
                raise ValueError(f"the service answered HTTP {response.status_code}")
            return _Template(self._read(response))

    def refresh(self) -> None:
        """Fetch the template now; raise ``ServiceUnavailableError`` if that fails.

        On failure the cached template (if any) stays in service.
        """
        with self._refreshing:
            self._refresh_locked(raise_errors=True)

    def _refresh_locked(self, *, raise_errors: bool) -> None:
        now = self.clock()
        try:
            template = self._fetch()
        except (
            httpx.HTTPError,
            OSError,
            ValueError,
            pyjwt.PyJWTError,
            OutboundBlockedError,
        ) as exc:
            reason = _reason(exc)
            self._fresh_until = now + self.ttl
            if self._template is not None:
                self.stale = True
                logger.warning(
                    "flag.%s: the remote configuration service is unreachable (%s); serving "
                    "the template fetched %.0f s ago",
                    self.instance,
                    reason,
                    now - self._fetched_at,
                )
            else:
                logger.error(
                    "flag.%s: the remote configuration service is unreachable (%s) and no "
                    "template was ever fetched; flags answer their defaults",
                    self.instance,
                    reason,
                )
            if raise_errors:
                raise ServiceUnavailableError("flag", reason, instance=self.instance) from None
            return
        if self.stale:
            logger.info("flag.%s: the remote configuration service is back", self.instance)
        self._template, self._fetched_at, self.stale = template, now, False
        self._fresh_until = now + self.ttl

    def _current(self) -> _Template | None:
        if self.clock() < self._fresh_until:
            return self._template
        # Stale: one thread fetches, the others answer from the cached template. With no
        # template yet there is nothing to answer from, so they wait for that fetch.
        if self._refreshing.acquire(blocking=self._template is None):
            try:
                if self.clock() >= self._fresh_until:
                    self._refresh_locked(raise_errors=False)
            finally:
                self._refreshing.release()
        return self._template

    def ping(self) -> None:
        """Raise ``ServiceUnavailableError`` unless a fresh template is (or gets) loaded."""
        if self._template is None or self.stale or self.clock() >= self._fresh_until:
            self.refresh()

    # ------------------------------------------------------------------ evaluation

    def names(self) -> list[str]:
        template = self._current()
        return sorted(template.parameters) if template is not None else []

    def _resolve(self, name: str, subject: str | None, tenant: str | None) -> Any:
        template = self._current()
        if template is None:
            return MISSING
        parameter = template.parameters.get(name)
        if parameter is None:
            return MISSING
        chosen = None
        conditional = parameter.get("conditionalValues") or {}
        if conditional:
            signals = {"randomization_id": subject, "subject": subject, "tenant": tenant}
            for condition_name, condition in template.conditions:
                if condition_name in conditional and _evaluate(condition, signals, 0):
                    chosen = conditional[condition_name]
                    break
        if chosen is None:
            chosen = parameter.get("defaultValue")
        if (
            not isinstance(chosen, Mapping)
            or chosen.get("useInAppDefault")
            or "value" not in chosen
        ):
            return MISSING
        return _typed(chosen["value"], parameter.get("valueType"))


def _reason(exc: BaseException) -> str:
    """Return a short cause for a log line: the kind of failure, never a URL, token or key."""
    if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError):
        return str(exc)
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, json.JSONDecodeError):
        return "the answer is not JSON"
    if isinstance(exc, pyjwt.PyJWTError):
        return "the service-account key cannot sign"
    return f"connection failed: {type(exc).__name__}"


# ---------------------------------------------------------------------- conditions


def _evaluate(condition: Mapping[str, Any], signals: Mapping[str, Any], depth: int) -> bool:
    if depth >= MAX_DEPTH:
        return False
    if (node := condition.get("orCondition")) is not None:
        return any(_evaluate(c, signals, depth + 1) for c in _children(node))
    if (node := condition.get("andCondition")) is not None:
        return all(_evaluate(c, signals, depth + 1) for c in _children(node))
    if condition.get("true") is not None:
        return True
    if condition.get("false") is not None:
        return False
    if (node := condition.get("percent")) is not None:
        return _percent(node, signals.get("randomization_id"))
    if (node := condition.get("customSignal")) is not None:
        return _custom_signal(node, signals)
    return False


def _children(node: Any) -> list[Mapping[str, Any]]:
    items = node.get("conditions") if isinstance(node, Mapping) else None
    return [c for c in items if isinstance(c, Mapping)] if isinstance(items, list) else []


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _percent(node: Any, subject: Any) -> bool:
    if not subject or not isinstance(node, Mapping):
        return False
    where = bucket(str(node.get("seed") or ""), str(subject))
    operator = node.get("percentOperator")
    micro = _int(node.get("microPercent"))
    if operator == "LESS_OR_EQUAL":
        return where <= micro
    if operator == "GREATER_THAN":
        return where > micro
    if operator == "BETWEEN":
        bounds = node.get("microPercentRange") or {}
        if not isinstance(bounds, Mapping):
            return False
        lower = _int(bounds.get("microPercentLowerBound"))
        upper = _int(bounds.get("microPercentUpperBound"))
        return lower < where <= min(upper, MICRO_PERCENT)
    return False


def _custom_signal(node: Any, signals: Mapping[str, Any]) -> bool:
    if not isinstance(node, Mapping):
        return False
    operator = node.get("customSignalOperator")
    key = node.get("customSignalKey")
    targets = node.get("targetCustomSignalValues")
    if not operator or not key or not isinstance(targets, list) or not targets:
        return False
    actual = signals.get(key)
    if actual is None or actual == "":
        return False
    text = str(actual)
    strings = [str(t) for t in targets]
    if operator == "STRING_CONTAINS":
        return any(t in text for t in strings)
    if operator == "STRING_DOES_NOT_CONTAIN":
        return not any(t in text for t in strings)
    if operator == "STRING_EXACTLY_MATCHES":
        return any(t.strip() == text.strip() for t in strings)
    if operator == "STRING_CONTAINS_REGEX":
        try:
            return any(re.search(t, text) for t in strings)
        except re.error:
            return False
    if operator.startswith("NUMERIC_"):
        try:
            order = _order(float(text), float(strings[0]))
        except ValueError:
            return False
        return _compare(operator.removeprefix("NUMERIC_"), order)
    if operator.startswith("SEMANTIC_VERSION_"):
        try:
            order = _order_versions(text, strings[0])
        except ValueError:
            return False
        return _compare(operator.removeprefix("SEMANTIC_VERSION_"), order)
    return False


def _order(actual: Any, target: Any) -> int:
    return -1 if actual < target else 1 if actual > target else 0


def _order_versions(actual: str, target: str) -> int:
    left = [int(part) for part in actual.split(".")]
    right = [int(part) for part in target.split(".")]
    if any(part < 0 for part in (*left, *right)):
        raise ValueError("negative version part")
    width = max(len(left), len(right))
    left += [0] * (width - len(left))
    right += [0] * (width - len(right))
    return _order(left, right)


def _compare(operator: str, order: int) -> bool:
    return {
        "LESS_THAN": order < 0,
        "LESS_EQUAL": order <= 0,
        "EQUAL": order == 0,
        "NOT_EQUAL": order != 0,
        "GREATER_THAN": order > 0,
        "GREATER_EQUAL": order >= 0,
    }.get(operator, False)
