"""Child steps: crashes, aborts and timeouts are outcomes, and C-level output survives them."""

import sys

import pytest

from kb.child import run_command, run_function



def printf_then_crash():
    """What a C++ engine does: printf to a pipe, then die."""
    import ctypes
    import os
    import signal

    ctypes.CDLL(None).printf(b"engine says: Compute Shape Error for /x\n")
    os.kill(os.getpid(), signal.SIGSEGV)


def write_sum(a, b, out):
    open(out, "w").write(str(a + b))


def test_segfault_keeps_the_c_output():
    # run through kb.child, which unbuffers C stdio as MNN's printf needs
    step = run_function("crash", "tests.test_child:printf_then_crash")
    assert step.signal == "SIGSEGV" and not step.ok
    assert "Compute Shape Error for /x" in step.output
    assert step.fate() == "killed by SIGSEGV"


def test_abort_and_exit_codes():
    step = run_command("abort", [sys.executable, "-c", "import os; os.abort()"])
    assert step.signal == "SIGABRT"
    step = run_command("exit", [sys.executable, "-c", "import sys; sys.exit(3)"])
    assert step.returncode == 3 and step.signal is None and step.fate() == "exit code 3"


def test_timeout_kills_the_step():
    step = run_command("hang", [sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert step.timed_out and not step.ok and step.duration < 10


def test_function_runs_in_the_child(tmp_path):
    step = run_function("add", "tests.test_child:write_sum", a=1, b=2, out=str(tmp_path / "sum"))
    assert step.ok and (tmp_path / "sum").read_text() == "3"


def sleep_then_exit(seconds, code):
    import time

    time.sleep(seconds)
    sys.exit(code)


def exit_with(code):
    sys.exit(code)


def test_a_warm_server_forks_each_step_and_keeps_its_fate(tmp_path):
    """preload= (kb.forkserver, for the emulated arm64 Python): every outcome of a fresh process survives
    the fork (C output before a segfault, exit codes, a timeout), and the server outlives its children."""
    from kb import forkserver

    warm = {"python": [sys.executable], "preload": ("json",)}
    step = run_function("crash", "tests.test_child:printf_then_crash", **warm)
    assert step.signal == "SIGSEGV" and "Compute Shape Error for /x" in step.output
    step = run_function("exit", "tests.test_child:sleep_then_exit", seconds=0, code=3, **warm)
    assert step.returncode == 3 and step.fate() == "exit code 3"
    step = run_function("hang", "tests.test_child:sleep_then_exit", seconds=30, code=0, timeout=0.5, **warm)
    assert step.timed_out and not step.ok and step.duration < 10
    step = run_function("add", "tests.test_child:write_sum", a=1, b=2, out=str(tmp_path / "sum"), **warm)
    assert step.ok and (tmp_path / "sum").read_text() == "3"
    assert len({s.pid for k, s in forkserver._servers.items() if k[0][2] == ("json",)}) == 1  # one did all four
    step = run_function("message", "tests.test_child:exit_with", code="ncnn: extract 'out0' failed with -1", **warm)
    assert step.returncode == 1 and step.output.strip() == "ncnn: extract 'out0' failed with -1"
    step = run_function("none", "tests.test_child:exit_with", code=None, **warm)
    assert step.returncode == 0
    step = run_function("missing", "tests.test_child:no_such_function", **warm)
    assert step.returncode == 1 and "AttributeError" in step.output


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_the_server_sees_a_child_end_and_a_child_outlast_its_timeout(monkeypatch, pidfd):
    """The server's wait (a pidfd, or polling where the call is missing): a child that ends is seen, one that
    runs past the step's timeout is not; the child is still there to reap either way."""
    import os
    import time

    from kb import forkserver

    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open")
    for seconds, timeout, ended in ((0, 5, True), (3, 0.3, False)):
        pid = os.fork()
        if pid == 0:
            time.sleep(seconds)
            os._exit(7)
        assert forkserver._ended(pid, timeout) is ended
        if not ended:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == (7 if ended else -9)


def kill_the_server_then_write(out):
    import os
    import signal

    if sys.argv[0].endswith("forkserver.py"):  # a fork of the server: take the server down with it
        os.kill(os.getppid(), signal.SIGKILL)
    open(out, "w").write("done")


def test_a_server_that_dies_is_replaced_by_a_fresh_process(tmp_path):
    warm = {"python": [sys.executable], "preload": ("json",)}
    step = run_function("kill", "tests.test_child:kill_the_server_then_write", out=str(tmp_path / "a"), **warm)
    assert step.ok and (tmp_path / "a").read_text() == "done"
    step = run_function("add", "tests.test_child:write_sum", a=2, b=2, out=str(tmp_path / "b"), **warm)
    assert step.ok and (tmp_path / "b").read_text() == "4"


def write_env(out, names):
    import os

    open(out, "w").write(repr([os.environ.get(n) for n in names]))


def test_a_server_serves_every_kb_setting_and_each_step_sees_its_own(tmp_path, monkeypatch):
    """KB_ROOT, KB_RECORDS and pytest's own variables are read when a step runs, not at import: tests that set them
    share one warm server (a server per value pushed out the corpus's), and each step sees its job's values."""
    from kb import forkserver

    warm = {"python": [sys.executable], "preload": ("json",)}
    monkeypatch.setenv("KB_STALE", "1")
    run_function("first", "tests.test_child:write_sum", a=0, b=0, out=str(tmp_path / "0"), **warm)
    monkeypatch.delenv("KB_STALE")
    for i, root in enumerate(("/a", "/b")):
        monkeypatch.setenv("KB_ROOT", root)
        out = tmp_path / f"env{i}"
        step = run_function("env", "tests.test_child:write_env", out=str(out), names=["KB_ROOT", "KB_STALE"], **warm)
        assert step.ok and out.read_text() == repr([root, None])
    assert len({s.pid for k, s in forkserver._servers.items() if k[0][2] == ("json",)}) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # read by an import: a server of its own
    run_function("env", "tests.test_child:write_env", out=str(tmp_path / "omp"), names=["OMP_NUM_THREADS"], **warm)
    assert (tmp_path / "omp").read_text() == repr(["3"])
    assert len({s.pid for k, s in forkserver._servers.items() if k[0][2] == ("json",)}) == 2


PARENT = r"""
import subprocess, sys, time
from kb.child import dies_with_parent
kw = {"preexec_fn": dies_with_parent} if sys.argv[2] == "bound" else {}
subprocess.Popen([sys.executable, "-c", "import os, time; open(%r, 'w').write(str(os.getpid())); time.sleep(60)"
                  % sys.argv[1]], **kw)
time.sleep(60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
@pytest.mark.parametrize("how", ["bound", "unbound"])
def test_a_long_child_dies_with_the_process_that_started_it(tmp_path, how):
    """A killed kb matrix left its `kb check` running; started with dies_with_parent, the child goes with it."""
    import os
    import signal
    import subprocess
    import time

    pidfile = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pidfile), how])
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    parent.kill()
    parent.wait()

    def alive() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return False
        with open(f"/proc/{child}/stat") as f:  # a zombie is gone too: its parent, init, has not reaped it yet
            return f.read().split(") ")[1][0] != "Z"

    deadline = time.monotonic() + 3  # the signal comes at once; 3 s is slack for a loaded machine
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert alive() == (how == "unbound")  # without it, the child would run on (the bug)
    finally:
        if alive():
            os.kill(child, signal.SIGKILL)


def write_past_a_block(n):
    """A C library writing one byte past a heap block of n bytes (the heap's layout decides whether it crashes)."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    p = libc.malloc(n)
    ctypes.memset(p + n, 0x41, 1)
    libc.free(p)


@pytest.mark.skipif(__import__("shutil").which("valgrind") is None, reason="valgrind is not installed")
def test_memcheck_in_a_warm_python_reports_each_forks_write_past_a_block():
    """under_memcheck(preload): a fork of the warm valgrind Python that writes past a heap block exits MEMCHECK_EXIT,
    and the report is in that step's output (each fork's goes to a file of its own, which the server adds); a clean
    step exits 0 with no report."""
    from kb.child import MEMCHECK_EXIT, under_memcheck

    memcheck = under_memcheck("tests.test_child")
    for _ in range(2):  # a warm server's second fork too
        step = run_function("overflow", "tests.test_child:write_past_a_block", n=24, **memcheck)
        assert step.returncode == MEMCHECK_EXIT and "Invalid write of size 1" in step.output, step.output[-500:]
        step = run_function("clean", "tests.test_child:write_sum", a=1, b=2, out="/dev/null", **memcheck)
        assert step.returncode == 0 and "Invalid" not in step.output, step.output[-500:]


def test_a_fork_imports_the_modules_of_its_working_folder_as_a_fresh_python_there_does(tmp_path):
    """A step's target may be a module beside an entry (user_program:feed, cwd the entry's folder): `python -m`
    started there finds it, and so must a fork of a warm server started elsewhere."""
    (tmp_path / "beside_me.py").write_text("def write(out):\n    open(out, 'w').write('found')\n")
    for warm in ({}, {"python": [sys.executable], "preload": ("json",)}):
        step = run_function("beside", "beside_me:write", cwd=tmp_path, out=str(tmp_path / "o"), **warm)
        assert step.returncode == 0 and (tmp_path / "o").read_text() == "found", step.output[-300:]
