"""Wall time and peak memory of `kb explain LOG`, end to end as a user runs it (a child process per run):
a one-line log (as text, --json and --format markdown), and generated converter logs of 5 MB and 50 MB.

    python bench/explain_speed.py [--sizes MB ...] [--runs N] [--keep DIR]

Targets (issue 29): a one-line log well under a second; a 50 MB log in <= 20 s and <= 300 MB peak RSS.
The generated logs are what converters print (MNNConvert, onnx2ncnn, pnnx, torch.onnx warnings): timestamps,
ANSI colours, progress bars redrawn with a bare CR, and a few known error lines inside (an Einsum MNN cannot
convert, an op onnx2ncnn does not support, a crash). Each run's top results are printed too: a bounded read
must find the same problems in a large log as in a small one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_LINE = "Gather not supported yet\n"

# Known lines, spread through a generated log (each a real engine message of a corpus entry).
KNOWN = [
    "Unknown data type 0",
    "Gather not supported yet",
    "\x1b[31mThese Op Not Support: ONNX::Einsum\x1b[0m",
    "Can't convert Einsum for input size = 4",
    "Segmentation fault (core dumped)",
]


def _filler(rng: random.Random, i: int) -> str:
    """One ordinary converter line, as users paste them."""
    ts = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    stage, k = rng.randint(1, 4), rng.randint(0, 63)
    op = rng.choice(["Conv", "Relu", "Add", "Mul", "Reshape", "Transpose", "Concat", "Resize", "Sigmoid", "MatMul"])
    kind = i % 9
    if kind == 0:
        return f"[{ts}] /home/runner/work/MNN/tools/converter/source/onnx/onnxOpConverter.cpp:{rng.randint(30, 900)}: " \
               f"Check it out ==> /backbone/stage{stage}/block{k}/{op}_{i % 997} has empty input, the index is {k % 3}"
    if kind == 1:
        return f"\x1b[32m2024-05-{rng.randint(1, 28):02d} {ts}.{rng.randint(0, 999):03d}\x1b[0m INFO  " \
               f"convert op {op} /neck/fpn{stage}/{op}_{k} -> {op.lower()}_{i}"
    if kind == 2:
        return f"{op:<24}{f'/head/{op.lower()}_{i % 5003}':<28} 1 1 {op.lower()}_{i}_in {op.lower()}_{i}_out " \
               f"0={rng.choice([16, 32, 64, 128])} 1=3 11=3 2=1 12=1 3=1 13=1 4=1 14=1 15=1 16=1 5=1 6={rng.randint(1, 9) * 4608}"
    if kind == 3:
        pct = rng.randint(0, 100)
        return "\r".join(f"Converting: {p:3d}%|{'#' * (p // 10):<10}| {p}/100" for p in range(max(0, pct - 3), pct + 1))
    if kind == 4:
        return f"/usr/lib/python3.11/site-packages/torch/onnx/symbolic_opset9.py:{rng.randint(100, 6000)}: UserWarning: " \
               f"Exporting a model to ONNX with a batch_size other than 1, with a variable length with LSTM can cause " \
               f"an error when running the ONNX model with a different batch size."
    if kind == 5:
        return f"pnnx.Input               pnnx_input_{k % 4}          0 1 {i} #{i}=(1,{rng.choice([3, 16, 64])},224,224)f32"
    if kind == 6:
        return f"[{ts}] :{rng.randint(10, 99)}: {op} /model.{k}/{op.lower()}/{op}_output_0 shape = " \
               f"[1, {rng.choice([32, 64, 128])}, {rng.choice([20, 40, 80])}, {rng.choice([20, 40, 80])}]"
    if kind == 7:
        return ""
    return f"    %onnx::{op}_{i} : Float(1, {rng.choice([32, 64])}, {rng.choice([40, 80])}, strides=[204800, 3200, 80, 1], " \
           f"requires_grad=0, device=cpu) = onnx::{op}[name=\"/layer{stage}/{op}_{k}\"](%{i - 1})"


def generate(path: Path, megabytes: float, seed: int = 0) -> None:
    """A converter log of about `megabytes` MB with the KNOWN lines at fixed fractions of it."""
    rng = random.Random(seed)
    target = int(megabytes * 1e6)
    marks = [int(target * f) for f in (0.1, 0.35, 0.5, 0.75, 0.98)]
    written, i = 0, 0
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("MNNConverter Version: 2.8.1 - MNN @ 2018\r\n")
        while written < target:
            while marks and written >= marks[0]:
                f.write(KNOWN[len(KNOWN) - len(marks)] + "\n")
                marks.pop(0)
            line = _filler(rng, i) + ("\r\n" if i % 13 == 0 else "\n")
            f.write(line)
            written += len(line)
            i += 1


def run_once(argv: list[str]) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds and peak RSS (MB) of one child; os.wait4 gives that child's own rusage."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0), err.seek(0)
        done = subprocess.CompletedProcess(argv, p.returncode, out.read().decode(), err.read().decode())
    if done.returncode not in (0, 1):  # 0 nothing found, 1 found; anything else did not explain: no figure
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return wall, usage.ru_maxrss / 1024, done


def measure(label: str, log: Path, runs: int, *flags: str) -> None:
    argv = [sys.executable, "-m", "kb", "explain", str(log), *flags]
    walls, peaks, last = [], [], None
    for _ in range(runs):
        wall, peak, last = run_once(argv)
        walls.append(wall)
        peaks.append(peak)
    top = ""
    if "--json" in flags:
        top = ", ".join(f"{r['id']}:{r['confidence']}" for r in json.loads(last.stdout)[:3]) or "nothing"
        top = f"  top: {top}"
    print(f"{label:<28} median {statistics.median(walls):6.2f} s  worst {max(walls):6.2f} s  "
          f"peak RSS {max(peaks):6.0f} MB  ({runs} runs){top}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="*", default=[5, 50], help="generated log sizes, MB")
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (the median is printed)")
    ap.add_argument("--keep", type=Path, help="write the generated logs here (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        one = where / "one-line.log"
        one.write_text(ONE_LINE)
        run_once([sys.executable, "-m", "kb", "explain", str(one)])  # warms the caches under .kb/cache
        measure("one-line log", one, args.runs)
        measure("one-line log --json", one, args.runs, "--json")
        measure("one-line log --format markdown", one, args.runs, "--format", "markdown")
        for mb in args.sizes:
            log = where / f"generated-{mb:g}mb.log"
            if not log.is_file():
                generate(log, mb)
            measure(f"{log.stat().st_size / 1e6:.1f} MB log --json", log, args.runs, "--json")


if __name__ == "__main__":
    main()
