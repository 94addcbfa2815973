"""Draw a trigger pattern as a small SVG graph: one box per node, an arrow per edge.

Layered layout, left to right: a node's column is the length of the longest edge path reaching it.
Text is monospace so box widths can be computed from character counts, with no font metrics.
This module computes the layout; the markup is kb/templates/site/pattern.svg.j2.
"""

from __future__ import annotations

from markupsafe import Markup

from kb.pattern import NodeSpec, Pattern, Pred
from kb.site.markup import render

OP_PX, TEXT_PX = 8.0, 7.3  # advance of one monospace character at 13px / 12px
PAD, LINE, GAP_X, GAP_Y, TOP = 10, 16, 56, 18, 18
_SYMBOLS = {"eq": "=", "ne": "≠", "gt": ">", "ge": "≥", "lt": "<", "le": "≤", "in_": "in", "not_in": "not in", "match": "matches"}


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
    if pred.asymmetric is not None:
        out.append(f"{key}: begin {'≠' if pred.asymmetric else '='} end")
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


def draw(p: Pattern) -> Markup:
    """The SVG markup (kb/templates/site/pattern.svg.j2: one block, no blank lines)."""
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

    chain = " → ".join(op_label(p.nodes[n]) for c in columns for n in c)
    return render("pattern.svg.j2", name=p.name, summary=p.summary, chain=chain, width=total_w, height=total_h,
                  marker=f"kb-arrow-{p.name}", pad=PAD, line_px=LINE,
                  edges=[{"d": _edge(boxes[a], boxes[b]), "label": f"{a} → {b}"} for a, b in p.edges],
                  boxes=[{"name": name, **bx} for name, bx in boxes.items()]).strip()


def _edge(a: dict, b: dict) -> str:
    """The path of an arrow from box a to box b."""
    x1, y1 = a["x"] + a["w"], a["y"] + a["h"] / 2
    x2, y2 = b["x"], b["y"] + b["h"] / 2
    if x2 <= x1:  # an edge back to an earlier column (only in a cycle): go around below
        x1, y1, x2, y2 = a["x"] + a["w"] / 2, a["y"] + a["h"], b["x"] + b["w"] / 2, b["y"] + b["h"]
        low = max(y1, y2) + 12
        return f"M{x1:.0f},{y1:.0f} C{x1:.0f},{low:.0f} {x2:.0f},{low:.0f} {x2:.0f},{y2:.0f}"
    bend = (x2 - x1) / 2
    return f"M{x1:.0f},{y1:.0f} C{x1 + bend:.0f},{y1:.0f} {x2 - bend:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
