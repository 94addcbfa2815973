"""The ways users export one model: `Case(..., ways=True)` (kb.export) makes a variant of a case for each, and
kb.checks names their checks from the source. Both read them here, so the names cannot drift apart."""

from __future__ import annotations

OPSET = 13  # a Case's opset unless it says otherwise

# name: (opset, dynamo, onnx-simplifier)
WAYS = {
    "opset11": (11, False, False), "opset13": (13, False, False), "opset15": (15, False, False),
    "opset17": (17, False, False), "opset18": (18, False, False), "dynamo": (18, True, False),
    "opset13-onnxsim": (13, False, True), "opset17-onnxsim": (17, False, True), "dynamo-onnxsim": (18, True, True),
}


def ways_of(name: str, ways: bool | list[str], opset: int, dynamo: bool, simplify: bool) -> dict[str, str]:
    """{variant name: way} for a case's `ways`, leaving out the way the case itself is exported."""
    chosen = list(WAYS) if ways is True else list(ways or ())
    unknown = [w for w in chosen if w not in WAYS]
    if unknown:
        raise ValueError(f"case {name!r}: unknown ways {unknown}; known: {', '.join(WAYS)}")
    return {f"{name}-{w}": w for w in chosen if WAYS[w] != (opset, dynamo, simplify)}
