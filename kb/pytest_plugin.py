"""The one runner: pytest collects each entry of repros/ as its checks and its contracts. `kb check`
and `kb matrix` run through it too.

still reproduces as accepted -> xfail (the engine version in the reason)
fixed / works as accepted    -> pass
anything else                -> fail, saying what changed; the terminal summary groups the changes
                                and gives one `kb accept` command (or rerun with --kb-accept)

Entries are collected here (pytest_pycollect_makemodule), not by pytest's Python collector, so a
test_checks.py needs nothing but its declarations.
"""

from __future__ import annotations

import functools
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from kb import expectations
from kb.engines import ENGINES
from kb.entries import PAGE, TEST
from kb.errors import KBError
from kb.verdicts import GOOD, Assessment as A, CheckKind

MARKERS = {
    **{e: f"checks that run {e}" for e in ENGINES},
    **{k.value: f"{k.value} checks" for k in CheckKind},
    "contract": "an entry's contracts (kb.contracts: explain, scan, page, ledger, scope, answer, figures)",
}
RECORDS = pytest.StashKey[list]()  # this session's records, on the controller (xdist sends them in reports)


def pytest_addoption(parser):
    g = parser.getgroup("kb", "the knowledge base's checks")
    g.addoption("--kb-accept", action="store_true",
                help="accept what this run observes into each entry's expected.yaml (as `kb accept` does)")
    g.addoption("--kb-check", action="append", default=[], metavar="NAME", help="only the check with this name")
    g.addoption("--kb-reuse", action="store_true", help="reuse records made in this exact environment")
    g.addoption("--kb-json", metavar="PATH", help="write this run's records to PATH as a JSON array")
    g.addoption("--kb-no-contracts", action="store_true", help="collect the checks only")
    g.addoption("--kb-store-durations", action="store_true",
                help=f"write each xdist unit's seconds in this run to {DURATIONS} (the order units are handed out)")


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    config.stash[RECORDS] = []


def is_entry_test(path: Path) -> bool:
    return path.name == TEST and path.parent.parent.name == "repros" and (path.parent / PAGE).is_file()


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent):
    if is_entry_test(module_path):
        return EntryFile.from_parent(parent, path=module_path)
    return None


def is_entry_page(path: Path) -> bool:
    return path.name == PAGE and path.parent.parent.name == "repros"


def pytest_collect_file(file_path: Path, parent):
    """An entry whose checks are all rows has no test_checks.py: its page is collected instead."""
    if is_entry_page(file_path) and not (file_path.parent / TEST).exists():
        return EntryFile.from_parent(parent, path=file_path)
    return None


class EntryFile(pytest.File):
    """One entry: its checks, in declaration order, then its contracts."""

    def collect(self):
        from kb import contracts
        from kb.checks import load_checks
        from kb.entries import load_entry

        try:
            self.checks = load_checks(load_entry(self.path.parent))
        except KBError as e:
            yield BrokenEntry.from_parent(self, name="entry", problem=str(e))
            return
        only = self.config.getoption("kb_check")
        for name, c in self.checks.items.items():
            if only and name not in only:
                continue
            item = CheckItem.from_parent(self, name=f"test_check[{name}]", check=c)
            for mark in (c.kind.value, *c.engines):  # plain strings: xdist sends keywords to the controller
                item.add_marker(getattr(pytest.mark, mark))
            yield item
        if not only and not self.config.getoption("kb_no_contracts"):
            for name in contracts.CONTRACTS:
                item = ContractItem.from_parent(self, name=f"contract[{name}]", contract=name)
                item.add_marker(pytest.mark.contract)
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


class _OneLine(pytest.Item):
    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, (pytest.fail.Exception, AssertionError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ContractItem(_OneLine):
    """One of the entry's contracts (kb.contracts): what the rest of kb promises about every entry."""

    def __init__(self, *, contract: str, **kw):
        super().__init__(**kw)
        self.contract = contract

    def runtest(self):
        from kb import contracts

        problem = contracts.CONTRACTS[self.contract](self.parent.checks.entry(), self.parent.checks)
        if problem:
            pytest.fail(f"{self.path.parent.name}: {problem}", pytrace=False)

    def reportinfo(self):
        return self.path, None, f"{self.path.parent.name}::contract[{self.contract}]"


class CheckItem(_OneLine):
    def __init__(self, *, check, **kw):
        super().__init__(**kw)
        self.check = check

    def runtest(self):
        from kb.harness import inputs_digest, run_check

        try:
            entry = self.parent.checks.entry()
            table = expectations.load(entry.expected)
        except KBError as e:
            pytest.fail(str(e), pytrace=False)
        rec = _reused(self.config).get((entry.slug, self.check.name)) if self.config.getoption("kb_reuse") else None
        if rec is not None and rec.inputs != inputs_digest(entry):
            rec = None  # made before the entry or kb changed: its judgement may be stale
        if rec is None:
            rec = run_check(entry, self.check)
            store().append(rec)
        self.user_properties.append(("kb-record", rec.model_dump_json()))
        from kb import engines

        outcome(rec, table, accepting=self.config.getoption("kb_accept"),
                engine_missing=any(engines.missing(e) for e in self.check.engines))

    def reportinfo(self):
        return self.path, None, f"{self.path.parent.name}::{self.check.name}"


_store = None
_reuse: dict | None = None


def store():
    from kb.records import RecordStore

    global _store
    if _store is None:
        _store = RecordStore()
    return _store


def _reused(config) -> dict:
    """The newest record per (entry, check) made with exactly this environment's versions (a resumed matrix)."""
    global _reuse
    if _reuse is None:
        from kb import versions
        from kb.verdicts import Verdict

        here = versions.environment()
        _reuse = {(r.entry, r.check): r for r in store().read()[0] if r.versions == here and r.verdict != Verdict.ERROR}
    return _reuse


# Seconds per xdist unit in a full run (./run test --kb-store-durations writes it): units are handed out longest
# first, so that no long one starts last and runs alone (xdist's own order is by number of tests: tests/'s slow
# files of few tests came last, and a warm run spent its last 4 minutes on them).
DURATIONS = "tests/durations.json"


def _unit(config, nodeid: str) -> str:
    """The unit a test runs in under `--dist loadfile`: its file, but the entries with checks on an emulated arm64 CPU
    are one unit together: each qemu interpreter they start (5-9 s, kb.forkserver keeps it) then starts on one worker
    only."""
    file = nodeid.split("::", 1)[0]
    return "emulated arm64 CPU" if _emulated(config.rootpath / file) else file


def longest_first(units: list[str], seconds: dict[str, float]) -> list[str]:
    """`units` by their seconds, longest first; a unit not timed yet (a new entry) counts as a typical one."""
    known = sorted(seconds.values())
    typical = known[len(known) // 2] if known else 0.0
    return sorted(units, key=lambda u: -seconds.get(u, typical))


def _durations(config) -> dict[str, float]:
    try:
        return json.loads((config.rootpath / DURATIONS).read_text())
    except (OSError, ValueError):
        return {}


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (./run test) in units (_unit), longest first (DURATIONS)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from collections import OrderedDict

    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return _unit(config, nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the queue is complete when the first unit is handed out
                self.ordered = True
                order = longest_first(list(self.workqueue), _durations(config))
                self.workqueue = OrderedDict((u, self.workqueue[u]) for u in order)
            super()._assign_work_unit(node)

    return Scheduling(config, log)


@functools.cache
def _emulated(path: Path) -> bool:
    from kb.checks import declared_checks
    from kb.entries import load_entry

    if not (is_entry_test(path) or is_entry_page(path)):
        return False
    try:
        return any(c.cpu for c in declared_checks(load_entry(path.parent)).items.values())
    except KBError:
        return False  # its one failing item says why


def pytest_collection_finish(session):
    """Start exporting the selected entries' models while the first checks run."""
    # Under xdist every worker collects every entry but runs only some: each exports its own lazily.
    if session.config.option.collectonly or _worker(session.config):
        return
    from kb.artifacts import prefetch

    chosen = {}
    reused = _reused(session.config) if session.config.getoption("kb_reuse") else {}
    for item in session.items:
        if isinstance(item, CheckItem) and item.path not in chosen:
            if (item.path.parent.name, item.check.name) in reused:
                continue  # its record is reused (if the entry changed since, the check exports it then)
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


def outcome(rec, table: expectations.Table, accepting: bool = False, engine_missing: bool = True) -> None:
    """`engine_missing`: the check was skipped for want of an engine (not, say, of a Vulkan device)."""
    a = expectations.assess(rec, table)
    if a.status == A.SKIPPED:
        # a missing engine is a broken setup, not a skip; a machine without a GPU is no broken setup
        if os.environ.get("CI") and engine_missing and _ci_has_every_engine():
            pytest.fail(f"CI=1, but {a.message}", pytrace=False)
        pytest.skip(a.message)
    if a.status == A.EXPECTED or (accepting and a.status != A.ERROR):
        if rec.verdict not in GOOD:
            pytest.xfail(a.message)
        return
    pytest.fail(a.message, pytrace=False)


# ---------------------------------------------------------------- the session's records


def pytest_runtest_logreport(report):
    _session_seconds[report.nodeid.split("::", 1)[0]] += report.duration
    if report.when != "call":
        return
    from kb.records import Record

    for key, value in report.user_properties:
        if key == "kb-record":
            _session_records.append(Record.model_validate_json(value))


_session_records: list = []  # the controller's copy (pytest_runtest_logreport runs there under xdist)
_session_seconds: dict[str, float] = defaultdict(float)  # per file, every phase of every test


def _worker(config) -> bool:
    """An xdist worker (not its environment variable, which a `kb check` child would inherit)."""
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session):
    from kb.artifacts import stop_prefetch

    stop_prefetch()
    if _worker(session.config):
        return
    config = session.config
    records = list(_session_records)
    config.stash[RECORDS] = records
    if path := config.getoption("kb_json"):
        from kb.records import rows

        Path(path).write_text(json.dumps(rows(records), indent=1))
    if config.getoption("kb_accept") and records:
        from kb.accepting import accept

        config.stash[ACCEPTED] = accept(records)
    if config.getoption("kb_store_durations"):
        _store_durations(config)


def _store_durations(config) -> None:
    """This run's seconds per unit, over the stored ones of the units it ran; units whose files are gone dropped."""
    seconds = _durations(config)
    ran: dict[str, float] = defaultdict(float)
    for file, took in _session_seconds.items():
        ran[_unit(config, file)] += took
    seconds.update(ran)
    kept = {u: round(t, 1) for u, t in sorted(seconds.items())
            if u == "emulated arm64 CPU" or (config.rootpath / u).is_file()}
    (config.rootpath / DURATIONS).write_text(json.dumps(kept, indent=0) + "\n")


ACCEPTED = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter, config):
    """What changed, grouped, with one command that records it."""
    records = config.stash.get(RECORDS, [])
    if not records:
        return
    from kb.entries import find

    groups: dict[str, list[str]] = defaultdict(list)
    review: set[str] = set()
    for rec in records:
        try:
            table = expectations.load(find(rec.entry).expected)
        except KBError:
            table = {}
        a = expectations.assess(rec, table)
        if a.status in (A.EXPECTED, A.SKIPPED):
            continue
        word = a.message.split(":")[0] if a.status != A.ERROR else "ERROR"
        groups[word].append(f"{rec.entry}/{rec.check} ({rec.engine} {rec.engine_version})")
        if a.status != A.ERROR:
            review.add(rec.entry)
    accepted = config.stash.get(ACCEPTED, [])
    tr = terminalreporter
    tr.write_sep("=", f"kb: {len(records)} checks, {sum(map(len, groups.values()))} not as accepted")
    for word in sorted(groups):
        tr.write_line(f"{word} ({len(groups[word])}):")
        for line in groups[word][:20]:
            tr.write_line(f"  {line}")
        if len(groups[word]) > 20:
            tr.write_line(f"  ... and {len(groups[word]) - 20} more")
    if accepted:
        for line in accepted:
            tr.write_line(line)
    elif review:
        tr.write_line(f"If these are right, record them: kb accept {' '.join(sorted(review))} "
                      "(or rerun with --kb-accept)")
