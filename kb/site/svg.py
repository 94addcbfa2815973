"""Draw a trigger pattern as a small SVG graph: one box per node, an arrow per edge.

Layered layout, left to right: a node's column is the length of the longest edge path reaching it.
Text is monospace so box widths can be computed from character counts, with no font metrics.
"""

from __future__ import annotations

from html import escape

from kb.pattern import NodeSpec, Pattern, Pred

OP_PX, TEXT_PX = 8.0, 7.3  # advance of one monospace character at 13px / 12px
PAD, LINE, GAP_X, GAP_Y, TOP = 10, 16, 56, 18, 18
_SYMBOLS = {"eq": "=", "ne": "≠", "gt": ">", "ge": "≥", "lt": "<", "le": "≤", "in_": "in", "not_in": "not in"}


def op_label(spec: NodeSpec) -> str:
    ops = spec.ops()
    if ops is None:
        return "any op"
    return " | ".join(sorted(ops)) if isinstance(spec.op, list) else spec.op


def predicates(spec: NodeSpec) -> list[str]:
    """The node's conditions besides its op type, one short line each."""
    lines = []
    if spec.custom is True:
        lines.append("op not defined by ONNX")
    elif spec.custom is False:
        lines.append("op defined by ONNX")
    for key, pred in spec.attrs.items():
        lines.extend(_pred_lines(key, pred))
    lines += [f"input {i} ← model input" for i in spec.graph_inputs]
    lines += [f"input {i} ← constant" for i in spec.const_inputs]
    return lines


def _pred_lines(key: str, pred: Pred) -> list[str]:
    out = [f"{key} {sym} {_fmt(getattr(pred, name))}" for name, sym in _SYMBOLS.items()
           if getattr(pred, name) is not None]
    if pred.default is not None:
        out.append(f"{key} defaults to {_fmt(pred.default)}")
    return out or [f"has {key}"]


def _fmt(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(map(_fmt, v)) + "]"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))  # numeric predicates are floats: show `group > 1`, not `group > 1.0`
    return str(v)


def layers(p: Pattern) -> dict[str, int]:
    """Column of each node: longest path from a source; a cycle cannot push past len(nodes)."""
    col = {n: 0 for n in p.nodes}
    for _ in range(len(p.nodes)):
        moved = False
        for a, b in p.edges:
            if col[b] < col[a] + 1 < len(p.nodes):
                col[b] = col[a] + 1
                moved = True
        if not moved:
            break
    return col


def draw(p: Pattern) -> str:
    """The SVG markup (one block, no blank lines, so Markdown passes it through untouched)."""
    col = layers(p)
    boxes: dict[str, dict] = {}
    for name, spec in p.nodes.items():
        op, preds = op_label(spec), predicates(spec)
        w = PAD * 2 + max([len(op) * OP_PX, len(name) * TEXT_PX] + [len(s) * TEXT_PX for s in preds])
        boxes[name] = {"op": op, "preds": preds, "w": round(w), "h": PAD * 2 + LINE * (1 + len(preds))}

    columns = [c for c in ([n for n in p.nodes if col[n] == i] for i in range(len(p.nodes))) if c]
    heights = [sum(boxes[n]["h"] for n in c) + GAP_Y * (len(c) - 1) for c in columns]
    total_h = max(heights) + TOP + 4
    x = 2
    for c, names in enumerate(columns):
        y = TOP + (max(heights) - heights[c]) / 2
        for n in names:
            boxes[n].update(x=x, y=y)
            y += boxes[n]["h"] + GAP_Y
        x += max(boxes[n]["w"] for n in names) + GAP_X
    total_w = x - GAP_X + 4

    mid = f"kb-arrow-{p.name}"
    chain = " → ".join(op_label(p.nodes[n]) for c in columns for n in c)
    out = [
        f'<svg class="kb-pattern-svg" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{total_w}" height="{total_h}" viewBox="0 0 {total_w} {total_h}" '
        f'aria-label="{escape(f"Trigger pattern {p.name}: {chain}")}">',
        f"<title>{escape(p.name)}: {escape(p.summary)}</title>",
        f'<defs><marker id="{mid}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>',
    ]
    for a, b in p.edges:
        out.append(_edge(boxes[a], boxes[b], mid, f"{a} → {b}"))
    for name, bx in boxes.items():
        out.append(_node(name, bx))
    out.append("</svg>")
    return "\n".join(out)


def _edge(a: dict, b: dict, marker: str, label: str) -> str:
    x1, y1 = a["x"] + a["w"], a["y"] + a["h"] / 2
    x2, y2 = b["x"], b["y"] + b["h"] / 2
    if x2 <= x1:  # an edge back to an earlier column (only in a cycle): go around below
        x1, y1, x2, y2 = a["x"] + a["w"] / 2, a["y"] + a["h"], b["x"] + b["w"] / 2, b["y"] + b["h"]
        low = max(y1, y2) + 12
        d = f"M{x1:.0f},{y1:.0f} C{x1:.0f},{low:.0f} {x2:.0f},{low:.0f} {x2:.0f},{y2:.0f}"
    else:
        bend = (x2 - x1) / 2
        d = f"M{x1:.0f},{y1:.0f} C{x1 + bend:.0f},{y1:.0f} {x2 - bend:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
    return (f'<path class="kb-edge" d="{d}" fill="none" stroke="currentColor" stroke-width="1.5" '
            f'marker-end="url(#{marker})"><title>{escape(label)}</title></path>')


def _node(name: str, bx: dict) -> str:
    x, y, w, h = bx["x"], bx["y"], bx["w"], bx["h"]
    parts = [
        f'<g class="kb-node" data-node="{escape(name)}">',
        f'<text class="kb-node-name" x="{x + 2:.0f}" y="{y - 5:.0f}" font-size="11" '
        f'font-family="monospace" fill="currentColor" opacity="0.7">{escape(name)}</text>',
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{w}" height="{h}" rx="6" fill="none" '
        f'stroke="currentColor" stroke-width="1.5"/>',
        f'<text class="kb-node-op" x="{x + PAD:.0f}" y="{y + PAD + 12:.0f}" font-size="13" '
        f'font-weight="bold" font-family="monospace" fill="currentColor">{escape(bx["op"])}</text>',
    ]
    for i, line in enumerate(bx["preds"], 1):
        parts.append(f'<text class="kb-node-pred" x="{x + PAD:.0f}" y="{y + PAD + 12 + LINE * i:.0f}" '
                     f'font-size="12" font-family="monospace" fill="currentColor">{escape(line)}</text>')
    parts.append("</g>")
    return "".join(parts)
