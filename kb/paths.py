"""Where the corpus is, and where kb keeps its state: each place is an environment variable, else
a folder under `<root>/.kb/`."""

from __future__ import annotations

import os
from pathlib import Path

# What kb keeps -> the variable that moves it.
STATE = {"records": "KB_RECORDS", "cache": "KB_CACHE", "envs": "KB_ENVS", "tools": "KB_TOOLS"}


def repo_root() -> Path:
    """The corpus root: $KB_ROOT, else the nearest folder upwards holding repros/."""
    if "KB_ROOT" in os.environ:
        return Path(os.environ["KB_ROOT"])
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if (d / "repros").is_dir():
            return d
    return Path(__file__).resolve().parent.parent


def state(name: str, root: Path | None = None) -> Path:
    """$KB_<NAME>, else <root>/.kb/<name>."""
    return Path(os.environ.get(STATE[name]) or (root or repo_root()) / ".kb" / name)
