"""What a series of versions says about one check: last affected, first fixed, regressions, changes.

Versions are not assumed monotonic: every measured version counts, and a fix range is marked
inferred only when versions inside it were not measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kb.versions import sort_versions
from kb.records import Record
from kb.verdicts import BAD, GOOD


@dataclass
class Point:
    version: str
    verdict: str
    shape: str  # signature or failure fingerprint: how it failed


@dataclass
class Timeline:
    entry: str
    check: str
    kind: str
    engine: str
    points: list[Point]  # measured versions, oldest first
    unmeasured: list[str] = field(default_factory=list)  # asked for, but skipped, unavailable or error
    why_unmeasured: dict[str, str] = field(default_factory=dict)  # version -> that verdict
    last_affected: str | None = None
    first_fixed: str | None = None
    inferred: bool = False  # versions between last_affected and first_fixed were not measured
    regressions: list[str] = field(default_factory=list)  # bad again after good
    shape_changes: list[str] = field(default_factory=list)  # bad both times, but differently

    def gap(self) -> list[str]:
        """The versions between last affected and first fixed that were asked for but not measured."""
        if not (self.inferred and self.last_affected and self.first_fixed):
            return []
        asked = sort_versions([p.version for p in self.points] + self.unmeasured)
        lo, hi = asked.index(self.last_affected), asked.index(self.first_fixed)
        return [v for v in asked[lo + 1:hi] if v in self.unmeasured]

    def phrases(self) -> list[str]:
        """What the measured versions say, most important first: the one wording of kb matrix and the site."""
        if not self.points:  # only errors, skips, or versions that could not be installed
            return ["no version measured"]
        w = WORDS.get(self.kind, WORDS["bug"])
        out = []
        if self.first_fixed:
            words = f"last {w['bad']} {self.last_affected}, {w['first good']} {self.first_fixed}"
            if self.inferred:  # the change happened somewhere in a range with unmeasured versions
                missing = self.gap()
                words += f" (inferred: {_list(missing)} {'was' if len(missing) == 1 else 'were'} not measured)"
            out.append(words)
        elif len(self.points) == 1:  # one version is no history yet, only what it showed
            p = self.points[0]
            out.append(f"{w['bad'] if self.last_affected else w['good']} in {p.version}, the only version measured")
        elif self.last_affected:  # no good version after it: it is the newest measured
            out.append(f"still {w['bad']} in {self.last_affected} (newest measured)")
        else:
            out.append(f"{w['all good']} ({self.points[0].version} to {self.points[-1].version})")
        if self.regressions:
            out.append(f"{w['again']} " + _list(self.regressions))
        if self.shape_changes:
            out.append("fails differently from " + _list(self.shape_changes))
        return out

    def summary(self) -> str:
        text = "; ".join(self.phrases())
        return text[0].upper() + text[1:]


# How each kind of check names a bad version, a good one, the first good one after the last bad
# one, bad after good, and a history with no bad version at all.
WORDS = {"bug": {"bad": "affected", "good": "not affected", "first good": "first fixed", "again": "regressed in",
                 "all good": "not affected in any measured version"},
         "workaround": {"bad": "broken", "good": "works", "first good": "works from", "again": "stopped working in",
                        "all good": "works in every measured version"}}


def _list(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else ", ".join(versions[:-1]) + " and " + versions[-1]


def version_of(record: Record, engine: str) -> str:
    return record.versions.get(engine) or record.engine_version


def timelines(records: list[Record], engine: str) -> list[Timeline]:
    """One timeline per (entry, check), over the versions of `engine`; the newest record per version wins."""
    latest: dict[tuple[str, str], dict[str, Record]] = {}
    for r in sorted(records, key=lambda r: r.started):
        latest.setdefault((r.entry, r.check), {})[version_of(r, engine)] = r
    out = []
    for (entry, check), per in sorted(latest.items()):
        some = next(iter(per.values()))
        t = Timeline(entry, check, some.kind, engine, [])
        for v in sort_versions(per):
            r = per[v]
            if r.verdict in BAD | GOOD:
                t.points.append(Point(v, r.verdict, r.signature or r.fingerprint or ""))
            else:
                t.unmeasured.append(v)
                t.why_unmeasured[v] = r.verdict
        _derive(t, sort_versions(per))
        out.append(t)
    return out


def _derive(t: Timeline, asked: list[str]) -> None:
    for prev, cur in zip(t.points, t.points[1:]):
        if prev.verdict in GOOD and cur.verdict in BAD:
            t.regressions.append(cur.version)
        if prev.verdict in BAD and cur.verdict in BAD and prev.shape != cur.shape:
            t.shape_changes.append(cur.version)
    bad = [i for i, p in enumerate(t.points) if p.verdict in BAD]
    if bad:
        t.last_affected = t.points[bad[-1]].version
        if bad[-1] + 1 < len(t.points):
            t.first_fixed = t.points[bad[-1] + 1].version
            lo, hi = asked.index(t.last_affected), asked.index(t.first_fixed)
            t.inferred = any(v in t.unmeasured for v in asked[lo + 1:hi])
