"""`kb scan MODEL`: every known problem whose trigger pattern occurs in a model.

The patterns are the entries' own (front matter `trigger`), matched by convkb.pattern, the same code that
checks the reproducers' preconditions: one definition of each problem's shape.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from convkb.verdicts import Status as State
from convkb.entries import Entry, load_all
from convkb.match import codes
from convkb.match.links import page_url
from convkb.match.modelfile import load
from convkb.match.status import Status, Statuses, parse_engines
from convkb.pattern import Match, indexes, match_graph

SHOWN_PER_ENTRY = 20  # text output lists this many matches of one entry; --json lists them all


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


def scan_command(model: str, engines: list[str], as_json: bool) -> int:
    """Print the known problems in `model`; return 1 if there are some, 0 if none (KBError on bad input)."""
    wanted = parse_engines(engines)  # before the slow part, so a typo fails fast
    loaded = load(model)
    entries = load_all()
    scanned = find_problems(entries, loaded.model)
    if loaded.note:
        print(f"{loaded.path}: {loaded.note}", file=sys.stderr)
    source = Statuses()
    source.prefetch({f.entry.slug for f in scanned.found})
    status = {(f.entry.slug, f.match.pattern): source.of(f.entry, wanted, f.match.pattern) for f in scanned.found}
    if as_json:
        print(json.dumps([_as_json(f, status[f.entry.slug, f.match.pattern]) for f in scanned.found], indent=1))
    else:
        text = _as_text(str(loaded.path), scanned, status, sum(len(e.meta.trigger) for e in entries))
        # Known problems no graph pattern predicts: a scan cannot say, so it says which it cannot.
        blind = [e for e in entries if e.meta.untriggered]
        if blind:
            text += "\n\nNot predictable from a model's graph, so not scanned for:" + "".join(
                f"\n  {e.meta.id}  {e.meta.title}: {page_url(e.slug)}" for e in blind)
        print(text)
    # A match whose every status is fixed is a regression guard: reported, but nothing to act on.
    alarms = [k for k, st in status.items() if not all(s.state == State.FIXED for s in st)]
    return codes.FOUND if alarms else codes.NOTHING_FOUND


def _as_json(f: Found, status: list[Status]) -> dict:
    meta = f.entry.meta
    return {
        "entry": f.entry.slug,
        "id": meta.id,
        "title": meta.title,
        "pattern": f.match.pattern,
        "graph": f.match.graph,
        "subgraph": f.nested,
        "nodes": list(f.match.nodes.values()),
        "roles": f.match.nodes,  # pattern node -> graph node
        "status": [{"engine": s.engine, "version": s.version, "status": s.state, "detail": s.detail,
                    "checks": s.checks} for s in status],
        "url": page_url(f.entry.slug),
        "workarounds": [{"id": w.id, "summary": w.summary} for w in meta.workarounds],
    }


def _as_text(name: str, scanned: Scanned, status: dict[tuple[str, str], list[Status]], patterns: int) -> str:
    looked = f"{scanned.nodes} nodes in {scanned.graphs} graph{'s' * (scanned.graphs > 1)}"
    if not scanned.found:
        return f"{name}: no known problem found ({looked}, {patterns} trigger patterns)"
    by_entry: dict[str, list[Found]] = {}
    for f in scanned.found:
        by_entry.setdefault(f.entry.slug, []).append(f)
    lines = [f"{name}: {len(scanned.found)} match{'es' * (len(scanned.found) > 1)} of "
             f"{len(by_entry)} known problem{'s' * (len(by_entry) > 1)} ({looked})"]
    for slug, found in by_entry.items():
        e = found[0].entry
        summaries = {p.name: p.summary for p in e.meta.trigger}
        lines += ["", f"{e.meta.id}  {e.meta.title}"]
        for f in found[:SHOWN_PER_ENTRY]:
            where = f" (in subgraph {f.match.graph!r})" if f.nested else ""
            nodes = ", ".join(f"{role}={node}" for role, node in f.match.nodes.items())
            lines.append(f"  {f.match.pattern}: {nodes}{where}")
        if len(found) > SHOWN_PER_ENTRY:
            lines.append(f"  ... and {len(found) - SHOWN_PER_ENTRY} more (--json lists them all)")
        for p in dict.fromkeys(f.match.pattern for f in found):
            lines.append(f"  pattern {p}: {summaries[p]}")
            st = status[slug, p]
            guard = " (a regression guard: fixed where measured)" if st and all(s.state == State.FIXED for s in st) else ""
            lines += [f"    status: {s.text()}{guard}" for s in st] or ["    status: not yet checked"]
        lines.append(f"  page: {page_url(slug)}")
        lines += [f"  workaround ({w.id}): {w.summary}" for w in e.meta.workarounds]
    return "\n".join(lines)
