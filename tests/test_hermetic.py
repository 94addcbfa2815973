"""A corpus run needs no network and leaves the installed packages as they were."""

import os
import shutil
import subprocess
import sys

import pytest


def freeze():
    return subprocess.run([sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True).stdout


@pytest.mark.skipif(not shutil.which("unshare"), reason="unshare (util-linux) is not installed")
def test_checks_run_without_network_and_change_no_package(fixture_corpus):
    # Every fixture entry: engine steps, plain Python steps and the record store, all in the sandbox.
    corpus = fixture_corpus
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.decode().strip()}")
    before = freeze()
    p = subprocess.run(["unshare", "-rn", sys.executable, "-m", "kb", "check", "--json"], capture_output=True,
                       text=True, env={**os.environ, "KB_ROOT": str(corpus)}, timeout=600)
    assert p.returncode == 0, p.stderr
    assert '"verdict": "skipped"' not in p.stdout and '"verdict": "error"' not in p.stdout
    assert freeze() == before
