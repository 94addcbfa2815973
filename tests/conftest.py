import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """An empty corpus root with its own records and cache, so tests never touch the real ones."""
    (tmp_path / "repros").mkdir()
    monkeypatch.setenv("KB_ROOT", str(tmp_path))
    monkeypatch.setenv("KB_RECORDS", str(tmp_path / ".kb" / "records"))
    monkeypatch.setenv("KB_CACHE", str(ROOT / ".kb" / "cache"))  # exports are content-addressed: safe to share
    return tmp_path


@pytest.fixture
def copy_entry(corpus):
    def copy(slug: str) -> Path:
        dst = corpus / "repros" / slug
        shutil.copytree(ROOT / "repros" / slug, dst, ignore=shutil.ignore_patterns("__pycache__"))
        return dst

    return copy
