"""Time of `kb scan`: end to end per model file (the command a user runs, statuses included: target
0.5 s typical, 2 s worst), and its matching alone (all entries' trigger patterns) on synthetic ONNX
graphs of 1k, 10k and 100k nodes, excluding file loading.

    python bench/scan_speed.py [MODEL.onnx | FOLDER ...] [--sizes N ...] [--engine mnn==3.6.1]

Default models: the corpus's exported cases (.kb/cache). Matching must be linear in graph size;
target: 10k nodes well under a second.

The graph repeats a 12-node block full of near misses of the corpus's patterns (a grouped
ConvTranspose into Relu, x - mean squared by Mul, a standard op into Reshape -> InstanceNormalization,
Q -> DQ -> Conv on an activation), and every 83rd block squares with Pow instead: one true match.
"""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = 12


def synthetic(nodes: int):
    """A model of about `nodes` nodes, built in memory."""
    from onnx import TensorProto, helper

    inits = [helper.make_tensor(n, TensorProto.FLOAT, [1], [1.0])
             for n in ("W", "B", "s", "b", "m", "v", "Wd", "two", "scale")]
    inits.append(helper.make_tensor("shape", TensorProto.INT64, [1], [-1]))
    inits.append(helper.make_tensor("zp", TensorProto.UINT8, [], [0]))
    out, prev = [], "x"
    for k in range(max(1, nodes // BLOCK)):
        t = [f"b{k}_t{i}" for i in range(BLOCK + 1)]
        t[0] = prev
        square = ("Pow", [t[7], "two"]) if k % 83 == 82 else ("Mul", [t[7], t[7]])
        specs = [
            ("Conv", [t[0], "W", "B"], {}),
            ("BatchNormalization", [t[1], "s", "b", "m", "v"], {}),
            ("Relu", [t[2]], {}),
            ("ConvTranspose", [t[3], "Wd"], {"group": 2}),
            ("Relu", [t[4]], {}),
            ("ReduceMean", [t[5]], {"axes": [1]}),
            ("Sub", [t[5], t[6]], {}),
            (square[0], square[1], {}),
            ("Reshape", [t[8], "shape"], {}),
            ("InstanceNormalization", [t[9], "s", "b"], {}),
            ("QuantizeLinear", [t[10], "scale", "zp"], {}),
            ("DequantizeLinear", [t[11], "scale", "zp"], {}),
        ]
        for i, (op, ins, attrs) in enumerate(specs):
            out.append(helper.make_node(op, ins, [t[i + 1]], name=f"/block{k}/{op}_{i}", **attrs))
        prev = t[BLOCK]
    graph = helper.make_graph(out, "synthetic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def end_to_end(paths: list[Path], engines: list[str]) -> None:
    """`kb scan MODEL [--engine E]` as a user runs it, in one child per model (imports, the records, every
    status): wall time, and the child's CPU time (what a loaded shared machine does not inflate)."""
    import resource
    import statistics
    import subprocess

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    times, cpus = [], []
    flags = [a for e in engines for a in ("--engine", e)]
    for path in paths:
        start, used = time.perf_counter(), cpu()
        p = subprocess.run([sys.executable, "-m", "kb", "scan", str(path), *flags], capture_output=True, text=True,
                           cwd=ROOT)
        times.append((time.perf_counter() - start, path))
        cpus.append((cpu() - used, path))
        if p.returncode not in (0, 1):  # 0 none found, 1 found; anything else did not scan: no figure
            sys.exit(f"kb scan {path} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    if not times:
        return
    secs = sorted(t for t, _ in times)
    worst = max(times)
    worst_cpu = max(cpus)
    print(f"kb scan{''.join(' ' + f for f in flags)} end to end on {len(times)} models: median {statistics.median(secs):.2f} s, "
          f"worst {worst[0]:.2f} s ({worst[1].name}); CPU median {statistics.median(c for c, _ in cpus):.2f} s, "
          f"worst {worst_cpu[0]:.2f} s ({worst_cpu[1].name})")


def models(args: list[str]) -> list[Path]:
    found = []
    for a in args or [str(ROOT / ".kb" / "cache")]:
        p = Path(a)
        found += sorted(p.rglob("*.onnx")) if p.is_dir() else [p]
    big = sorted(found, key=lambda f: f.stat().st_size)  # the largest few and a spread of the rest
    return list(dict.fromkeys(big[:: max(1, len(big) // 20)] + big[-5:]))[:25]  # each model once


def main():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="ONNX files or folders (default: the corpus's exported cases)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000],
                    help="node counts of the synthetic graphs")
    ap.add_argument("--engine", action="append", default=[], help="passed to kb scan, e.g. mnn==3.6.1 (repeatable)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from kb.entries import load_all
    from kb.match.scan import find_problems

    end_to_end(models(args.models), args.engine)
    entries = load_all(ROOT)
    patterns = sum(len(e.meta.trigger) for e in entries)
    print(f"{len(entries)} entries, {patterns} trigger patterns")
    print(f"{'nodes':>8} {'scan s':>8} {'us/node':>8} {'matches':>8}")
    for n in args.sizes:
        model = synthetic(n)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            scanned = find_problems(entries, model)
            best = min(best, time.perf_counter() - start)
        print(f"{scanned.nodes:>8} {best:>8.3f} {best / scanned.nodes * 1e6:>8.1f} {len(scanned.found):>8}")


if __name__ == "__main__":
    main()
