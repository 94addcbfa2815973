"""The committed knowledge of an entry: which verdict each check gave on each engine version.

Only `kb accept` writes it, from recorded observations; a test run only reads it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from kb.errors import KBError
from kb.records import Record
from kb.verdicts import Verdict
from kb.verdicts import NEVER_ACCEPTED, NO_OBSERVATION, Assessment as A, Verdict as V
from kb.versions import version_key

HEADER = ("# Accepted observations: check -> engine version -> verdict.\n"
          "# Written by `kb accept` from recorded runs; a test run never changes this file.\n")


class Expectation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    signature: str | None = None
    fingerprint: str | None = None  # how a `differs`/`broken` check failed
    detail: str = ""
    observed: str  # date of the accepted run
    platform: str
    record: str  # id of the accepted record


Table = dict[str, dict[str, Expectation]]


def load(path: Path) -> Table:
    if not path.is_file():
        return {}
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return {check: {str(v): Expectation.model_validate(e) for v, e in per.items()}
                for check, per in raw.items()}
    except (yaml.YAMLError, AttributeError, ValidationError) as e:
        raise KBError(path, f"not a valid expectations file: {str(e).splitlines()[0]}") from None


@dataclass
class Expected:
    version: str  # the engine version it was accepted for
    exp: Expectation


def lookup(table: Table, check: str, version: str) -> Expected | None:
    """The expectation accepted for exactly `version`. Another version's verdict is never this one's."""
    per = table.get(check) or {}
    return Expected(version, per[version]) if version in per else None


def nearest(table: Table, check: str, version: str) -> Expected | None:
    """The accepted expectation of the nearest older version (else the oldest): only to say what moved."""
    per = table.get(check)
    if not per:
        return None
    known = sorted(per, key=version_key)
    older = [v for v in known if version_key(v) < version_key(version)]
    v = older[-1] if older else known[0]
    return Expected(v, per[v])


def accept(path: Path, records: list[Record]) -> int:
    """Fold records into the file at `path`, newest record winning; write atomically."""
    table = load(path)
    n = 0
    for r in records:
        if r.verdict in NEVER_ACCEPTED:
            continue
        table.setdefault(r.check, {})[r.engine_version] = Expectation(
            verdict=r.verdict, signature=r.signature, fingerprint=r.fingerprint, detail=r.detail,
            observed=r.started.date().isoformat(),
            platform=r.platform, record=r.id)
        n += 1
    data = {c: {v: e.model_dump(mode="json", exclude_none=True) for v, e in sorted(per.items(), key=lambda kv: version_key(kv[0]))}
            for c, per in sorted(table.items())}
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    tmp.write_text(HEADER + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    tmp.replace(path)
    return n


@dataclass
class Assessment:
    status: A
    message: str


def assess(rec: Record, table: Table) -> Assessment:
    """Compare one observation with the accepted knowledge, in words a user can act on."""
    where = f"{rec.engine} {rec.engine_version}"
    if rec.verdict in NEVER_ACCEPTED:
        return Assessment(A.SKIPPED if rec.verdict in NO_OBSERVATION else A.ERROR, f"{rec.entry}/{rec.check}: {rec.detail}")
    seen = rec.verdict + (f" [{rec.signature}]" if rec.signature else "")
    accept = f"If this is right, record it: kb accept {rec.entry} --check {rec.check}"
    got = lookup(table, rec.check, rec.engine_version)
    if got is None:
        near = nearest(table, rec.check, rec.engine_version)
        if near is None:
            return Assessment(A.NEW, f"NEW: no accepted result for {rec.entry}/{rec.check}; "
                                     f"observed {seen} on {where}: {rec.detail}\n{accept}")
        change = _change(near.exp, rec)
        was = near.exp.verdict + (f" [{near.exp.signature}]" if near.exp.signature else "")
        move = "the same as" if change is None else f"{change} against"
        return Assessment(A.NEW, f"NEW VERSION: nothing accepted for {rec.entry}/{rec.check} on {where}; "
                                 f"observed {seen}, {move} {was} on {rec.engine} {near.version}: {rec.detail}\n{accept}")
    exp = got.exp
    change = _change(exp, rec)
    if change is None:
        return Assessment(A.EXPECTED, f"{seen} on {where}, as accepted: {rec.detail}")
    was = exp.verdict + (f" [{exp.signature}]" if exp.signature else "")
    if change == "FAILS DIFFERENTLY":
        was = f"{was} ({exp.fingerprint})"
    return Assessment(A.CHANGED, f"{change}: {rec.entry}/{rec.check} was {was} on {rec.engine} {got.version} "
                                 f"(accepted {exp.observed}), now {seen} on {where}: {rec.detail}\n{accept}")


def _change(exp: Expectation, rec: Record) -> str | None:
    """None when the record is what was accepted; else the change, in the words pytest prints."""
    if (exp.verdict, exp.signature, exp.fingerprint) == (rec.verdict, rec.signature, rec.fingerprint):
        return None
    if exp.verdict == rec.verdict and exp.signature == rec.signature:
        return "FAILS DIFFERENTLY"
    return _CHANGES.get((exp.verdict, rec.verdict), "CHANGED")


_CHANGES = {
    (V.REPRODUCES, V.FIXED): "FIXED",
    (V.DIFFERS, V.FIXED): "FIXED",
    (V.FIXED, V.REPRODUCES): "REGRESSION",
    (V.FIXED, V.DIFFERS): "REGRESSION",
    (V.WORKS, V.BROKEN): "WORKAROUND BROKEN",
    (V.BROKEN, V.WORKS): "WORKAROUND NOW WORKS",
}


def as_record(entry: str, check, version: str, exp: Expectation) -> Record:
    """An accepted expectation as a Record, so kb.history reads expected.yaml like any observation: the
    observation `kb accept` folded into expected.yaml, rebuilt from the fields it kept."""
    # model_construct: expected.yaml was validated when loaded, and a hand-edited verdict kb does
    # not know should show up as what it is (not measured), not stop the build.
    return Record.model_construct(
        id=exp.record, entry=entry, check=check.name, kind=check.kind, engine=check.engine,
        engine_version=version, verdict=exp.verdict, signature=exp.signature, fingerprint=exp.fingerprint,
        detail=exp.detail, versions={check.engine: version}, platform=exp.platform,
        started=_day(exp.observed), duration=0.0,
        metrics=None, steps=[], log="", run="")


def _day(observed: str) -> datetime:
    try:
        return datetime.combine(date.fromisoformat(observed), time(), timezone.utc)
    except ValueError:  # hand-edited; it is the only observation of its version, so its time is moot
        return datetime(1970, 1, 1, tzinfo=timezone.utc)
