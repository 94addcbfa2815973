"""The bare baseline for one entry: one process that imports torch and the engines once, exports the
cases and runs every check's engine steps in sequence, forking (not spawning) for each step so a
crashing engine does not end the run. Prints the wall time in seconds."""

import os
import sys
import tempfile
import time

start = time.monotonic()
os.environ["KB_EXECUTOR"] = "fork"
os.environ["KB_CACHE"] = tempfile.mkdtemp(prefix="kb-bare-")

import torch  # noqa: E402,F401 -- the imports a standalone script pays once
import MNN  # noqa: E402,F401
import ncnn  # noqa: E402,F401
import onnxruntime  # noqa: E402,F401

from kb import artifacts, export  # noqa: E402
from kb.child import StepResult  # noqa: E402
from kb.entries import find  # noqa: E402
from kb.harness import load_checks, run_check  # noqa: E402


def export_in_process(name, target, timeout, repro, out, shown):
    """Export in this process: the torch work without a child."""
    export.export_entry(repro, out)
    return StepResult(name, shown, 0, None, False, 0.0, "")


artifacts.run_function = export_in_process
entry = find(sys.argv[1])
for check in load_checks(entry).items.values():
    run_check(entry, check)
print(f"{time.monotonic() - start:.3f}")
