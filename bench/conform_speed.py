"""Cases per second of `kb conform`, per engine path, on a sample of onnx's node-test cases.

The sample is one shard of the cases (every N-th, so every op family shows up), or named cases. Nothing is
accepted: the committed ledgers stay as they are. Each engine path runs in one process, as `kb conform` does
(converters a fresh process per case, runtimes forked from a warm Python).

    .venv/bin/python bench/conform_speed.py [--engines mnn onnx2ncnn pnnx] [--every 10] [--case test_relu ...]
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", nargs="+", default=["mnn", "onnx2ncnn", "pnnx"])
    ap.add_argument("--every", type=int, default=10, help="run every N-th case (shard 1/N); 1: all 1,884")
    ap.add_argument("--case", nargs="*", default=[], help="these cases instead of a shard")
    args = ap.parse_args()
    sample = [a for c in args.case for a in ("--case", c)] or (["--shard", f"1/{args.every}"] if args.every > 1 else [])
    print(f"sample: {' '.join(sample) or 'every case'}")
    from kb.engines import missing

    for engine in args.engines:
        if why := missing(engine) or (missing("ncnn") if engine != "mnn" else None):  # as kb conform refuses it
            print(f"{engine}: not measured: {why.splitlines()[0][:120]}")
            continue
        start = time.monotonic()
        p = subprocess.run([sys.executable, "-m", "kb", "conform", "--engine", engine, "--json", *sample],
                           cwd=ROOT, env={**os.environ}, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        if p.returncode not in (0, 1):
            sys.exit(f"kb conform --engine {engine} failed ({p.returncode}): {p.stderr[-2000:]}")
        rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        counts = collections.Counter(r["outcome"] for r in rows)
        ran = [r for r in rows if r["verdict"] in ("works", "broken")]
        busy = sum(r["duration"] for r in ran)
        print(f"{engine}: {len(rows)} cases in {wall:.1f}s (with start-up): {len(rows) / wall:.2f} cases/s; "
              f"{len(ran)} ran through the engine, {busy / max(1, len(ran)):.3f}s each; "
              + ", ".join(f"{k} {v}" for k, v in counts.most_common()))


if __name__ == "__main__":
    main()
