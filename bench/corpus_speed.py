"""Wall time of `pytest repros/` (cold export cache) next to the bare engine work, as a ratio.

The bare baseline is bench/bare_entry.py run once per entry: one process per problem that imports
torch and the engines once and runs the same exports, conversions and inferences in sequence.
Target: ratio <= 1.3.

    .venv/bin/python bench/corpus_speed.py [--entries SLUG ...]   # default: every entry of $KB_ROOT
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv, **env):
    start = time.monotonic()
    # One thread everywhere: forking the bare baseline after OpenMP started its pool can deadlock,
    # and both sides must run the engines alike.
    env = {**os.environ, "OMP_NUM_THREADS": "1", **env}
    p = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - start
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return wall, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", nargs="+", metavar="SLUG", help="only these entries (default: all)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from kb.entries import load_all
    from kb.paths import repo_root

    entries = load_all()
    if unknown := sorted(set(args.entries or ()) - {e.slug for e in entries}):
        ap.error(f"no such entry under {repo_root() / 'repros'}: {', '.join(unknown)}")
    entries = [e for e in entries if not args.entries or e.slug in args.entries]
    slugs = [e.slug for e in entries]
    targets = [str(e.dir) for e in entries] if args.entries else [str(repo_root() / "repros")]
    records = tempfile.mkdtemp(prefix="kb-bench-records-")
    corpus, p = timed([sys.executable, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider"],
                      KB_CACHE=tempfile.mkdtemp(prefix="kb-bench-cache-"), KB_RECORDS=records)
    summary = p.stdout.strip().splitlines()[-1]
    bare = {}
    for slug in slugs:
        wall, p = timed([sys.executable, "bench/bare_entry.py", slug], KB_RECORDS=records)
        if p.returncode != 0:
            sys.exit(f"bench/bare_entry.py {slug} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        bare[slug] = wall
        sys.stderr.write(p.stderr)  # bare_entry's sanity lines: each check's verdict, as kb check gives it
    total = sum(bare.values())
    print(f"{'entry':45} bare s")
    for slug, wall in bare.items():
        print(f"{slug:45} {wall:6.2f}")
    print(f"{'bare engine work, all entries':45} {total:6.2f}")
    print(f"{'pytest repros/ (cold cache)':45} {corpus:6.2f}   [{summary}]")
    print(f"ratio corpus / bare: {corpus / total:.2f}  (target <= 1.3)")


if __name__ == "__main__":
    main()
