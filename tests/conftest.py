import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "corpus"  # fake entries: kb's tests never depend on repros/

collect_ignore = ["corpus", "data"]  # data for these tests (a fixture corpus, real logs, query sets), not tests


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """An empty corpus root with its own records and cache, so tests never touch the real ones."""
    (tmp_path / "repros").mkdir()
    monkeypatch.setenv("KB_ROOT", str(tmp_path))
    monkeypatch.setenv("KB_RECORDS", str(tmp_path / ".kb" / "records"))
    monkeypatch.setenv("KB_CACHE", str(ROOT / ".kb" / "cache"))  # exports are content-addressed: safe to share
    return tmp_path


@pytest.fixture
def fixture_entry(corpus):
    """Copy a fixture entry (tests/corpus/repros/<slug>) into the temporary corpus."""

    def copy(slug: str) -> Path:
        dst = corpus / "repros" / slug
        shutil.copytree(FIXTURES / "repros" / slug, dst, ignore=shutil.ignore_patterns("__pycache__"))
        return dst

    return copy


@pytest.fixture
def fixture_corpus(corpus, fixture_entry):
    """The whole fixture corpus, in a temporary root."""
    for d in sorted((FIXTURES / "repros").iterdir()):
        if d.is_dir():
            fixture_entry(d.name)
    return corpus


def _once(tmp_path_factory) -> Path:
    """A folder this run's xdist workers share (each worker's basetemp is a child of the run's), and only this
    run: without xdist, pytest's own basetemp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """A snapshot of the record store, taken once per run: the corpus checks running beside these tests append
    to the real one (a new day, a new verdict), and the site and the tests' own derivation must read the same
    records. The site built from it (`built_site`) is built once per run too."""
    from filelock import FileLock

    from kb.site import searchbox

    shared = _once(tmp_path_factory) / "kb-browser-site"
    with FileLock(str(shared) + ".lock"):
        snap = shared / "records"
        if not snap.is_dir():
            tmp = shared / "records.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            searchbox.snapshot(tmp).rename(snap)
    return snap


@pytest.fixture(scope="module")
def built_site(records) -> Path:
    """The site of this checkout (entries and records as they are), built once per run for every module that
    serves it (the browser tests, the search bench's smoke run)."""
    from filelock import FileLock

    from kb.site import searchbox

    shared = records.parent
    site = shared / "site"
    with FileLock(str(shared) + ".lock"):
        if not (shared / "built").is_file():
            shutil.rmtree(site, ignore_errors=True)
            p = searchbox.build(site, shared / "docs", records, cwd=ROOT)
            assert p.returncode == 0, p.stderr[-2000:]
            (shared / "built").write_text("")
    return site


@pytest.fixture(scope="module")
def statuses(records):
    """Each entry's derived status (kb.site.generate.render: the derivation the build used, from the same records),
    computed once per module: a render makes every page, seconds each time."""
    from kb.site.generate import render

    return render(records=records).statuses
