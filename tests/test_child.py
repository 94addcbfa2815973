"""Child steps: crashes, aborts and timeouts are outcomes, and C-level output survives them."""

import sys

from convkb.child import run_command, run_function



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
    # run through convkb.child, which unbuffers C stdio as MNN's printf needs
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
