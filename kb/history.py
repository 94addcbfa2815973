"""What a series of versions says about one check: last affected, first fixed, regressions, changes.

Versions are not assumed monotonic: every measured version counts, and a fix range is marked
inferred only when versions inside it were not measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kb.envs import sort_versions
from kb.records import Record

BAD = {"reproduces", "differs", "broken"}
GOOD = {"fixed", "works"}


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

    def summary(self) -> str:
        fixed, bad, again = (("works from", "still broken", "broke again in") if self.kind == "workaround"
                             else ("fixed in", "still affected", "regressed in"))
        words = []
        if self.first_fixed:
            span = f"{self.last_affected} .. {self.first_fixed}" if self.last_affected else self.first_fixed
            words.append(f"{fixed} {self.first_fixed}" + (f" (somewhere in {span}: versions between were "
                                                          "not measured)" if self.inferred else ""))
        elif self.points and self.points[-1].verdict in BAD:
            words.append(f"{bad} in {self.points[-1].version}")
        if self.regressions:
            words.append(f"{again} " + ", ".join(self.regressions))
        if self.shape_changes:
            words.append("fails differently from " + ", ".join(self.shape_changes))
        if words:
            return "; ".join(words)
        if not self.points:
            return "not measured (skipped or unavailable)"
        return "works in every measured version" if self.kind == "workaround" else "not affected in any measured version"


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
