"""`kb reduce` on the KB's own failing cases: how small, still the same failure, how fast.

    python bench/reduce_real.py [--engine mnn|onnx2ncnn|pnnx ...] [--limit N] [--entry SLUG ...] [--budget S] [--json]

The cases are bench/locate_real.py's (bug checks reproducing on the installed release, the cached export and
its inputs). Per case: the node count before and after, whether the reduced file, run again by `kb locate` on
its saved inputs, fails with the same signature (a failure: Fate.same; wrong values: the same op and kind at
the culprit), and the seconds (locate and reduction). `--limit N` takes at most N cases per engine, one per
entry before a second one of any entry. Summary: median reduced node count, share of models reduced to 10
nodes or fewer, same-signature rate, seconds per model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def spread(todo: list[dict], limit: int) -> list[dict]:
    """At most `limit` cases per engine, the first case of each entry before any entry's second."""
    if not limit:
        return todo
    out = []
    for engine in dict.fromkeys(c["engine"] for c in todo):
        mine = [c for c in todo if c["engine"] == engine]
        seen: dict[str, int] = {}
        keyed = []
        for c in mine:  # (how many of its entry's cases come before it, the case)
            keyed.append((seen.get(c["entry"].slug, 0), c))
            seen[c["entry"].slug] = keyed[-1][0] + 1
        out += [c for _, c in sorted(keyed, key=lambda k: k[0])][:limit]
    return out


def same_again(red, path: Path, inputs: Path, timeout: float) -> tuple[bool, str]:
    """`kb locate` on the saved reduced model and inputs: does it fail as the original did?"""
    from kb import locate as L

    r = L.locate(str(path), red.engine, inputs=str(inputs), timeout=timeout)
    c, t = r.culprit, red.target
    if c is None:
        return False, "no failure"
    if t.fate is not None:
        if c["kind"] in ("mismatch", "nan", "shape"):
            return False, f"{c['kind']} instead"
        fate = L.Fate(c["stage"], c["kind"], c.get("signal"), c.get("error", ""), c.get("step", ""))
        return t.fate.same(fate), fate.line if not t.fate.same(fate) else ""
    ok = c["node"] is not None and c["node"]["op"] == t.op and c["kind"] == t.kind
    return ok, "" if ok else f"{c['kind']} at {c['node']['op'] if c['node'] else None}"


def main() -> None:
    import locate_real as B

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", action="append", choices=list(B.ENGINE_OF_RUN), help="default: all three")
    ap.add_argument("--entry", action="append", default=[])
    ap.add_argument("--limit", type=int, default=0, help="at most this many cases per engine")
    ap.add_argument("--budget", type=float, default=60.0, help="kb reduce's time budget per model (locating included)")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from kb.engines import missing
    from kb.reduce import reduce

    engines = [e for e in (args.engine or list(B.ENGINE_OF_RUN)) if not missing(e)]
    todo, skipped = B.cases(engines, args.entry)
    todo = spread(todo, args.limit)
    rows = []
    started = time.monotonic()
    for c in todo:
        t0 = time.monotonic()
        row = {"entry": c["entry"].meta.id, "slug": c["entry"].slug, "check": c["check"], "engine": c["engine"]}
        try:
            with tempfile.TemporaryDirectory(prefix="kb-reduce-bench-") as tmp:
                out = Path(tmp) / "reduced.onnx"
                red = reduce(str(c["model"]), c["engine"], out=out, inputs=str(c["inputs"]) if c["inputs"] else None,
                             budget=args.budget, timeout=args.timeout)
                row.update(before=red.nodes_before, after=red.nodes or None, tries=red.tries,
                           signature=red.target.text() if red.target else None, budget_spent=red.budget_spent,
                           seconds=round(time.monotonic() - t0, 1),
                           known=[k["id"] for k in red.known()])
                if red.target is None:
                    row["result"] = "no failure"
                elif red.outcome is None:
                    row["result"] = "not reduced"
                else:
                    same, why = same_again(red, out, Path(red.saved["inputs"]), args.timeout)
                    row.update(result="same" if same else "different", why=why)
        except Exception as e:  # noqa: BLE001 -- one case's failure is a row, never the end of the bench
            row.update(result="error", error=f"{type(e).__name__}: {e}"[:200], seconds=round(time.monotonic() - t0, 1))
        rows.append(row)
        if not args.json:
            print(f"{row['entry']} {row['check'][:34]:34} {row['engine']:9} {row['result']:11} "
                  f"{row.get('before')!s:>4} -> {row.get('after')!s:4} nodes  {row['seconds']:6.1f}s  "
                  f"{(row.get('signature') or '')[:60]}"
                  + (f"  [{row['why']}]" if row.get("why") else "") + (f"  {row['error']}" if row.get("error") else ""),
                  flush=True)
    reduced = [r for r in rows if r.get("after")]
    sizes = sorted(r["after"] for r in reduced)
    times = sorted(r["seconds"] for r in rows)
    failing = [r for r in rows if r["result"] in ("same", "different", "not reduced")]
    summary = {"cases": len(rows), "reduced": len(reduced),
               "median_nodes": sizes[len(sizes) // 2] if sizes else None,
               "median_nodes_before": sorted(r["before"] for r in reduced)[len(reduced) // 2] if reduced else None,
               "share_le_10": round(sum(s <= 10 for s in sizes) / len(sizes), 3) if sizes else None,
               "same_signature_rate": round(sum(r["result"] == "same" for r in failing) / len(failing), 3)
               if failing else None,
               "not_reduced": sum(r["result"] == "not reduced" for r in rows),
               "no_failure": sum(r["result"] == "no failure" for r in rows),
               "errors": sum(r["result"] == "error" for r in rows),
               "budget_spent": sum(bool(r.get("budget_spent")) for r in rows),
               "median_s": times[len(times) // 2] if times else None, "max_s": times[-1] if times else None,
               "total_s": round(time.monotonic() - started, 1), "skipped": skipped}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
    else:
        s = summary
        print(f"\n{s['cases']} cases, {s['reduced']} reduced: median {s['median_nodes']} nodes (from "
              f"{s['median_nodes_before']}), {s['share_le_10']} of them <= 10 nodes; same signature on the saved "
              f"file: {s['same_signature_rate']} of the failing ones; {s['not_reduced']} not reduced, "
              f"{s['no_failure']} no failure found, {s['errors']} errors, {s['budget_spent']} out of budget; "
              f"median {s['median_s']} s per model, max {s['max_s']} s, total {s['total_s']} s")
        print("left out: " + ", ".join(f"{v} {k}" for k, v in skipped.items()))


if __name__ == "__main__":
    main()
