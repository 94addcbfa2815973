"""`kb locate` on real architectures: bench/arch's exports whose engine failure an entry claims.

    python bench/locate_arch.py [--engine mnn|onnx2ncnn|pnnx ...] [--limit N] [--only NAME ...] [--real] [--json]
                                [--rows FILE]

The runs are the (file, pipeline) pairs of bench/arch's labels (labels.jsonl, or labels_real.jsonl with --real)
where an engine fails as an entry describes (label.fails_as_described: the entry's own log line, crash or
ablation), on the pipelines locate drives (mnn, onnx2ncnn, pnnx). Each run is located once, on the file with
the family's inputs, and judged against every entry that claims it:
- per run: the located node is a node of a match of a claiming entry's trigger (hit), or a direct producer or
  consumer of one (near), or neither (miss); `known`: locate named a claiming entry;
- `earlier`: a miss where every node of the claiming entries' matches comes after the located node in
  topological order: the engine stopped at another, earlier failure (the model has two); still a miss;
- `untriggered`: a miss where no claiming entry's trigger matches any node of the file; still a miss;
- `also`: a miss where a node of a claiming entry's match is among what else locate reports from the converter's
  output (`unconverted`: the ops it says it cannot convert, and the nodes of an entry whose own line it printed:
  what the user meets once the first failure is solved, or a cause before it); still a miss;
- per (run, entry): the same against that entry alone (a run two entries claim counts twice; only one can
  be the first failure).
The exports must exist (`bench/scan_architectures.py` makes them); nothing is exported here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "bench" / "arch")]

ENGINE_OF_PIPELINE = {"mnn": "mnn", "onnx2ncnn": "onnx2ncnn", "pnnx": "pnnx"}


def runs(engines: list[str], real: bool) -> list[dict]:
    import export
    import label

    from kb.entries import load_all

    if real:
        import real as source

        label.LABELS = source.LABELS
    labels = label.load()
    files = {f.name: f for f in (source.export.files() if real else export.files())}
    entries = load_all()
    out = []
    for name, item in sorted(labels["files"].items()):
        f = files.get(name)
        if f is None:
            continue
        claims: dict[str, list] = {}
        for e in entries:
            for hit in label.signature_hits(e, item["pipelines"], item.get("ablations", {})):
                pipeline = hit.split(":", 1)[0]
                if ENGINE_OF_PIPELINE.get(pipeline) in engines:
                    claims.setdefault(pipeline, [])
                    if e not in claims[pipeline]:
                        claims[pipeline].append(e)
        out += [{"file": f, "engine": ENGINE_OF_PIPELINE[p], "entries": es} for p, es in sorted(claims.items())]
    return out


def judge(run: dict, r) -> dict:
    import onnx

    from kb.locate import Graph
    from locate_real import trigger_nodes

    row = {"file": run["file"].name, "engine": run["engine"], "entries": [e.meta.id for e in run["entries"]],
           "seconds": round(r.seconds, 1)}
    if r.culprit is None or r.culprit["node"] is None:
        kind = "none" if r.culprit is None else "file"
        return {**row, "located": None, "op": None, "result": kind, "per_entry": {e.meta.id: kind for e in run["entries"]},
                "known": False}
    model = onnx.load(str(run["file"].path), load_external_data=False)
    g = Graph.of(model, run["file"].path)
    name = r.culprit["node"]["name"]
    i = g.names.index(name)
    near = {g.names[g.producer[t]] for t in g.nodes[i].input if t in g.producer}
    near |= {g.names[c] for t in g.nodes[i].output for c in g.consumers.get(t, [])}
    per, claimed = {}, set()
    for e in run["entries"]:
        ops, nodes = trigger_nodes(e, model)
        claimed |= nodes
        per[e.meta.id] = "hit" if name in nodes else "near" if near & nodes else "miss" if ops else "n/a"
    order = ["hit", "near", "miss", "n/a"]
    best = min(per.values(), key=order.index)
    # a miss where every node the claiming entries match comes after the located one, in topological order:
    # the engine stopped at an earlier failure (a second bug, named or not by another entry), still a miss
    earlier = best == "miss" and bool(claimed) and all(g.names.index(c) > i for c in claimed)
    # a miss where the claiming entries' triggers match no node of the model at all: no node locate names can hit
    untriggered = best == "miss" and not claimed
    # a miss where a claiming entry's node is among the other ops locate says the converter cannot convert
    also = best == "miss" and any(set(u["nodes"]) & claimed for u in getattr(r, "unconverted", []))
    return {**row, "located": name, "op": r.culprit["node"]["op"], "kind": r.culprit["kind"], "result": best,
            "per_entry": per, "known": bool({k["id"] for k in r.known} & set(per)), "earlier": earlier,
            "untriggered": untriggered, "also": also,
            "named": [k["id"] for k in r.known]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", action="append", choices=list(ENGINE_OF_PIPELINE.values()))
    ap.add_argument("--limit", type=int, default=0, help="at most this many runs per engine")
    ap.add_argument("--real", action="store_true", help="the real implementations (labels_real.jsonl)")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", type=Path, help="append each run's row to this file as a JSON line, as it is judged")
    ap.add_argument("--only", action="append", help="only the files whose name contains this (repeatable)")
    args = ap.parse_args()

    from kb.engines import missing
    from kb.locate import locate

    engines = [e for e in (args.engine or list(ENGINE_OF_PIPELINE.values())) if not missing(e)]
    todo = runs(engines, args.real)
    if args.only:
        todo = [r for r in todo if any(o in r["file"].name for o in args.only)]
    if args.limit:
        seen: Counter = Counter()
        todo = [r for r in todo if (seen.update([r["engine"]]) or seen[r["engine"]] <= args.limit)]
    rows, started = [], time.monotonic()
    for run in todo:
        t0 = time.monotonic()
        try:
            row = judge(run, locate(str(run["file"].path), run["engine"], inputs=str(run["file"].inputs),
                                    timeout=args.timeout))
        except Exception as e:  # noqa: BLE001 -- one run's failure is a row, never the end of the bench
            row = {"file": run["file"].name, "engine": run["engine"], "entries": [x.meta.id for x in run["entries"]],
                   "result": "error", "per_entry": {}, "error": f"{type(e).__name__}: {e}"[:200],
                   "seconds": round(time.monotonic() - t0, 1)}
        rows.append(row)
        if args.rows:
            with args.rows.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
        if not args.json:
            print(f"{row['file'][:40]:40} {row['engine']:9} {row['result']:5} located {row.get('op')!s:18} "
                  f"claimed by {','.join(row['entries'])[:40]:40} known={'y' if row.get('known') else 'n'} "
                  f"{row['seconds']:6.1f}s" + (f"  {row['error']}" if row.get("error") else ""), flush=True)
    per_run = Counter(r["result"] for r in rows)
    per_entry = Counter(v for r in rows for v in r["per_entry"].values())
    by_engine = {e: Counter(r["result"] for r in rows if r["engine"] == e) for e in engines}
    times = sorted(r["seconds"] for r in rows)
    summary = {"runs": len(rows), "per_run": dict(per_run), "per_entry": dict(per_entry),
               "by_engine": {e: dict(c) for e, c in by_engine.items()}, "known": sum(bool(r.get("known")) for r in rows),
               "earlier": sum(bool(r.get("earlier")) for r in rows),
               "untriggered": sum(bool(r.get("untriggered")) for r in rows),
               "also": sum(bool(r.get("also")) for r in rows),
               "median_s": times[len(times) // 2] if times else None, "max_s": times[-1] if times else None,
               "total_s": round(time.monotonic() - started, 1)}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
        return

    def share(c: Counter) -> str:
        n = sum(c.values())
        return f"{c['hit'] + c['near']}/{n} on or next to the trigger ({c['hit']} hit, {c['near']} near, " \
               f"{c['miss']} miss, {c['none']} none, {c['file']} no node's, {c['error']} errors)" if n else "none"
    print(f"\nruns: {share(per_run)}")
    for e, c in by_engine.items():
        print(f"  {e:9} {share(c)}")
    print(f"(run, entry) pairs: {share(per_entry)}")
    earlier = [r for r in rows if r.get("earlier")]
    if earlier:
        print(f"of the misses, {len(earlier)} stop at a node before every node the claiming entries match (a first, "
              f"other failure; locate named {', '.join(sorted({k for r in earlier for k in r['named']})) or 'no entry'} "
              "there): " + ", ".join(f"{r['file']} ({r['engine']})" for r in earlier))
    also = [r for r in rows if r.get("also")]
    if also:
        print(f"of the misses, {len(also)} name a claiming entry's node among what else locate reports from the "
              "converter's output (`unconverted`): " + ", ".join(f"{r['file']} ({r['engine']})" for r in also) + "; "
              f"on, next to or named: {per_run['hit'] + per_run['near'] + len(also)}/{len(rows)}")
    untriggered = [r for r in rows if r.get("untriggered")]
    if untriggered:
        print(f"of the misses, {len(untriggered)} are of files where no claiming entry's trigger matches any node: "
              + ", ".join(f"{r['file']} ({r['engine']})" for r in untriggered))
    print(f"locate named a claiming entry in {summary['known']} of {len(rows)} runs; median {summary['median_s']} s, "
          f"max {summary['max_s']} s, total {summary['total_s']} s")


if __name__ == "__main__":
    main()
