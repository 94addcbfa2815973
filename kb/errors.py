"""The one error users see: a file and what is wrong with it, on one line."""

from __future__ import annotations

import os
from pathlib import Path


class KBError(Exception):
    def __init__(self, path: Path | str, problem: str, code: int = 2):
        self.path, self.problem, self.code = Path(path), problem, code
        super().__init__(str(self))

    def __str__(self) -> str:
        shown = str(self.path)
        if self.path.is_absolute() and self.path.is_relative_to(os.getcwd()):
            shown = os.path.relpath(self.path)
        return f"{shown}: {self.problem}"

    @classmethod
    def invalid(cls, path: Path | str, error) -> KBError:
        """A pydantic ValidationError as one line: the first field at fault and what is wrong with it."""
        err = error.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(root)"
        return cls(path, f"field '{field}': {err['msg']}")
