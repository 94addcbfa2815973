"""One cached environment per engine version: `pip install --target`, reused on the next run.

Only the engine's own distribution goes in (--no-deps); everything else comes from kb's venv. A check
run with the folder first on PYTHONPATH sees that version of the engine and nothing else changes.
"""

from __future__ import annotations

import os
import json
import urllib.request
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from kb import paths
from kb.engines import ENGINES as REGISTRY
from kb.versions import sort_versions

ENGINES = tuple(e.name for e in REGISTRY.values() if e.matrix)  # what `kb matrix` can vary

DONE = ".kb-complete"  # written last: a folder without it is a broken install, never used


@dataclass
class Env:
    engine: str
    version: str
    path: Path | None  # None: unavailable
    problem: str = ""  # why it is unavailable


def root() -> Path:
    return paths.state("envs")


def dist(engine: str) -> str:
    return REGISTRY[engine].distribution


def cached(engine: str) -> list[str]:
    base = root() / engine
    return sort_versions(d.name for d in base.iterdir() if (d / DONE).exists()) if base.is_dir() else []


def installable(engine: str, timeout: float = 60) -> tuple[list[str], str]:
    """Every release of the engine with a wheel for this interpreter and platform, from the index's
    JSON API (PEP 691); offline, the cached ones."""
    url = f"{index_url()}/{canonicalize_name(dist(engine))}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            files = json.load(r)["files"]
    except (OSError, ValueError, KeyError) as e:
        return cached(engine), f"cannot list {dist(engine)} releases from {url} ({e}); using cached versions only"
    here = set(sys_tags())
    found = set()
    for f in files:
        if f.get("yanked") or not f["filename"].endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(f["filename"])
        except InvalidWheelFilename:
            continue
        if tags & here and not version.is_prerelease:
            found.add(str(version))
    return sort_versions(found), ""


def index_url() -> str:
    """The package index pip uses: $PIP_INDEX_URL, else PyPI."""
    return (os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple").rstrip("/")


def ensure(engine: str, version: str, timeout: float = 900) -> Env:
    """The environment for `engine==version`, installing it once; never raises."""
    target = root() / engine / version
    if (target / DONE).exists():
        return Env(engine, version, target)
    tmp = target.with_name(f"{version}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                            "--no-deps", "--target", str(tmp), f"{dist(engine)}=={version}"],
                           capture_output=True, text=True, timeout=timeout)
        ok, why = p.returncode == 0, (p.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        ok, why = False, f"pip install timed out after {timeout:.0f}s"
    if not ok:
        shutil.rmtree(tmp, ignore_errors=True)
        return Env(engine, version, None, f"{dist(engine)}=={version} could not be installed: {why}")
    (tmp / DONE).write_text(version)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return Env(engine, version, target)


def python_path(env: Env) -> str:
    return os.pathsep.join(p for p in (str(env.path), os.environ.get("PYTHONPATH", "")) if p)
