"""The one check every input file gets first: it exists, it is not a directory, it can be read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kb.errors import KBError
from kb.match import codes


def input_file(path: str | Path) -> tuple[Path, int | None]:
    """The path and its size in bytes (None for a pipe or device, whose size is unknown)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise KBError(p, "no such file", codes.MISSING) from None
    except OSError as e:
        raise KBError(p, f"cannot be read: {e.strerror or e}", codes.MISSING) from None
    if stat.S_ISDIR(st.st_mode):
        raise KBError(p, "is a directory; give the file itself", codes.IS_DIRECTORY)
    if not os.access(p, os.R_OK):
        raise KBError(p, "cannot be read: permission denied", codes.MISSING)
    return p, st.st_size if stat.S_ISREG(st.st_mode) else None
