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


WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
ENGINE_MODULES = ("MNN", "ncnn", "pnnx")  # importing one would mean an engine runs in the site's build


@pytest.fixture(scope="session")
def pages_steps() -> list[dict]:
    """The steps of the GitHub Pages workflow, which builds the published site."""
    import yaml

    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return [s for job in flow["jobs"].values() for s in job.get("steps", [])]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """The records the published site is built from: none (the workflow's KB_RECORDS is an empty folder)."""
    folder = _once(tmp_path_factory) / "kb-published-records"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def built_site(tmp_path_factory, pages_steps) -> Path:
    """The site GitHub Pages publishes: the workflow's build step (.github/workflows/pages.yml), run as written in a
    copy of the files a commit would hold (no records, caches or built site: git ignores those), with the engines
    made unimportable. Built once per run for every module that reads it: the browser tests, the search bench's
    smoke run, the workflow's own test."""
    import subprocess
    import sys

    from filelock import FileLock

    shared = _once(tmp_path_factory) / "kb-published"
    checkout = shared / "checkout"
    with FileLock(str(shared) + ".lock"):
        if not (shared / "built").is_file():
            shutil.rmtree(checkout, ignore_errors=True)
            files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                   capture_output=True, check=True).stdout
            for name in filter(None, files.decode().split("\0")):
                src = ROOT / name
                if src.is_file():  # a tracked file deleted in the working tree is not there to copy
                    (checkout / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, checkout / name)
            block = shared / "no-engines"
            block.mkdir(exist_ok=True)
            for mod in ENGINE_MODULES:  # SystemExit: not swallowed by an `except Exception` around an optional import
                (block / f"{mod}.py").write_text(f"raise SystemExit('the site build imported {mod}')\n")
            (run,) = [s["run"] for s in pages_steps if "kb site build" in s.get("run", "")]
            env = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
            env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
            env["PYTHONPATH"] = str(block)
            env["KB_CACHE"] = str(shared / "cache")
            p = subprocess.run(["bash", "-euo", "pipefail", "-c", run], cwd=checkout, env=env, capture_output=True,
                               text=True, timeout=900)
            assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
            (shared / "built").write_text("")
    return checkout / "site"


@pytest.fixture(scope="module")
def statuses(records):
    """Each entry's status as the published build derives it (kb.status.of_entry, from the same records: none)."""
    from kb.entries import load_all
    from kb.status import of_entry

    assert not any(records.iterdir())
    return {e.slug: of_entry(e) for e in load_all(ROOT)}
