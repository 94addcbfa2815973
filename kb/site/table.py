"""The status table of one engine: a row per check with its history, a column per version.

A cell holds only the verdict and the signature seen; when, where, from which source and the
detail are in its tooltip, and the line under the table says when and where the whole table was
observed, so the table stays narrow enough to read across many versions.
"""

from __future__ import annotations

from kb.site import timeline
from kb.site.markup import h, tooltip, verdict
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


def _cell(cell: Cell | None, engine: str, version: str) -> str:
    if cell is None:
        return (f'<td class="kb-cell kb-cell-empty" data-version="{h(version)}" '
                f'title="not observed on {h(engine)} {h(version)}">—</td>')
    how = cell.signature or cell.fingerprint
    seen = cell.verdict + (f" [{how}]" if how else "")
    tip = tooltip([f"{seen} on {engine} {version}", f"observed {cell.observed} on {cell.platform}",
                   _source(cell), cell.detail])
    body = verdict(cell.verdict)
    if cell.signature:
        body += f'<br><code class="kb-sig-id">{h(cell.signature)}</code>'
    if cell.changed:  # only here does the table ask for attention
        body += '<br><span class="kb-changed">changed</span>'
    return (f'<td class="kb-cell" data-version="{h(version)}" data-verdict="{h(cell.verdict)}" '
            f'data-source="{cell.source}" data-changed="{str(cell.changed).lower()}" title="{tip}">{body}</td>')


def _check(cs: CheckStatus) -> str:
    c = cs.check
    # A workaround's id is long: it gets its own line, so the check's name keeps its width.
    kind = " <small class=\"kb-kind\">bug</small>" if c.kind == "bug" else \
        f'<br><small class="kb-kind">workaround <code>{h(c.workaround)}</code></small>'
    doc = f'<br><small class="kb-doc">{h(c.doc)}</small>' if c.doc else ""
    needs = f"<br><small>also runs: {h(', '.join(c.needs))}</small>" if c.needs else ""
    return f'<th scope="row" class="kb-check"><code>{h(c.name)}</code>{kind}{doc}{needs}</th>'


def _row(cs: CheckStatus, es: EngineStatus) -> str:
    if cs.cells:
        cells = "".join(_cell(cs.cells.get(v), es.engine, v) for v in es.versions)
    else:  # e.g. its engine was never installed where the checks ran: say so, with the reason
        why = f": {cs.not_run}" if cs.not_run else ""
        cells = (f'<td class="kb-cell kb-cell-never" data-verdict="not-checked" colspan="{max(1, len(es.versions))}">'
                 f'{verdict("not-checked")} <small>never observed{h(why)}</small></td>')
    return f'<tr data-check="{h(cs.check.name)}">{_check(cs)}{timeline.cell(cs.timeline)}{cells}</tr>'


def _together(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def observed_line(es: EngineStatus) -> str:
    """When, where and from what the table's verdicts were observed."""
    cells = [c for cs in es.checks for c in cs.cells.values()]
    if not cells:
        return '<p class="kb-observed">None of these checks has been observed yet.</p>'
    dates = sorted({c.observed for c in cells})  # ISO dates sort as text
    when = dates[0] if len(dates) == 1 else f"between {dates[0]} and {dates[-1]}"
    records = sum(c.source == "record" for c in cells)
    if records == len(cells):
        source = "the newest records"
    elif records == 0:
        source = "the accepted observations in expected.yaml"
    else:
        source = f"{records} newest records and {len(cells) - records} accepted observations"
    return (f'<p class="kb-observed">Observed {h(when)} on {h(_together(sorted({c.platform for c in cells})))}, '
            f"from {source}. Point at a verdict for its date, platform and detail.</p>")


def engine_table(es: EngineStatus) -> str:
    head = "".join(f'<th class="kb-version" scope="col" data-version="{h(v)}">{h(v)}</th>' for v in es.versions)
    rows = "\n".join(_row(cs, es) for cs in es.checks)
    # The wrapper scrolls sideways when the versions do not fit; the check column stays put (CSS).
    return (f'<div class="kb-status-table" data-engine="{h(es.engine)}">\n<div class="kb-scroll">\n'
            f'<table class="kb-matrix">\n<thead><tr><th class="kb-check" scope="col">Check on {h(es.engine)}</th>'
            f'<th class="kb-history" scope="col">History</th>{head or "<th>result</th>"}</tr></thead>\n'
            f"<tbody>\n{rows}\n</tbody>\n</table>\n</div>\n{observed_line(es)}\n</div>")
