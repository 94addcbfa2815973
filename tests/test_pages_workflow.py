"""The GitHub Pages workflow (.github/workflows/pages.yml) builds exactly what it publishes, from the
committed knowledge alone: its build step is run here as written, in a copy of the files to commit,
with the engines made unimportable, and the site it uploads is checked."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"
ENGINE_MODULES = ("MNN", "ncnn", "pnnx")  # importing one would mean an engine runs in the build
RUNS_ENGINES = ("kb check", "kb matrix", "kb accept", "pytest", "./run ", "mnnconvert", "onnx2ncnn")


def _steps() -> list[dict]:
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return [s for job in flow["jobs"].values() for s in job.get("steps", [])]


def test_the_workflow_runs_no_engine_and_uploads_what_it_built():
    runs = [s["run"] for s in _steps() if "run" in s]
    assert not [r for r in runs for word in RUNS_ENGINES if word in r], runs
    build = [r for r in runs if "kb site build" in r]
    assert len(build) == 1, runs
    upload = next(s for s in _steps() if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site"  # kb site build's default output
    assert "KB_RECORDS" in build[0]  # local records, if any, stay out of what is published


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """The workflow's build step, run as written in a copy of the files a commit would hold."""
    tmp = tmp_path_factory.mktemp("pages")
    checkout = tmp / "checkout"
    # what a commit of this working tree holds: tracked files and new ones .gitignore does not exclude
    # (no records, caches or built site: those are ignored)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = REPO / name
        if src.is_file():  # a tracked file deleted in the working tree is not there to copy
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, checkout / name)
    block = tmp / "no-engines"
    block.mkdir()
    for mod in ENGINE_MODULES:  # SystemExit: not swallowed by an `except Exception` around an optional import
        (block / f"{mod}.py").write_text(f"raise SystemExit('the site build imported {mod}')\n")
    (run,) = [s["run"] for s in _steps() if "kb site build" in s.get("run", "")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(block)
    env["KB_CACHE"] = str(tmp / "cache")
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", run], cwd=checkout, env=env, capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    return checkout / "site"


def test_the_published_site_has_every_committed_entry_at_the_public_address(published):
    from kb.entries import load_all

    site_url = re.search(r"^site_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), re.M)[1]
    entries = load_all(published.parent)
    assert entries
    home = (published / "index.html").read_text(encoding="utf-8")
    for e in entries:
        page = (published / e.slug / "index.html").read_text(encoding="utf-8")
        assert f'<link rel="canonical" href="{site_url}{e.slug}/">' in page
        assert f'href="{e.slug}/"' in home
        # committed knowledge only: the accepted results, no run of this machine
        assert "No recorded run is part of this build" in page, e.slug
    assert (published / "search" / "search_index.json").is_file()
