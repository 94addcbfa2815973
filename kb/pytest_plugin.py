"""pytest's view of the corpus: each check of repros/<slug>/test_checks.py is one test item.

still reproduces as accepted -> xfail (the engine version in the reason)
fixed / works as accepted    -> pass
anything else                -> fail, saying what changed and how to accept it

Entries are collected here (pytest_pycollect_makemodule), not by pytest's Python collector, so a
test_checks.py needs nothing but its declarations.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kb import expectations
from kb.engines import ENGINES
from kb.entries import PAGE, TEST
from kb.errors import KBError
from kb.verdicts import GOOD, Assessment as A, CheckKind

MARKERS = {
    **{e: f"checks that run {e}" for e in ENGINES},
    "bug": "checks that look for a known bug",
    "variant": "checks that run a variant model (the trigger's scope)",
    "control": "checks that run a model without the trigger",
    "workaround": "checks that verify a workaround",
}


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def is_entry_test(path: Path) -> bool:
    return path.name == TEST and path.parent.parent.name == "repros" and (path.parent / PAGE).is_file()


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent):
    if is_entry_test(module_path):
        return EntryFile.from_parent(parent, path=module_path)
    return None


class EntryFile(pytest.File):
    """One entry: its checks, in declaration order."""

    def collect(self):
        from kb.checks import load_checks
        from kb.entries import load_entry

        try:
            self.checks = load_checks(load_entry(self.path.parent))
        except KBError as e:
            yield BrokenEntry.from_parent(self, name="entry", problem=str(e))
            return
        for name, c in self.checks.items.items():
            item = CheckItem.from_parent(self, name=f"test_check[{name}]", check=c)
            for mark in (c.kind, *c.engines):
                item.add_marker(getattr(pytest.mark, mark))
            yield item


class BrokenEntry(pytest.Item):
    """An entry that cannot be loaded: one failing item that says why, in one line."""

    def __init__(self, *, problem: str, **kw):
        super().__init__(**kw)
        self.problem = problem

    def runtest(self):
        pytest.fail(self.problem, pytrace=False)

    def reportinfo(self):
        return self.path, None, self.name


class CheckItem(pytest.Item):
    def __init__(self, *, check, **kw):
        super().__init__(**kw)
        self.check = check

    def runtest(self):
        from kb.harness import run_check

        try:
            entry = self.parent.checks.entry()
            table = expectations.load(entry.expected)
        except KBError as e:
            pytest.fail(str(e), pytrace=False)
        rec = run_check(entry, self.check)
        store().append(rec)
        outcome(rec, table)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, pytest.fail.Exception):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.parent.name}::{self.check.name}"


_store = None


def store():
    from kb.records import RecordStore

    global _store
    if _store is None:
        _store = RecordStore()
    return _store


def pytest_collection_finish(session):
    """Start exporting the selected entries' models while the first checks run."""
    # Under xdist every worker collects every entry but runs only some: each exports its own lazily.
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    from kb.artifacts import prefetch

    chosen = {}
    for item in session.items:
        if isinstance(item, CheckItem) and item.path not in chosen:
            try:
                chosen[item.path] = item.parent.checks.entry()
            except KBError:
                continue  # the item itself reports it
    if chosen:
        prefetch(list(chosen.values()))


def _ci_has_every_engine() -> bool:
    """CI installs every engine from PyPI, and builds onnx2ncnn where ncnn's sources are at hand."""
    from kb import engines, paths

    if not engines.missing("onnx2ncnn"):
        return True
    return bool(os.environ.get("NCNN_SRC")) or (paths.repo_root().parent / "shared" / "ncnn-tools-onnx").is_dir()


def outcome(rec, table: expectations.Table) -> None:
    a = expectations.assess(rec, table)
    if a.status == A.SKIPPED:
        if os.environ.get("CI") and _ci_has_every_engine():  # a missing one is a broken setup, not a skip
            pytest.fail(f"CI=1, but {a.message}", pytrace=False)
        pytest.skip(a.message)
    if a.status == A.EXPECTED:
        if rec.verdict not in GOOD:
            pytest.xfail(a.message)
        return
    pytest.fail(a.message, pytrace=False)
