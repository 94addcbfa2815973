"""A failure that depends on the heap's layout shows for some path lengths only (KB064's return-h): a check with
`attempts` runs that many times, each reading the model through a path of another length, and one failure
decides. A single run of such a check would read "fixed" where the bug is alive."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.checks import load_checks
from kb.entries import load_entry
from kb.harness import run_check

NAN = "fake-pow-nan"

CHECKS = '''
from kb.checks import Checks

checks = Checks(__file__)


@checks.bug("onnxruntime", ["all-nan"], attempts={attempts})
def flaky(s):
    """Reproduces on attempt {fails_on} only (counting from 0)."""
    case = "sqrt" if s.attempt == {fails_on} else "sqrt-abs"
    model = s.source(s.artifacts.onnx(case))
    with open(__file__ + ".paths", "a") as f:
        f.write(f"{{model}}\\n")
    return s.onnxruntime.run(model, case)
'''


def run(fixture_entry, attempts: int, fails_on: int | None):
    folder = fixture_entry(NAN)
    (folder / "test_checks.py").write_text(CHECKS.format(attempts=attempts, fails_on=fails_on))
    entry = load_entry(folder)
    checks = load_checks(entry)
    return run_check(entry, checks.items["flaky"])


@pytest.mark.parametrize("attempts, fails_on, verdict, says", [
    (3, 2, "reproduces", "(attempt 3 of up to 3)"),
    (3, 0, "reproduces", "(attempt 1 of up to 3)"),
    (3, None, "fixed", "(each of 3 attempts)"),
])
def test_one_failing_attempt_decides(fixture_entry, attempts, fails_on, verdict, says):
    rec = run(fixture_entry, attempts, fails_on)
    assert rec.verdict == verdict and rec.detail.endswith(says), rec.detail


def test_each_attempt_reads_the_model_through_a_path_of_another_length(fixture_entry, corpus):
    run(fixture_entry, 3, None)
    paths = [Path(p) for p in (corpus / "repros" / NAN / "test_checks.py.paths").read_text().split()]
    assert len({len(str(p)) for p in paths}) == 3 and all(p.name == "sqrt-abs.onnx" for p in paths)


SEES = """
import os, sys
print("SEES", len("".join(f"{k}={v}" for k, v in os.environ.items())), os.environ.get("MALLOC_PERTURB_", "-"),
      os.getppid() == int(sys.argv[1]))
"""

LAYOUT = '''
import os
from kb import child
from kb.checks import Checks

checks = Checks(__file__)


@checks.bug("onnxruntime", ["all-nan"], attempts=4)
def sees(s):
    """Each attempt runs a Python that prints its environment's size and glibc's fill byte; none reproduces."""
    import sys
    step = s.step(child.run_command("sees", [sys.executable, "-c", {script!r}, str(os.getpid())]))
    with open(__file__ + ".seen", "a") as f:
        f.write(step.output)
    return s.onnxruntime.run(s.source(s.artifacts.onnx("sqrt-abs")), "sqrt-abs")
'''


def test_each_attempt_runs_its_steps_in_an_environment_of_another_size(fixture_entry, corpus):
    """Besides its paths, attempt k changes its steps' environment: its size on every later attempt, glibc's fill
    byte for new and freed blocks on odd ones (KB182's crash ran through with only the paths changing)."""
    folder = fixture_entry(NAN)
    (folder / "test_checks.py").write_text(LAYOUT.format(script=SEES))
    entry = load_entry(folder)
    rec = run_check(entry, load_checks(entry).items["sees"])
    assert rec.verdict == "fixed", rec.detail
    seen = [ln.split()[1:] for ln in (folder / "test_checks.py.seen").read_text().splitlines() if ln.startswith("SEES")]
    assert len(seen) == 4 and len({size for size, _, _ in seen}) == 4, seen
    assert [perturb != "-" for _, perturb, _ in seen] == [False, True, False, True], seen
    assert all(direct == "True" for *_, direct in seen), seen  # started by the check's process itself
    from kb import child

    assert child.step_layout.get() == {}  # the check's layout ends with it


@pytest.mark.parametrize("attempt, fresh", [(0, False), (1, True), (3, True)])
def test_steps_after_the_first_attempt_run_in_a_fresh_process(monkeypatch, tmp_path, attempt, fresh):
    """The first attempt forks a warm server; the others start the engine as users do, in a fresh process: a forked
    layout is the same for every attempt (in two of six full runs here KB064's did not crash in any of them), and
    glibc reads MALLOC_PERTURB_ only at a process's start. For every engine: MNN's steps, pnnx's warm start."""
    from kb import child, forkserver, zygote
    from kb.harness import layout

    warm = []
    monkeypatch.setattr(forkserver, "call", lambda *a, **kw: warm.append("forkserver") or (0, False))
    monkeypatch.setattr(zygote, "call", lambda *a, **kw: warm.append("zygote") or (0, False))
    token = child.step_layout.set(layout(attempt))
    try:
        child.run_function("f", "os:getcwd", preload=("os",))
        child.run_command("c", ["true"], warm=True)
    finally:
        child.step_layout.reset(token)
    assert warm == ([] if fresh else ["forkserver", "zygote"])


def test_mnnconvert_reads_the_model_through_the_attempts_link(monkeypatch, tmp_path):
    """The link is the point: a --modelFile resolved to the real file gives mnnconvert one path on every attempt."""
    from kb import child
    from kb.engines.mnn import convert_step

    (tmp_path / "models").mkdir()
    (tmp_path / "aaa").symlink_to(tmp_path / "models", target_is_directory=True)
    seen = []
    monkeypatch.setattr(child, "run_function", lambda *a, **kw: seen.append(kw["argv"]))
    convert_step(tmp_path / "aaa" / "m.onnx", tmp_path / "m.mnn")
    assert seen[0][seen[0].index("--modelFile") + 1] == str(tmp_path / "aaa" / "m.onnx")


HANGS = '''
from kb import child
from kb.checks import Checks

checks = Checks(__file__)


@checks.bug("onnxruntime", ["all-nan"], attempts=3)
def hangs_once(s):
    """The first attempt's step hangs (memory so corrupted that the engine waits on a lock); the next reproduces."""
    if s.attempt == 0:
        s.step(child.run_function("hang", "os:system", command="sleep 30"))
    return s.onnxruntime.run(s.source(s.artifacts.onnx("sqrt")), "sqrt")
'''


def test_a_hung_attempt_ends_after_the_attempt_timeout_and_the_next_attempt_runs(fixture_entry, monkeypatch):
    """A step's timeout in a check's attempts is child.ATTEMPT_TIMEOUT, not the 300 s of a step elsewhere: one
    attempt of KB124's flip hung for 300 s in a full run before the next crashed as accepted."""
    from kb import child

    monkeypatch.setattr(child, "ATTEMPT_TIMEOUT", 2.0)
    folder = fixture_entry(NAN)
    (folder / "test_checks.py").write_text(HANGS)
    entry = load_entry(folder)
    rec = run_check(entry, load_checks(entry).items["hangs-once"])
    assert rec.verdict == "reproduces" and rec.detail.endswith("(attempt 2 of up to 3)"), rec.detail
    assert rec.duration < 25, rec.duration
    assert child.step_timeout.get() == child.DEFAULT_TIMEOUT  # the check's limit ends with it
