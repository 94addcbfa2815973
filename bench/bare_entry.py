"""The bare baseline for one entry: one process that imports torch and the engines once, exports the
cases and runs every check's engine steps in sequence, forking (not spawning) for each step so a
crashing engine does not end the run. Prints the wall time in seconds.

A fork shares whatever state the parent's engines hold, which is why kb itself never does this;
corpus_speed.py runs it with OMP_NUM_THREADS=1 so no OpenMP pool exists to deadlock a fork.
"""

import os
import signal
import sys
import tempfile
import time

start = time.monotonic()
os.environ["KB_CACHE"] = tempfile.mkdtemp(prefix="kb-bare-")

import torch  # noqa: E402,F401 -- the imports a standalone script pays once
import MNN  # noqa: E402,F401
import ncnn  # noqa: E402,F401
import onnxruntime  # noqa: E402,F401

from kb import child  # noqa: E402
from kb.target import unbuffer_c_stdio  # noqa: E402
from kb.entries import find  # noqa: E402
from kb.checks import load_checks  # noqa: E402
from kb.harness import run_check  # noqa: E402


def run_forked(name, target, *, timeout=child.DEFAULT_TIMEOUT, cwd=None, shown=None, preload=(), memory=None, **kwargs):
    """kb.child.run_function's contract, in a fork of this process instead of a new interpreter (which has
    imported everything a warm server would preload)."""
    import importlib

    module, func = target.split(":")
    fn = getattr(importlib.import_module(module), func)
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as log:
        sys.stdout.flush(), sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the step: fds 1 and 2 go to the log, as a spawned step's do
            code = 1
            try:
                os.dup2(log.fileno(), 1), os.dup2(log.fileno(), 2)
                unbuffer_c_stdio()
                fn(**kwargs)  # a step reports through the files it writes, as in kb.child
                code = 0
            except SystemExit as e:
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush(), sys.stderr.flush()
                os._exit(code)
        timed_out = False
        while not (done := os.waitpid(pid, os.WNOHANG))[0]:
            if time.monotonic() - t0 > timeout:
                os.kill(pid, signal.SIGKILL)
                done, timed_out = os.waitpid(pid, 0), True
                break
            time.sleep(0.002)
        rc = os.waitstatus_to_exitcode(done[1])
        log.seek(0)
        return child.StepResult(name, shown or target, rc, signal.Signals(-rc).name if rc < 0 and not timed_out
                                else None, timed_out, time.monotonic() - t0, log.read().decode(errors="replace"))


child.run_function = run_forked
entry = find(sys.argv[1])
for check in load_checks(entry).items.values():
    print(check.name, run_check(entry, check).verdict, file=sys.stderr)  # the same verdicts, as a sanity check
print(f"{time.monotonic() - start:.3f}")
