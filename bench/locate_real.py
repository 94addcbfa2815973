"""`kb locate` on the KB's own failing cases: does it land on the node the entry's trigger names?

    python bench/locate_real.py [--engine mnn|onnx2ncnn|pnnx ...] [--limit N] [--entry SLUG ...] [--json]

The cases are the bug checks (front-matter rows) whose accepted verdict is `reproduces` on the installed
release of their engine (mnn, onnx2ncnn, and pnnx where the check converts the ONNX file), run on the case's
exported ONNX file in the cache (KB_CACHE, `.kb/cache/<slug>/<digest>/<case>.onnx`) with the case's own
inputs (`<case>.inputs.npz`). Rows with engine options locate cannot pass (flags, an emulated CPU, a
precision, ncnn options, pnnx's fp16) are left out, and counted.

Per case it prints the located node and op against the ops of the entry's trigger pattern:
- hit: the located node is a node of a match of the entry's own trigger pattern in that model;
- near: a match of it is a direct producer or consumer of the located node;
- miss: neither (the op column says what was located instead); none: locate found no divergence;
- n/a: the entry has no trigger pattern (`untriggered`: no graph property predicts it);
- file: the failure is no node's (the whole graph, re-saved, does not fail: external data);
and whether locate named the entry (`known`), and the time per model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENGINE_OF_RUN = {"mnn": "mnn", "onnx2ncnn": "onnx2ncnn", "pnnx": "pnnx"}
UNSUPPORTED = ("flags", "cpu", "precision", "options", "fp16", "batch")


def cache_root() -> Path:
    return Path(os.environ.get("KB_CACHE") or ROOT / ".kb" / "cache")


def onnx_file(slug: str, case: str) -> Path | None:
    """The newest cached export of the case (several digests may hold it)."""
    found = sorted((cache_root() / slug).glob(f"*/{case}.onnx"), key=lambda p: p.stat().st_mtime, reverse=True)
    return found[0] if found else None


def cases(engines: list[str], only: list[str]) -> tuple[list[dict], dict[str, int]]:
    from kb import expectations
    from kb.engines import version
    from kb.entries import load_all

    installed = {e: version(e) for e in engines}
    out, skipped = [], {"options": 0, "not cached": 0, "not reproducing here": 0}
    for entry in load_all():
        if only and entry.slug not in only:
            continue
        table = expectations.load(entry.expected)
        for row in entry.meta.checks:
            engine = ENGINE_OF_RUN.get(row.run)
            if not row.bug or engine not in engines or (row.run == "pnnx" and row.source != "onnx"):
                continue
            cell = (table.get(row.name) or {}).get(str(installed[engine]))
            if cell is None or cell.verdict != "reproduces":
                skipped["not reproducing here"] += 1
                continue
            if any(getattr(row, k) for k in UNSUPPORTED):
                skipped["options"] += 1
                continue
            path = onnx_file(entry.slug, row.case)
            if path is None:
                skipped["not cached"] += 1
                continue
            inputs = path.with_name(f"{row.case}.inputs.npz")
            out.append({"entry": entry, "check": row.name, "engine": engine, "model": path,
                        "inputs": inputs if inputs.is_file() else None,
                        "signatures": {s.id: s.kind for s in entry.meta.signatures if s.id in row.bug}})
    return out, skipped


def trigger_nodes(entry, model) -> tuple[set[str], set[str]]:
    """The ops of the entry's trigger patterns, and the graph nodes of their matches in `model`."""
    from kb.pattern import GraphIndex, match_graph

    ops, nodes = set(), set()
    index = GraphIndex(model.graph)
    for p in entry.meta.trigger:
        for spec in p.nodes.values():
            ops |= spec.ops() or {"*"}
        for m in match_graph(p, index):
            nodes |= set(m.nodes.values())
    return ops, nodes


def judge(case: dict, r) -> dict:
    import onnx

    from kb.locate import Graph

    model = onnx.load(str(case["model"]), load_external_data=False)
    ops, nodes = trigger_nodes(case["entry"], model)
    row = {"entry": case["entry"].meta.id, "slug": case["entry"].slug, "check": case["check"],
           "engine": case["engine"], "trigger_ops": sorted(ops), "seconds": round(r.seconds, 1), "steps": r.steps}
    if r.culprit is None:
        return {**row, "located": None, "op": None, "kind": None, "result": "none", "known": False}
    if r.culprit["node"] is None:  # a failure of the file, not of a node (external data)
        return {**row, "located": None, "op": None, "kind": r.culprit["kind"], "result": "file",
                "known": any(k["id"] == case["entry"].meta.id for k in r.known)}
    g = Graph.of(model, case["model"])
    name = r.culprit["node"]["name"]
    i = g.names.index(name)
    near = {g.names[g.producer[t]] for t in g.nodes[i].input if t in g.producer}
    near |= {g.names[c] for t in g.nodes[i].output for c in g.consumers.get(t, [])}
    result = "hit" if name in nodes else "near" if near & nodes else "miss" if ops else "n/a"
    return {**row, "located": name, "op": r.culprit["node"]["op"], "kind": r.culprit["kind"], "result": result,
            "known": any(k["id"] == case["entry"].meta.id for k in r.known),
            "suspects": [s["op"] for s in r.culprit.get("suspects", [])]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", action="append", choices=list(ENGINE_OF_RUN), help="default: all three")
    ap.add_argument("--entry", action="append", default=[])
    ap.add_argument("--limit", type=int, default=0, help="at most this many cases per engine")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from kb.engines import missing
    from kb.locate import locate

    engines = [e for e in (args.engine or list(ENGINE_OF_RUN)) if not missing(e)]
    todo, skipped = cases(engines, args.entry)
    if args.limit:
        per: dict[str, int] = {}
        todo = [c for c in todo if per.setdefault(c["engine"], 0) < args.limit and not per.update(
            {c["engine"]: per[c["engine"]] + 1})]
    rows = []
    started = time.monotonic()
    for c in todo:
        t0 = time.monotonic()
        try:
            r = locate(str(c["model"]), c["engine"], inputs=str(c["inputs"]) if c["inputs"] else None,
                       timeout=args.timeout)
            row = judge(c, r)
        except Exception as e:  # noqa: BLE001 -- one case's failure is a row, never the end of the bench
            row = {"entry": c["entry"].meta.id, "slug": c["entry"].slug, "check": c["check"], "engine": c["engine"],
                   "result": "error", "error": f"{type(e).__name__}: {e}"[:200], "seconds": round(time.monotonic() - t0, 1)}
        rows.append(row)
        if not args.json:
            print(f"{row['entry']} {row['check'][:34]:34} {row['engine']:9} {row['result']:5} "
                  f"located {row.get('op')!s:18} ({row.get('kind')!s:13}) trigger {','.join(row.get('trigger_ops', []))[:30]:30} "
                  f"known={'y' if row.get('known') else 'n'} {row['seconds']:6.1f}s"
                  + (f"  {row['error']}" if row.get("error") else ""), flush=True)
    total = time.monotonic() - started
    counts = {k: sum(r["result"] == k for r in rows) for k in ("hit", "near", "miss", "n/a", "file", "none", "error")}
    times = sorted(r["seconds"] for r in rows)
    summary = {"cases": len(rows), **counts, "known": sum(bool(r.get("known")) for r in rows),
               "median_s": times[len(times) // 2] if times else None, "max_s": times[-1] if times else None,
               "total_s": round(total, 1), "skipped": skipped}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
    else:
        print(f"\n{len(rows)} cases: {counts['hit']} hit, {counts['near']} near, {counts['miss']} miss, "
              f"{counts['n/a']} without a trigger, {counts['file']} no node's, {counts['none']} no divergence found, {counts['error']} errors; "
              f"locate named the entry in "
              f"{summary['known']}; median {summary['median_s']} s, max {summary['max_s']} s, total {summary['total_s']} s")
        print("left out: " + ", ".join(f"{v} {k}" for k, v in skipped.items()))


if __name__ == "__main__":
    main()
