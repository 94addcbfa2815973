"""Run one engine step in a child process with a timeout, keeping its output and fate.

Engines print from C++ and may crash, so every step is its own process: its stdout and stderr are
pipes at the file-descriptor level, and a signal or a timeout is an outcome, not an exception.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 300.0
# A step's timeout where its caller names none. A check's attempts (kb.harness) hunt a crash that depends on the
# memory layout, and memory so corrupted can also hang the engine (a lock taken inside malloc: 300 s once): there a
# step gets ATTEMPT_TIMEOUT, its hang is that attempt's outcome, and the next attempt runs.
ATTEMPT_TIMEOUT = 60.0
step_timeout: ContextVar[float] = ContextVar("step_timeout", default=DEFAULT_TIMEOUT)
# What a check's later attempts add to every step's environment (kb.harness.layout). Such a step runs in a fresh
# process, as users run engines: a warm server's fork has one memory layout for every attempt (the one the test that
# started the server left), and glibc reads MALLOC_PERTURB_ only when a process starts.
step_layout: ContextVar[dict[str, str]] = ContextVar("step_layout", default={})


@dataclass
class StepResult:
    name: str
    command: str  # what a user could type to rerun it
    returncode: int | None
    signal: str | None
    timed_out: bool
    duration: float
    output: str  # stdout and stderr, interleaved as printed
    missing: list[str] = field(default_factory=list)  # files it should have written but did not

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.missing

    def fate(self) -> str:
        if self.timed_out:
            return f"timed out after {self.duration:.0f}s"
        if self.signal:
            return f"killed by {self.signal}"
        if self.returncode == 0 and self.missing:
            return f"exit code 0 but wrote no {', '.join(self.missing)}"
        return f"exit code {self.returncode}"

    def summary(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("output")
        return d


class StepFailed(Exception):
    """A step did not finish cleanly; the check stops here and is judged on the evidence."""

    def __init__(self, step: StepResult):
        super().__init__(f"{step.name}: {step.fate()}")
        self.step = step


def step_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONWARNINGS", "ignore")
    # Make kb importable in the child however the parent found it.
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.update(step_layout.get())
    return env


def _result(name: str, command: str, rc: int | None, timed_out: bool, start: float, out: bytes) -> StepResult:
    """A finished step: a negative return code is the signal that ended it, unless we sent it (a timeout)."""
    sig = signal.Signals(-rc).name if rc is not None and rc < 0 and not timed_out else None
    return StepResult(name=name, command=command, returncode=rc, signal=sig, timed_out=timed_out,
                      duration=time.monotonic() - start, output=out.decode(errors="replace"))


def limit_memory(memory: int | None) -> None:
    """In a step's own process: cap its address space at `memory` bytes, so a step that would take the machine's
    memory fails its own allocation (and is reported) instead of waking the kernel's OOM killer."""
    if memory:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _parent_death_signal():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl  # resolved here: a child of a threaded parent must not dlopen


_PRCTL = _parent_death_signal()


def dies_with_parent() -> None:
    """preexec_fn for a long child (`kb check` of a release under `kb matrix`): it gets SIGTERM when the thread that
    started it ends, so killing kb matrix does not leave it running. Linux only (prctl PR_SET_PDEATHSIG)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)


def run_command(name: str, argv: list[str], *, timeout: float | None = None, cwd: Path | None = None,
                shown: str | None = None, env: dict[str, str] | None = None, memory: int | None = None,
                warm: bool = False) -> StepResult:
    """`memory`: the step's address-space cap in bytes (limit_memory), None for none. `warm`: a native binary whose
    start-up is most of its time runs as a fork of a warm copy of itself (kb.zygote), where that can be set up."""
    timeout = step_timeout.get() if timeout is None else timeout
    start = time.monotonic()
    if warm and not step_layout.get():
        import tempfile

        from kb import zygote

        with tempfile.NamedTemporaryFile(prefix="kb-step-", suffix=".log") as log:
            fate = zygote.call(argv, {**step_env(), **(env or {})}, Path(log.name), timeout, cwd, memory)
            if fate is not None:
                return _result(name, shown or " ".join(argv), *fate, start, Path(log.name).read_bytes())
    proc = subprocess.Popen(argv, cwd=cwd, env={**step_env(), **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                            # only setrlimit runs between fork and exec: no lock a thread may hold
                            preexec_fn=(lambda: limit_memory(memory)) if memory else None)  # noqa: PLW1509
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return _result(name, shown or " ".join(argv), proc.returncode, timed_out, start, out)


def run_function(name: str, target: str, *, timeout: float | None = None, cwd: Path | None = None,
                 shown: str | None = None, python: list[str] | None = None, env: dict[str, str] | None = None,
                 preload: tuple[str, ...] = (), memory: int | None = None, **kwargs: Any) -> StepResult:
    """Call `module:function(**kwargs)` in a fresh Python (this one, or the command `python`, e.g. an
    emulated aarch64 one: kb.tools.arm64); it reports through the files it writes. With `preload`
    (modules slow to import there), the Python is a warm server that forks a child per call
    (kb.forkserver). `memory`: the step's address-space cap in bytes (limit_memory)."""
    timeout = step_timeout.get() if timeout is None else timeout
    shown = shown or f"{target}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    python = python or [sys.executable]
    if preload and not step_layout.get():
        import tempfile

        from kb import forkserver

        start = time.monotonic()
        with tempfile.NamedTemporaryFile(prefix="kb-step-", suffix=".log") as log:
            fate = forkserver.call(python, {**step_env(), **(env or {})}, preload, target, kwargs,
                                   Path(log.name), timeout, cwd, memory)
            if fate is not None:
                return _result(name, shown, *fate, start, Path(log.name).read_bytes())
    payload = json.dumps({"target": target, "kwargs": kwargs})
    return run_command(name, [*python, "-m", "kb.child", payload], timeout=timeout, cwd=cwd, shown=shown, env=env,
                       memory=memory)


MEMCHECK_EXIT = 99  # the exit code of a step memcheck saw read or write outside a block


def under_memcheck(*preload: str) -> dict[str, Any]:
    """run_function's `python` and `env` for a step run under valgrind's memcheck: uninitialised-value reports off
    (Python's own start-up prints many), so only reads and writes outside a block count, and they make the step
    exit MEMCHECK_EXIT; kb/valgrind.supp silences the dynamic loader's known report. Unavailable without valgrind.
    With `preload`, a warm valgrind Python imports those modules once and forks each step (kb.forkserver): a second
    per step instead of six. Each fork's report goes to its own file there, which the server adds to its output."""
    import shutil
    import tempfile

    if shutil.which("valgrind") is None:
        from kb.engines.base import Unavailable

        raise Unavailable("valgrind is not installed (apt-get install valgrind)")
    memcheck = ["valgrind", "-q", "--undef-value-errors=no", f"--error-exitcode={MEMCHECK_EXIT}",
                f"--suppressions={Path(__file__).with_name('valgrind.supp')}"]
    env = {"PYTHONMALLOC": "malloc"}  # malloc: blocks memcheck sees
    if not preload:
        return {"python": [*memcheck, sys.executable], "env": env}
    logs = Path(tempfile.gettempdir()) / f"kb-memcheck-{os.getuid()}"
    logs.mkdir(exist_ok=True)
    return {"python": [*memcheck, f"--log-file={logs}/%p", sys.executable], "preload": preload,
            "env": {**env, "KB_MEMCHECK_LOGS": str(logs)}}


def _main() -> None:
    from kb.target import call

    payload = json.loads(sys.argv[1])
    call(payload["target"], payload["kwargs"])


if __name__ == "__main__":
    _main()
