"""`kb scan MODEL`: every known problem whose trigger pattern occurs in a model.

The patterns are the entries' own (front matter `trigger`), matched by kb.pattern, the same code that
checks the reproducers' preconditions: one definition of each problem's shape.

With `--engine mnn==3.6.1` (repeatable) the answer is about those engines:
- the text lists only the problems that concern a named engine (their `engines` front matter names it),
  those concerning the first-named engine first, then the next one's, the ones affecting a named release
  first within each; one line says how many problems of other engines it left out; `--json` still gives
  every match, each with `concerns` (false for those left out of the text) and `affects`;
- the exit code is 1 only when a listed problem affects a named release: its status there is
  "reproduces", or, on a release not measured (never run, or a check errored there), it reproduces on the
  nearest measured releases on both sides (or on the only side there is: a release newer or older than
  every one measured). Fixed, fails differently, workaround-only, never run on that engine, or a release
  between a reproducing and a fixed one: 0; the text says which releases decided.
Without --engine every problem is listed, its status given on each engine's newest release, and the
exit code is 1 unless every match is a regression guard (fixed wherever measured).
Matches are grouped by problem and pattern: a count and a few node names each; --json lists them all.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from kb.verdicts import Status as State
from kb.entries import Entry, load_all
from kb.match import codes
from kb.match.links import page_url
from kb.match.modelfile import load
from kb.match.status import UNMEASURED, Status, Statuses, Wanted, parse_engines
from kb.pattern import Match, indexes, match_graph
from kb.versions import version_key

SHOWN_NODES = 3  # text output names this many matches of one pattern; --json lists them all


@dataclass
class Found:
    entry: Entry
    match: Match
    nested: bool  # inside an If/Loop/Scan body rather than the main graph


@dataclass
class Scanned:
    found: list[Found]
    nodes: int  # nodes looked at, in every (sub)graph
    graphs: int


def find_problems(entries: list[Entry], model) -> Scanned:
    """Match every entry's patterns on each (sub)graph, indexing each graph once: linear in its size."""
    found, nodes, graphs = [], 0, 0
    for index in indexes(model):  # the main graph first
        for e in entries:
            for p in e.meta.trigger:
                found.extend(Found(e, m, graphs > 0) for m in match_graph(p, index))
        nodes, graphs = nodes + len(index.nodes), graphs + 1
    found.sort(key=lambda f: f.entry.meta.id)  # stable: graph order within an entry
    return Scanned(found, nodes, graphs)


AFFECTED = (State.REPRODUCES, State.DIFFERS)  # "affected", or "affected (it fails another way there)"


@dataclass
class Judged:
    """A status on one engine release, and whether it counts as affecting that release."""

    status: Status
    affected: bool
    why: str = ""  # which measured releases decided, where the release itself has no measurement


@dataclass
class Problem:
    """One entry's matches, grouped by pattern, with their statuses."""

    entry: Entry
    matches: dict[str, list[Found]]  # pattern -> its matches, in graph order
    judged: dict[str, list[Judged]]  # pattern -> one per engine release asked about
    concerns: bool  # the entry concerns a named engine (always, without --engine)

    @property
    def affects(self) -> bool:
        return self.concerns and any(j.affected for js in self.judged.values() for j in js)


def scan_command(model: str, engines: list[str], as_json: bool) -> int:
    """Print the known problems in `model`; return 1 if one affects the engines asked about (without
    --engine: if one is not fixed everywhere measured), else 0 (KBError on bad input)."""
    wanted = parse_engines(engines)  # before the slow part, so a typo fails fast
    loaded = load(model)
    entries = load_all()
    scanned = find_problems(entries, loaded.model)
    if loaded.note:
        print(f"{loaded.path}: {loaded.note}", file=sys.stderr)
    source = Statuses()
    source.prefetch({f.entry.slug for f in scanned.found})
    named = list(dict.fromkeys(w.engine for w in wanted))
    problems = _problems(scanned.found, source, wanted, named)
    if as_json:
        print(json.dumps([_as_json(f, p) for p in problems for fs in p.matches.values() for f in fs], indent=1))
    else:
        blind = [e for e in entries if e.meta.untriggered and _concerns(e, named)]
        print(_as_text(str(loaded.path), scanned, problems, wanted, sum(len(e.meta.trigger) for e in entries), blind))
        print(_op_cases(loaded.model, wanted, problems), end="")
    return codes.FOUND if any(p.affects for p in problems) else codes.NOTHING_FOUND


def _concerns(entry: Entry, named: list[str]) -> bool:
    return not named or any(e in entry.meta.engines for e in named)


def _problems(found: list[Found], source: Statuses, wanted: list[Wanted], named: list[str]) -> list[Problem]:
    """The entries found, each with its statuses judged; with --engine, the problems concerning the
    first-named engine first, then the next one's; within each, those affecting a named release first."""
    by_entry: dict[str, Problem] = {}
    for f in found:
        p = by_entry.get(f.entry.slug) or by_entry.setdefault(
            f.entry.slug, Problem(f.entry, {}, {}, _concerns(f.entry, named)))
        p.matches.setdefault(f.match.pattern, []).append(f)
    for p in by_entry.values():
        for pattern in p.matches:
            statuses = source.of(p.entry, wanted, pattern)
            p.judged[pattern] = ([_judge(p.entry, s) for s in statuses] if wanted else
                                 [Judged(s, s.state != State.FIXED) for s in statuses])  # today's rule
    problems = list(by_entry.values())  # in id order already
    if named:
        def rank(p: Problem) -> tuple:
            return min((named.index(e) for e in p.entry.meta.engines if e in named), default=len(named)), \
                not p.affects, p.entry.meta.id
        problems.sort(key=rank)
    return problems


def _judge(entry: Entry, st: Status) -> Judged:
    """Does this status affect the release it is on: it reproduces there, or the release was never measured
    and the nearest measured releases on both sides (or the only side) reproduce."""
    if st.state in AFFECTED:
        return Judged(st, True)
    if st.state not in UNMEASURED or st.version is None or st.engine not in entry.meta.engines:
        return Judged(st, False)
    near = st.near
    below = next((s for s in near if version_key(s.version) < version_key(st.version)), None)
    above = next((s for s in near if s is not below), None)
    if not near:
        return Judged(st, False)
    affected = all(s.state in AFFECTED for s in near)
    if len(near) == 2:
        if affected:
            why = f"reproduces on {below.version} and {above.version}, the nearest measured releases either side"
        else:
            why = f"nearest measured: {below.version} {below.state}, {above.version} {above.state}"
    else:
        side = "newest" if below else "oldest"
        why = f"{near[0].version}, the {side} measured release, {'reproduces' if affected else near[0].state}"
    verdict = "counted as affected" if affected else "not counted as affected"
    return Judged(st, affected, f"not measured on {st.version}; {why}: {verdict}")


def _as_json(f: Found, p: Problem) -> dict:
    meta = f.entry.meta
    judged = p.judged[f.match.pattern]
    return {
        "entry": f.entry.slug,
        "id": meta.id,
        "title": meta.title,
        "pattern": f.match.pattern,
        "graph": f.match.graph,
        "subgraph": f.nested,
        "nodes": list(f.match.nodes.values()),
        "roles": f.match.nodes,  # pattern node -> graph node
        "concerns": p.concerns,  # false: the text left it out (it concerns none of the engines named)
        "affects": p.concerns and any(j.affected for j in judged),  # what the exit code counts
        "status": [{"engine": j.status.engine, "version": j.status.version, "status": j.status.state,
                    "detail": j.status.detail, "checks": j.status.checks, "affected": j.affected, "why": j.why,
                    "verified_workaround": _verified_json(j.status.workaround)}
                   for j in judged],
        "url": page_url(f.entry.slug),
        "workarounds": [{"id": w.id, "summary": w.summary} for w in meta.workarounds],
    }


def _verified_json(w) -> dict | None:
    if w is None:
        return None
    return {"id": w.workaround.id, "engine": w.engine, "version": w.version, "unmeasured": w.unmeasured,
            "checks": list(w.works), "limits": [note for _, note, _ in w.limits], "spread": w.spread or None}


def _releases(wanted: list[Wanted]) -> str:
    return ", ".join(f"{w.engine} {w.version}" if w.version else f"{w.engine} (newest measured)" for w in wanted)


def _as_text(name: str, scanned: Scanned, problems: list[Problem], wanted: list[Wanted], patterns: int,
             blind: list[Entry]) -> str:
    looked = f"{scanned.nodes} nodes in {scanned.graphs} graph{'s' * (scanned.graphs > 1)}"
    listed = [p for p in problems if p.concerns]
    left = [p for p in problems if not p.concerns]
    matches = sum(len(fs) for p in listed for fs in p.matches.values())
    if not problems:
        lines = [f"{name}: no known problem found ({looked}, {patterns} trigger patterns)"]
    elif not wanted:
        lines = [f"{name}: {matches} match{'es' * (matches != 1)} of {_count(len(listed))} ({looked})"]
    else:
        hits = [p.entry.meta.id for p in listed if p.affects]
        lines = [f"{name}: {_count(len(listed))} concerning {_releases(wanted)} "
                 f"({matches} match{'es' * (matches != 1)}; {looked})",
                 f"affects {_releases(wanted)}: {', '.join(hits)}" if hits else
                 f"none affects {_releases(wanted)}: fixed there, or not measured as reproducing"]
    for p in listed:
        lines += ["", *_block(p, bool(wanted))]
    if left:
        others = sorted({e for p in left for e in p.entry.meta.engines} - {w.engine for w in wanted})
        lines += ["", f"{_count(len(left))} of other engines ({', '.join(others)}) left out; "
                  f"--json lists every match, these with \"concerns\": false"]
    if blind:  # known problems no graph pattern predicts: a scan cannot say, so it says which it cannot
        lines += ["", "Not predictable from a model's graph, so not scanned for:"]
        lines += [f"  {e.meta.id}  {e.meta.title}: {page_url(e.slug)}" for e in blind]
    return "\n".join(lines)


def _op_cases(model, wanted: list[Wanted], problems: list[Problem]) -> str:
    """ONNX's own node tests of the model's ops and attributes that fail on the engines asked about (all with a
    conformance ledger, newest release, without --engine): below the entries, and only on nodes no entry of that
    engine matched (an entry already says more)."""
    from kb import conformance
    from kb.match.opcases import failing_cases, op_url
    from kb.paths import repo_root

    root = repo_root()
    asked = [(w.engine, w.version) for w in wanted] or [(e, None) for e in conformance.engines(root)]
    known = {(e, node) for p in problems for e in p.entry.meta.engines for fs in p.matches.values() for f in fs
             for node in f.match.nodes.values()}
    found = [c for c in failing_cases(model, root, [(e, v) for e, v in asked if e in conformance.engines(root)])
             if (c.engine, c.node) not in known]
    if not found:
        return ""
    lines = ["", "Not a known problem, but measured: ONNX's own node tests with the same op and attributes fail:"]
    for c in found:
        lines.append(f"  {c.text()}: {op_url(c.op)}")
    return "\n".join(lines) + "\n"


def _count(n: int) -> str:
    return f"{n} known problem{'s' * (n != 1)}"


def _block(p: Problem, named: bool) -> list[str]:
    """One entry: its patterns with a count and a few node names, its status, workarounds and page."""
    e = p.entry
    lines = [f"{e.meta.id}  {e.meta.title}"]
    shown = {pat: [j for j in js if j.status.state != State.NOT_CONCERNED] for pat, js in p.judged.items()}
    same = len({tuple(_status_lines(js, named)) for js in shown.values()}) == 1
    for pattern, found in p.matches.items():
        lines.append(f"  {_matched(pattern, found)}")
        if not same:
            lines += [f"    {s}" for s in _status_lines(shown[pattern], named)]
    if same:
        lines += [f"  {s}" for s in _status_lines(next(iter(shown.values())), named)]
    lines += _workaround_lines(p)
    lines.append(f"  page: {page_url(e.slug)}")
    return lines


def _workaround_lines(p: Problem) -> list[str]:
    """The workaround verified for the releases shown (kb.status.verified_workaround), with its limits;
    where none is, the declared ones, said to be unverified there."""
    verified = {(w.workaround.id, w.engine, w.version): w for js in p.judged.values() for j in js
                if (w := j.status.workaround)}
    if verified:
        out = []
        for w in verified.values():
            where = f"{w.engine} {w.version}" + (f", nearest measured to {w.unmeasured}" if w.unmeasured else "")
            out.append(f"  verified workaround ({where}): {w.workaround.summary}")
            out += [f"    limit: {note}" for _, note, _ in w.limits]
            if w.spread:
                out.append(f"    model-dependent: {w.spread}")
        return out
    return [f"  workaround ({w.id}, not verified on these releases): {w.summary}" for w in p.entry.meta.workarounds]


def _matched(pattern: str, found: list[Found]) -> str:
    """`pattern: role=node, ...` for one match; `pattern ×12: node, node, node, … (+9)` for several, each
    named by its last role's node (the op the problem is in: the Pow, the Div, the MatMul)."""
    def where(f: Found) -> str:
        return f" (in subgraph {f.match.graph!r})" if f.nested else ""

    if len(found) == 1:
        f = found[0]
        return f"{pattern}: " + ", ".join(f"{r}={n}" for r, n in f.match.nodes.items()) + where(f)
    names = [list(f.match.nodes.values())[-1] + where(f) for f in found[:SHOWN_NODES]]
    more = f", … (+{len(found) - SHOWN_NODES})" if len(found) > SHOWN_NODES else ""
    return f"{pattern} ×{len(found)}: {', '.join(names)}{more}"


def _status_lines(judged: list[Judged], named: bool) -> list[str]:
    if not judged:
        return ["status: not yet checked"]
    if not named and all(j.status.state == State.FIXED for j in judged):
        return [f"status: {j.status.text()} (a regression guard: fixed where measured)" for j in judged]
    out = []
    for j in judged:
        mark = " [affects this release]" if named and j.affected else ""
        # where the release was never measured, the rule that decided replaces Status.detail (JSON keeps both)
        out.append(f"status: {j.status.engine} {j.status.version}: {j.why}{mark}" if j.why else
                   f"status: {j.status.text()}{mark}")
    return out
