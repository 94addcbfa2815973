"""Where the suite's time goes: a JUnit XML of a test run, summed by part (kb's own tests per file, the corpus per
check kind and engine) and, from the records the corpus's items carry, by engine step.

    ./run test --junitxml=run.xml     # or any pytest run of tests/ or repros/
    .venv/bin/python bench/suite_budget.py run.xml [--top 15]

The times are each item's wall time on its xdist worker, so with more workers than cores they include waiting for a
core: compare parts of one run, and runs on one machine.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit", type=Path, help="pytest's --junitxml output")
    ap.add_argument("--top", type=int, default=15, help="rows per table (default 15)")
    args = ap.parse_args()
    try:
        root = ET.parse(args.junit).getroot()
    except (OSError, ET.ParseError) as e:
        sys.exit(f"{args.junit}: not a JUnit XML file pytest wrote ({e})")
    parts, steps = defaultdict(lambda: [0, 0.0]), defaultdict(lambda: [0, 0.0])
    for case in root.iter("testcase"):
        where, name, took = case.get("classname", ""), case.get("name", ""), float(case.get("time", 0))
        if where.startswith("repros."):
            kind = "contract" if name.startswith("contract[") else "variant" if "[variant-" in name else "check"
            record = next((json.loads(p.get("value")) for p in case.iter("property") if p.get("name") == "kb-record"),
                          None)
            part = f"repros: {kind}" + (f", {record['engine']}" if record else "")
            for step in (record or {}).get("steps", []):
                how = step["name"].split(" ")[0] + (" (emulated arm64)" if "emulated" in step["name"] else "") + \
                    (" (valgrind)" if "valgrind" in step["name"] else "")
                steps[how][0] += 1
                steps[how][1] += step["duration"]
        else:
            part = re.sub(r"^tests\.", "tests/", where) + ".py"
        parts[part][0] += 1
        parts[part][1] += took
    total = sum(s for _, s in parts.values())
    if not parts:
        sys.exit(f"{args.junit}: no test cases in it")
    print(f"{sum(n for n, _ in parts.values())} items, {total:.0f} s of item time")
    for title, table in (("part", parts), ("engine step (in the corpus's checks)", steps)):
        print(f"\n{title:48} {'items':>6} {'seconds':>8} {'share':>6}")
        for key, (n, s) in sorted(table.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print(f"{key:48} {n:6d} {s:8.1f} {s / total:6.1%}")
    tests = sum(s for k, (_, s) in parts.items() if k.startswith("tests/"))
    print(f"\nkb's own tests {tests:.0f} s ({tests / total:.0%}), the corpus {total - tests:.0f} s "
          f"({(total - tests) / total:.0%})")


if __name__ == "__main__":
    main()
