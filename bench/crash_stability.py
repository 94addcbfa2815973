"""Which accepted crashes happen in every memory layout: each check whose accepted verdict for the installed engine is a
crash (its signature is a signal, or a line that may end in one) runs K times, run k as a check's attempt k runs
(kb.harness.layout: path lengths, environment size, glibc's fill byte), and every run counts, not only up to the first
crash. A check that ran through in some layout and declares fewer attempts than it needs can read FIXED on another
machine while the bug is alive (KB182 in CI): give it `attempts`, or a program that crashes more surely.

    .venv/bin/python bench/crash_stability.py [--runs 4] [--entries SLUG ...] [--engine mnn]

Prints one line per check (crashes of K runs, the attempts it declares) and the unstable ones at the end; exit 1 if
any check with fewer than two declared attempts ran through in some layout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def crash_checks(entries, engine: str | None):
    """(entry, check) for each check accepted as reproducing a crash on the installed engine version."""
    from kb import engines, expectations
    from kb.checks import load_checks
    from kb.verdicts import Verdict

    for e in entries:
        crash = {s.id for s in e.meta.signatures if s.kind == "crash" or s.or_signal}
        if not crash:
            continue
        table = expectations.load(e.expected)
        for c in load_checks(e).items.values():
            if engine and c.engine != engine or engines.missing(c.engine):
                continue
            got = expectations.lookup(table, c.name, engines.version(c.engine) or "")
            if got and got.exp.verdict == Verdict.REPRODUCES and got.exp.signature in crash:
                yield e, c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4, help="runs per check, run k in attempt k's layout (default 4)")
    ap.add_argument("--entries", nargs="+", metavar="SLUG", help="only these entries (default: all)")
    ap.add_argument("--engine", help="only checks of this engine")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from kb import child
    from kb.artifacts import prepare
    from kb.entries import load_all
    from kb.harness import _Judged, attempt
    from kb.verdicts import Verdict

    entries = [e for e in load_all(ROOT) if not args.entries or e.slug in args.entries]
    unstable, total = [], 0
    for e, c in crash_checks(entries, args.engine):
        arts = prepare(e)
        verdicts = []
        for k in range(args.runs):
            out = attempt(e, c, arts, k, child.ATTEMPT_TIMEOUT)
            verdicts.append(out.j.verdict if isinstance(out, _Judged) else out[0])
        crashed = sum(v == Verdict.REPRODUCES for v in verdicts)
        total += 1
        print(f"{e.slug:44s} {c.name:36s} crashed {crashed}/{args.runs}  attempts {c.attempts}"
              + ("" if crashed == args.runs else f"  ({', '.join(verdicts)})"), flush=True)
        if crashed < args.runs:
            unstable.append((e.slug, c.name, crashed, c.attempts))
    print(f"\n{total} crash checks, {total - len(unstable)} crashed in all {args.runs} layouts")
    for slug, name, crashed, attempts in unstable:
        print(f"  unstable: {slug} {name}: {crashed}/{args.runs}, declares {attempts} attempt(s)")
    sys.exit(1 if any(a < 2 for *_, a in unstable) else 0)


if __name__ == "__main__":
    main()
