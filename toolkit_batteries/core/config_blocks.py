"""Reading the shape of ``settings.TOOLKIT`` into per-instance envelopes, not yet decoded.

:mod:`.config` resolves three layers (defaults < settings < environment); this module is
the first step of the settings layer: it splits the top-level mapping into service blocks
and the ``plugins`` block, splits each block into its instances' ``{adapter, options}``
envelopes, and gathers every shape error (unknown service, unknown envelope key, a name
given twice) in :class:`_Problems` so ``Config.validate`` can list them all. It kept
``config.py`` under 700 lines and is a seam a reader can check alone: nothing here decodes
an option value, so nothing here can leak one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import catalog
from .errors import (
    ConfigurationError,
    DispatcherRequiredError,
    UnknownFieldError,
    UnknownServiceError,
    did_you_mean,
)
from .options import normalize

DEFAULT_INSTANCE = "default"
PLUGINS_KEY = "plugins"
#: The only keys of an ``{adapter, options}`` envelope.
ENVELOPE_KEYS = ("adapter", "options")

_SERVICES_BY_FOLDED: dict[str, str] = {normalize(name): name for name in catalog.SERVICES}
_SERVICE_NAMES: tuple[str, ...] = tuple(sorted(catalog.SERVICES))
_TOP_LEVEL_NAMES: tuple[str, ...] = (*_SERVICE_NAMES, PLUGINS_KEY)


# --------------------------------------------------------------------------- settings shapes


@dataclass(frozen=True, slots=True)
class _Block:
    """One instance's settings envelope, not yet decoded."""

    name: str
    adapter: Any = None
    options: Any = None
    has_options: bool = False


class _Problems:
    """Errors gathered while resolving, each with the (name, instance) it sorts by."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[tuple[str, str], int, ConfigurationError]] = []

    def add(self, name: str, instance: str, error: ConfigurationError) -> None:
        self.items.append(((name, instance), len(self.items), error))

    def sorted(self) -> list[ConfigurationError]:
        return [error for _key, _seq, error in sorted(self.items, key=lambda i: i[:2])]


def _is_envelope(block: Mapping[str, Any]) -> bool:
    """Tell an ``{adapter, options}`` envelope from a map of instances."""
    return any(normalize(str(key)) in ENVELOPE_KEYS for key in block)


def _envelope(block: Any, instance: str, fail: Any) -> _Block:
    """Check an envelope's keys; ``fail(key_or_None, reason)`` builds the error to raise."""
    if block is None:
        return _Block(instance)
    if not isinstance(block, Mapping):
        raise fail(None, 'expected an {"adapter", "options"} mapping')
    found: dict[str, Any] = {}
    for key, value in block.items():
        folded = normalize(str(key))
        if folded not in ENVELOPE_KEYS:
            raise fail(str(key), "")
        if folded in found:
            raise fail(None, f'"{folded}" is given twice')
        found[folded] = value
    return _Block(instance, found.get("adapter"), found.get("options"), "options" in found)


def _instance_blocks(block: Any, fail_for: Any) -> list[_Block]:
    """Split a service or plugin block into its instances' envelopes.

    A block with an ``adapter`` or ``options`` key is the ``default`` instance; any other
    mapping maps instance names to envelopes; an empty block is the ``default`` instance.
    """
    if block is None or (isinstance(block, Mapping) and not block):
        return [_Block(DEFAULT_INSTANCE)]
    if not isinstance(block, Mapping):
        raise fail_for(DEFAULT_INSTANCE)(None, "expected a mapping")
    if _is_envelope(block):
        return [_envelope(block, DEFAULT_INSTANCE, fail_for(DEFAULT_INSTANCE))]
    blocks: dict[str, _Block] = {}
    for name, envelope in block.items():
        if not isinstance(name, str) or not name.strip():
            raise fail_for("")(None, "instance names must be non-empty strings")
        folded = normalize(name)
        if folded == DEFAULT_INSTANCE:
            name = DEFAULT_INSTANCE
        if folded in blocks:
            raise fail_for(name)(None, f'instance "{name}" is given twice')
        blocks[folded] = _envelope(envelope, name, fail_for(name))
    return list(blocks.values())


def _split_top_level(
    settings: Mapping[str, Any], problems: _Problems
) -> tuple[dict[str, Any], Any]:
    blocks: dict[str, Any] = {}
    plugins: Any = None
    seen: dict[str, str] = {}
    for key, block in settings.items():
        text = str(key)
        folded = normalize(text)
        if folded == PLUGINS_KEY:
            name = PLUGINS_KEY
        else:
            name = _SERVICES_BY_FOLDED.get(folded, "")
            if not name:
                problems.add(text, "", UnknownServiceError(text, _TOP_LEVEL_NAMES))
                continue
        if name in seen:
            problems.add(
                name, "", ConfigurationError(f'TOOLKIT: "{name}" is given twice ("{seen[name]}")')
            )
            continue
        seen[name] = text
        if name == PLUGINS_KEY:
            plugins = block
        else:
            blocks[name] = block
    return blocks, plugins


def _plugin_error(name: str, instance: str, message: str) -> ConfigurationError:
    return ConfigurationError(
        f"plugins.{name}.{instance}: {message}" if instance else f"plugins.{name}: {message}"
    )


def _split_plugins(raw: Any, problems: _Problems) -> dict[str, list[_Block]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.add(
            PLUGINS_KEY,
            "",
            ConfigurationError("TOOLKIT: plugins must map plugin names to {adapter, options}"),
        )
        return {}
    plugins: dict[str, list[_Block]] = {}
    folded_names: dict[str, str] = {}
    for name, block in raw.items():
        label = f"{PLUGINS_KEY}.{name}"
        if not isinstance(name, str) or not name.strip():
            problems.add(
                PLUGINS_KEY,
                "",
                ConfigurationError("TOOLKIT: plugin names must be non-empty strings"),
            )
            continue
        folded = normalize(name)
        if folded in _SERVICES_BY_FOLDED:
            service = _SERVICES_BY_FOLDED[folded]
            problems.add(
                label,
                "",
                _plugin_error(
                    name,
                    "",
                    f'"{name}" is a built-in service; configure it as TOOLKIT["{service}"]',
                ),
            )
            continue
        if folded in folded_names:
            problems.add(
                label, "", _plugin_error(name, "", f'is given twice ("{folded_names[folded]}")')
            )
            continue
        folded_names[folded] = name

        def fail_for(instance: str, name: str = name) -> Any:
            def fail(key: str | None, reason: str) -> ConfigurationError:
                if key is not None:
                    reason = (
                        f'unknown key "{key}"{did_you_mean(key, ENVELOPE_KEYS)}; '
                        'a plugin block holds only "adapter" and "options"'
                    )
                return _plugin_error(name, instance, reason)

            return fail

        try:
            plugins[name] = _instance_blocks(block, fail_for)
        except ConfigurationError as exc:
            problems.add(label, "", exc)
    return plugins


def _service_blocks(service: str, block: Any, problems: _Problems) -> dict[str, _Block] | None:
    """Return the folded instance name -> envelope of a service, ``default`` included."""

    def fail_for(instance: str) -> Any:
        def fail(key: str | None, reason: str) -> ConfigurationError:
            if key is not None:
                return UnknownFieldError(service, key, ENVELOPE_KEYS, instance=instance)
            return ConfigurationError(
                f"{service}.{instance}: {reason}" if instance else f"{service}: {reason}"
            )

        return fail

    try:
        blocks = _instance_blocks(block, fail_for)
    except ConfigurationError as exc:
        problems.add(service, "", exc)
        return None
    result: dict[str, _Block] = {}
    for item in blocks:
        if service == "scheduler" and item.has_options:
            problems.add(service, item.name, DispatcherRequiredError(item.name))
            continue
        result[normalize(item.name)] = item
    if DEFAULT_INSTANCE not in result:
        result[DEFAULT_INSTANCE] = _Block(DEFAULT_INSTANCE)
    return result
