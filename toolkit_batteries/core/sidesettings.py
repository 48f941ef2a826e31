"""One decoder for the Django settings that live beside ``TOOLKIT``.

``TOOLKIT`` is keyed by service and instance; a few choices are not a service's option
(which dispatcher runs jobs, which revocation store ``auth`` shares, the ratelimit
middleware's URL rules, extra schedule modules, the app the schema compiles into). They
live in their own settings, and every one of them is declared once as a
:class:`SideSetting` and read by :func:`read_side_setting`, so they all behave like
``TOOLKIT`` does::

    JOBS = SideSetting("TOOLKIT_JOBS", JobsOptions, doc="which dispatcher runs jobs")
    conf = read_side_setting(JOBS)          # settings.TOOLKIT_JOBS, then the environment

The same rules for all of them:

* **strict**: an unknown key fails at once, naming the setting and the key, with a
  "did you mean"; a value of the wrong type names the key and what was expected;
* **layers**: the declared default < the Django setting < the environment;
* **environment**: a setting whose value is a mapping is overlaid one key at a time by
  ``<SETTING>__<KEY>`` (``TOOLKIT_JOBS__BROKER_URL``, nested keys joined by single
  underscores, matching ignoring case and underscores, as ``core/env.py`` does for
  ``TOOLKIT``); a setting whose value is a list or a single value is replaced whole by
  ``<SETTING>`` (lists as ``a,b,c`` or JSON); an empty variable is ignored;
* **redacted**: errors name the setting, the key and the variable, never the value.

The value types are the options types of :mod:`.options` (``str``, ``int``, ``bool``,
durations, ``tuple[str, ...]``, ``dict[str, str]``, an options class, a tuple of options
classes), decoded by the same parsers, so ``"5s"`` means the same thing everywhere.
Unlike ``TOOLKIT`` options, a ``False`` or ``0`` that is written is used as written
(``"autodiscover": False`` turns autodiscovery off); an empty string or list still means
"unset".
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .errors import ConfigurationError, InvalidOptionsError, UnknownFieldError, did_you_mean
from .options import (
    Where,
    build_options,
    decode_mapping,
    decode_text,
    env_paths,
    field_specs,
    normalize,
    option,
)

__all__ = ["DECLARED", "SideSetting", "SideSettingError", "read_side_setting"]

T = TypeVar("T")

#: Every side setting declared so far, by name (the docs test checks each is documented).
DECLARED: dict[str, SideSetting[Any]] = {}

#: Value kinds overlaid one entry at a time by ``<SETTING>__<KEY>``.
_ENTRIES = frozenset({"map", "map_list", "map_nested"})

_MISSING: Any = object()


class SideSettingError(ConfigurationError):
    """A setting beside ``TOOLKIT`` (or one of its variables) is wrong; never echoes values."""

    code = "invalid_configuration"

    def __init__(self, key: str, reason: str, *, setting: str, source: str = "") -> None:
        self.setting = setting
        self.key = key
        self.reason = reason
        self.source = source
        where = f" (from {source})" if source else ""
        if key:
            super().__init__(f'{setting}: "{key}" {reason}{where}')
        else:
            super().__init__(f"{setting}: {reason}{where}")


@dataclass(frozen=True, eq=False)
class SideSetting(Generic[T]):
    """The declaration of one setting beside ``TOOLKIT``: its name, value type and default.

    ``value_type`` is an options class (the setting is a mapping of its fields), or any type an
    option may have (``str``, ``tuple[str, ...]``, ``dict[str, str]``,
    ``tuple[RuleOptions, ...]``, ...). ``required`` names keys a mapping (or each mapping
    of a list) must give. ``shorthand`` turns a value that is not a mapping into the
    mapping it abbreviates (``"cache"`` for ``{"*": "cache"}``). ``error`` is the
    :class:`SideSettingError` subclass raised, so a battery keeps its own error type.
    """

    name: str
    value_type: type[T]
    default: Any = None
    doc: str = ""
    required: tuple[str, ...] = ()
    shorthand: Callable[[Any], Any] | None = None
    error: type[SideSettingError] = SideSettingError
    _holder: type = field(init=False, repr=False)

    def __post_init__(self) -> None:
        holder = dataclasses.make_dataclass(
            f"_{self.name}",
            [("value", self.value_type, option(self.default))],
            frozen=True,
            kw_only=True,
        )
        object.__setattr__(self, "_holder", holder)
        DECLARED[self.name] = self

    @property
    def kind(self) -> str:
        """The options kind of the value (``nested``, ``list``, ``map``, ``str``, ...)."""
        return field_specs(self._holder)["value"].kind

    @property
    def env_form(self) -> str:
        """How the environment sets it: ``<SETTING>__<KEY>`` or ``<SETTING>``."""
        return f"{self.name}__<KEY>" if self.kind in ("nested", *_ENTRIES) else self.name

    def fail(self, key: str, reason: str, *, source: str = "", at: str = "") -> SideSettingError:
        """Build this setting's error; ``at`` is a list index (``"[2]"``)."""
        return self.error(key, reason, setting=self.name + at, source=source)


def read_side_setting(
    spec: SideSetting[T], raw: Any = _MISSING, environ: Mapping[str, str] | None = None
) -> T:
    """Return ``spec``'s value: its default, then ``raw`` (``settings.<NAME>``), then env.

    ``raw`` defaults to the Django setting (absent when settings are not configured);
    ``environ`` to ``os.environ``. Raises ``spec.error`` naming the key, never the value.
    """
    if raw is _MISSING:
        raw = _from_django(spec.name)
    environ = os.environ if environ is None else environ
    if raw is not None and spec.shorthand is not None and not isinstance(raw, Mapping):
        raw = spec.shorthand(raw)
    value_spec = field_specs(spec._holder)["value"]
    kind = value_spec.kind
    if kind == "nested":
        return _read_options(spec, value_spec.nested, raw, environ)  # type: ignore[arg-type]
    where = Where(spec.name)
    tree: dict[str, Any] = {}
    if raw is not None:
        tree = _decode_whole(spec, raw, where, "")
    if kind in _ENTRIES:
        _overlay_entries(spec, tree, environ)
    else:
        text, variable = _variable(environ, spec.name)
        if text:
            tree = _decode_whole(spec, text, Where(spec.name, source=variable), variable)
    if "value" not in tree:
        return value_spec.default_value()  # type: ignore[no-any-return]
    if kind == "list_nested":
        nested = value_spec.nested
        return tuple(  # type: ignore[return-value]
            _decode(spec, _build_given, nested, item, where, at=f"[{index}]")
            for index, item in enumerate(tree["value"])
        )
    return _decode(spec, build_options, spec._holder, tree, where).value  # type: ignore[no-any-return]


def _decode_whole(spec: SideSetting[Any], raw: Any, where: Where, variable: str) -> dict[str, Any]:
    """Decode the whole value: the setting's, or the text of the ``<SETTING>`` variable."""
    value_spec = field_specs(spec._holder)["value"]
    kind = value_spec.kind
    if variable and kind != "list_nested":
        value = _decode(spec, decode_text, spec._holder, ("value",), raw, where, source=variable)
        return {"value": value}
    if variable:  # a list of dicts is given as JSON
        try:
            raw = json.loads(raw)
        except ValueError:
            raise spec.fail("", "must be JSON", source=variable) from None
    if kind in ("list", "list_nested") and not isinstance(raw, list | tuple):
        # a bare string in settings is a missing comma, not a one-item list
        raise spec.fail("", _expected(kind), source=variable)
    if kind == "list_nested":
        for index, item in enumerate(raw):
            _check_keys(spec, value_spec.nested, item, f"[{index}]", source=variable)  # type: ignore[arg-type]
    tree = _decode(spec, decode_mapping, spec._holder, {"value": raw}, where, source=variable)
    return tree  # type: ignore[no-any-return]


def _from_django(name: str) -> Any:
    from django.conf import settings

    if not settings.configured:
        return None
    return getattr(settings, name, None)


def _read_options(spec: SideSetting[T], cls: type, raw: Any, environ: Mapping[str, str]) -> T:
    """Decode a mapping setting against its options class, then overlay ``NAME__KEY``."""
    where = Where(spec.name)
    if raw is not None and not isinstance(raw, Mapping):
        raise spec.fail("", "must be a dict")
    given = dict(raw or {})
    _check_keys(spec, cls, given, "", required=False)
    tree = _decode(spec, decode_mapping, cls, given, where)
    prefix = spec.name.upper() + "__"
    paths = env_paths(cls)
    for variable in sorted(environ):
        text = environ[variable]
        if not variable.upper().startswith(prefix) or text == "":
            continue
        path = paths.get(normalize(variable[len(prefix) :]))
        if path is None:
            continue  # best effort, as for TOOLKIT: stray variables are ignored
        source = Where(spec.name, source=variable)
        value = _decode(spec, decode_text, cls, path, text, source, source=variable)
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    missing = [key for key in spec.required if key not in tree]
    if missing:
        raise spec.fail("", f'needs a "{missing[0]}"')
    return _decode(spec, _build_given, cls, tree, where)  # type: ignore[no-any-return]


#: Kinds whose zero value (``False``, ``0``) is a choice when written, not "unset".
_GIVEN_ZERO_KINDS = frozenset({"bool", "int", "float"})


def _build_given(cls: type[T], tree: Mapping[str, Any], where: Where) -> T:
    """Build ``cls``; a ``False`` or ``0`` that was given wins over a non-zero default.

    An empty string or list still means "unset", as in ``TOOLKIT``.
    """
    built = build_options(cls, tree, where)
    specs = field_specs(cls)
    given = {
        name: value
        for name, value in tree.items()
        if specs[name].kind in _GIVEN_ZERO_KINDS and value != getattr(built, name)
    }
    return dataclasses.replace(built, **given) if given else built  # type: ignore[type-var]


def _check_keys(
    spec: SideSetting[Any],
    cls: type,
    item: Any,
    at: str,
    *,
    required: bool = True,
    source: str = "",
) -> None:
    """Refuse unknown keys (all of them, with a "did you mean") and missing required ones."""
    if not isinstance(item, Mapping):
        raise spec.fail("", "must be a dict", at=at, source=source)
    known = field_specs(cls)
    folded = {normalize(name) for name in known}
    unknown = sorted(str(key) for key in item if normalize(str(key)) not in folded)
    if unknown:
        hint = did_you_mean(unknown[0], known)
        raise spec.fail("", f"unknown keys {', '.join(unknown)}{hint}", at=at, source=source)
    if required:
        given = {normalize(str(key)) for key in item}
        for key in spec.required:
            if normalize(key) not in given:
                raise spec.fail("", f'needs a "{key}"', at=at, source=source)


def _overlay_entries(
    spec: SideSetting[Any], tree: dict[str, Any], environ: Mapping[str, str]
) -> None:
    """Set one entry of a mapping-valued setting per ``<SETTING>__<KEY>`` variable."""
    prefix = spec.name.upper() + "__"
    entries = dict(tree.get("value") or {})
    for variable in sorted(environ):
        text = environ[variable]
        if not variable.upper().startswith(prefix) or text == "":
            continue
        key = variable[len(prefix) :].lower()
        stripped = text.strip()
        entry = stripped if stripped[:1] in ("{", "[") else json.dumps(text)
        where = Where(spec.name, source=variable)
        decoded = _decode(
            spec,
            decode_text,
            spec._holder,
            ("value",),
            f'{{"{key}": {entry}}}',
            where,
            source=variable,
        )
        entries[key] = decoded[key]
    if entries or "value" in tree:
        tree["value"] = entries


def _variable(environ: Mapping[str, str], name: str) -> tuple[str, str]:
    """Return the text and spelling of the ``<SETTING>`` variable, case-insensitively."""
    for variable in sorted(environ):
        if variable.upper() == name.upper():
            return environ[variable], variable
    return "", ""


def _expected(kind: str) -> str:
    return "must be a list of strings" if kind == "list" else "must be a list of dicts"


def _decode(
    spec: SideSetting[Any], run: Callable[..., Any], *args: Any, source: str = "", at: str = ""
) -> Any:
    """Call ``run(*args)``; turn the options errors into ``spec``'s error (value-free)."""
    try:
        return run(*args)
    except UnknownFieldError as exc:
        hint = ""
        suggested = str(exc).partition(' (did you mean "')[2].partition('"')[0]
        if suggested:
            hint = f' (did you mean "{_display(suggested)}"?)'
        reason = f"unknown keys {_display(exc.field)}{hint}"
        raise spec.fail("", reason, source=source, at=at) from None
    except InvalidOptionsError as exc:
        reason = exc.reason
        if reason.startswith("expected "):
            reason = "must be " + reason[len("expected ") :]
        raise spec.fail(_display(exc.field), reason, source=source or exc.source, at=at) from None


def _display(path: str) -> str:
    """Show a field path without the holder's root (``value[0].cost`` is ``[0].cost``)."""
    if path == "value":
        return ""
    if path.startswith("value"):
        return path[len("value") :].lstrip(".")
    return path
