"""Would a learned ranker order the search box's results better than its hand rules? Leave-one-set-out.

    .venv/bin/python bench/search_ranker.py [--queries FILE ...]

The box orders pages by rules: the pages an engine line names (entries, then message pages in the order the
paste shows them, a secondary one last), then the pages that share the query's words (BM25, the named engines'
first). This bench ranks each query's candidates (the pages the line rules name and the ten best by words) by a
weighted sum of the features those rules read, with weights learned by coordinate ascent on top-1 (Metzler and
Croft's method, as RankLib has it), starting from weights that reproduce the rules. Each query set is scored
with weights learned on all the others: a learned order that does not beat the rules there would not beat
them on a new set either. Offline (the box's two generated scripts are this Python, written out; lunr's
fallback is left out), so on one query set it agrees with bench/search_queries.py wherever a rule names a page.
Prints top-1 per set for the rules and for the learned order, and the weights learned on all sets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

FEATURES = ("line_entry", "line_specific", "line_message", "message_first", "secondary", "cause",
            "words", "words_first", "engine_named", "engine_other", "message")
RULES = (8, 0.5, 4, 1, -2, 3, 1, 0, 0.5, -0.5, 0)  # weights that order candidates as the rules do, or nearly
STEPS = (-4, -2, -1, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1, 2, 4)
WORD_CANDIDATES = 10


def candidates(text: str, table, index) -> dict[str, list[float]]:
    """Each candidate page's features."""
    from kb.match.words import named_engines

    feats: dict[str, dict[str, float]] = {}
    hits = table.hits(text)
    messages = sorted({(h.late, h.at, h.page) for h in hits if h.message and h.own})
    for h in hits:
        f = feats.setdefault(h.page, {})
        if not h.message:
            f["line_entry"] = 1
            f["line_specific"] = max(f.get("line_specific", 0), -h.specific / 40)
        elif not h.own:
            f["cause"] = 1
        else:
            f["line_message"] = 1
            f["secondary"] = float(h.late)
            f["message_first"] = float(messages[0][2] == h.page and not h.late)
    scores = index.index.scores(index.query(text))
    best = sorted((i for i, s in scores.items() if s > 0), key=lambda i: -scores[i])[:WORD_CANDIDATES]
    for k, i in enumerate(best):
        f = feats.setdefault(index.pages[i], {})
        f["words"] = scores[i] / scores[best[0]]
        f["words_first"] = float(k == 0)
    named = named_engines(text)
    for page, f in feats.items():
        engines = set(table.engines.get(page, ()))
        f["engine_named"] = float(bool(named & engines))
        f["engine_other"] = float(bool(named) and not named & engines)
        f["message"] = float(page.startswith("messages/"))
    return {page.strip("/"): [f.get(name, 0.0) for name in FEATURES] for page, f in feats.items()}


def top1(weights, queries) -> int:
    """Queries whose best-scored candidate is right (ties go to the rules' order)."""
    ok = 0
    for q in queries:
        if q["cands"]:
            page = max(q["cands"], key=lambda p: (sum(w * x for w, x in zip(weights, q["cands"][p])),
                                                  -q["order"].index(p) if p in q["order"] else -len(q["order"])))
            ok += page in q["want"]
    return ok


def ascend(queries, weights=RULES, rounds: int = 4) -> tuple[list[float], int]:
    """Coordinate ascent: each weight in turn moves by the step that raises top-1 most, until none does."""
    weights, best = list(weights), top1(weights, queries)
    for _ in range(rounds):
        moved = False
        for j in range(len(weights)):
            for step in STEPS:
                trial = weights[:j] + [weights[j] + step] + weights[j + 1:]
                if (score := top1(trial, queries)) > best:
                    weights, best, moved = trial, score, True
        if not moved:
            break
    return weights, best


def main(argv: list[str] | None = None) -> int:
    import search_queries as sq
    from kb import messages
    from kb.entries import load_all
    from kb.match.lines import Table
    from kb.match.words import SiteIndex

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=Path, nargs="+",
                    default=sorted((REPO / "tests" / "data" / "search").glob("queries*.yaml")))
    args = ap.parse_args(argv)
    entries, msgs = load_all(REPO), messages.load_all(REPO)
    table, index = Table.build(entries, msgs), SiteIndex(entries, msgs)
    pages = sq.site_pages()
    sets: dict[str, list[dict]] = {}
    try:
        for path in args.queries:
            qs = [q for q in sq.load_queries(path, pages) if q["want"]]
            for q in qs:
                q["cands"] = candidates(q["q"], table, index)
                q["order"] = list(dict.fromkeys(p.strip("/") for p in table.pages(q["q"]) + index.rank(q["q"])))
            sets[path.name] = qs
    except sq.SetupError as e:
        print(f"search_ranker: {e}", file=sys.stderr)
        return 2
    if len(sets) < 2:
        print("search_ranker: leave-one-set-out needs two query files or more", file=sys.stderr)
        return 2
    print(f"{'held out':<24}{'n':>5}{'rules':>8}{'learned':>9}")
    total = [0, 0, 0]
    for name, held in sets.items():
        rest = [q for other, qs in sets.items() if other != name for q in qs]
        weights, _ = ascend(rest)
        rules = sum(bool(q["order"]) and q["order"][0] in q["want"] for q in held)
        learned = top1(weights, held)
        print(f"{name:<24}{len(held):>5}{rules:>8}{learned:>9}")
        total = [total[0] + len(held), total[1] + rules, total[2] + learned]
    print(f"{'all (leave-one-set-out)':<24}{total[0]:>5}{total[1]:>8}{total[2]:>9}")
    every = [q for qs in sets.values() for q in qs]
    weights, fit = ascend(every)
    print(f"learned on every set: {fit}/{len(every)} top-1 on those same sets (rules as weights: "
          f"{top1(RULES, every)}); weights " + ", ".join(f"{n}={w:g}" for n, w in zip(FEATURES, weights)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
