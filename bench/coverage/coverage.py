"""How much of the real upstream problem space does the knowledge base cover?

Reads threads.yaml (threads drawn from the alibaba/MNN and Tencent/ncnn issue trackers, each
classified by hand) and prints, for each draw and for all draws together, one table: per engine
(mnn, ncnn, onnx2ncnn, pnnx, all) and per subset of threads (all, cited, uncited):

  * entry coverage      = entry / (entry + bug)
  * coverage with pages = (entry + message + op) / (entry + message + op + bug)
  * both again over the measurable bugs only: a bug is measurable unless its family needs what no
    machine here has (NOT_HERE, by family name): a GPU or NPU backend, a device's ARM/RISC-V kernels,
    ncnn's int8 tools, an MNN release older than the installable ones, another front end, a build or
    toolchain, LLM tooling, a bug only in a release PyPI has no wheel of; or (`gone`, per thread) a reproducer written from the thread ran clean on the oldest
    and the newest installable release of its engine: fixed before them, nothing here can show it
  * with 95% Wilson intervals.

Classes: entry (an entry's cause is the thread's whole cause), message (a repros/_messages page's pattern
matches the thread's engine line and the page lists the thread or its specific cause), op (the thread's
cause is one ONNX op or attribute (or, through pnnx from TorchScript, one torch op: the pnnx-torch ledger)
unsupported or wrong on that engine, and the conformance ledger
conformance/<engine>.yaml shows that op failing on that engine the same way: the thread names `op` and
`case`, and the case's latest run must fail), bug (a real bug the KB lacks, with a `family`),
user-error, unclear.

A thread is *cited* when some file under repros/ (an entry's `upstream:` or page text, a message page)
names its repo#number; the split is computed by scanning repros/ on every run.

Every draw is re-mapped to the KB as it is; a thread whose class changed after its draw was mapped keeps its
draw-time class in `first` and the date of the change in `remapped`. The all-draws block ends with the entry
coverage (and coverage with pages) of the measurable bugs at draw time (`first` where set) next to now; so does
each draw remapped since, for itself.

Below each table: the class counts and the most frequent measurable missing families (what to add next).

Run:  /work/main/.venv/bin/python bench/coverage/coverage.py [threads.yaml] [--top N]
Exits 1 with warnings if a thread names an unknown entry, message or ledger case, lacks a field, has a
field not in FIELDS (or a bad `first` / `remapped`), or is drawn twice. Standard library + pyyaml only.
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
CLASSES = ["entry", "message", "op", "bug", "user-error", "unclear"]
COVERED = ("entry", "message", "op")
ENGINES = ["mnn", "ncnn", "onnx2ncnn", "pnnx"]
# Which conformance ledgers an `op` thread of each engine may name (ncnn's runtime is reached through either converter).
# pnnx-torch: torch's op samples through pnnx from TorchScript (an op such as torch.argmax, F.pad).
LEDGERS = {"mnn": ["mnn"], "onnx2ncnn": ["onnx2ncnn"], "pnnx": ["pnnx", "pnnx-torch"],
           "ncnn": ["onnx2ncnn", "pnnx", "pnnx-torch"]}
# The fields a thread may have; `first` (the class when its draw was mapped) and `remapped` (the date it changed)
# are set together, on threads re-mapped after their draw.
FIELDS = {"ref", "draw", "query", "engine", "class", "first", "entry", "message", "op", "case", "family", "why", "remapped", "gone"}
FAILING = {"crash", "fails to convert", "fails to run", "wrong shape", "wrong values"}

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
# measured, but not a vendor's GPU driver, an NPU, 32-bit ARM or RISC-V kernels, ncnn2table/ncnn2int8/ncnnoptimize (not in
# the wheels), MNN before 3.0.0 (no wheels), TFLite/Caffe/TF/MXNet models, or a build).
NOT_HERE = {
    "GPU/NPU backend": r"gpu|vulkan|opencl|metal|coreml|npu|cuda",
    "armv7/RISC-V kernels": r"armv7|riscv|rvv",
    "ncnn tools (int8, ncnnoptimize)": r"(?<!mnn-)int8|ncnn-tools",  # MNN's int8 tool (mnnquant) runs here
    "MNN before 3.0.0": r"old-converter",
    "other front end": r"tflite|caffe|mxnet|tf-|torchscript-frontend|darknet",
    "build/toolchain": r"build|android-zero|runtime-crash",
    "LLM tooling": r"llm|diffusion",
    "a release with no wheel here": r"nowheel",  # the thread says which release, and PyPI has none for it
}
REF_RX = re.compile(r"\b(alibaba/MNN|Tencent/ncnn|pnnx/pnnx)#(\d+)\b"
                    r"|github\.com/(alibaba/MNN|Tencent/ncnn|pnnx/pnnx)/(?:issues|pull)/(\d+)", re.I)


GONE = "fixed before the releases here"  # a bug's `gone`: its reproducer ran clean on the oldest and newest release


def not_here(family: str) -> str | None:
    # a rule's word starts one of the family's words: "npu" is not the end of "input"
    return next((why for why, rx in NOT_HERE.items() if re.search(rf"(?:^|-)(?:{rx})", family)), None)


def away_why(t: dict) -> str | None:
    """Why a bug cannot be measured here: its family (NOT_HERE), or a measured `gone`."""
    return not_here(t.get("family", "")) or (GONE if t.get("gone") else None)


def measurable(t: dict) -> bool:
    return t["class"] != "bug" or not away_why(t)


def known_entries() -> set[str]:
    repros = REPO / "repros"
    found = {p.name for p in repros.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))} if repros.is_dir() else set()
    return found | IN_FLIGHT | set(ALIASES.values())


def known_messages() -> set[str]:
    msgs = REPO / "repros" / "_messages"
    return {p.stem for p in msgs.glob("*.yaml")} if msgs.is_dir() else set()


def cited_refs() -> set[str]:
    """Every alibaba/MNN, Tencent/ncnn or pnnx/pnnx issue named anywhere under repros/ (entries, message pages)."""
    refs = set()
    for p in (REPO / "repros").rglob("*"):
        if p.is_file() and p.suffix in {".md", ".yaml", ".yml"}:
            for m in REF_RX.finditer(p.read_text(encoding="utf-8", errors="replace")):
                repo, num = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                refs.add(f"{canonical_repo(repo)}#{num}")
    return refs


def canonical_repo(repo: str) -> str:
    return {"alibaba/mnn": "alibaba/MNN", "tencent/ncnn": "Tencent/ncnn", "pnnx/pnnx": "pnnx/pnnx"}[repo.lower()]


def ledger_cases() -> dict[str, dict[str, tuple[str, str]]]:
    """ledger -> case -> (op, outcome of its latest run)."""
    out = {}
    for ledger in sorted({name for names in LEDGERS.values() for name in names}):
        path = REPO / "conformance" / f"{ledger}.yaml"
        if not path.is_file():
            continue
        cases = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("cases", {}) or {}
        out[ledger] = {name: (c.get("op", ""), (c.get("runs") or [{}])[-1].get("outcome", "")) for name, c in cases.items()}
    return out


def validate(threads: list[dict]) -> list[str]:
    problems = []
    entries, messages, ledgers = known_entries(), known_messages(), ledger_cases()
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
        if cls == "op":
            names = LEDGERS.get(t.get("engine"), [])
            found = [(ledger, ledgers.get(ledger, {}).get(t.get("case"))) for ledger in names]
            found = [(ledger, c) for ledger, c in found if c]
            if not t.get("op") or not t.get("case"):
                problems.append(f"{where}: op thread without op and case")
            elif not found:
                problems.append(f"{where}: case {t.get('case')!r} not in the {'/'.join(names)} ledger")
            elif not any(c[0] == t["op"] and c[1] in FAILING for _, c in found):
                problems.append(f"{where}: case {t['case']!r} is not a failing {t['op']} case in the {'/'.join(names)} ledger")
            elif t["op"] not in t.get("why", "") or t["case"] not in t.get("why", ""):
                problems.append(f"{where}: op thread whose why does not name its op and case")
        if cls == "bug" and not t.get("family"):
            problems.append(f"{where}: bug without a family")
        if "gone" in t and (cls != "bug" or not re.search(r"\d+\.\d+|\b20\d{6}\b", str(t["gone"]))):
            problems.append(f"{where}: gone is for a bug, and names the releases its reproducer ran clean on")
        unknown = sorted(set(t) - FIELDS)
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(unknown)}")
        if ("first" in t) != ("remapped" in t):
            problems.append(f"{where}: first and remapped go together")
        if "first" in t and (t["first"] not in CLASSES or t["first"] == cls):
            problems.append(f"{where}: first {t['first']!r} is not another of {CLASSES}")
        if "remapped" in t and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(t["remapped"])):
            problems.append(f"{where}: remapped {t['remapped']!r} is not a date (YYYY-MM-DD)")
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
        return f"{'n/a':>21}"
    lo, hi = wilson(k, n)
    return f"{k:3d}/{n:<3d}{k / n:4.0%} ({lo:3.0%}-{hi:4.0%})"


def rates(ts: list[dict]) -> list[tuple[int, int]]:
    """(k, n) for entry, entry measurable, pages, pages measurable."""
    c = Counter(t["class"] for t in ts)
    bugs_m = sum(1 for t in ts if t["class"] == "bug" and measurable(t))
    pages = c["entry"] + c["message"] + c["op"]
    return [(c["entry"], c["entry"] + c["bug"]), (c["entry"], c["entry"] + bugs_m),
            (pages, pages + c["bug"]), (pages, pages + bugs_m)]


def at_draw_time(threads: list[dict]) -> list[dict]:
    """The threads as labelled when their draw was mapped: `first` where a later remap changed the class."""
    return [dict(t, **{"class": t["first"]}) if "first" in t else t for t in threads]


def report(title: str, threads: list[dict], cited: set[str], top: int, history: bool = False) -> None:
    c = Counter(t["class"] for t in threads)
    bugs = [t for t in threads if t["class"] == "bug"]
    away = Counter(w for t in bugs if (w := away_why(t)))
    n_cited = sum(1 for t in threads if t["ref"] in cited)
    print(f"== {title}: {len(threads)} threads ({n_cited} cited by the KB); "
          + ", ".join(f"{k} {c[k]}" for k in CLASSES)
          + f"; measurable bugs {len(bugs) - sum(away.values())}")
    cols = ["entry/(entry+bug)", "  measurable bugs", "(entry+msg+op)/(..+bug)", "  measurable bugs"]
    print(f"  {'engine':<9} {'threads':<8} " + " ".join(f"{h:<21}" for h in cols))
    for eng in ENGINES + ["all"]:
        ets = threads if eng == "all" else [t for t in threads if t["engine"] == eng]
        for sub in ("all", "cited", "uncited"):
            sts = ets if sub == "all" else [t for t in ets if (t["ref"] in cited) == (sub == "cited")]
            rs = rates(sts)
            if not any(n for _, n in rs):
                continue
            print(f"  {eng if sub == 'all' else '':<9} {sub:<8} " + " ".join(ratio(k, n) for k, n in rs))
    if away:
        print(f"  bugs needing what no machine here has: {sum(away.values())}/{len(bugs)} ("
              + ", ".join(f"{w} {n}" for w, n in away.most_common()) + ")")
    if not history and any("first" in t for t in threads):  # a draw remapped since: its own figure is the first one
        (_, _), e0, (_, _), p0 = rates(at_draw_time(threads))
        (_, _), e1, (_, _), p1 = rates(threads)
        print(f"  measurable bugs, at draw time -> now: entry {ratio(*e0).strip()} -> {ratio(*e1).strip()}; "
              f"with pages {ratio(*p0).strip()} -> {ratio(*p1).strip()}")
    fams = defaultdict(list)
    for t in bugs:
        if measurable(t):
            fams[t.get("family", "?")].append(t)
    ranked = sorted(fams.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    shown = ranked[:top]
    if len(ranked) > top and len(ranked[top - 1][1]) > 1:  # keep families tied with the last one shown (not singletons)
        shown += [kv for kv in ranked[top:] if len(kv[1]) == len(ranked[top - 1][1])]
    if shown:
        print(f"  measurable missing families, top {len(shown)} of {len(ranked)}:")
        for fam, ts in shown:
            engines = "/".join(sorted({t["engine"] for t in ts}))
            print(f"    {len(ts):2d}  {fam:<36} [{engines}]  " + ", ".join(t["ref"] for t in ts))
    if history:
        unseen(threads)
        moved = sum(1 for t in threads if "first" in t)
        print(f"  measurable bugs at draw time (`first` where set, {moved} threads remapped since) -> now:")
        print(f"  {'engine':<9} {'entry: at draw time':<21} {'  now':<21} {'with pages: at draw':<21} {'  now':<21}")
        then_all = at_draw_time(threads)
        for eng in ENGINES + ["all"]:
            now = threads if eng == "all" else [t for t in threads if t["engine"] == eng]
            then = then_all if eng == "all" else [t for t in then_all if t["engine"] == eng]
            (_, _), (ek0, en0), (_, _), (pk0, pn0) = rates(then)
            (_, _), (ek1, en1), (_, _), (pk1, pn1) = rates(now)
            print(f"  {eng:<9} " + " ".join(ratio(k, n) for k, n in ((ek0, en0), (ek1, en1), (pk0, pn0), (pk1, pn1))))
    print()


def unseen(threads: list[dict]) -> None:
    """How many kinds of measurable bug there are: each entry or measurable bug thread is one sighting of its
    family (the entry, or its `family`). Good-Turing: the share of singletons estimates the chance that the next
    thread drawn is of a family never seen, which no entry written from the draws can cover; Chao1 is a lower
    bound of the number of families (labels name families by hand: two names for one family inflate both)."""
    fams = [(t["entry"] if t["class"] == "entry" else t.get("family", "?"), t["engine"]) for t in threads
            if t["class"] == "entry" or (t["class"] == "bug" and measurable(t))]
    print("  families of the measurable bugs (an entry's or a bug's); next thread of an unseen family (Good-Turing), "
          "families at least (Chao1):")
    for eng in ENGINES + ["all"]:
        seen = Counter(f for f, e in fams if eng in ("all", e))
        n = sum(seen.values())
        if not n:
            continue
        f1, f2 = (sum(1 for v in seen.values() if v == k) for k in (1, 2))
        chao1 = len(seen) + (f1 * f1 / (2 * f2) if f2 else f1 * (f1 - 1) / 2)
        print(f"  {eng:<9} {n:3d} bugs, {len(seen):3d} families, {f1:3d} seen once: unseen {f1 / n:4.0%}, "
              f"families >= {chao1:.0f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("threads", nargs="?", default=str(HERE / "threads.yaml"))
    ap.add_argument("--top", type=int, default=6, help="how many missing measurable families to list (default 6)")
    args = ap.parse_args(argv)

    doc = yaml.safe_load(Path(args.threads).read_text(encoding="utf-8"))
    threads = doc["threads"]
    problems = validate(threads)
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)
    cited = cited_refs()

    draw_ids = [d["id"] for d in doc.get("draws", [])]
    for t in threads:
        if t["draw"] not in draw_ids:
            draw_ids.append(t["draw"])
    queries = {d["id"]: len(d.get("queries", [])) for d in doc.get("draws", [])}
    for draw in draw_ids:
        ts = [t for t in threads if t["draw"] == draw]
        q = f", {queries[draw]} queries" if draw in queries else ""
        report(f"draw {draw}{q}", ts, cited, args.top)
    if len(draw_ids) > 1:
        report("all draws together", threads, cited, args.top, history=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
