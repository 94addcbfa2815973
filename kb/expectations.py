"""The committed knowledge of an entry, its ledger: which verdict each check gave on each engine version.

Only `kb accept` writes it, from recorded observations; a test run only reads it. On disk
(`expected.yaml`) each check's releases are grouped, per engine, into runs of consecutive releases
with one verdict, signature and fingerprint, and the newest measured figure. Where and when a run was
observed is listed once under `provenance`. No local record ids: a file accepted on another machine
merges like any other.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from kb import yamlio
from kb.errors import KBError
from kb.records import Record
from kb.verdicts import CheckKind, Verdict
from kb.verdicts import NEVER_ACCEPTED, NO_OBSERVATION, Assessment as A, Verdict as V
from kb.versions import sort_versions, version_key

HEADER = ("# Accepted verdicts: check -> engine -> runs of releases with one verdict each; each check's kind.\n"
          "# Written by `kb accept` from recorded runs; a test run never changes this file.\n")
_CLOCK = re.compile(r"\[\d\d:\d\d:\d\d\]\s*(?:[:@] ?\d+:\s*)?")  # MNN's log timestamps: not knowledge


class Expectation(BaseModel):
    """One accepted cell: a check on one engine release."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    signature: str | None = None
    fingerprint: str | None = None  # how a `differs`/`broken` check failed
    detail: str = ""  # the measured figure (the newest of its run)
    observed: str  # date of the accepted run
    platform: str
    engine: str | None = None


class Run(BaseModel):
    """Consecutive releases of one engine with the same accepted result."""

    model_config = ConfigDict(extra="forbid")
    versions: list[str]
    verdict: Verdict
    signature: str | None = None
    fingerprint: str | None = None
    figure: str = ""
    seen: str  # a key of the file's provenance


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: str
    platform: str


class Ledger(BaseModel):
    model_config = ConfigDict(extra="forbid")
    provenance: dict[str, Provenance] = {}
    kinds: dict[str, CheckKind] = {}  # check -> what it is for (bug, variant, control, workaround)
    checks: dict[str, dict[str, list[Run]]] = {}  # check -> engine -> runs


Table = dict[str, dict[str, Expectation]]


def load(path: Path) -> Table:
    """check -> release -> accepted cell; {} when there is no file. Read once per file content."""
    if not path.is_file():
        return {}
    st = path.stat()
    return {c: dict(per) for c, per in _load(str(path), st.st_mtime_ns, st.st_size).items()}


@lru_cache(maxsize=256)
def _load(path: str, _mtime: int, _size: int) -> Table:
    try:
        raw = yamlio.load(Path(path).read_text(encoding="utf-8")) or {}
        ledger = Ledger.model_validate(raw)
        table: Table = {}
        for check, per_engine in ledger.checks.items():
            for engine, runs in per_engine.items():
                for run in runs:
                    where = ledger.provenance[run.seen]
                    for v in run.versions:
                        table.setdefault(check, {})[str(v)] = Expectation(
                            verdict=run.verdict, signature=run.signature, fingerprint=run.fingerprint,
                            detail=run.figure or run.fingerprint or "", observed=where.date,
                            platform=where.platform, engine=engine)
        return table
    except (yaml.YAMLError, AttributeError, TypeError, KeyError, ValidationError) as e:
        raise KBError(Path(path), f"not a valid expectations file: {str(e).splitlines()[0]}") from None


def dump(table: Table, engines: dict[str, str], kinds: dict[str, str] | None = None) -> str:
    """The ledger's text: runs of consecutive releases, provenance listed once, everything sorted."""
    places = sorted({(e.observed, e.platform) for per in table.values() for e in per.values()})
    key = {p: f"p{i + 1}" for i, p in enumerate(places)}
    checks: dict[str, dict[str, list[dict]]] = {}
    for check in sorted(table):
        per = table[check]
        engine = engines.get(check) or next((e.engine for e in per.values() if e.engine), "unknown")
        runs: list[dict] = []
        for v in sort_versions(per):
            e = per[v]
            same = (e.verdict, e.signature, e.fingerprint)
            if runs and runs[-1]["_same"] == same:
                runs[-1]["versions"].append(v)
            else:
                runs.append({"_same": same, "versions": [v]})
            # the newest release of the run gives its figure and provenance
            runs[-1].update(verdict=str(e.verdict), signature=e.signature, fingerprint=e.fingerprint,
                            figure=_CLOCK.sub("", e.detail).strip(), seen=key[(e.observed, e.platform)])
        for r in runs:
            r["versions"] = _Flow(r["versions"])
            if r["fingerprint"]:  # a failure's fingerprint says how it failed: no second line for it
                r["figure"] = None
        checks.setdefault(check, {})[engine] = [
            {k: r[k] for k in ("versions", "verdict", "signature", "fingerprint", "figure", "seen") if r[k]}
            for r in runs]
    data = {"provenance": {key[p]: {"date": p[0], "platform": p[1]} for p in places},
            "kinds": {c: str(kinds[c]) for c in checks if c in (kinds or {})}, "checks": checks}
    if not data["kinds"]:
        del data["kinds"]
    return HEADER + yaml.dump(data, Dumper=yamlio.DUMPER, sort_keys=False, allow_unicode=True, width=1000)


class _Flow(list):
    """A run's releases, written on one line."""


yamlio.DUMPER.add_representer(_Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def write(path: Path, table: Table, engines: dict[str, str], kinds: dict[str, str] | None = None) -> None:
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    tmp.write_text(dump(table, engines, kinds), encoding="utf-8")
    tmp.replace(path)


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


def accept(path: Path, records: list[Record], engines: dict[str, str] | None = None,
           kinds: dict[str, str] | None = None) -> int:
    """Fold records into the ledger at `path`, newest record winning; write atomically. `engines`: each
    declared check's engine; given, checks no longer declared leave the ledger. `kinds`: each one's kind,
    recorded beside its verdicts."""
    table = load(path)
    if engines is not None:
        # a check whose engine changed (onnx2ncnn -> ncnn) keeps no releases of the engine it had
        table = {c: {v: e for v, e in per.items() if e.engine in (None, engines[c])}
                 for c, per in table.items() if c in engines}
    n = 0
    for r in records:
        if r.verdict in NEVER_ACCEPTED:
            continue
        table.setdefault(r.check, {})[r.engine_version] = Expectation(
            verdict=r.verdict, signature=r.signature, fingerprint=r.fingerprint, detail=r.detail,
            observed=r.started.date().isoformat(), platform=r.platform, engine=r.engine)
        n += 1
    write(path, table, engines or {}, kinds)
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
        id=f"accepted:{entry}:{check.name}:{version}", entry=entry, check=check.name, kind=check.kind, engine=check.engine,
        engine_version=version, verdict=exp.verdict, signature=exp.signature, fingerprint=exp.fingerprint,
        detail=exp.detail, versions={check.engine: version}, platform=exp.platform,
        started=_day(exp.observed), duration=0.0,
        metrics=None, steps=[], log="", run="")


def _day(observed: str) -> datetime:
    try:
        return datetime.combine(date.fromisoformat(observed), time(), timezone.utc)
    except ValueError:  # hand-edited; it is the only observation of its version, so its time is moot
        return datetime(1970, 1, 1, tzinfo=timezone.utc)
