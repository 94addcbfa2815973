"""pytest's view of the corpus: each check is a test whose outcome says what changed.

still reproduces as accepted -> xfail (the engine version in the reason)
fixed / works as accepted    -> pass
anything else                -> fail, saying what changed and how to accept it
"""

from __future__ import annotations

import pytest

from kb import expectations
from kb.engines import ALL as ENGINES
from kb.errors import KBError
from kb.harness import Checks, run_check
from kb.records import Record, RecordStore

_store: RecordStore | None = None

MARKERS = {
    **{e: f"checks that run {e}" for e in ENGINES},
    "bug": "checks that look for a known bug",
    "workaround": "checks that verify a workaround",
}


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def store() -> RecordStore:
    global _store
    if _store is None:
        _store = RecordStore()
    return _store


def make_test(checks: Checks):
    params = [
        pytest.param(name, id=name, marks=[getattr(pytest.mark, c.kind), getattr(pytest.mark, c.engine),
                                           *(getattr(pytest.mark, n) for n in c.needs)])
        for name, c in checks.items.items()
    ]

    @pytest.mark.parametrize("check", params)
    def test_check(check: str):
        try:
            entry = checks.entry()
            table = expectations.load(entry.expected)
        except KBError as e:
            pytest.fail(str(e), pytrace=False)
        rec = run_check(entry, checks.items[check])
        store().append(rec)
        outcome(rec, table)

    test_check.kb_checks = checks
    return test_check


def pytest_collection_finish(session):
    """Start exporting the selected entries' models while the first checks run."""
    from kb.artifacts import prefetch

    chosen: dict = {}
    for item in session.items:
        checks = getattr(getattr(item, "function", None), "kb_checks", None)
        if checks is not None and checks.dir not in chosen:
            try:
                chosen[checks.dir] = checks.entry()
            except KBError:
                continue  # the test itself reports it
    if chosen and not session.config.option.collectonly:
        prefetch(list(chosen.values()))


def outcome(rec: Record, table: expectations.Table) -> None:
    a = expectations.assess(rec, table)
    if a.status == "skipped":
        pytest.skip(a.message)
    if a.status == "expected":
        if rec.verdict not in ("fixed", "works"):
            pytest.xfail(a.message)
        return
    pytest.fail(a.message, pytrace=False)
