"""An accepted expectation as a Record, so kb.history reads expected.yaml like any observation.

A fresh clone has no records, only expected.yaml; its history must still come from the same
derivation `kb matrix` uses, and that derivation reads Records.
"""

from __future__ import annotations

from datetime import date, datetime, time, timezone

from kb.expectations import Expectation
from kb.harness import Check
from kb.records import Record


def as_record(entry: str, check: Check, version: str, exp: Expectation) -> Record:
    """The observation `kb accept` folded into expected.yaml, rebuilt from the fields it kept."""
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
