"""`kb locate` and `kb reduce` on real-sized models (20 to 50 MB): the issue's "<= 60 s per model on 2 cores".

    python bench/locate_large.py [--model NAME ...] [--repeat N] [--json]

The models are bench/large_models.py's (exported into .kb/large/ if missing), each with an engine that fails
on it. Each command runs as a user runs it: the CLI in a subprocess (`python -m kb locate MODEL --engine E
--inputs NPZ --json`, then `python -m kb reduce ... -o OUT --json`), `--repeat` times (median wall seconds;
cpu: the children's user + system seconds, median, which a loaded machine does not inflate). kb reduce
locates again before it reduces, so `total` (both commands, as a user runs them one after the other) counts
locating twice. `same`: `kb locate` on the reduced file and its saved inputs fails with the same signature
(the same step, kind and first error line; or wrong values at the same op, of the same kind). `located`: the
node kb locate names (it must not change between runs).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]


def kb(*args: str) -> tuple[dict, float, float]:
    """(the command's JSON, wall seconds, cpu seconds) of `python -m kb ARGS --json`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "kb", *args, "--json"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if p.returncode not in (0, 1):
        raise RuntimeError(f"kb {' '.join(args[:1])} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout), wall, cpu


def same(red: dict, again: dict) -> bool:
    """The reduced file, located again, fails as the reduction's target says."""
    from kb.locate import Fate

    c, o = again["culprit"], red["located"]["culprit"]
    if c is None:
        return False
    if o["kind"] in ("mismatch", "nan", "shape"):
        return c["node"] is not None and c["node"]["op"] == o["node"]["op"] and c["kind"] == o["kind"]
    fate = lambda x: Fate(x["stage"], x["kind"], x.get("signal"), x.get("error", ""), x.get("step", ""))  # noqa: E731
    return fate(o).same(fate(c))


def main() -> None:
    import large_models

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", choices=list(large_models.MODELS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    if not args.json:
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {args.repeat} runs, "
              "wall s (cpu s)")
        print(f"{'model':18} {'MB':>5} {'engine':9} {'locate s':>13} {'reduce s':>13} {'total s':>13} "
              f"{'nodes':>9} same located")
    for name, m in large_models.build(args.model).items():
        tol = ["--tol", str(m["tol"])] if m["tol"] else []
        common = ["--engine", m["engine"], "--inputs", str(m["inputs"]), *tol]
        loc, red = [], []
        with tempfile.TemporaryDirectory(prefix="kb-large-") as tmp:
            out = Path(tmp) / f"{name}-reduced.onnx"
            for _ in range(args.repeat):
                loc.append(kb("locate", str(m["model"]), *common))
                red.append(kb("reduce", str(m["model"]), *common, "-o", str(out)))
            r = red[-1][0]
            again = None
            if r["nodes"]:
                again, _, _ = kb("locate", str(out), "--engine", m["engine"], "--inputs", r["saved"]["inputs"],
                                 *tol)
        located = {(x[0]["culprit"] or {}).get("node", {}) and x[0]["culprit"]["node"]["name"] for x in loc}
        located |= {(x[0]["located"]["culprit"] or {}).get("node", {}) and x[0]["located"]["culprit"]["node"]["name"]
                    for x in red}
        reduced = {x[0]["nodes"] for x in red}
        med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
        row = {"model": name, "mb": round(m["mb"], 1), "engine": m["engine"],
               "locate_s": med(loc, 1), "locate_cpu": med(loc, 2), "reduce_s": med(red, 1), "reduce_cpu": med(red, 2),
               "total_s": med(loc, 1) + med(red, 1), "total_cpu": med(loc, 2) + med(red, 2),
               "nodes_before": r["nodes_before"], "nodes_after": sorted(reduced),
               "same": bool(again and same(r, again)), "located": sorted(map(str, located)),
               "signature": r["signature"], "budget_spent": any(x[0]["budget_spent"] for x in red),
               "runs": {"locate_s": [round(x[1], 1) for x in loc], "reduce_s": [round(x[1], 1) for x in red]}}
        rows.append(row)
        if not args.json:
            fig = lambda k: f"{row[k + '_s']:5.1f} ({row[k + '_cpu']:5.1f})"  # noqa: E731
            after = "/".join(map(str, row["nodes_after"]))
            print(f"{name:18} {row['mb']:5.1f} {row['engine']:9} {fig('locate')} {fig('reduce')} {fig('total')} "
                  f"{row['nodes_before']:>4} -> {after:<3} {'yes' if row['same'] else 'no ':4} "
                  f"{','.join(row['located'])}" + ("  (budget spent)" if row["budget_spent"] else ""), flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        over = [r["model"] for r in rows if r["total_s"] > 60]
        print(f"\nover 60 s (locate + reduce, wall): {', '.join(over) or 'none'}; "
              f"max {max(r['total_s'] for r in rows):.1f} s wall, {max(r['total_cpu'] for r in rows):.1f} s cpu")


if __name__ == "__main__":
    main()
