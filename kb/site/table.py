"""The status table of one engine, as a reader needs it: newest release first, checks with the same
results on one row, releases with the same results in one column, public labels only.

A cell holds a public label (PUBLIC) and the signature seen; when, where and the detail are in its
tooltip. Maintainer states (a record that disagrees with the accepted one, where a verdict came from,
`kb accept`) stay in `kb check`: the page shows what was measured, never the review queue.
On a phone the table stacks (kb.css): each row becomes a card, each cell a "release: label" line.
The markup is kb/templates/site/status_table.html.j2; this module prepares its data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from kb.site import timeline
from kb.site.markup import render
from kb.status import Cell, CheckStatus, EngineStatus
from kb.verdicts import CheckKind

# A check's verdict in a reader's words. error/skipped/unavailable say nothing about the engine.
PUBLIC = {"reproduces": "reproduces", "differs": "fails differently", "fixed": "fixed", "works": "works",
          "broken": "broken", "error": "not measured", "skipped": "not measured", "unavailable": "not measured"}
# The legend, in this order; a table lists only the labels it shows.
LEGEND = {
    "reproduces": "the reported failure happens on that release",
    "fails differently": "it fails on that release, but not the way reported",
    "fixed": "the case runs and matches the reference output",
    "works": "the workaround (or the control model) runs and matches the reference output",
    "broken": "the workaround (or the control model) does not",
    "not measured": "no usable result on that release",
}
# What a row is, in words; rows come in this order.
KIND_ORDER = (CheckKind.BUG, CheckKind.VARIANT, CheckKind.CONTROL, CheckKind.WORKAROUND)
KIND_WORDS = {CheckKind.BUG: ("the reported case", "reported cases"),
              CheckKind.VARIANT: ("a variant (the same path, another model)", "variants (the same path, other models)"),
              CheckKind.CONTROL: ("a control (a model without the trigger)", "controls (models without the trigger)"),
              CheckKind.WORKAROUND: ("workaround", "workaround")}


def public(verdict: str) -> str:
    return PUBLIC.get(verdict, verdict)


@dataclass
class Row:
    """Checks of one kind (and one workaround) whose cells read the same on every release."""

    kind: CheckKind
    workaround: str | None
    checks: list[CheckStatus] = field(default_factory=list)
    key: tuple = ()

    @property
    def names(self) -> list[str]:
        return [cs.check.name for cs in self.checks]

    @property
    def what(self) -> str:
        one, many = KIND_WORDS[self.kind]
        if self.kind == CheckKind.WORKAROUND:
            return f"workaround {self.workaround}" if self.workaround else one
        return one if len(self.checks) == 1 else f"{len(self.checks)} {many}"


def _shown(cell: Cell | None) -> tuple[str, str] | None:
    """What a cell shows: its public label and signature (None: not observed on that release)."""
    return None if cell is None else (public(cell.verdict), cell.signature or "")


def _rows(es: EngineStatus) -> list[Row]:
    rows: dict[tuple, Row] = {}
    for cs in es.checks:
        kind = cs.check.kind
        cells = tuple(_shown(cs.cells.get(v)) for v in es.versions)
        key = (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), cs.check.workaround or "",
               cells, timeline.sentence(cs.timeline), cs.not_run or "")
        rows.setdefault(key, Row(kind, cs.check.workaround, key=key)).checks.append(cs)
    return [rows[k] for k in sorted(rows, key=lambda k: k[0])]  # sorted() is stable: declared order within a kind


def _columns(es: EngineStatus, rows: list[Row]) -> list[list[str]]:
    """Releases, newest first; neighbours on which every row shows the same share a column."""
    cols: list[list[str]] = []
    last = None
    for v in reversed(es.versions):
        shown = tuple(_shown(r.checks[0].cells.get(v)) for r in rows)
        if cols and shown == last:
            cols[-1].append(v)
        else:
            cols.append([v])
        last = shown
    return cols


def _span(versions: list[str]) -> str:
    """A column's releases (newest first) as a range, oldest to newest."""
    return versions[0] if len(versions) == 1 else f"{versions[-1]}–{versions[0]}"


def _tip(cells: list[Cell], engine: str, span: str) -> list[str]:
    c = cells[0]
    seen = public(c.verdict) + (f" [{c.signature}]" if c.signature else "")
    dates = sorted({x.observed for x in cells})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return [f"{seen} on {engine} {span}", f"measured {when} on {', '.join(sorted({x.platform for x in cells}))}",
            c.detail]


def _cell(row: Row, col: list[str], engine: str) -> dict:
    cells = [cs.cells[v] for cs in row.checks for v in col if v in cs.cells]
    span = _span(col)
    if not cells:
        return {"span": span, "versions": col, "label": None}
    c = cells[0]
    return {"span": span, "versions": col, "label": public(c.verdict), "verdict": c.verdict,
            "signature": c.signature, "tip": _tip(cells, engine, span)}


def _data(es: EngineStatus) -> dict:
    rows = _rows(es)
    cols = _columns(es, rows) if rows else []
    out = []
    for r in rows:
        first = r.checks[0]
        out.append({"row": r, "names": r.names, "what": r.what,
                    "docs": [(cs.check.name, cs.check.doc) for cs in r.checks],
                    "needs": sorted({n for cs in r.checks for n in cs.check.needs}),
                    "timeline": first.timeline, "sentence": timeline.sentence(first.timeline),
                    "not_run": first.not_run,
                    "cells": [_cell(r, col, es.engine) for col in cols] if any(cs.cells for cs in r.checks) else None})
    shown = {c["label"] for row in out for c in row["cells"] or [] if c["label"]}
    if any(row["cells"] is None for row in out):
        shown.add("not measured")
    return {"rows": out, "columns": [{"span": _span(c), "versions": c} for c in cols],
            "legend": [(label, words) for label, words in LEGEND.items() if label in shown]}


def _together(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def observed_line(es: EngineStatus) -> Markup:
    """When and where the table's verdicts were measured."""
    cells = [c for cs in es.checks for c in cs.cells.values()]
    if not cells:
        return render("observed.html.j2", when=None).strip()
    dates = sorted({c.observed for c in cells})  # ISO dates sort as text
    when = dates[0] if len(dates) == 1 else f"between {dates[0]} and {dates[-1]}"
    return render("observed.html.j2", when=when, platforms=_together(sorted({c.platform for c in cells}))).strip()


def engine_table(es: EngineStatus) -> Markup:
    return render("status_table.html.j2", es=es, **_data(es), observed=observed_line(es)).strip()
