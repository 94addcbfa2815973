"""What every engine driver shares: availability, version, and a place in a check's session."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from convkb import versions
from convkb.engines import ENGINES

if TYPE_CHECKING:
    from convkb.harness import Session


class Engine:
    name: str = ""  # its key in convkb.engines.ENGINES, which holds everything else about it

    def __init__(self, session: Session):
        self.s = session

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
