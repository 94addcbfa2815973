"""A warm Python that forks one child per engine step, as importing numpy and an engine costs more than many
steps (0.13 s here; seconds in an emulated aarch64 Python, kb.tools.arm64).

The server imports them once; each step is then a fork of it: a process of its
own, as kb.child's steps are, with its output captured at the file-descriptor level, its own session
(killed whole on a timeout) and its crash or signal reported, never the server's.

Host side: `call()`, used by kb.child.run_function(preload=...). Server side: `python -m
kb.forkserver MODULE|MODULE:FUNCTION...` imports each module, calls each function (kb.export:warm loads torch and
builds what every export builds first), then reads one job per line on stdin and answers one line on its stdout.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from kb.target import call as call_target

_servers: OrderedDict[tuple, subprocess.Popen] = OrderedDict()  # least recently used first
# Servers kept warm at once. A test worker meets about a dozen kinds (torch's exporter, each engine on x86, under
# valgrind and on two emulated CPUs, the converters' zygotes): with 6, the emulated entries alone restarted theirs
# (5-9 s each) for 78 CPU-s where 16 take 61; kb matrix goes through one engine version after another.
_KEPT = 16
_lock = threading.Lock()
# Variables read only when a step runs, never by an import or the interpreter's start: each child takes the job's
# own values, so a server is shared across them (tests set KB_ROOT or KB_RECORDS; pytest changes its own per test).
_AT_CALL = re.compile(r"KB_|PYTEST_|CI$")
_SLACK = 30.0  # beyond a job's own timeout (the server enforces that), how long the host waits for a reply


def call(python: list[str], env: dict[str, str], preload: tuple[str, ...], target: str, kwargs: dict[str, Any],
         output: Path, timeout: float, cwd: Path | None, memory: int | None = None) -> tuple[int | None, bool] | None:
    """Run `target(**kwargs)` in a fork of the warm server for (python, environment but _AT_CALL's variables,
    preload), with the environment `env` (kb.child's steps' with the caller's) as a fresh process would have it;
    its output goes to `output`. Returns (returncode, negative for a signal; timed_out), or None if the server itself failed
    (the caller then runs the step in a fresh process)."""
    job = json.dumps({"target": target, "kwargs": kwargs, "output": str(output), "timeout": timeout,
                      "cwd": str(cwd) if cwd else None, "memory": memory, "env": env}) + "\n"
    line = ask(("python", tuple(python), preload), [*python, "-m", "kb.forkserver", *preload], env, job.encode(), timeout,
               lambda reply: reply.startswith(b"{"))
    try:
        reply = json.loads(line)
        return reply["returncode"], reply["timed_out"]
    except (TypeError, ValueError, KeyError):
        return None


def ask(kind: tuple, argv: list[str], env: dict[str, str], job: bytes, timeout: float,
        valid: Callable[[bytes], bool]) -> bytes | None:
    """Send `job` to the warm server of `kind` and `env` (but _AT_CALL's variables), started as `argv` with `env` if
    none runs, and return its one-line reply; None if it failed or the reply is not `valid` (the server is stopped:
    the next job starts another). kb.zygote's servers are kept here too."""
    key = (kind, tuple(sorted((k, v) for k, v in env.items() if not _AT_CALL.match(k))))
    with _lock:
        server = _servers.get(key)
        if server is None or server.poll() is not None:
            while len(_servers) >= _KEPT:
                _stop(_servers.popitem(last=False)[1])
            server = _servers[key] = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                      stderr=subprocess.DEVNULL, start_new_session=True)
        _servers.move_to_end(key)
        try:
            server.stdin.write(job)
            server.stdin.flush()
            ready, _, _ = select.select([server.stdout], [], [], timeout + _SLACK)
            line = server.stdout.readline() if ready else b""
            if line.endswith(b"\n") and valid(line):
                return line
        except OSError:
            pass
        _stop(server)
        _servers.pop(key, None)
        return None


def _stop(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except OSError:
        pass
    server.wait()


@atexit.register
def _stop_all() -> None:
    for server in _servers.values():
        _stop(server)
    _servers.clear()


def _serve(preload: list[str]) -> None:
    replies = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)  # a stray print of the server or an engine must not garble the replies
    for module in preload:  # a module to import, or module:function to call (a warm-up)
        try:
            if ":" in module:
                call_target(module, {})
            else:
                __import__(module)
        except Exception:  # the child imports it again and shows the error in its own output
            pass
    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(job, null)
        timed_out = not _ended(pid, job["timeout"])
        if timed_out:
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        _add_memcheck_log(job, pid)
        replies.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status), "timed_out": timed_out}) + "\n")
        replies.flush()


def _add_memcheck_log(job: dict[str, Any], pid: int) -> None:
    """Under valgrind (kb.child.under_memcheck), the fork's report went to a file of its pid: add it to the output."""
    logs = job["env"].get("KB_MEMCHECK_LOGS")
    log = Path(logs, str(pid)) if logs else None
    if log and log.exists():
        with open(job["output"], "ab") as out:
            out.write(log.read_bytes())
        log.unlink()


def _ended(pid: int, timeout: float) -> bool:
    """Whether the child ended within `timeout` s. Woken when it ends (its pidfd becomes readable): a step's reply
    comes at once, not at the next poll. Where there is no pidfd (qemu-user may lack the call), it polls."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            time.sleep(0.005)
        return False
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def _child(job: dict[str, Any], null: int) -> None:
    code = 1
    try:
        os.setsid()
        os.environ.clear()  # the job's environment, as a fresh process started with it would have
        os.environ.update(job["env"])
        if job.get("memory"):
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (job["memory"], job["memory"]))
        out = os.open(job["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        if job["cwd"]:
            os.chdir(job["cwd"])
            sys.path[0] = os.getcwd()  # as `python -m kb.child` started there has it: the folder's modules import
        call_target(job["target"], job["kwargs"])
        code = 0
    except SystemExit as e:  # as the interpreter ends: a message is printed, None is success
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    _serve(sys.argv[1:])
