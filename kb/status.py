"""An entry's status, derived only from recorded results: the one derivation the site and scan share.

Two sources, both written by machines: the records (raw observations in .kb/records) and the
accepted expectations (expected.yaml, written by `kb accept` from records). A fresh clone has no
records, so every verdict falls back to the accepted one; nothing here reads the page's prose.
Version history (last affected, first fixed, regressions) is kb.history's, the one `kb matrix` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kb import expectations, history
from kb.checks import Check, declared_checks
from kb.entries import Entry
from kb.history import Timeline
from kb.records import Record
from kb.verdicts import MEASURED, NO_OBSERVATION, STATUS_LABELS, Assessment, CheckKind, Status, Verdict, Verdict as V
from kb.versions import sort_versions, version_key

STATUS_LABEL = STATUS_LABELS  # kept for the site's templates


def summarize(verdicts: dict[str, tuple[CheckKind, Verdict | None]]) -> tuple[Status, str]:
    """check -> (kind, verdict on ONE version, None if it has none there): the status there, and why.

    Only bug checks decide. "fixed" needs every bug check measured on that version and passing: an error,
    a skip or a missing result makes it "not measured". Variants and controls never count."""
    bug = {n: v for n, (k, v) in verdicts.items() if k == CheckKind.BUG}
    fix = {n: v for n, (k, v) in verdicts.items() if k == CheckKind.WORKAROUND and v in MEASURED}
    works = [n for n, v in fix.items() if v == V.WORKS]
    fixes = f"workaround checks: {len(works)} of {len(fix)} work" if fix else ""
    if bug:
        hits = [n for n, v in bug.items() if v == V.REPRODUCES]
        unmeasured = [n for n, v in bug.items() if v not in MEASURED]
        odd = [n for n, v in bug.items() if v == V.DIFFERS]
        if hits:
            state, detail = Status.REPRODUCES, f"in {len(hits)} of {len(bug)} bug checks: {', '.join(hits)}"
        elif unmeasured:
            state, detail = Status.NOT_MEASURED, f"no result from {', '.join(unmeasured)}"
        elif odd:
            state, detail = Status.DIFFERS, f"fails otherwise than reported in {', '.join(odd)}"
        else:
            state, detail = Status.FIXED, f"all {len(bug)} bug checks pass"
        return state, "; ".join(filter(None, (detail, fixes)))
    if fix:
        return (Status.WORKAROUND_WORKS if len(works) == len(fix) else Status.WORKAROUND_BROKEN), fixes
    return Status.NOT_CHECKED, "no check has been measured"


def on_version(checks: list[CheckStatus], version: str) -> dict[str, tuple[CheckKind, Verdict | None]]:
    """Every check's verdict on `version` (None where it has none): what summarize() reads."""
    return {cs.check.name: (cs.check.kind, cs.cells[version].verdict if version in cs.cells else None)
            for cs in checks}


def engine_summary(es: EngineStatus) -> tuple[str | None, Status, str]:
    """One engine's status on the newest version its bug checks were measured on (else its newest)."""
    checks = es.checks
    bug = [cs for cs in checks if cs.check.kind == CheckKind.BUG]
    versions = [v for cs in (bug or checks) for v in cs.cells]
    if not versions:
        return None, Status.NOT_CHECKED, "no check has been measured"
    newest = max(versions, key=version_key)
    if bug:
        return newest, *summarize(on_version(checks, newest))
    return newest, *workaround_state(es)  # only workarounds run this engine (another engine's bug)


def summary_at(es: EngineStatus, version: str) -> tuple[Status, str]:
    """One engine's status on one release: its bug checks decide; an engine only workarounds run
    (pnnx for an onnx2ncnn bug) is judged as the workaround is, scope and limits applied."""
    if any(cs.check.kind == CheckKind.BUG for cs in es.checks):
        return summarize(on_version(es.checks, version))
    return workaround_state(es, version)


def workaround_state(es: EngineStatus, version: str | None = None) -> tuple[Status, str]:
    """Whether a workaround is verified on this engine at `version` (None: each one's newest release). An engine
    that runs no workaround check (only a control: which pnnx release wrote the model) verifies none and
    breaks none."""
    if not es.workarounds or not any(cs.check.kind == CheckKind.WORKAROUND for cs in es.checks):
        verdicts = on_version(es.checks, version) if version else \
            {cs.check.name: (cs.check.kind, n[1].verdict) for cs in es.checks if (n := cs.newest())}
        return summarize(verdicts)
    w = verified_workaround(es.workarounds, es.checks, es.engine if version else None, version)
    if w is None or w.unmeasured:
        return Status.WORKAROUND_BROKEN, "no workaround is verified here"
    limits = "".join(f"; limit: {note}" for _, note, _ in w.limits)
    return Status.WORKAROUND_WORKS, f"workaround {w.workaround.id}: {len(w.works)} checks work{limits}"


@dataclass(frozen=True)
class Verified:
    """A workaround verified for a user's engine and release: the verdicts it rests on, and its limits."""

    workaround: object  # kb.schema.Workaround
    engine: str  # the engine its checks ran (pnnx, for an onnx2ncnn bug)
    version: str  # the release those verdicts are from
    works: tuple[str, ...]  # in-scope checks that work there
    fails: tuple[str, ...] = ()  # in-scope checks that do not: a model-dependent workaround's spread
    limits: tuple[tuple[str, str, str], ...] = ()  # (check, note, verdict there): out of scope, documented
    unmeasured: str | None = None  # the user's release, where it was not measured (`version` is the nearest)

    @property
    def spread(self) -> str:
        """'works on 3 of 4 models measured' for a model-dependent workaround, else ''."""
        if not self.fails:
            return ""
        n = len(self.works) + len(self.fails)
        return f"works on {len(self.works)} of {n} models measured (not on {', '.join(self.fails)})"


def _verified_at(w, checks: list[CheckStatus], version: str) -> Verified | None:
    """The workaround's verdict on one release of its checks' engine, scope and limits applied."""
    limits = {lim.check: lim.note for lim in w.limits}
    at = {cs.check.name: cs.cells[version].verdict for cs in checks if version in cs.cells}
    scoped = {n: v for n, v in at.items() if n not in limits and v in MEASURED}
    works = tuple(n for n, v in scoped.items() if v == V.WORKS)
    fails = tuple(n for n, v in scoped.items() if v != V.WORKS)
    if not works or (fails and not w.model_dependent):
        return None
    shown = tuple((n, note, str(at[n])) for n, note in limits.items() if n in at)
    return Verified(w, checks[0].check.engine, version, works, fails, shown)


def verified_workaround(workarounds, checks: list[CheckStatus], engine: str | None = None,
                        version: str | None = None) -> Verified | None:
    """The first workaround verified for a user of `engine` at `version` (None: the newest measured).

    A workaround's checks run on some engine. Where that is the user's engine, they count on the user's
    release; one that was not measured takes the nearest measured release below it, then above it. On
    another engine (pnnx for an onnx2ncnn bug) the user can install its newest release, so that counts.
    Checks a workaround lists as `limits` document where it does not apply: never a breakage. The one
    derivation: the page's first screen, its badge, kb explain's reply and kb scan all read it."""
    for w in workarounds:
        mine = [cs for cs in checks if cs.check.kind == CheckKind.WORKAROUND and cs.check.workaround == w.id]
        for on in dict.fromkeys(cs.check.engine for cs in mine):
            group = [cs for cs in mine if cs.check.engine == on]
            measured = sort_versions({v for cs in group if cs.check.name not in {x.check for x in w.limits}
                                      for v in cs.cells})
            if not measured:
                continue
            if on == engine and version is not None:
                if version in measured:
                    tries = [version]
                else:
                    order = sort_versions([*measured, version])
                    i = order.index(version)
                    tries = order[max(0, i - 1):i] + order[i + 1:i + 2]
            else:
                tries = [measured[-1]]
            for v in tries:
                found = _verified_at(w, group, v)
                if found:
                    return found if v == version or on != engine or version is None else \
                        replace(found, unmeasured=version)
    return None


def combine(states: list[Status]) -> Status:
    """The entry's status from its engines': the worst news first."""
    for s in (Status.REPRODUCES, Status.DIFFERS, Status.NOT_MEASURED, Status.WORKAROUND_BROKEN, Status.FIXED,
              Status.WORKAROUND_WORKS):
        if s in states:
            return s
    return Status.NOT_CHECKED


@dataclass(frozen=True)
class Cell:
    """One check on one engine version: its newest observation, or the accepted one."""

    verdict: str
    observed: str  # ISO date
    platform: str
    detail: str
    source: str  # "record" (newest recorded run) or "accepted" (expected.yaml only)
    signature: str | None = None
    accepted: str | None = None  # the verdict accepted for this same version, if any
    accepted_date: str | None = None
    accepted_shape: str | None = None  # how the accepted one failed: its signature or fingerprint
    changed: bool = False  # the newest record disagrees with what was accepted for this version
    fingerprint: str | None = None  # how a `differs`/`broken` check failed


@dataclass
class CheckStatus:
    check: Check
    cells: dict[str, Cell] = field(default_factory=dict)  # engine version -> cell
    not_run: str | None = None  # why it was never observed (the newest skip reason), if so
    timeline: Timeline | None = None  # kb.history's reading of the cells, as `kb matrix` reads records

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
    workarounds: tuple = ()  # the entry's (kb.schema.Workaround): how its workaround checks are judged


@dataclass
class EntryStatus:
    status: Status
    engines: list[EngineStatus]
    newest_record: Record | None  # the newest real observation: its environment is shown
    observed: str | None  # date of the newest observation, record or accepted
    changed: list[tuple[str, str]] = field(default_factory=list)  # (check, version) pairs

    @property
    def label(self) -> str:
        return self.status.label

    def checks(self) -> list[CheckStatus]:
        return [c for e in self.engines for c in e.checks]


def _cell(check: str, version: str, rec: Record | None, table: expectations.Table) -> Cell | None:
    exact = table.get(check, {}).get(version)
    was = {} if exact is None else {"accepted": exact.verdict, "accepted_date": exact.observed,
                                    "accepted_shape": exact.signature or exact.fingerprint}
    if rec is None:
        if exact is None:
            return None
        return Cell(exact.verdict, exact.observed, exact.platform, exact.detail, "accepted", exact.signature,
                    fingerprint=exact.fingerprint, **was)
    # "changed" only against what was accepted for this very version: a version nobody accepted
    # yet is new, not a change. The comparison itself is `kb check`'s, so the two never disagree.
    changed = exact is not None and expectations.assess(rec, table).status == Assessment.CHANGED
    return Cell(rec.verdict, rec.started.date().isoformat(), rec.platform, rec.detail, "record", rec.signature,
                fingerprint=rec.fingerprint, changed=changed, **was)


def _history(entry: str, statuses: list[CheckStatus], newest: dict[tuple[str, str], Record],
             unmeasured: dict[tuple[str, str], Record], table: expectations.Table) -> None:
    """Each check's timeline from kb.history, over exactly the observations its cells show."""
    by_engine: dict[str, list[Record]] = {}
    for cs in statuses:
        name = cs.check.name
        shown = [newest[(name, v)] if cell.source == "record"
                 else expectations.as_record(entry, cs.check, v, table[name][v]) for v, cell in cs.cells.items()]
        # Versions asked for but not measured (e.g. not installable): they make a fix range inferred.
        gaps = [r for (n, v), r in unmeasured.items() if n == name and v not in cs.cells]
        by_engine.setdefault(cs.check.engine, []).extend(shown + gaps)
    for engine, observations in by_engine.items():
        found = {t.check: t for t in history.timelines(observations, engine)}
        for cs in statuses:
            if cs.check.engine == engine:
                cs.timeline = found.get(cs.check.name)


def of_entry(entry: Entry, records: list[Record] = ()) -> EntryStatus:
    """The status of an entry from its declared checks, its ledger and `records` (its own, oldest first): what
    the site shows."""
    return derive(entry.meta.engines, list(declared_checks(entry).items.values()), expectations.load(entry.expected),
                  list(records), entry.meta.workarounds)


def derive(engines: list[str], checks: list[Check], table: expectations.Table,
           records: list[Record], workarounds=()) -> EntryStatus:
    """The status of one entry. `records` are that entry's records, oldest first; `workarounds` its front
    matter's, which say how its workaround checks are judged (scope, limits)."""
    newest: dict[tuple[str, str], Record] = {}
    skipped: dict[str, Record] = {}
    unmeasured: dict[tuple[str, str], Record] = {}
    for r in records:  # oldest first, so the last one written wins
        if r.verdict in NO_OBSERVATION:
            skipped[r.check] = r
            unmeasured[(r.check, r.engine_version)] = r
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
    # The records given are this entry's; with none, every observation is an accepted one.
    _history(next((r.entry for r in records), ""), statuses, newest, unmeasured, table)

    order = list(engines) + sorted({c.engine for c in checks} - set(engines))
    per_engine = []
    for e in order:
        mine = [cs for cs in statuses if cs.check.engine == e]
        if not mine:
            continue  # e.g. onnxruntime only produces the model that MNN is checked on
        per_engine.append(EngineStatus(e, sort_versions(v for cs in mine for v in cs.cells), mine, tuple(workarounds)))

    changed = [(cs.check.name, v) for cs in statuses for v, cell in cs.cells.items() if cell.changed]
    status = Status.CHANGED if changed else combine([engine_summary(es)[1] for es in per_engine])

    real = [r for r in records if r.verdict not in NO_OBSERVATION]
    dates = [cell.observed for cs in statuses for cell in cs.cells.values()]
    observed = max(dates) if dates else None  # ISO dates sort as text
    return EntryStatus(status, per_engine, real[-1] if real else None, observed, changed)


def engine_status(es: EngineStatus) -> str:
    """One engine's status, as a reader sees it: from its checks on its newest measured release.
    A record that disagrees with the accepted one is the maintainers' business (`kb check`), not a status."""
    return engine_summary(es)[1]


def public_status(st: EntryStatus) -> Status:
    """The entry's status from its engines' (the worst news first), never the maintainers' "changed"."""
    return combine([engine_status(es) for es in st.engines])
