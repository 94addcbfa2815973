"""What the site says about an entry's status, derived only from recorded results.

Two sources, both written by machines: the records (raw observations in .kb/records) and the
accepted expectations (expected.yaml, written by `kb accept` from records). A fresh clone has no
records, so every verdict falls back to the accepted one; nothing here reads the page's prose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from kb import expectations
from kb.harness import Check
from kb.records import Record

# A bug check's verdicts: the bug itself shows (an affected version) ...
AFFECTED = ("reproduces",)
# ... or at least its code path still fails, if differently (the entry is not fixed).
NOT_FIXED = ("reproduces", "differs")
# Records that say nothing about the engine (not installed, or a version that could not be
# installed): they never become a cell, only the reason a check was never observed.
NO_OBSERVATION = ("skipped", "unavailable")

STATUS_LABEL = {
    "reproduces": "reproduces",
    "fixed": "fixed",
    "changed": "changed",
    "not-checked": "not yet checked",
}


def version_key(v: str):
    """Release order when the version parses, text order after all real versions otherwise."""
    try:
        return (0, Version(v), "")
    except InvalidVersion:
        return (1, Version("0"), v)


@dataclass(frozen=True)
class Cell:
    """One check on one engine version: its newest observation, or the accepted one."""

    verdict: str
    observed: str  # ISO date
    platform: str
    detail: str
    source: str  # "record" (newest recorded run) or "accepted" (expected.yaml only)
    signature: str | None = None
    accepted: str | None = None  # the accepted verdict it is compared with, if any
    accepted_version: str | None = None
    accepted_date: str | None = None
    changed: bool = False  # the newest record disagrees with the accepted expectation


@dataclass
class CheckStatus:
    check: Check
    cells: dict[str, Cell] = field(default_factory=dict)  # engine version -> cell
    not_run: str | None = None  # why it was never observed (the newest skip reason), if so

    def newest(self) -> tuple[str, Cell] | None:
        if not self.cells:
            return None
        v = max(self.cells, key=version_key)
        return v, self.cells[v]


@dataclass
class EngineStatus:
    engine: str
    versions: list[str]  # oldest first
    checks: list[CheckStatus]
    last_affected: str | None = None
    first_fixed: str | None = None  # only when an older version is known to be affected
    fixed_since_oldest: str | None = None  # every checked version is fixed, this is the oldest


@dataclass
class EntryStatus:
    status: str  # key of STATUS_LABEL
    engines: list[EngineStatus]
    newest_record: Record | None  # the newest real observation: its environment is shown
    observed: str | None  # date of the newest observation, record or accepted
    changed: list[tuple[str, str]] = field(default_factory=list)  # (check, version) pairs

    @property
    def label(self) -> str:
        return STATUS_LABEL[self.status]

    def checks(self) -> list[CheckStatus]:
        return [c for e in self.engines for c in e.checks]


def _cell(check: str, version: str, rec: Record | None, table: expectations.Table) -> Cell | None:
    got = expectations.lookup(table, check, version) if table.get(check) else None
    exact = table.get(check, {}).get(version)
    if rec is None:
        if exact is None:
            return None
        return Cell(exact.verdict, exact.observed, exact.platform, exact.detail, "accepted",
                    exact.signature, exact.verdict, version, exact.observed)
    # The same comparison `kb check` makes, so the site and the CLI never disagree on "changed".
    changed = expectations.assess(rec, table).status == "changed"
    return Cell(rec.verdict, rec.started.date().isoformat(), rec.platform, rec.detail, "record",
                rec.signature, got.exp.verdict if got else None, got.version if got else None,
                got.exp.observed if got else None, changed)


def _bounds(es: EngineStatus) -> None:
    """Last affected and first fixed version of the engine, from its bug checks' cells."""
    affected, fixed = [], []
    for v in es.versions:
        bug = [c.cells[v].verdict for c in es.checks if c.check.kind == "bug" and v in c.cells]
        if any(x in AFFECTED for x in bug):
            affected.append(v)
        elif bug and all(x == "fixed" for x in bug):
            fixed.append(v)
    if affected:
        es.last_affected = affected[-1]
        later = [v for v in fixed if version_key(v) > version_key(es.last_affected)]
        es.first_fixed = later[0] if later else None
    elif fixed:
        es.fixed_since_oldest = fixed[0]


def derive(engines: list[str], checks: list[Check], table: expectations.Table,
           records: list[Record]) -> EntryStatus:
    """The status of one entry. `records` are that entry's records, oldest first."""
    newest: dict[tuple[str, str], Record] = {}
    skipped: dict[str, Record] = {}
    for r in records:  # oldest first, so the last one written wins
        if r.verdict in NO_OBSERVATION:
            skipped[r.check] = r
        else:
            newest[(r.check, r.engine_version)] = r

    statuses: list[CheckStatus] = []
    for c in checks:
        cs = CheckStatus(c)
        versions = {v for (name, v) in newest if name == c.name} | set(table.get(c.name, {}))
        for v in versions:
            cell = _cell(c.name, v, newest.get((c.name, v)), table)
            if cell:
                cs.cells[v] = cell
        if not cs.cells and c.name in skipped:
            cs.not_run = skipped[c.name].detail
        statuses.append(cs)

    order = list(engines) + sorted({c.engine for c in checks} - set(engines))
    per_engine = []
    for e in order:
        mine = [cs for cs in statuses if cs.check.engine == e]
        if not mine:
            continue  # e.g. onnxruntime only produces the model that MNN is checked on
        es = EngineStatus(e, sorted({v for cs in mine for v in cs.cells}, key=version_key), mine)
        _bounds(es)
        per_engine.append(es)

    changed = [(cs.check.name, v) for cs in statuses for v, cell in cs.cells.items() if cell.changed]
    latest_bug = [n[1].verdict for cs in statuses if cs.check.kind == "bug" and (n := cs.newest())]
    if changed:
        status = "changed"
    elif any(v in NOT_FIXED for v in latest_bug):
        status = "reproduces"
    elif any(v == "fixed" for v in latest_bug):
        status = "fixed"
    else:
        status = "not-checked"

    real = [r for r in records if r.verdict not in NO_OBSERVATION]
    dates = [cell.observed for cs in statuses for cell in cs.cells.values()]
    observed = max(dates) if dates else None  # ISO dates sort as text
    return EntryStatus(status, per_engine, real[-1] if real else None, observed, changed)
