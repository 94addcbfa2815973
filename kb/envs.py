"""One cached environment per engine version: `pip install --target`, reused on the next run.

Only the engine's own distribution goes in (--no-deps); everything else comes from kb's venv. A check
run with the folder first on PYTHONPATH sees that version of the engine and nothing else changes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kb.versions import DISTRIBUTIONS, sort_versions

ENGINES = ("mnn", "ncnn", "pnnx", "onnxruntime")  # what `kb matrix` can vary

DONE = ".kb-complete"  # written last: a folder without it is a broken install, never used


@dataclass
class Env:
    engine: str
    version: str
    path: Path | None  # None: unavailable
    problem: str = ""  # why it is unavailable


def root() -> Path:
    from kb.entries import repo_root

    return Path(os.environ.get("KB_ENVS") or repo_root() / ".kb" / "envs")


def dist(engine: str) -> str:
    return DISTRIBUTIONS[engine]


def cached(engine: str) -> list[str]:
    base = root() / engine
    return sort_versions(d.name for d in base.iterdir() if (d / DONE).exists()) if base.is_dir() else []


def installable(engine: str, timeout: float = 120) -> tuple[list[str], str]:
    """Every release of the engine that pip offers for this Python; offline, the cached ones."""
    try:
        p = subprocess.run([sys.executable, "-m", "pip", "index", "versions", dist(engine),
                            "--disable-pip-version-check"], capture_output=True, text=True, timeout=timeout)
        m = re.search(r"Available versions: (.+)", p.stdout)
        if p.returncode == 0 and m:
            return sort_versions(v.strip() for v in m.group(1).split(",")), ""
        problem = (p.stderr.strip().splitlines() or ["no versions listed"])[-1]
    except subprocess.TimeoutExpired:
        problem = "the package index did not answer"
    return cached(engine), f"cannot list {dist(engine)} releases ({problem}); using cached versions only"


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
