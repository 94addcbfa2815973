"""Site build time and search index size, for the real corpus and for synthetic ones of 25 and 50 entries.

    .venv/bin/python bench/site_build.py [--repeat N] [--sizes N ...] [--no-real]

A synthetic corpus is copies of the real entries (new slugs and ids, records copied with them) in a
temp folder, selected through $KB_ROOT as everywhere in kb. Per-entry cost should stay flat: the
build and the index grow linearly with the number of entries.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kb.entries import load_all  # noqa: E402
from kb.records import Record, RecordStore  # noqa: E402
from kb.site import build_site  # noqa: E402
from kb.site.generate import records_dir, render  # noqa: E402


def synthetic_corpus(dest: Path, n: int) -> Path:
    """n entries cycling through the real ones, each with its checks, expectations and records."""
    entries = load_all(REPO)
    records, _ = RecordStore(records_dir(REPO)).read()
    lines = []
    for i in range(n):
        src = entries[i % len(entries)]
        slug = f"{src.slug}-copy-{i:03d}"
        shutil.copytree(src.dir, dest / "repros" / slug, ignore=shutil.ignore_patterns("__pycache__"))
        page = dest / "repros" / slug / "README.md"
        text = re.sub(r"^id: KB\d{3}$", f"id: KB{100 + i:03d}", page.read_text(encoding="utf-8"), count=1, flags=re.M)
        page.write_text(text, encoding="utf-8")
        lines += [r.model_copy(update={"id": Record.new_id(), "entry": slug}).model_dump_json()
                  for r in records if r.entry == src.slug]
    (dest / ".kb" / "records").mkdir(parents=True)
    (dest / ".kb" / "records" / "synthetic.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def measure(root: Path, work: Path, repeat: int) -> dict:
    os.environ["KB_ROOT"] = str(root)
    os.environ.pop("KB_RECORDS", None)
    n = len(load_all(root))
    builds, gens = [], []
    for i in range(repeat):
        t0 = time.perf_counter()
        render(root)
        gens.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        site = build_site(work / f"site-{i}", docs_dir=work / "docs", strict=True, log_level=logging.WARNING)
        builds.append(time.perf_counter() - t0)
    index = (site / "search" / "search_index.json").stat().st_size
    return {"entries": n, "build": statistics.median(builds), "generate": statistics.median(gens), "index": index}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="builds per corpus; the median is shown")
    ap.add_argument("--sizes", type=int, nargs="+", default=[25, 50], help="entries in the synthetic corpora")
    ap.add_argument("--no-real", action="store_true", help="build only the synthetic corpora")
    args = ap.parse_args()
    if len(args.sizes) + (not args.no_real) < 2:
        ap.error("two corpora at least: the marginal cost compares the smallest and the largest")
    with tempfile.TemporaryDirectory(prefix="kb-site-bench-") as tmp:
        tmp = Path(tmp)
        corpora = [] if args.no_real else [("real", REPO, tmp / "real")]
        corpora += [("synthetic", synthetic_corpus(tmp / f"corpus-{n}", n), tmp / f"out-{n}") for n in args.sizes]
        os.environ["KB_ROOT"] = str(corpora[0][1])
        build_site(tmp / "warmup", docs_dir=tmp / "warmup-docs", log_level=logging.WARNING)  # imports, caches
        rows = [(name, measure(root, work, args.repeat)) for name, root, work in corpora]

    print(f"{'corpus':<10} {'entries':>7} {'build s':>8} {'ms/entry':>9} {'generate s':>11} "
          f"{'index KiB':>10} {'index B/entry':>14}")
    for name, m in rows:
        print(f"{name:<10} {m['entries']:>7} {m['build']:>8.2f} {1000 * m['build'] / m['entries']:>9.0f} "
              f"{m['generate']:>11.2f} {m['index'] / 1024:>10.1f} {m['index'] / m['entries']:>14.0f}")
    (_, a), (_, b) = rows[0], rows[-1]
    step = (b["build"] - a["build"]) / (b["entries"] - a["entries"])
    size = (b["index"] - a["index"]) / (b["entries"] - a["entries"])
    print(f"\nmarginal cost per added entry ({a['entries']} -> {b['entries']}): {1000 * step:.0f} ms build, "
          f"{size / 1024:.1f} KiB index; fixed cost about {a['build'] - step * a['entries']:.2f} s")


if __name__ == "__main__":
    main()
