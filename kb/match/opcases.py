"""A user's nodes against the conformance ledgers (conformance/<engine>.yaml, `kb conform`): onnx's own node
tests of the same op with the same attributes that fail on an engine. `kb scan` lists them below the entries:
no entry describes them, but the engine was measured failing on that very op and setting.

Attributes are compared as onnx's schema defines them: an attribute a node leaves out has its default, so
Resize(mode=cubic) is Resize(mode=cubic, coordinate_transformation_mode=half_pixel, ...). A node test's graph
of several nodes (`*_expanded`) is not one op and is never matched, nor is a case whose reference output
onnxruntime disputes (conformance/cases.yaml `disputed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb.match.links import site_url

FAILED = ("wrong values", "wrong shape", "fails to convert", "fails to run", "crash", "timed out")


@dataclass(frozen=True)
class OpCase:
    node: str  # the user's node
    op: str
    attrs: str  # the case's own attributes, as conform records them
    engine: str
    version: str
    case: str
    outcome: str
    detail: str

    def text(self) -> str:
        from kb.engines import ENGINES

        what = f"{self.op}({self.attrs})" if self.attrs else self.op
        return (f"{what} at node {self.node!r}: {self.outcome} on {ENGINES[self.engine].shown} {self.version} in "
                f"ONNX's own test {self.case}" + (f" ({self.detail})" if self.detail else ""))


def op_url(op: str) -> str:
    return f"{site_url()}ops/{op}/"  # kb/site/ops.py


def _effective(op: str, attrs: dict[str, str]) -> dict[str, str] | None:
    """Every attribute of the op's schema, as set or by default (None where onnx has no schema for it)."""
    import onnx

    from kb.conform import attr_text

    try:
        schema = onnx.defs.get_schema(op)
    except onnx.defs.SchemaError:
        return None
    out = {}
    for name, a in schema.attributes.items():
        if name in attrs:
            out[name] = attrs[name]
        elif a.default_value.type:  # an attribute without a default is left out where unset
            default = onnx.AttributeProto()
            default.CopyFrom(a.default_value)
            default.name = name
            out[name] = attr_text(default).partition("=")[2]
    return out


def _parse(attrs: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in attrs.split(", ") if "=" in part) if attrs else {}


def failing_cases(model, root: Path, wanted: list[tuple[str, str | None]], per_op: int = 3) -> list[OpCase]:
    """For each (engine, release or None: the newest measured) asked about, the node tests of the model's ops
    and attributes that fail there, at most `per_op` per op and engine."""
    from kb import conformance
    from kb.conform import attr_text

    index = conformance.load_cases(root)
    if index is None:
        return []
    nodes: dict[tuple[str, tuple], str] = {}  # (op, effective attributes) -> the first node so set
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        eff = _effective(node.op_type, {a.name: attr_text(a).partition("=")[2] for a in node.attribute})
        if eff is not None:
            nodes.setdefault((node.op_type, tuple(sorted(eff.items()))), node.name or node.output[0])
    found: list[OpCase] = []
    for engine, version in wanted:
        table = conformance.load(conformance.path(root, engine), engine)
        shown: dict[str, int] = {}
        for case, info in index.cases.items():
            if "_expanded" in case or info.problem or info.disputed:
                continue
            eff = _effective(info.op, _parse(info.attrs))
            node = eff is not None and nodes.get((info.op, tuple(sorted(eff.items()))))
            per = table.cells.get(case) or {}
            release = version or (max(per, key=_key) if per else None)
            cell = per.get(release) if release else None
            if not node or cell is None or cell.outcome not in FAILED or shown.get(info.op, 0) >= per_op:
                continue
            shown[info.op] = shown.get(info.op, 0) + 1
            found.append(OpCase(node, info.op, info.attrs, engine, release, case, str(cell.outcome), cell.detail))
    return found


def _key(version: str):
    from kb.versions import version_key

    return version_key(version)
