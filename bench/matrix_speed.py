"""Cold and warm `kb matrix` times for every MNN version on PyPI, and the time per check.

cold: empty environment cache (pip downloads each version) and empty export cache;
warm: environments and exports cached, but fresh records, so every check really runs again.
Target: warm, 8 MNN versions x all MNN entries in a few minutes on 2 cores.

    .venv/bin/python bench/matrix_speed.py [--envs DIR] [kb matrix options: --entry SLUG, VERSION ...]

--envs uses an existing environment store (KB_ENVS) instead of an empty one: nothing cached there is
downloaded again, so "cold" is then cold exports only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def matrix(passed: list[str], **env):
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "kb", "matrix", "--engine", "mnn", "--json", *passed], cwd=ROOT,
                       env={**os.environ, **env}, capture_output=True, text=True)
    wall = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"kb matrix failed ({p.returncode}): {p.stderr[-2000:]}")
    rows = json.loads(p.stdout)
    return wall, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=Path, help="an existing environment store (KB_ENVS) instead of an empty one")
    args, passed = ap.parse_known_args()
    if args.envs and not args.envs.is_dir():
        ap.error(f"--envs {args.envs}: no such folder")
    envs, cache = str(args.envs or tempfile.mkdtemp(prefix="kb-envs-")), tempfile.mkdtemp(prefix="kb-cache-")
    cold, rows = matrix(passed, KB_ENVS=envs, KB_CACHE=cache, KB_RECORDS=tempfile.mkdtemp())
    warm, rows = matrix(passed, KB_ENVS=envs, KB_CACHE=cache, KB_RECORDS=tempfile.mkdtemp())
    versions = sorted({r["engine_version"] for r in rows})
    measured = [r for r in rows if r["verdict"] not in ("unavailable", "error")]
    print(f"MNN versions: {len(versions)} ({', '.join(versions)}); check runs: {len(rows)}")
    print(f"cold (download + export + run): {cold:7.1f} s")
    print(f"warm (cached envs and exports): {warm:7.1f} s   {warm / max(len(measured), 1):.2f} s per check")
    print(f"sum of check durations (warm): {sum(r['duration'] for r in rows):7.1f} s over 2 workers")


if __name__ == "__main__":
    main()
