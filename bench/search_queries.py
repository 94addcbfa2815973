"""The site search on held-out queries (tests/data/search/queries.yaml): what people type, from upstream threads.

    .venv/bin/python bench/search_queries.py [--limit N] [--split tune|report] [--queries FILE ...]

Builds the site of this checkout (as tests/test_site_browser.py does), serves it locally and types each
query into material's search box in Chromium (one page, 1280 px; filled, then committed with a key
release, which is how material reads the box and how an IME commits Chinese). For each split it prints:
  top-1      queries whose first result is the expected page (entry or message page)
  top-3      ... among the first three
  no result  queries that found nothing
by language (en / zh) and form (line: an engine line as posted; words: a title or prose), and for the
negatives (`expect: none`) how many put an entry page first (false alarms, informational), with each
negative's first hit. A last line gives top-1 on the queries whose thread the project cites nowhere.
Several --queries files are pooled (each split as its own file splits it): the figures of held-out sets read
on one commit, together. Exits non-zero only on setup errors (no browser, a failed build, a query file naming
a page that does not exist), never on low figures.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import yaml

from kb.errors import KBError
from kb.site import searchbox

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO / "tests" / "data" / "search" / "queries.yaml"
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


class SetupError(Exception):
    pass


def load_queries(path: Path, pages: set[str]) -> list[dict]:
    try:
        items = yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
        raise SetupError(f"{path}: cannot read the queries ({e})")
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict) or not it.get("q") or not it.get("ref") or "expect" not in it:
            raise SetupError(f"{path}: query {i + 1} needs q, ref and expect")
        want = it["expect"] if isinstance(it["expect"], list) else [it["expect"]]
        bad = [w for w in want if w != "none" and w not in pages]
        if bad:
            raise SetupError(f"{path}: query {i + 1} ({it['ref']}) expects {bad}, which no page of the site is")
        out.append({**it, "want": set(want) - {"none"},
                    "lang": "zh" if CJK.search(it["q"]) else "en",
                    "form": it.get("form", "words"),
                    "split": ("tune", "report")[i % 2]})  # alternate, in collection order
    return out


def cited_refs() -> set[str]:
    """Every upstream thread the project mentions anywhere (entries, message pages, docs, the explain
    bench's logs, the tests): those threads may have shaped the search, the others cannot have."""
    text = []
    for top in ("repros", "docs", "kb", "tests", "tests/data/real_logs"):
        for p in (REPO / top).rglob("*"):
            if p.is_file() and p.suffix in {".yaml", ".yml", ".md", ".py", ".txt", ".log", ".json"}:
                text.append(p.read_text(encoding="utf-8", errors="replace"))
    return set(re.findall(r"[\w.-]+/[\w.-]+#\d+", "\n".join(text)))


def site_pages() -> set[str]:
    from kb import messages
    from kb.entries import load_all

    return {e.slug for e in load_all(REPO)} | {f"messages/{m.id}" for m in messages.load_all(REPO).values()}


def generic_lines(queries: list[dict]) -> None:
    """The issue's rule beside each query's own `expect`: for a generic line (a message printed for many
    causes), its message page is a right first result too. Kept apart (`rule`), so both figures print."""
    from kb import messages

    generic = [m for m in messages.load_all(REPO).values() if m.generic]
    for q in queries:
        q["rule"] = q["want"] | {f"messages/{m.id}" for m in generic if q["want"] and re.search(m.pattern, q["q"])}


def build(tmp: Path) -> Path:
    """The site of this checkout, built in a fresh Python (as the browser test does: the index's Chinese
    words come from jieba's global state), from a snapshot of the record store."""
    site = tmp / "site"
    p = searchbox.build(site, tmp / "docs", searchbox.snapshot(tmp / "records"), cwd=REPO)
    if p.returncode != 0:
        raise SetupError(f"the site build failed:\n{p.stderr[-2000:]}")
    return site


def search(page, query: str) -> list[str]:
    """Type `query` into the box; the result pages' paths, best first ([] for "no result")."""
    return [urlparse(h).path.strip("/") for h in searchbox.search(page, query)]


def run_queries(queries: list[dict], site: Path) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SetupError("playwright is not installed (pip install -e '.[test]')")
    exe = searchbox.chromium_path()
    if exe is None:
        raise SetupError("no Chromium found (apt-get install chromium, or set KB_CHROMIUM)")
    with searchbox.served(site) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=searchbox.CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        box = page.locator("input.md-search__input")
        box.click()
        box.fill(searchbox.ZH_PROBE)
        box.press("End")
        page.wait_for_function(f"document.querySelectorAll('{searchbox.RESULTS}').length > 0", timeout=120_000)
        for q in queries:
            q["hits"] = search(page, q["q"])
        browser.close()


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"


def report(queries: list[dict], entries: set[str], cited: set[str]) -> None:
    for split in ("tune", "report"):
        qs = [q for q in queries if q["split"] == split]
        if not qs:
            continue
        pos = [q for q in qs if q["want"]]
        neg = [q for q in qs if not q["want"]]
        print(f"== split {split}: {len(pos)} positives, {len(neg)} negatives")
        print(f"{'':<16}{'n':>4}  {'top-1':>12}  {'top-3':>12}  {'no result':>10}")

        def row(name, group):
            n = len(group)
            t1 = sum(bool(q["hits"]) and q["hits"][0] in q["want"] for q in group)
            t3 = sum(bool(q["want"] & set(q["hits"][:3])) for q in group)
            empty = sum(not q["hits"] for q in group)
            print(f"{name:<16}{n:>4}  {pct(t1, n):>12}  {pct(t3, n):>12}  {empty:>10}")

        row("all", pos)
        by_rule = sum(bool(q["hits"]) and q["hits"][0] in q.get("rule", q["want"]) for q in pos)
        print(f"{'  rule':<16}{len(pos):>4}  {pct(by_rule, len(pos)):>12}  (top-1 where a generic line's message page "
              f"counts as right too, as issue 19 states the bar)")
        for lang in ("en", "zh"):
            row(f"  {lang}", [q for q in pos if q["lang"] == lang])
        for form in ("line", "words"):
            row(f"  {form}", [q for q in pos if q["form"] == form])
        for lang in ("en", "zh"):
            for form in ("line", "words"):
                row(f"  {lang} {form}", [q for q in pos if q["lang"] == lang and q["form"] == form])
        fresh = [q for q in pos if q["ref"] not in cited]
        row("  uncited", fresh)
        alarms = [q for q in neg if q["hits"] and q["hits"][0] in entries]
        print(f"negatives: {len(alarms)}/{len(neg)} put an entry first (false alarms); "
              f"{sum(not q['hits'] for q in neg)} found nothing")
        for q in neg:
            first = q["hits"][0] if q["hits"] else "no result"
            mark = "ALARM" if q in alarms else "     "
            print(f"  {mark} {q['ref']:<20} {q['q'][:60]!r} -> {first}")
        misses = [q for q in pos if not (q["hits"] and q["hits"][0] in q["want"])]
        print(f"misses ({len(misses)}):")
        for q in misses:
            want = " | ".join(sorted(q["want"]))
            print(f"  {q['ref']:<20} [{q['lang']} {q['form']}] {q['q'][:70]!r}\n"
                  f"      want {want}; got {q['hits'][:3] or 'no result'}")
        print()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, help="only the first N queries (a smoke run)")
    ap.add_argument("--split", choices=("tune", "report"), help="only this split")
    ap.add_argument("--queries", type=Path, nargs="+", default=[QUERIES])
    ap.add_argument("--site", type=Path, help="a site already built from this checkout (default: build one)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    try:
        pages = site_pages()
        queries = [q for path in args.queries for q in load_queries(path, pages)]
        generic_lines(queries)
        if args.split:
            queries = [q for q in queries if q["split"] == args.split]
        if args.limit:
            queries = queries[:args.limit]
        if args.site:
            if not (args.site / "search" / "search_index.json").is_file():
                raise SetupError(f"--site {args.site}: no built site there (search/search_index.json)")
            run_queries(queries, args.site)
        else:
            with tempfile.TemporaryDirectory(prefix="kb-search-bench-") as tmp:
                run_queries(queries, build(Path(tmp)))
    except (SetupError, KBError) as e:
        print(f"search_queries: {e}", file=sys.stderr)
        return 2
    report(queries, {p for p in pages if not p.startswith("messages/")}, cited_refs())
    return 0


if __name__ == "__main__":
    sys.exit(main())
