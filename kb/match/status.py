"""An entry's status on the engine versions a user asks about (`--engine mnn==3.6.1`), or on the
newest versions observed. Derived exactly as the site derives it (kb.status), from the records
and the accepted expected.yaml, so `kb scan` and the entry page never disagree."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kb.entries import Entry
from kb.errors import KBError
from kb.match import codes
from kb.records import Record
from kb.status import Verified, derive, on_version, summary_at, verified_workaround
from kb.verdicts import Status as State
from kb.engines import NAMES as ENGINES


UNMEASURED = (State.NOT_CHECKED, State.NOT_MEASURED)  # no reading on that release: its neighbours decide


@dataclass(frozen=True)
class Wanted:
    engine: str
    version: str | None  # None: the newest version observed


def parse_engines(values: list[str]) -> list[Wanted]:
    """`mnn==3.6.1`, `mnn=3.6.1` or just `mnn`."""
    out = []
    for value in values:
        m = re.fullmatch(r"\s*([A-Za-z0-9_]+)\s*(?:={1,2}\s*([^\s=]+))?\s*", value)
        if not m:
            raise KBError("--engine", f"{value!r} is not ENGINE or ENGINE==VERSION (e.g. mnn==3.6.1)", codes.BAD_ENGINE)
        if m[1].lower() not in ENGINES:
            raise KBError("--engine", f"unknown engine {m[1]!r}; known: {', '.join(ENGINES)}", codes.BAD_ENGINE)
        out.append(Wanted(m[1].lower(), m[2]))
    return out


@dataclass
class Status:
    engine: str
    version: str | None
    state: State
    detail: str
    checks: dict[str, str] = field(default_factory=dict)  # check -> its verdict on this version
    near: list[Status] = field(default_factory=list)  # not measured there: the nearest measured on each side
    fixed_in: str | None = None  # the oldest release from which every newer one measured is fixed
    workaround: Verified | None = None  # verified for this engine and release (kb.status)

    def text(self) -> str:
        where = f"{self.engine} {self.version}" if self.version else self.engine
        return f"{where}: {self.state} ({self.detail})"


class Statuses:
    """Derives each entry's status on demand, from its ledger and its records (read on first use)."""

    def __init__(self, records: list[Record] | None = None):
        self._given = records is not None
        self.records: dict[str, list[Record]] = {}
        for r in records or []:
            self.records.setdefault(r.entry, []).append(r)
        self._checks: dict[str, list] = {}
        self._memo: dict[tuple, list[Status]] = {}

    def of(self, entry: Entry, wanted: list[Wanted], pattern: str | None = None) -> list[Status]:
        """The status on each engine asked about; for a matched `pattern`, from the checks it names only.
        Derived once per entry and pattern: a model matches the same pattern many times."""
        key = (entry.slug, pattern, tuple(wanted))
        if key not in self._memo:
            self._memo[key] = self._of(entry, wanted, pattern)
        return self._memo[key]

    def prefetch(self, slugs: set[str]) -> None:
        """Read the records of these entries in one pass over the store (a maintainer's holds thousands of files)."""
        if self._given or not (slugs := slugs - set(self.records)):
            return
        from kb.records import RecordStore

        for slug in slugs:
            self.records[slug] = []
        for r in RecordStore().of_entries(slugs):
            self.records[r.entry].append(r)

    def _records(self, entry: Entry) -> list[Record]:
        if not self._given and entry.slug not in self.records:
            from kb.records import RecordStore

            self.records[entry.slug] = RecordStore().of_entries({entry.slug})  # bad lines: `kb accept` reports them
        return self.records.get(entry.slug, [])

    def _of(self, entry: Entry, wanted: list[Wanted], pattern: str | None) -> list[Status]:
        from kb import expectations
        from kb.checks import declared_checks

        if entry.slug not in self._checks:
            self._checks[entry.slug] = list(declared_checks(entry).items.values())
        checks = self._checks[entry.slug]
        table, records = expectations.load(entry.expected), self._records(entry)
        whole = derive(entry.meta.engines, checks, table, records, entry.meta.workarounds)
        chosen = next((p for p in entry.meta.trigger if p.name == pattern and p.checks), None)
        if chosen:
            named = chosen.measured_by([c.name for c in checks])
            st = derive(entry.meta.engines, [c for c in checks if c.name in named], table, records,
                        entry.meta.workarounds)
        else:
            st = whole
        engines = {es.engine: es for es in st.engines}
        if not wanted:
            wanted = [Wanted(es.engine, None) for es in st.engines]
        out = []
        for w in wanted:
            s = _status(entry, engines.get(w.engine), w)
            # every check of the entry, not only the pattern's: a workaround may run on another engine
            s.workaround = verified_workaround(entry.meta.workarounds, whole.checks(), w.engine, s.version)
            out.append(s)
        return out


def _status(entry: Entry, es, w: Wanted) -> Status:
    if es is None:
        if w.engine in entry.meta.engines:
            return Status(w.engine, w.version, State.NOT_CHECKED, "no check of this entry runs it")
        return Status(w.engine, w.version, State.NOT_CONCERNED, f"this problem concerns {', '.join(entry.meta.engines)}")
    if not es.versions:
        why = next((cs.not_run for cs in es.checks if cs.not_run), "never run")
        return Status(w.engine, w.version, State.NOT_CHECKED, why)
    version = w.version or es.versions[-1]
    if version in es.versions:
        st = _at(es, version)
        if st.state in UNMEASURED:
            st.near = _near(es, version)
        return st
    near = _near(es, version)
    said = ", ".join(f"{s.version} {s.state}" for s in near) or "none"
    return Status(w.engine, version, State.NOT_CHECKED, f"not checked on this version; nearest measured: {said}",
                  near=near, fixed_in=_fixed_in(es))


def _near(es, version: str) -> list[Status]:
    """The nearest release measured below `version`, then the nearest above, where there is one: what a release
    without a reading of its own is judged by (the reply says so; scan counts it as affected or not)."""
    from kb.versions import version_key

    key = version_key(version)
    sides = ([v for v in reversed(es.versions) if version_key(v) < key], [v for v in es.versions if version_key(v) > key])
    return [s for side in sides if (s := next((t for v in side if (t := _at(es, v)).state not in UNMEASURED), None))]


def _at(es, version: str) -> Status:
    """The verdicts of the engine's checks on one version, summed up as the site sums them."""
    verdicts = on_version(es.checks, version)
    state, detail = summary_at(es, version)
    return Status(es.engine, version, state, detail, {n: v for n, (_, v) in verdicts.items() if v is not None},
                  fixed_in=_fixed_in(es))


def _fixed_in(es) -> str | None:
    """The oldest measured release from which every newer measured one is fixed, if the newest is."""
    first = None
    for v in reversed(es.versions):
        if summary_at(es, v)[0] != State.FIXED:
            break
        first = v
    return first
