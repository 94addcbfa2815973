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
