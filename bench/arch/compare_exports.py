"""Do two export caches hold the same models? For checking that a refactor of models/ or export.py
changed no family: the same family names, kinds and variants, the same export failures, the same
example inputs and torch outputs, and per ONNX file the same op types (with their counts) and the
same bytes once the exporter's provenance metadata is dropped (the dynamo exporter records each
node's Python class path, source file and line, which move with the code).

    python bench/arch/compare_exports.py .kb/arch/exports/OLD .kb/arch/exports/NEW

Exit status 1 when anything but that metadata differs.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx


def _graphs(g: onnx.GraphProto):
    yield g
    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(a.g)
            for sub in a.graphs:
                yield from _graphs(sub)


def op_types(m: onnx.ModelProto) -> Counter:
    """(domain, op type) -> count, over the graph, its subgraphs and its local functions."""
    nodes = [n for g in _graphs(m.graph) for n in g.node] + [n for f in m.functions for n in f.node]
    return Counter((n.domain or "ai.onnx", n.op_type) for n in nodes)


def without_provenance(m: onnx.ModelProto) -> bytes:
    """The model's bytes with doc strings and metadata_props cleared everywhere."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    m.doc_string = ""
    del m.metadata_props[:]
    holders = [*_graphs(m.graph), *m.functions]
    for g in holders:
        g.doc_string = ""
        if hasattr(g, "metadata_props"):
            del g.metadata_props[:]
        for n in g.node:
            n.doc_string = ""
            del n.metadata_props[:]
        for v in [*getattr(g, "input", []), *getattr(g, "output", []), *getattr(g, "value_info", [])]:
            if isinstance(v, onnx.ValueInfoProto):
                v.doc_string = ""
                del v.metadata_props[:]
        for t in getattr(g, "initializer", []):
            t.doc_string = ""
            del t.metadata_props[:]
    return m.SerializeToString()


def _npz_equal(a: Path, b: Path) -> bool:
    with np.load(a) as x, np.load(b) as y:
        return list(x.files) == list(y.files) and all(np.array_equal(x[k], y[k], equal_nan=True) for k in x.files)


def compare(old: Path, new: Path) -> int:
    def manifests(d: Path) -> dict:
        return {p.stem: json.loads(p.read_text()) for p in sorted(d.glob("*.json"))}

    a, b = manifests(old), manifests(new)
    problems = []
    print(f"families: {len(a)} in {old.name}, {len(b)} in {new.name}; same names: {sorted(a) == sorted(b)}")
    if sorted(a) != sorted(b):
        problems.append(f"families only in old: {sorted(set(a) - set(b))}; only in new: {sorted(set(b) - set(a))}")
    same_bytes = same_graph = files = 0
    for fam in sorted(set(a) & set(b)):
        ma, mb = a[fam], b[fam]
        for key in ("kind", "inputs", "outputs"):
            if ma[key] != mb[key]:
                problems.append(f"{fam}: {key} {ma[key]} -> {mb[key]}")
        if ma["files"] != mb["files"]:  # variant names, their sources, export errors
            problems.append(f"{fam}: variants or export errors differ")
        for suffix in ("inputs.npz", "torch.npz"):
            if not _npz_equal(old / f"{fam}.{suffix}", new / f"{fam}.{suffix}"):
                problems.append(f"{fam}.{suffix}: arrays differ")
        for variant, item in sorted(ma["files"].items()):
            if "onnx" not in item or not (new / item["onnx"]).exists():
                continue
            files += 1
            ra, rb = (old / item["onnx"]).read_bytes(), (new / item["onnx"]).read_bytes()
            if ra == rb:
                same_bytes, same_graph = same_bytes + 1, same_graph + 1
                continue
            xa, xb = onnx.load_from_string(ra), onnx.load_from_string(rb)
            if op_types(xa) != op_types(xb):
                problems.append(f"{fam}.{variant}: op types differ: {op_types(xa) - op_types(xb)} vs "
                                f"{op_types(xb) - op_types(xa)}")
            elif without_provenance(xa) != without_provenance(xb):
                problems.append(f"{fam}.{variant}: same op types, but the graphs differ beyond provenance metadata")
            else:
                same_graph += 1
    print(f"ONNX files: {files}; byte-identical {same_bytes}; identical but for provenance metadata "
          f"{same_graph - same_bytes}; differing {files - same_graph}")
    for p in problems:
        print(f"DIFFERS: {p}")
    print("same models" if not problems else f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: compare_exports.py OLD_EXPORT_DIR NEW_EXPORT_DIR")
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
