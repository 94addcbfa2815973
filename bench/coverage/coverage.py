"""How much of the real upstream problem space does the knowledge base cover?

Reads threads.yaml (threads drawn from the alibaba/MNN and Tencent/ncnn issue trackers, each
classified by hand) and prints, for each draw and for all draws together, per engine and overall:

  * counts per class (entry, message, bug, user-error, unclear)
  * coverage            = entry / (entry + bug)
  * coverage with index = (entry + message) / (entry + message + bug)
  * the most frequent `family` labels among `bug` threads: what to add next
  * the bug threads whose family needs what no machine here has (NOT_HERE, by family name): a GPU or
    NPU backend, a device's ARM/RISC-V kernels, ncnn's int8 tools, a release older than the installable
    ones, another front end, a build or toolchain; and the ceiling that leaves for entry coverage

Run:  /work/main/.venv/bin/python bench/coverage/coverage.py [threads.yaml] [--top N]
Standard library + pyyaml only.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CLASSES = ["entry", "message", "bug", "user-error", "unclear"]
ENGINES = ["mnn", "ncnn", "pnnx", "onnx2ncnn"]

# Entries being added while the draw was made (KB034-KB041); counted even if their folder is
# incomplete. KB034 landed as ncnn-onnx2ncnn-squeeze-unsqueeze-axes; its planned slug is kept as
# an alias so either spelling is accepted.
IN_FLIGHT = {
    "ncnn-onnx2ncnn-squeeze-batch-axis",
    "ncnn-onnx2ncnn-transpose-5d",
    "ncnn-onnx2ncnn-gather-on-data",
    "ncnn-interp-fractional-scale",
    "ncnn-onnx2ncnn-reduce-axes-input",
    "ncnn-onnx2ncnn-hardswish-alpha",
    "pnnx-attention-mask-ops",
    "mnn-quant-ema-accuracy",
}
ALIASES = {"ncnn-onnx2ncnn-squeeze-batch-axis": "ncnn-onnx2ncnn-squeeze-unsqueeze-axes"}

# Families whose bugs cannot be measured on these machines (Mesa's lavapipe and qemu's aarch64 CPUs are
# measured, but not a vendor's GPU driver, an NPU, 32-bit ARM or RISC-V kernels, ncnn2table/ncnn2int8 (not in
# the wheels), MNN before 3.0.0 (no wheels), TFLite/Caffe/TF/MXNet models, or a build).
NOT_HERE = {
    "GPU/NPU backend": r"gpu|vulkan|opencl|metal|coreml|npu|cuda",
    "armv7/RISC-V kernels": r"armv7|riscv|rvv",
    "ncnn int8 tools": r"int8|ncnn-tools",
    "MNN before 3.0.0": r"old-converter",
    "other front end": r"tflite|caffe|mxnet|tf-|torchscript-frontend|darknet",
    "build/toolchain": r"build|android-zero|runtime-crash",
    "LLM tooling": r"llm|diffusion",
}


def not_here(family: str) -> str | None:
    return next((why for why, rx in NOT_HERE.items() if re.search(rx, family)), None)


def known_entries() -> set[str]:
    repros = REPO / "repros"
    found = {p.name for p in repros.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))} if repros.is_dir() else set()
    return found | IN_FLIGHT | set(ALIASES.values())


def known_messages() -> set[str]:
    msgs = REPO / "repros" / "_messages"
    return {p.stem for p in msgs.glob("*.yaml")} if msgs.is_dir() else set()


def validate(threads: list[dict]) -> list[str]:
    problems = []
    entries, messages = known_entries(), known_messages()
    seen = set()
    for i, t in enumerate(threads):
        where = f"thread {i} ({t.get('ref', '?')})"
        for key in ("ref", "draw", "query", "engine", "class", "why"):
            if not t.get(key):
                problems.append(f"{where}: missing {key}")
        if t.get("ref") in seen:
            problems.append(f"{where}: drawn twice")
        seen.add(t.get("ref"))
        if t.get("engine") not in ENGINES:
            problems.append(f"{where}: engine {t.get('engine')!r} not one of {ENGINES}")
        cls = t.get("class")
        if cls not in CLASSES:
            problems.append(f"{where}: class {cls!r} not one of {CLASSES}")
        if cls == "entry" and t.get("entry") not in entries:
            problems.append(f"{where}: unknown entry {t.get('entry')!r}")
        if cls == "message" and t.get("message") not in messages:
            problems.append(f"{where}: unknown message {t.get('message')!r}")
        if cls == "bug" and not t.get("family"):
            problems.append(f"{where}: bug without a family")
    return problems


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def ratio(k: int, n: int) -> str:
    if n == 0:
        return "   n/a"
    lo, hi = wilson(k, n)
    return f"{k:3d}/{n:<3d} = {k / n:5.1%}  (95% CI {lo:4.0%}-{hi:4.0%})"


def report(title: str, threads: list[dict], top: int) -> None:
    print(f"== {title}: {len(threads)} threads")
    groups = defaultdict(list)
    for t in threads:
        groups[t["engine"]].append(t)
    width = max(len(c) for c in CLASSES)
    header = f"  {'engine':<10} " + " ".join(f"{c:>{width}}" for c in CLASSES) + f" {'total':>{width}}"
    print(header)
    rows = [(e, groups[e]) for e in ENGINES if groups[e]] + [("all", threads)]
    for name, ts in rows:
        c = Counter(t["class"] for t in ts)
        print(f"  {name:<10} " + " ".join(f"{c[k]:>{width}}" for k in CLASSES) + f" {len(ts):>{width}}")
    print()
    print(f"  {'engine':<10} {'coverage = entry/(entry+bug)':<44} coverage with index = (entry+message)/(entry+message+bug)")
    for name, ts in rows:
        c = Counter(t["class"] for t in ts)
        cov = ratio(c["entry"], c["entry"] + c["bug"])
        idx = ratio(c["entry"] + c["message"], c["entry"] + c["message"] + c["bug"])
        print(f"  {name:<10} {cov:<44} {idx}")
    fams = defaultdict(list)
    for t in threads:
        if t["class"] == "bug":
            fams[t["family"]].append(t)
    ranked = sorted(fams.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    print()
    shown = ranked[:top]
    if len(ranked) > top and len(ranked[top - 1][1]) > 1:  # keep families tied with the last one shown (not singletons)
        shown += [kv for kv in ranked[top:] if len(kv[1]) == len(ranked[top - 1][1])]
    ties = f", {len(shown) - top} more tied" if len(shown) > top else ""
    bugs = [t for t in threads if t["class"] == "bug"]
    away = Counter(w for t in bugs if (w := not_here(t["family"])))
    if bugs:
        c = Counter(t["class"] for t in threads)
        print(f"  bugs needing what no machine here has: {sum(away.values())}/{len(bugs)} "
              f"({', '.join(f'{w} {n}' for w, n in away.most_common())}); entry coverage could reach at most "
              f"{ratio(c['entry'] + len(bugs) - sum(away.values()), c['entry'] + len(bugs))}")
    print(f"  missing families (bug threads), top {min(top, len(ranked))} of {len(ranked)}{ties}:")
    for fam, ts in shown:
        engines = "/".join(sorted({t["engine"] for t in ts}))
        refs = ", ".join(t["ref"] for t in ts)
        print(f"    {len(ts):2d}  {fam:<34} [{engines}]  {refs}")
    print()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("threads", nargs="?", default=str(HERE / "threads.yaml"))
    ap.add_argument("--top", type=int, default=8, help="how many missing families to list (default 8)")
    args = ap.parse_args(argv)

    doc = yaml.safe_load(Path(args.threads).read_text(encoding="utf-8"))
    threads = doc["threads"]
    problems = validate(threads)
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)

    draw_ids = [d["id"] for d in doc.get("draws", [])]
    for t in threads:
        if t["draw"] not in draw_ids:
            draw_ids.append(t["draw"])
    queries = {d["id"]: len(d.get("queries", [])) for d in doc.get("draws", [])}
    for draw in draw_ids:
        ts = [t for t in threads if t["draw"] == draw]
        q = f", {queries[draw]} queries" if draw in queries else ""
        report(f"draw {draw}{q}", ts, args.top)
    if len(draw_ids) > 1:
        report("all draws together", threads, args.top)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
