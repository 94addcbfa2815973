"""The GitHub Pages workflow (.github/workflows/pages.yml) builds exactly what it publishes, from the
committed knowledge alone: conftest.py's `built_site` runs its build step as written, in a copy of the files to
commit, with the engines made unimportable (the browser tests read that site too), and the site it uploads is
checked here."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS_ENGINES = ("kb check", "kb matrix", "kb accept", "pytest", "./run ", "mnnconvert", "onnx2ncnn")


def test_the_workflow_runs_no_engine_and_uploads_what_it_built(pages_steps):
    runs = [s["run"] for s in pages_steps if "run" in s]
    assert not [r for r in runs for word in RUNS_ENGINES if word in r], runs
    build = [r for r in runs if "kb site build" in r]
    assert len(build) == 1, runs
    upload = next(s for s in pages_steps if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site"  # kb site build's default output
    assert "KB_RECORDS" in build[0]  # local records, if any, stay out of what is published


def test_the_published_site_has_every_committed_entry_at_the_public_address(built_site):
    from kb.entries import load_all

    published = built_site
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
