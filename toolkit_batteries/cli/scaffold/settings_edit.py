"""``toolkit add``'s edits of a project's ``settings.py``: append-only and idempotent.

Two places change, both located with :mod:`ast` and edited as text (comments and layout
stay as the user wrote them):

* ``INSTALLED_APPS`` gains ``"toolkit_batteries.<battery>"`` when the battery is a Django
  app and is not listed yet (placed after the last battery already listed);
* the ``TOOLKIT = {...}`` literal gains ``"<battery>": {"adapter": "<canonical>"},``, or
  for a name outside the catalog a ``"plugins"`` stanza with a comment on wiring it.

A battery configured with the same adapter is left alone ("already configured"); another
adapter is a conflict naming the current one unless ``force`` replaces the adapter string
(its options are kept). Blocks the literal does not hold (``TOOLKIT["auth"] = ...`` in an
``if``) are reported, never rewritten. Every result is re-parsed before it is returned.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..output import CliError
from .pyedit import Source, find_assign, insert_lines, parse_python

__all__ = ["AddResult", "BatteryEdit", "add_battery", "plan_add"]

_PLUGINS = "plugins"


@dataclass
class AddResult:
    """What adding one battery does to the settings text."""

    text: str
    #: Lines added or changed, as shown to the user (``+ "cache": {...},``).
    edits: list[str] = field(default_factory=list)
    #: The adapter configured before, when the battery already had a block.
    current: str | None = None
    #: Whether the battery was configured already (with this adapter, or instances).
    configured: bool = False

    @property
    def changed(self) -> bool:
        """Return whether the text changed."""
        return bool(self.edits)


@dataclass(frozen=True, slots=True)
class _Wanted:
    """The block ``plan_add`` was asked for, as its settings-block steps all read it."""

    key: str
    adapter: str
    #: Spellings meaning ``adapter``; ``None`` when no adapter was asked for (keep any).
    same: set[str] | None
    force: bool
    plugin: bool


def _str(value: str) -> str:
    from toolkit_codegen.pysource import py_str

    return py_str(value)


def plan_add(
    text: str,
    shown: str,
    *,
    key: str,
    adapter: str,
    app: str | None,
    same: set[str],
    force: bool,
    plugin: bool = False,
    explicit: bool = True,
) -> AddResult:
    """Return the settings text with ``key`` configured to ``adapter``.

    ``same`` holds every spelling that means ``adapter`` (its aliases), so a block written
    as ``"redis"`` counts as ``kvserver``. ``app`` is the INSTALLED_APPS entry to ensure
    (``None`` for batteries that are not apps and for plugins). When the adapter was not
    asked for (``explicit`` false), any adapter already configured is kept.
    """
    result = AddResult(text)
    if app is not None:
        _ensure_app(result, shown, app)
    _ensure_block(result, shown, _Wanted(key, adapter, same if explicit else None, force, plugin))
    parse_python(result.text, shown)
    return result


# ---------------------------------------------------------------------- INSTALLED_APPS


def _app_strings(tree: ast.Module) -> list[ast.Constant]:
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        value: ast.AST | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "INSTALLED_APPS":
                found += [a for a in node.args if isinstance(a, ast.Constant)]
            continue
        if value is None or not any(
            isinstance(t, ast.Name) and t.id == "INSTALLED_APPS" for t in targets
        ):
            continue
        found += [
            n for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    return found


def _ensure_app(result: AddResult, shown: str, app: str) -> None:
    tree = parse_python(result.text, shown)
    listed = [c for c in _app_strings(tree) if isinstance(c.value, str)]
    if any(c.value == app or c.value.startswith(f"{app}.apps.") for c in listed):
        return
    apps = find_assign(tree, "INSTALLED_APPS")
    if not isinstance(apps, ast.List | ast.Tuple):
        raise CliError(
            f"{shown}: no INSTALLED_APPS = [...] list to add {app!r} to; nothing was written",
            hint=f'add "{app}" to INSTALLED_APPS by hand',
        )
    from toolkit_batteries.core.catalog import SERVICES

    batteries = [
        e
        for e in apps.elts
        if isinstance(e, ast.Constant)
        and isinstance(e.value, str)
        and e.value.removeprefix("toolkit_batteries.") in SERVICES
    ]
    line = f"{_str(app)},"
    result.text = insert_lines(
        result.text, apps, [line], after=batteries[-1] if batteries else None
    )
    result.edits.append(f"+ {line}  (INSTALLED_APPS)")


# ---------------------------------------------------------------------- TOOLKIT


def _dict_get(node: ast.Dict, key: str) -> tuple[ast.expr, ast.expr] | None:
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and k.value == key:
            return k, v
    return None


def _subscript_line(tree: ast.Module, key: str) -> tuple[int, ast.expr] | None:
    """Find ``TOOLKIT["key"] = value`` anywhere (an ``if DEVELOPMENT:`` block, say)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and target.value.id == "TOOLKIT"
                and isinstance(target.slice, ast.Constant)
                and target.slice.value == key
            ):
                return node.lineno, node.value
    return None


def _adapter_of(block: ast.expr) -> tuple[str | None, ast.Constant | None, list[str]]:
    """Return ``(adapter, its node, instance names)`` of a configuration block."""
    if not isinstance(block, ast.Dict):
        return None, None, []
    found = _dict_get(block, "adapter")
    if found is not None:
        node = found[1]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value, node, []
        return None, None, []
    instances = [k.value for k in block.keys if isinstance(k, ast.Constant)]
    default = _dict_get(block, "default")
    if default is not None:
        adapter, node, _ = _adapter_of(default[1])
        return adapter, node, [str(i) for i in instances]
    return None, None, [str(i) for i in instances]


def _ensure_block(result: AddResult, shown: str, wanted: _Wanted) -> None:
    key, adapter, plugin = wanted.key, wanted.adapter, wanted.plugin
    tree = parse_python(result.text, shown)
    toolkit = find_assign(tree, "TOOLKIT")
    where = "TOOLKIT"
    container: ast.expr | None = toolkit
    if toolkit is not None and not isinstance(toolkit, ast.Dict):
        raise CliError(
            f"{shown}: TOOLKIT is not a {{...}} literal; nothing was written",
            hint=f"add {_entry(key, adapter, plugin)} to TOOLKIT by hand",
        )
    if plugin and isinstance(toolkit, ast.Dict):
        plugins = _dict_get(toolkit, _PLUGINS)
        if plugins is not None:
            if not isinstance(plugins[1], ast.Dict):
                raise CliError(f'{shown}: TOOLKIT["plugins"] is not a {{...}} literal')
            container, where = plugins[1], 'TOOLKIT["plugins"]'
    existing = _dict_get(container, key) if isinstance(container, ast.Dict) else None
    if existing is not None or (not plugin and _subscript_line(tree, key)):
        _check_existing(result, shown, wanted, existing, tree)
        return
    lines = _block_lines(key, adapter, plugin)
    if plugin and where == "TOOLKIT":
        lines = [f"{_str(_PLUGINS)}: {{", *(f"    {line}" for line in lines), "},"]
        where = 'TOOLKIT["plugins"]'
    if toolkit is None:
        block = ["", "# The toolkit services (added by `toolkit add`).", "TOOLKIT = {"]
        block += [f"    {line}" for line in lines] + ["}"]
        result.text = result.text.rstrip("\n") + "\n" + "\n".join(block) + "\n"
    else:
        result.text = insert_lines(result.text, container, lines)  # type: ignore[arg-type]
    result.edits.append(f"+ {_entry(key, adapter, plugin)},  ({where})")


def _entry(key: str, adapter: str, plugin: bool) -> str:
    options = ', "options": {}' if plugin else ""
    return f'{_str(key)}: {{"adapter": {_str(adapter)}{options}}}'


def _block_lines(key: str, adapter: str, plugin: bool) -> list[str]:
    lines: list[str] = []
    if plugin:
        lines += [
            f'# Plugin "{key}": its package registers the adapter factory at import time,',
            f"# toolkit_batteries.core.plugins.register_plugin({_str(adapter)}, factory), or",
            "# the adapter is a dotted path to a class with open(ctx). Code reaches it with",
            f"# toolkit_batteries.services.plugin({_str(key)}); options pass through raw.",
        ]
    return [*lines, f"{_entry(key, adapter, plugin)},"]


def _check_existing(
    result: AddResult,
    shown: str,
    wanted: _Wanted,
    existing: tuple[ast.expr, ast.expr] | None,
    tree: ast.Module,
) -> None:
    key, adapter, same, force = wanted.key, wanted.adapter, wanted.same, wanted.force
    result.configured = True
    if same is None:  # no adapter asked for: whatever is configured stays
        if existing is not None:
            result.current = _adapter_of(existing[1])[0]
        else:
            result.current = _adapter_of(_subscript_line(tree, key)[1])[0]  # type: ignore[index]
        return
    if existing is None:
        lineno, value = _subscript_line(tree, key)  # type: ignore[misc]
        current, _, _ = _adapter_of(value)
        result.current = current
        if current is not None and current.lower() in same:
            return
        raise CliError(
            f'{shown}:{lineno}: TOOLKIT["{key}"] is set there (adapter {current or "?"}); '
            "nothing was written",
            hint="edit that line by hand to change the adapter",
        )
    current, node, instances = _adapter_of(existing[1])
    result.current = current
    if current is not None and current.lower() in same:
        return
    if node is None:
        detail = f"named instances: {', '.join(instances)}" if instances else "no adapter key"
        if not force:
            return  # configured by hand in a shape `add` does not own; leave it
        raise CliError(
            f'{shown}: TOOLKIT["{key}"] has {detail}; --force cannot rewrite it',
            hint="edit the block by hand",
        )
    if not force:
        raise CliError(
            f"{key} is already configured with adapter {current!r} in {shown}; nothing was written",
            hint=f"pass --force to switch it to {adapter!r}",
        )
    src = Source(result.text)
    new = _str(adapter)
    result.text = result.text[: src.start(node)] + new + result.text[src.end(node) :]
    line = src.segment(existing[0]) + ": ..."
    result.edits.append(f"~ {line} adapter {current!r} -> {adapter!r}  (TOOLKIT)")


@dataclass
class BatteryEdit:
    """``add``'s decision for one ``battery[/adapter]`` and the resulting settings text."""

    battery: str
    adapter: str
    plugin: bool
    result: AddResult
    #: The pip extra the adapter needs (``kvserver``), if any.
    extra: str | None = None
    #: A "did you mean" for a plugin name close to a battery of the catalog.
    suggestion: str | None = None


def add_battery(
    text: str,
    shown: str,
    spec: str,
    adapter: str | None,
    *,
    force: bool,
) -> BatteryEdit:
    """Resolve ``spec`` (``cache/redis``) against the catalog and plan the settings edit.

    A battery of the catalog must name an implemented adapter (aliases resolve to the
    canonical name); any other name becomes a plugin stanza whose adapter defaults to the
    plugin's name.
    """
    import re

    from ..output import InvalidInputError
    from ..paths import check_name
    from .batteries import extra_for, find_battery, resolve_adapter_name, split_spec

    name, wanted = split_spec(spec, adapter)
    check_name(name, "battery name")
    battery = find_battery(name)
    if battery is not None:
        canonical = resolve_adapter_name(battery, wanted)
        same = {canonical.lower()}
        same |= {alias for alias, target in battery.aliases.items() if target == canonical}
        result = plan_add(
            text,
            shown,
            key=battery.name,
            adapter=canonical,
            app=battery.app_name if battery.app else None,
            same=same,
            force=force,
            explicit=wanted is not None,
        )
        return BatteryEdit(
            battery.name, canonical, False, result, extra_for(battery.name, canonical)
        )
    if name.lower() == _PLUGINS:
        raise InvalidInputError("'plugins' is not a battery; name the plugin to add")
    plugin_adapter = wanted or name
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*", plugin_adapter):
        raise InvalidInputError(
            f"invalid plugin adapter {plugin_adapter!r}: a registered name or a dotted path"
        )
    result = plan_add(
        text,
        shown,
        key=name,
        adapter=plugin_adapter,
        app=None,
        same={plugin_adapter.lower()},
        force=force,
        plugin=True,
        explicit=wanted is not None,
    )
    from difflib import get_close_matches

    from toolkit_batteries.core.catalog import SERVICES

    close = get_close_matches(name.lower(), sorted(SERVICES), n=1, cutoff=0.7)
    suggestion = f'"{name}" is not a battery; did you mean "{close[0]}"?' if close else None
    return BatteryEdit(name, plugin_adapter, True, result, None, suggestion)
