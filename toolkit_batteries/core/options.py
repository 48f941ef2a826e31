"""Declared service options: types, defaults, secret flags, strict decoding.

Each service declares its options as one frozen dataclass built with :func:`option`::

    @options_class
    class MailerOptions:
        host: str = option("localhost", doc="SMTP hostname")
        port: int = option(25, min=1, max=65535, doc="SMTP port")
        password: str = option("", secret=True, doc="SMTP password")
        timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")

Supported field types: ``str``, ``int``, ``float``, ``bool``, :data:`Duration`
(``timedelta``; ``"5s"``, ``"250ms"``, ``"1h30m"`` or seconds), :class:`ByteSize` (``int``;
``"10MiB"`` or a count), ``tuple[str, ...]``, ``dict[str, str]``,
``dict[str, tuple[str, ...]]``, a nested options class, an optional nested class
(``RetryPolicy | None``: unset until a key is given), ``tuple[Nested, ...]`` and
``dict[str, Nested]``.

Decoding is strict about keys (an unknown key fails with a "did you mean") and lenient about
spelling: keys match ignoring case and underscores (``BaseDelay`` is ``base_delay``).
A zero value (``0``, ``""``, ``False``, empty) means unset: the declared default applies.
Errors name the service, instance and field, never the value.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from .errors import InvalidOptionsError, UnknownFieldError

__all__ = [
    "ByteSize",
    "Duration",
    "FieldSpec",
    "Where",
    "build_options",
    "decode_mapping",
    "decode_text",
    "env_paths",
    "field_specs",
    "format_duration",
    "is_zero",
    "normalize",
    "option",
    "options_class",
    "options_to_dict",
    "parse_byte_size",
    "parse_duration",
]

T = TypeVar("T")


class Duration(timedelta):
    """The annotation of duration options; their values are plain ``datetime.timedelta``.

    It exists for :meth:`seconds`, the one conversion of a duration option (or a caller's
    number of seconds) to float seconds that every battery uses instead of its own helper.
    No ``Duration`` instance is ever built, so the class-level ``seconds`` shadows nothing.
    """

    @staticmethod
    def seconds(  # type: ignore[override]
        value: timedelta | float | None, *, default: float = 0.0, field: str = "value"
    ) -> float:
        """Return ``value`` in seconds: a ``timedelta`` or a number; ``default`` when unset.

        ``None`` and zero are unset (the options' zero-value rule). A negative value is
        returned as is: callers that refuse one say so in their own error. Anything else
        (a string, a bool) is a programming error, reported naming ``field``.
        """
        if value is None:
            return default
        if isinstance(value, timedelta):
            total = value.total_seconds()
        elif isinstance(value, int | float) and not isinstance(value, bool):
            total = float(value)
        else:
            raise TypeError(f"{field} must be a timedelta or a number of seconds")
        return total if total != 0 else default


class ByteSize(int):
    """A count of bytes; decoding also accepts ``"10MiB"``, ``"64 MB"``, ``"512KiB"``."""


def options_class(cls: type[T]) -> type[T]:
    """Turn a class into a frozen, keyword-only options dataclass.

    Not slotted: option groups are shared by inheritance (a service re-declares a
    group's field to change its default), which slots would forbid.
    """
    built = dataclass(frozen=True, kw_only=True, repr=False)(cls)
    if "__repr__" not in cls.__dict__:
        built.__repr__ = _options_repr  # type: ignore[method-assign]
    return built


def _options_repr(self: Any) -> str:
    """Render like the dataclass repr, minus what could leak.

    Secret fields are left out and every string (a DSN, a URL, a map value) goes through
    the redactor, so ``repr(DBOptions)`` in a traceback or a log line never shows a password.
    """
    parts = [
        f"{f.name}={_masked(getattr(self, f.name))!r}" for f in dataclasses.fields(self) if f.repr
    ]
    return f"{type(self).__qualname__}({', '.join(parts)})"


def _masked(value: Any) -> Any:
    """Return ``value`` with credentials masked, keeping its shape (nested options as is)."""
    from .redaction import REDACTED, looks_secret, redact_string  # local: it imports us

    if isinstance(value, str):
        return redact_string(value)
    if isinstance(value, Mapping):
        return {
            key: REDACTED if looks_secret(str(key)) and item not in ("", None) else _masked(item)
            for key, item in value.items()
        }
    if isinstance(value, tuple | list):
        return type(value)(_masked(item) for item in value)
    return value


def option(
    default: Any = None,
    *,
    secret: bool = False,
    doc: str = "",
    min: float | None = None,
    max: float | None = None,
    choices: tuple[str, ...] | None = None,
    checks: Any = (),
) -> Any:
    """Declare one option with its default, documentation and validation.

    ``secret`` keeps the value out of every display path; ``min``/``max`` bound numbers;
    ``choices`` lists the accepted strings (the empty string always means unset).
    ``checks`` holds shape rules (:mod:`~toolkit_batteries.core.option_kinds`: a duration's
    bounds, a URL's schemes, a SQL target, ...) that ``manage.py check`` reports under the
    rule's own ID; unlike ``min``/``max`` they do not fail loading.
    Mutable defaults (lists, dicts) are copied per instance.
    """
    rules = checks if isinstance(checks, tuple) else (checks,)
    metadata = {
        "secret": secret,
        "doc": doc,
        "min": min,
        "max": max,
        "choices": choices,
        "checks": rules,
    }
    shown = not secret  # a secret never reaches repr(), so printing options cannot leak it
    if isinstance(default, list):
        frozen = tuple(default)
        return dataclasses.field(default=frozen, metadata=metadata, repr=shown)
    if isinstance(default, dict):
        snapshot = dict(default)
        return dataclasses.field(
            default_factory=lambda: dict(snapshot), metadata=metadata, repr=shown
        )
    return dataclasses.field(default=default, metadata=metadata, repr=shown)


# --------------------------------------------------------------------------- parsing


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}


def parse_duration(value: Any) -> timedelta:
    """Parse ``"5s"``, ``"250ms"``, ``"1h30m"``, ``"-1s"``, or a number of seconds."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError("expected a duration")
    if isinstance(value, int | float):
        return timedelta(seconds=value)
    if not isinstance(value, str):
        raise ValueError("expected a duration")
    text = value.strip().replace(" ", "")
    if text in ("", "0"):
        return timedelta(0)
    sign = 1.0
    if text[0] in "+-":
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    try:
        return timedelta(seconds=sign * float(text))
    except ValueError:
        pass
    position, seconds = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != position:
            break
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if position != len(text) or position == 0:
        raise ValueError('expected a duration such as "5s", "250ms" or "1h"')
    return timedelta(seconds=sign * seconds)


def format_duration(value: timedelta) -> str:
    """Render a duration the way it is written in configuration (``1h30m``, ``250ms``)."""
    total = value.total_seconds()
    if total == 0:
        return "0s"
    sign = "-" if total < 0 else ""
    total = abs(total)
    if total < 1:
        return f"{sign}{round(total * 1000, 3):g}ms"
    parts = []
    for unit, size in (("h", 3600), ("m", 60)):
        if total >= size:
            count = int(total // size)
            parts.append(f"{count}{unit}")
            total -= count * size
    if total or not parts:
        parts.append(f"{round(total, 6):g}s")
    return sign + "".join(parts)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "ki": 1024,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mi": 1024**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gi": 1024**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "ti": 1024**4,
    "tib": 1024**4,
}


def parse_byte_size(value: Any) -> ByteSize:
    """Parse a byte count: an integer, or ``"64MiB"`` / ``"10 MB"`` / ``"512KiB"``."""
    if isinstance(value, bool):
        raise ValueError("expected a size in bytes")
    if isinstance(value, int):
        return ByteSize(value)
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match and match.group(2).lower() in _SIZE_UNITS:
            return ByteSize(int(float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]))
    raise ValueError('expected a size in bytes such as 1048576 or "10MiB"')


_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off", ""})


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError("expected a boolean (true/false)")


def _parse_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip(), 10)
        except ValueError:
            pass
    raise ValueError("expected an integer")


def _parse_float(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ValueError("expected a number")


def _parse_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError("expected a string")


_SCALAR_PARSERS: dict[str, Callable[[Any], Any]] = {
    "str": _parse_str,
    "int": _parse_int,
    "float": _parse_float,
    "bool": _parse_bool,
    "duration": parse_duration,
    "bytes": parse_byte_size,
}


# --------------------------------------------------------------------------- field specs


def normalize(name: str) -> str:
    """Fold a key for matching: lower case, without underscores, dashes or dots."""
    return name.replace("_", "").replace("-", "").replace(".", "").lower()


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How one declared option is decoded, validated and displayed."""

    name: str
    #: A scalar kind, or list, map, map_list, nested, optional_nested, list_nested, map_nested.
    kind: str
    default: Any
    default_factory: Callable[[], Any] | None
    secret: bool
    doc: str
    min: float | None
    max: float | None
    choices: tuple[str, ...] | None
    nested: type | None = None
    #: Shape rules reported by ``manage.py check`` (see :mod:`.option_kinds`).
    checks: tuple[Any, ...] = ()

    def default_value(self) -> Any:
        """Return a fresh default for this field."""
        if self.default_factory is not None:
            return self.default_factory()
        if self.kind == "nested" and self.default is None and self.nested is not None:
            return self.nested()
        return self.default


_SCALAR_TYPES: dict[Any, str] = {
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    timedelta: "duration",
    Duration: "duration",
    ByteSize: "bytes",
}

_SPECS: dict[type, dict[str, FieldSpec]] = {}
_NORMALIZED: dict[type, dict[str, FieldSpec]] = {}
_ENV_PATHS: dict[type, dict[str, tuple[str, ...]]] = {}


def _kind_of(hint: Any) -> tuple[str, type | None]:
    if hint in _SCALAR_TYPES:
        return _SCALAR_TYPES[hint], None
    if dataclasses.is_dataclass(hint):
        return "nested", hint
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1 and dataclasses.is_dataclass(members[0]):
            return "optional_nested", members[0]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        if args[0] is str:
            return "list", None
        if dataclasses.is_dataclass(args[0]):
            return "list_nested", args[0]
    if origin is dict and len(args) == 2 and args[0] is str:
        value = args[1]
        if value is str:
            return "map", None
        if typing.get_origin(value) is tuple and typing.get_args(value) == (str, Ellipsis):
            return "map_list", None
        if dataclasses.is_dataclass(value):
            return "map_nested", value
    raise TypeError(f"unsupported option type {hint!r}")


def field_specs(cls: type) -> dict[str, FieldSpec]:
    """Return the field specs of an options class, computed once per class."""
    specs = _SPECS.get(cls)
    if specs is not None:
        return specs
    hints = typing.get_type_hints(cls)
    specs = {}
    for f in dataclasses.fields(cls):
        kind, nested = _kind_of(hints[f.name])
        meta = f.metadata
        specs[f.name] = FieldSpec(
            name=f.name,
            kind=kind,
            default=None if f.default is dataclasses.MISSING else f.default,
            default_factory=(
                None if f.default_factory is dataclasses.MISSING else f.default_factory
            ),
            secret=bool(meta.get("secret", False)),
            doc=meta.get("doc", ""),
            min=meta.get("min"),
            max=meta.get("max"),
            choices=meta.get("choices"),
            nested=nested,
            checks=tuple(meta.get("checks", ())),
        )
    _SPECS[cls] = specs
    _NORMALIZED[cls] = {normalize(name): spec for name, spec in specs.items()}
    return specs


def _normalized(cls: type) -> dict[str, FieldSpec]:
    if cls not in _NORMALIZED:
        field_specs(cls)
    return _NORMALIZED[cls]


def env_paths(cls: type) -> dict[str, tuple[str, ...]]:
    """Map every settable leaf's folded dotted path (``jwtsecret``) to its field path.

    Nested classes are flattened one key at a time (``jwt.secret``, ``kvserver.addr``,
    ``breaker.enabled``); list- and map-valued nested types are set whole, by JSON.
    Two leaves that fold to the same name are a declaration bug and fail loudly.
    """
    cached = _ENV_PATHS.get(cls)
    if cached is not None:
        return cached
    paths: dict[str, tuple[str, ...]] = {}

    def walk(klass: type, prefix: tuple[str, ...]) -> None:
        for name, spec in field_specs(klass).items():
            path = (*prefix, name)
            if spec.kind in ("nested", "optional_nested") and spec.nested is not None:
                walk(spec.nested, path)
                continue
            key = normalize("".join(path))
            if key in paths:
                raise TypeError(f"{cls.__name__}: options {paths[key]} and {path} collide")
            paths[key] = path

    walk(cls, ())
    _ENV_PATHS[cls] = paths
    return paths


# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True, slots=True)
class Where:
    """Where a value came from, for error messages: service, instance and source."""

    service: str
    instance: str = "default"
    source: str = ""

    def invalid(self, field: str, reason: str) -> InvalidOptionsError:
        """Build the error for ``field``; the value is deliberately not a parameter."""
        return InvalidOptionsError(
            self.service, field, reason, instance=self.instance, source=self.source
        )


def decode_mapping(cls: type, data: Any, where: Where, prefix: str = "") -> dict[str, Any]:
    """Strictly decode settings ``data`` against ``cls`` into a tree of typed values.

    The tree holds only the keys that were given; :func:`build_options` fills the rest
    from defaults. Unknown keys raise :class:`UnknownFieldError` with a "did you mean".
    """
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise where.invalid(prefix.rstrip(".") or "options", "expected a mapping of options")
    by_key = _normalized(cls)
    tree: dict[str, Any] = {}
    for raw_key, value in data.items():
        spec = by_key.get(normalize(str(raw_key)))
        if spec is None:
            known = [prefix + name for name in field_specs(cls)]
            raise UnknownFieldError(
                where.service, prefix + str(raw_key), known, instance=where.instance
            )
        tree[spec.name] = _decode_value(spec, value, where, prefix + spec.name)
    return tree


def _decode_value(spec: FieldSpec, value: Any, where: Where, path: str) -> Any:
    try:
        if spec.kind in _SCALAR_PARSERS:
            return _SCALAR_PARSERS[spec.kind](value)
        if spec.kind in ("nested", "optional_nested"):
            return decode_mapping(spec.nested, value, where, path + ".")  # type: ignore[arg-type]
        if spec.kind == "list":
            return _as_str_tuple(value)
        if spec.kind == "map":
            return {str(k): _parse_str(v) for k, v in _as_mapping(value).items()}
        if spec.kind == "map_list":
            return {str(k): _as_str_tuple(v) for k, v in _as_mapping(value).items()}
        if spec.kind == "list_nested":
            if not isinstance(value, list | tuple):
                raise ValueError("expected a list")
            return tuple(
                decode_mapping(spec.nested, item, where, f"{path}[{i}].")  # type: ignore[arg-type]
                for i, item in enumerate(value)
            )
        if spec.kind == "map_nested":
            return {
                str(k): decode_mapping(spec.nested, v, where, f"{path}.{k}.")  # type: ignore[arg-type]
                for k, v in _as_mapping(value).items()
            }
    except InvalidOptionsError:  # already names the nested field
        raise
    except ValueError as exc:  # parsers raise ValueError with a value-free reason
        raise where.invalid(path, str(exc)) from None
    raise where.invalid(path, "has an unsupported type")  # pragma: no cover - guarded by _kind_of


def _as_str_tuple(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(item.strip() for item in value.split(",") if item.strip())
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError("expected a list of strings")


def _as_mapping(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    raise ValueError("expected a mapping")


def decode_text(cls: type, path: tuple[str, ...], text: str, where: Where) -> Any:
    """Decode one environment string for the leaf at ``path`` of ``cls``.

    Scalars parse as themselves; lists take ``a,b,c`` or a JSON array; maps and lists of
    objects take JSON. Errors name the field and the expected kind, never the text.
    """
    klass = cls
    for part in path[:-1]:
        klass = field_specs(klass)[part].nested  # type: ignore[assignment]
    spec = field_specs(klass)[path[-1]]
    dotted = ".".join(path)
    if spec.kind in _SCALAR_PARSERS or (spec.kind == "list" and not text.lstrip().startswith("[")):
        return _decode_value(spec, text, where, dotted)
    try:
        value = json.loads(text)
    except ValueError:
        if spec.kind == "map" and "=" in text:
            value = dict(item.split("=", 1) for item in text.split(",") if "=" in item)
        else:
            raise where.invalid(dotted, "expected JSON") from None
    return _decode_value(spec, value, where, dotted)


# --------------------------------------------------------------------------- building


def is_zero(value: Any) -> bool:
    """Tell whether ``value`` is a zero value, which means "unset" (the default applies)."""
    if value is None or value is False:
        return True
    if isinstance(value, timedelta):
        return value == timedelta(0)
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, str | tuple | list | dict):
        return len(value) == 0
    return False


def build_options(cls: type[T], tree: Mapping[str, Any], where: Where) -> T:
    """Build an options instance from a decoded tree; zero values take the default.

    Then check every declared range and choice, so an out-of-range value fails here with
    an :class:`InvalidOptionsError` that names the field and the bounds.
    """
    return _build(cls, tree, where, "")


def _build(cls: type[T], tree: Mapping[str, Any], where: Where, prefix: str) -> T:
    kwargs: dict[str, Any] = {}
    for name, spec in field_specs(cls).items():
        given = tree.get(name)
        path = prefix + name
        if spec.kind == "nested":
            kwargs[name] = _build(spec.nested, given or {}, where, path + ".")  # type: ignore[arg-type]
        elif spec.kind == "optional_nested":
            kwargs[name] = _build(spec.nested, given, where, path + ".") if given else None  # type: ignore[arg-type]
        elif spec.kind == "list_nested":
            kwargs[name] = tuple(
                _build(spec.nested, item, where, f"{path}[{i}].")  # type: ignore[arg-type]
                for i, item in enumerate(given or ())
            )
        elif spec.kind == "map_nested":
            kwargs[name] = {
                key: _build(spec.nested, item, where, f"{path}.{key}.")  # type: ignore[arg-type]
                for key, item in (given or {}).items()
            }
        else:
            value = spec.default_value() if is_zero(given) else given
            _check_bounds(spec, value, where, path)
            kwargs[name] = value
    return cls(**kwargs)


def _check_bounds(spec: FieldSpec, value: Any, where: Where, path: str) -> None:
    if spec.choices and value not in ("", *spec.choices):
        allowed = ", ".join(spec.choices)
        raise where.invalid(path, f"must be one of: {allowed}")
    if spec.min is None and spec.max is None:
        return
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if not isinstance(value, int | float):
        return
    if (spec.min is not None and value < spec.min) or (spec.max is not None and value > spec.max):
        if spec.min is None:
            raise where.invalid(path, f"must be at most {_bound(spec.max)}")
        if spec.max is None:
            raise where.invalid(path, f"must be at least {_bound(spec.min)}")
        raise where.invalid(path, f"must be between {_bound(spec.min)} and {_bound(spec.max)}")


def _bound(value: float) -> str:
    """Render a range bound as written (``1048576``, ``0.5``), never in exponent form."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# --------------------------------------------------------------------------- display


def options_to_dict(options: Any, *, redact_secrets: bool = True) -> dict[str, Any]:
    """Render an options instance as plain data (durations as ``"5s"``), secrets masked."""
    from .redaction import REDACTED, redact_string  # local: redaction imports this module

    def render(spec: FieldSpec | None, value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {
                name: render(s, getattr(value, name))
                for name, s in field_specs(type(value)).items()
            }
        if spec is not None and spec.secret and redact_secrets and not is_zero(value):
            if isinstance(value, dict):
                return {key: REDACTED for key in value}
            return REDACTED
        if isinstance(value, timedelta):
            return format_duration(value)
        if isinstance(value, tuple):
            return [render(None, item) for item in value]
        if isinstance(value, dict):
            return {key: render(None, item) for key, item in value.items()}
        if isinstance(value, str) and redact_secrets:
            return redact_string(value)
        return value

    return render(None, options)
