"""What every engine driver shares: availability, version, and a place in a check's session."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from kb import versions

if TYPE_CHECKING:
    from kb.harness import Session


class Engine:
    name: str = ""
    module: str = ""  # a module whose presence means the engine is installed
    install: str = ""  # how a user gets it

    def __init__(self, session: Session):
        self.s = session

    @classmethod
    def missing(cls) -> str | None:
        """Why the engine cannot run here, or None."""
        if importlib.util.find_spec(cls.module) is None:
            return f"{cls.name} is not installed ({cls.install})"
        return None

    @classmethod
    def version(cls) -> str | None:
        return versions.of(cls.name)
