"""The status table of one engine: a row per check with its history, a column per version.

A cell holds only the verdict and the signature seen; when, where, from which source and the
detail are in its tooltip, and the line under the table says when and where the whole table was
observed, so the table stays narrow enough to read across many versions.
The markup is kb/templates/site/status_table.html.j2; this module prepares its data.
"""

from __future__ import annotations

from markupsafe import Markup

from kb.site import timeline
from kb.site.markup import render
from kb.status import Cell, CheckStatus, EngineStatus


def _source(cell: Cell) -> str:
    if cell.source == "accepted":
        return "source: accepted observation (expected.yaml), no newer record"
    if cell.changed:  # the same verdict can still be a change: it fails differently
        was = cell.accepted + (f" [{cell.accepted_shape}]" if cell.accepted_shape else "")
        return (f"source: newest record, which disagrees with the one accepted {cell.accepted_date}: {was}; "
                "review it, then run kb accept")
    if cell.verdict == "error":  # never compared, whatever was accepted
        return "source: newest record (an error is never accepted)"
    if cell.accepted is not None:
        return f"source: newest record, as accepted ({cell.accepted_date})"
    return "source: newest record, not accepted yet (kb accept)"


def _tip(cell: Cell, engine: str, version: str) -> list[str]:
    how = cell.signature or cell.fingerprint
    seen = cell.verdict + (f" [{how}]" if how else "")
    return [f"{seen} on {engine} {version}", f"observed {cell.observed} on {cell.platform}", _source(cell),
            cell.detail]


def _row(cs: CheckStatus, es: EngineStatus) -> dict:
    row = {"check": cs.check, "timeline": cs.timeline, "sentence": timeline.sentence(cs.timeline),
           "not_run": cs.not_run, "cells": None}
    if cs.cells:  # else e.g. its engine was never installed where the checks ran: the row says why
        row["cells"] = [{"version": v, "cell": c, "tip": _tip(c, es.engine, v) if c else []}
                        for v in es.versions for c in [cs.cells.get(v)]]
    return row


def _together(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def observed_line(es: EngineStatus) -> Markup:
    """When, where and from what the table's verdicts were observed."""
    cells = [c for cs in es.checks for c in cs.cells.values()]
    if not cells:
        return render("observed.html.j2", when=None).strip()
    dates = sorted({c.observed for c in cells})  # ISO dates sort as text
    when = dates[0] if len(dates) == 1 else f"between {dates[0]} and {dates[-1]}"
    records = sum(c.source == "record" for c in cells)
    if records == len(cells):
        source = "the newest records"
    elif records == 0:
        source = "the accepted observations in expected.yaml"
    else:
        source = f"{records} newest records and {len(cells) - records} accepted observations"
    return render("observed.html.j2", when=when, platforms=_together(sorted({c.platform for c in cells})),
                  source=source).strip()


def engine_table(es: EngineStatus) -> Markup:
    return render("status_table.html.j2", es=es, rows=[_row(cs, es) for cs in es.checks],
                  observed=observed_line(es)).strip()
