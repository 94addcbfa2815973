"""Inside a step's own process (kb.child's fresh Python, or a fork of kb.forkserver's warm one):
call the step's target function."""

from __future__ import annotations

import sys
from typing import Any


def unbuffer_c_stdio() -> None:
    """C++ engines print with printf; unbuffered, their last lines survive a crash."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        for stream in ("stdout", "stderr"):
            libc.setvbuf(ctypes.c_void_p.in_dll(libc, stream), None, 2, 0)  # 2 = _IONBF
    except (OSError, ValueError, AttributeError):
        pass


def call(target: str, kwargs: dict[str, Any]) -> None:
    import importlib

    unbuffer_c_stdio()
    module, func = target.split(":")
    getattr(importlib.import_module(module), func)(**kwargs)
    sys.stdout.flush()
