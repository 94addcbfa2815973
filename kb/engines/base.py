"""What every engine driver shares: availability, version, and a place in a check's session."""

from __future__ import annotations

import importlib.util

from kb import versions
from kb.engines import ENGINES


class Unavailable(Exception):
    """The engine is installed but cannot run what the check asks for here (no Vulkan device, no emulated ARM
    CPU): the check is skipped, never judged, so a run on another device cannot read as "fixed"."""


class Engine:
    name: str = ""  # its key in kb.engines.ENGINES, which holds everything else about it

    def __init__(self, session):
        self.s = session  # the check's kb.harness.Session, which holds the engines (never imported here)

    @classmethod
    def missing(cls) -> str | None:
        """Why the engine cannot run here, or None."""
        info = ENGINES[cls.name]
        if any(importlib.util.find_spec(m) is None for m in info.modules):
            return f"{cls.name} is not installed ({info.install})"
        return None

    @classmethod
    def version(cls) -> str | None:
        return versions.of(cls.name)
