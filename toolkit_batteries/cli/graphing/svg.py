"""A layered SVG drawing of a schema's entities and relations, in pure Python.

There is no Graphviz on the machines this runs on, so the layout is a small Sugiyama-style
one: relations point from the parent (the side without the foreign key) to the child,
cycles are broken by dropping back edges, each entity sits one layer below its deepest
parent (longest path), a few barycentre sweeps reduce crossings, and wide layers wrap
into rows so a 500-entity schema stays readable. Entities without relations are packed
in a grid at the bottom. Each box lists the entity's fields (``PK``, ``FK``, ``UQ``
marked); boxes are tinted per module, with a legend. Output is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

if TYPE_CHECKING:
    from toolkit_codegen.nodes import Entity, Schema

__all__ = ["render"]

FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
CHAR_W = 7.3  # advance of one character at FONT_SIZE in a monospace font
FONT_SIZE = 12
HEADER_H = 26
ROW_H = 16
PAD = 10
MIN_W = 120
MAX_ROWS = 30
MAX_PER_ROW = 6
H_GAP = 56
V_GAP = 72
MARGIN = 24
LEGEND_H = 48
FILLS = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#e0e7ff", "#ccfbf1", "#fee2e2", "#f3e8ff")
STROKE = "#334155"


@dataclass
class _Box:
    name: str
    module: int
    rows: list[tuple[str, str]]
    width: float
    height: float
    x: float = 0.0
    y: float = 0.0

    @property
    def cx(self) -> float:
        return self.x + self.width / 2


@dataclass
class _Edge:
    parent: str
    child: str
    kinds: list[str] = field(default_factory=list)


def _module_label(module: object) -> str:
    name = getattr(module, "name", "") or "root"
    version = getattr(module, "version", "")
    return f"{version}/{name}" if version else name


def _rows(entity: Entity) -> list[tuple[str, str]]:
    foreign = {r.foreign_key for r in entity.relations if r.kind == "belongs_to"}
    rows = []
    for f in entity.fields:
        ref = f.type
        kind = f"enum({', '.join(ref.enum_values)})" if ref.is_inline_enum else ref.name
        tags = " ".join(
            tag
            for tag, on in (("PK", f.primary), ("FK", f.name in foreign), ("UQ", f.unique))
            if on
        )
        rows.append((f"{f.name}: {kind}{'?' if ref.optional else ''}", tags))
    if len(rows) > MAX_ROWS:
        hidden = len(rows) - MAX_ROWS + 1
        rows = [*rows[: MAX_ROWS - 1], (f"… {hidden} more", "")]
    return rows


def _boxes(schema: Schema) -> dict[str, _Box]:
    boxes: dict[str, _Box] = {}
    for index, module in enumerate(schema.modules):
        for entity in module.entities:
            if entity.name in boxes:
                continue
            rows = _rows(entity)
            chars = max(
                [len(entity.name) + 2, *(len(t) + (len(g) + 2 if g else 0) for t, g in rows)]
            )
            width = max(MIN_W, round(chars * CHAR_W + 2 * PAD))
            height = HEADER_H + len(rows) * ROW_H + (PAD if rows else 0)
            boxes[entity.name] = _Box(entity.name, index, rows, width, height)
    return boxes


def _edges(schema: Schema, boxes: dict[str, _Box]) -> list[_Edge]:
    """One edge per pair of related entities (both sides of a relation merge into one)."""
    by_pair: dict[frozenset[str], _Edge] = {}
    for entity in schema.entities:
        if entity.name not in boxes:
            continue
        for relation in entity.relations:
            if relation.target not in boxes:
                continue  # best effort on a schema with errors
            if relation.kind == "belongs_to":
                parent, child = relation.target, entity.name
            else:
                parent, child = entity.name, relation.target
            edge = by_pair.setdefault(frozenset((parent, child)), _Edge(parent, child))
            if relation.kind not in edge.kinds:
                edge.kinds.append(relation.kind)
    return list(by_pair.values())


def _layers(names: list[str], edges: list[_Edge]) -> dict[str, int]:
    """Longest-path layering after dropping the back edges of a depth-first search."""
    children: dict[str, list[str]] = {name: [] for name in names}
    for edge in edges:
        if edge.parent != edge.child:
            children[edge.parent].append(edge.child)
    dag: dict[str, list[str]] = {name: [] for name in names}
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    order: list[str] = []
    for root in names:
        if root in state:
            continue
        stack = [(root, iter(children[root]))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                order.append(node)
                stack.pop()
            elif state.get(nxt) == 1:
                continue  # a back edge closes a cycle: not used for layering
            else:
                dag[node].append(nxt)
                if nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(children[nxt])))
    layer = dict.fromkeys(names, 0)
    for node in reversed(order):  # reverse post-order is a topological order
        for child in dag[node]:
            layer[child] = max(layer[child], layer[node] + 1)
    return layer


def _order(layers: list[list[str]], parents: dict[str, list[str]]) -> None:
    """Reorder each layer by the mean position of its parents (two sweeps)."""
    for _ in range(2):
        position: dict[str, float] = {}
        for nodes in layers:
            for index, name in enumerate(nodes):
                position[name] = index / max(1, len(nodes) - 1)
        for depth in range(1, len(layers)):
            nodes = layers[depth]
            size = max(1, len(nodes) - 1)
            keys: dict[str, tuple[float, int]] = {}
            for index, name in enumerate(nodes):
                above = [position[p] for p in parents[name] if p in position and p != name]
                mean = sum(above) / len(above) if above else index / size
                keys[name] = (mean, index)
            nodes.sort(key=keys.__getitem__)
            for index, name in enumerate(layers[depth]):
                position[name] = index / max(1, len(layers[depth]) - 1)


def _place(boxes: dict[str, _Box], edges: list[_Edge]) -> tuple[float, float]:
    names = list(boxes)
    linked = {e.parent for e in edges} | {e.child for e in edges}
    connected = [n for n in names if n in linked]
    loose = [n for n in names if n not in linked]
    layer = _layers(connected, edges)
    depth = max(layer.values(), default=-1) + 1
    layers: list[list[str]] = [[] for _ in range(depth)]
    for name in connected:
        layers[layer[name]].append(name)
    parents: dict[str, list[str]] = {name: [] for name in names}
    for edge in edges:
        parents[edge.child].append(edge.parent)
    _order(layers, parents)
    if loose:
        layers.append(loose)
    rows: list[list[_Box]] = []
    for nodes in layers:
        for start in range(0, len(nodes), MAX_PER_ROW):
            rows.append([boxes[name] for name in nodes[start : start + MAX_PER_ROW]])
    row_widths = [sum(b.width for b in row) + H_GAP * (len(row) - 1) for row in rows]
    width = max(row_widths, default=MIN_W) + 2 * MARGIN
    y = MARGIN + LEGEND_H
    for row, row_width in zip(rows, row_widths, strict=True):
        x = (width - row_width) / 2
        for box in row:
            box.x, box.y = round(x, 1), y
            x += box.width + H_GAP
        y += max(b.height for b in row) + V_GAP
    height = y - V_GAP + MARGIN if rows else y + MARGIN
    return width, height


def _edge_svg(edge: _Edge, boxes: dict[str, _Box]) -> list[str]:
    parent, child = boxes[edge.parent], boxes[edge.child]
    label = escape(", ".join(edge.kinds))
    if parent is child:
        x, y = parent.x + parent.width, parent.y + 8
        path = f"M{x:g},{y:g} C{x + 48:g},{y:g} {x + 48:g},{y + 28:g} {x:g},{y + 28:g}"
        lx, ly = x + 40, y + 14
    else:
        if child.y > parent.y:
            x1, y1, x2, y2 = parent.cx, parent.y + parent.height, child.cx, child.y
        elif child.y < parent.y:
            x1, y1, x2, y2 = parent.cx, parent.y, child.cx, child.y + child.height
        else:
            left, right = (parent, child) if parent.x < child.x else (child, parent)
            x1, y1 = left.x + left.width, left.y + HEADER_H / 2
            x2, y2 = right.x, right.y + HEADER_H / 2
            if left is child:
                x1, y1, x2, y2 = x2, y2, x1, y1
        mid = (y1 + y2) / 2
        path = f"M{x1:g},{y1:g} C{x1:g},{mid:g} {x2:g},{mid:g} {x2:g},{y2:g}"
        lx, ly = (x1 + x2) / 2, mid
    text_w = len(", ".join(edge.kinds)) * CHAR_W * 0.85 + 6
    return [
        f'<g class="relation" data-from={quoteattr(edge.parent)} data-to={quoteattr(edge.child)}>',
        f'<path d="{path}" fill="none" stroke="{STROKE}" stroke-width="1.2" '
        'marker-end="url(#arrow)"/>',
        f'<rect x="{lx - text_w / 2:.1f}" y="{ly - 8:.1f}" width="{text_w:.1f}" height="14" '
        'fill="#ffffff" fill-opacity="0.85"/>',
        f'<text x="{lx:.1f}" y="{ly + 3:.1f}" font-size="10" text-anchor="middle" '
        f'fill="#475569">{label}</text>',
        "</g>",
    ]


def _box_svg(box: _Box, module: str) -> list[str]:
    fill = FILLS[box.module % len(FILLS)]
    out = [
        f'<g class="entity" data-name={quoteattr(box.name)} data-module={quoteattr(module)}>',
        f"<title>{escape(box.name)} ({escape(module)})</title>",
        f'<rect x="{box.x:g}" y="{box.y:g}" width="{box.width:g}" height="{box.height:g}" '
        f'rx="6" fill="{fill}" stroke="{STROKE}" stroke-width="1.2"/>',
        f'<text x="{box.cx:g}" y="{box.y + 17:g}" font-size="13" font-weight="bold" '
        f'text-anchor="middle" fill="#0f172a">{escape(box.name)}</text>',
    ]
    if box.rows:
        line_y = box.y + HEADER_H
        out.append(
            f'<line x1="{box.x:g}" y1="{line_y:g}" x2="{box.x + box.width:g}" y2="{line_y:g}" '
            f'stroke="{STROKE}" stroke-width="0.8"/>'
        )
    for index, (text, tags) in enumerate(box.rows):
        y = box.y + HEADER_H + ROW_H * (index + 1) - 3
        out.append(
            f'<text x="{box.x + PAD:g}" y="{y:g}" font-size="{FONT_SIZE}" '
            f'fill="#1e293b">{escape(text)}</text>'
        )
        if tags:
            out.append(
                f'<text x="{box.x + box.width - PAD:g}" y="{y:g}" font-size="10" '
                f'text-anchor="end" fill="#64748b">{escape(tags)}</text>'
            )
    out.append("</g>")
    return out


def render(schema: Schema) -> str:
    """Return the SVG document (UTF-8 text) of the schema's entities and relations."""
    boxes = _boxes(schema)
    edges = _edges(schema, boxes)
    width, height = _place(boxes, edges)
    modules = [_module_label(m) for m in schema.modules]
    title = f"toolkit schema: {len(boxes)} entities, {len(edges)} relations"
    width = max(width, len(title) * CHAR_W + 2 * MARGIN)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
        f'viewBox="0 0 {width:g} {height:g}" font-family={quoteattr(FONT)}>',
        f"<title>{escape(title)}</title>",
        "<defs>",
        '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="{STROKE}"/></marker>',
        "</defs>",
        f'<rect width="{width:g}" height="{height:g}" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 6}" font-size="14" font-weight="bold" '
        f'fill="#0f172a">{escape(title)}</text>',
    ]
    x = MARGIN
    for index, label in enumerate(modules):
        fill = FILLS[index % len(FILLS)]
        parts.append(
            f'<rect x="{x}" y="{MARGIN + 16}" width="12" height="12" rx="2" fill="{fill}" '
            f'stroke="{STROKE}" stroke-width="0.8"/>'
        )
        parts.append(
            f'<text x="{x + 17}" y="{MARGIN + 26}" font-size="11" fill="#334155">'
            f"{escape(label)}</text>"
        )
        x += round(17 + len(label) * CHAR_W * 0.9 + 18)
    if not boxes:
        parts.append(
            f'<text x="{MARGIN}" y="{MARGIN + LEGEND_H + 14}" font-size="12" '
            'fill="#64748b">no entities</text>'
        )
    for edge in edges:
        parts.extend(_edge_svg(edge, boxes))
    for box in boxes.values():
        parts.extend(_box_svg(box, modules[box.module]))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
