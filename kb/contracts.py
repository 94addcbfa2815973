"""What kb promises about every entry, checked per entry: `pytest repros/<slug>` runs them with its checks.

Each contract takes the entry and its declared checks and returns a problem (one line per finding), or
None. They read the entry's own data only: its signatures, reproducer, ledger and page.
"""

from __future__ import annotations

import functools
import io
import math
import re
from pathlib import Path

from kb.checks import Checks
from kb.entries import Entry, load_all

MIN_VARIANTS = 8  # an entry's measured scope: at least this many variant models, labelled by the engine


def _root(entry: Entry) -> Path:
    return entry.dir.parent.parent


@functools.cache
def _corpus(root: Path) -> list[Entry]:
    return load_all(root, broken=[])  # another entry's breakage fails that entry's own tests, not these


def explain(entry: Entry, checks: Checks) -> str | None:
    """`kb explain` finds the entry from each of its signatures' example lines."""
    from kb.match.explain import explain as run

    entries = _corpus(_root(entry))
    missed = []
    for sig in (s for s in entry.meta.signatures if s.kind == "log" and s.example):
        ruled: list = []
        ranked, _ = run(f"{sig.id}.log", io.BytesIO(f"{sig.example}\n".encode()), entries, ruled_out=ruled)
        found = {x.entry.slug for x in ranked}
        # entries whose own log signature matches the same line share it: all must be found, in any order, but
        # those the line itself rules out (it names another op than their evidence needs)
        refuted = {x.entry.slug for x in ruled}
        sharing = {e.slug for e in entries for s in e.meta.signatures
                   if s.kind == "log" and s.regex().search(sig.example)} - refuted
        if not {entry.slug} | sharing <= found:
            missed.append(f"{sig.id}: {sig.example!r} found {sorted(found)}, expected {sorted({entry.slug} | sharing)}")
    return "\n".join(missed) or None


def scan(entry: Entry, checks: Checks) -> str | None:
    """`kb scan` finds every trigger case of the reproducer, and no control case."""
    import onnx

    from kb.artifacts import PreparationFailed, prepare
    from kb.match.scan import find_problems

    if not entry.meta.trigger:
        return None  # a user error or tool hazard without a graph trigger (the schema allows it only there)
    try:
        arts = prepare(entry)  # cached by content: exported once
    except PreparationFailed as e:
        return str(e)
    wrong = []
    for name, case in arts.manifest.items():
        if "error" in case:
            wrong.append(f"case {name!r} did not export: {case['error']}")
            continue
        if case.get("variant"):  # labelled by the engine run: the scope contract
            continue
        found = find_problems([entry], onnx.load(str(arts.onnx(name)), load_external_data=False)).found
        if case["trigger"] and not found:
            wrong.append(f"trigger case {name!r}: no pattern of {[p.name for p in entry.meta.trigger]} found")
        if not case["trigger"] and found:
            wrong.append(f"control case {name!r}: pattern {found[0].match.pattern!r} found at "
                         f"{sorted(found[0].match.nodes.values())}")
    return "\n".join(wrong) or None


@functools.cache
def _page_context(root: Path) -> tuple[dict, frozenset[str]]:
    """What an entry's page reads besides the entry: the message index and the ops that have an op page."""
    from kb import messages
    from kb.site import ops

    conf = ops.Conformance.load(root)
    return messages.load_all(root, _corpus(root)), frozenset(conf.ops()) if conf.tables else frozenset()


@functools.cache
def _pages(root: Path, slug: str) -> tuple[str, str]:
    """The entry's page and its row of the home page, as the site renders them (kb.site.generate.render) with no
    records: statuses come from the ledgers. One entry's, not the whole site's (a third of `pytest repros/<slug>`)."""
    from kb.site import pages
    from kb.status import of_entry

    entry = next(e for e in _corpus(root) if e.slug == slug)
    known, op_names = _page_context(root)
    status = of_entry(entry, [])
    return pages.entry_page(entry, status, known, op_names), pages.home_page([(entry, status)])


def page(entry: Entry, checks: Checks) -> str | None:
    """The entry's page renders with its status, and its row of the home page renders."""
    text, home = _pages(_root(entry), entry.slug)
    if entry.meta.id not in text or "data-status=" not in text:
        return "the page lacks its id or its status"
    if entry.slug not in home:
        return "the home page does not list it"
    return None


def ledger(entry: Entry, checks: Checks) -> str | None:
    """Every check has accepted verdicts (where its engines are installed), and the ledger names no other."""
    from kb import engines, expectations

    table = expectations.load(entry.expected)
    problems = []
    for name, c in checks.items.items():
        if not table.get(name) and not any(engines.missing(e) for e in c.engines):
            problems.append(f"{name}: nothing accepted in {entry.expected.name} (run `kb check {entry.slug} "
                            f"--check {name}`, then `kb accept {entry.slug} --check {name}`)")
    problems += [f"{entry.expected.name} accepts verdicts for {n!r}, which no check declares"
                 for n in table if n not in checks.items]
    return "\n".join(problems) or None


def scope(entry: Entry, checks: Checks) -> str | None:
    """The trigger pattern matches every variant the engine reproduces on the newest release accepted, and
    no variant it is fixed on; a variant that fails another way (differs) may match. At least 8 variants.
    An entry without a trigger (`untriggered`, or a user error) has no scope to measure, and a regression guard
    none while no variant reproduces."""
    import onnx

    from kb import expectations
    from kb.artifacts import PreparationFailed, prepare
    from kb.pattern import find
    from kb.verdicts import Verdict
    from kb.versions import version_key

    variants = [c for c in checks.items.values() if c.variant]
    if not entry.meta.trigger:
        return None  # nothing for scan to find: a user error or a tool hazard
    if not variants:
        return f"no variants; an entry's scope needs at least {MIN_VARIANTS}"
    table = expectations.load(entry.expected)
    try:
        arts = prepare(entry)
    except PreparationFailed as e:
        return str(e)
    disagreements, affected_any = [], False
    for c in variants:
        accepted = table.get(c.name)
        if not accepted:
            disagreements.append(f"{c.name}: no accepted verdict")
            continue
        newest = max(accepted, key=version_key)
        verdict = accepted[newest].verdict
        affected_any |= verdict == Verdict.REPRODUCES
        matched = bool(find(entry.meta.trigger, onnx.load(str(arts.onnx(c.variant)), load_external_data=False)))
        if (verdict == Verdict.REPRODUCES and not matched) or (verdict == Verdict.FIXED and matched):
            disagreements.append(f"{c.variant}: engine says {verdict} on {c.engine} {newest}, "
                                 f"trigger pattern {'matches' if matched else 'does not match'}")
    if len(variants) < MIN_VARIANTS:
        disagreements.append(f"{len(variants)} variants; an entry's scope needs at least {MIN_VARIANTS}")
    if entry.meta.guard and not affected_any:
        return None  # a regression guard: no variant fails on the versions measured
    return "; ".join(disagreements) or None


def _ledger_workaround(entry: Entry, checks: Checks, engine: str | None = None) -> tuple[str, str, str] | None:
    """(workaround, engine, release) verified by the raw ledger, read apart from kb.status: on each
    engine its checks run, the newest release with an in-scope verdict (the user's newest release of
    `engine`, where it is that engine); every in-scope verdict there `works`, or one does for a
    model-dependent workaround. A check listed as a limit never counts; skips and errors are no verdicts."""
    from kb import yamlio
    from kb.versions import sort_versions

    raw = (yamlio.load(entry.expected.read_text(encoding="utf-8"))
           or {}).get("checks", {}) if entry.expected.is_file() else {}
    cells = {name: {v: run["verdict"] for per in raw.get(name, {}).values() for run in per for v in run["versions"]}
             for name in checks.items}
    mine = [c for c in checks.items.values() if c.engine == engine]
    users = sort_versions({v for c in mine for v in cells[c.name]})[-1:] if engine else []
    for w in entry.meta.workarounds:
        limits = {lim.check for lim in w.limits}
        ours = [c for c in checks.items.values() if c.workaround == w.id and c.name not in limits]
        for on in dict.fromkeys(c.engine for c in ours):
            group = [c.name for c in ours if c.engine == on]
            releases = users if on == engine else sort_versions({v for n in group for v in cells[n]})[-1:]
            for v in releases:
                there = [cells[n][v] for n in group if cells[n].get(v) in ("works", "broken")]
                good = [x for x in there if x == "works"]
                if good and (len(good) == len(there) or w.model_dependent):
                    return w.id, on, v
    return None


def answer(entry: Entry, checks: Checks) -> str | None:
    """The first screen (its status badge too) and the reply say what the ledger says about workarounds, on the
    newest release of each engine: the same workaround verified on the same release, or none."""
    import re

    from kb.engines import ENGINES
    from kb.match.reply import _what_to_do
    from kb.match.status import Statuses, Wanted

    problems = []
    page, _ = _pages(_root(entry), entry.slug)
    screen = re.search(r'<p class="kb-answer-fix">(.*?)</p>', page, re.S)
    said = screen[1] if screen else ""
    summaries = {w.id: w.summary for w in entry.meta.workarounds}
    want = _ledger_workaround(entry, checks)
    badge = re.search(r'<p class="kb-headline"><span [^>]*data-status="([\w-]+)"', page)
    if want and badge and badge[1] == "workaround-broken":
        problems.append(f"first screen: the ledger verifies {want[0]} on {want[1]} {want[2]}, the badge says "
                        "workaround broken")
    if want is None and "No workaround is verified" not in said:
        problems.append(f"first screen: the ledger verifies no workaround, the page says {said[:120]!r}")
    if want and f"({ENGINES[want[1]].shown} {want[2]}): {summaries[want[0]][:30]}" not in _plain(said):
        problems.append(f"first screen: the ledger verifies {want[0]} on {want[1]} {want[2]}, the page says "
                        f"{_plain(said)[:160]!r}")
    for engine in entry.meta.engines:
        want = _ledger_workaround(entry, checks, engine)
        text = "\n".join(_what_to_do(entry, Statuses(records=[]).of(entry, [Wanted(engine, None)])))
        if want is None and "Verified workaround" in text:
            problems.append(f"reply for {engine}: the ledger verifies no workaround, the reply gives one")
        if want and f"Verified workaround ({ENGINES[want[1]].shown} {want[2]}): {summaries[want[0]]}" not in text:
            problems.append(f"reply for {engine}: the ledger verifies {want[0]} on {want[1]} {want[2]}; "
                            f"the reply says {text[:200]!r}")
    return "\n".join(problems) or None


_NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)"
_PROSE_FIGURE = re.compile(r"max (abs|rel) diff(?: of)? (?:up to |about )?" + _NUMBER)


def figures(entry: Entry, checks: Checks) -> str | None:
    """Every error figure the page's prose gives (max abs diff / max rel diff N) is one its ledger records, to
    the digits the prose prints: a figure no run measured, or one retyped wrong, fails."""
    ledger = entry.expected.read_text(encoding="utf-8") if entry.expected.is_file() else ""
    measured = {(kind, float(n)) for kind, n in re.findall(r"max (abs|rel) diff " + _NUMBER, ledger)}

    def recorded(kind: str, said: str) -> bool:
        value, digits = float(said), len(said.split("e")[0].replace(".", "").lstrip("0")) or 1
        half = 10 ** (math.floor(math.log10(value)) - digits + 1) / 2 * 1.001 if value else 0  # of its last digit
        return any(k == kind and abs(n - value) <= half for k, n in measured)

    wrong = [f"{m[0]!r}: no figure in {entry.expected.name} rounds to it" for m in _PROSE_FIGURE.finditer(entry.body)
             if not recorded(m[1], m[2])]
    return "\n".join(wrong) or None


def _plain(html: str) -> str:
    import html as h
    import re

    return h.unescape(re.sub(r"<[^>]+>", "", html))


CONTRACTS = {"explain": explain, "scan": scan, "page": page, "ledger": ledger, "scope": scope, "answer": answer,
             "figures": figures}


def rules() -> str:
    """The contracts in a reader's words, one bullet each: the README's "Adding an entry" lists them."""
    told = {"declared": Checks.entry, **CONTRACTS}
    return "\n".join(f"   - `{name}`: {' '.join((fn.__doc__ or '').split())}" for name, fn in told.items())
