"""A corpus run needs no network and leaves the installed packages as they were."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

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


def test_the_project_holds_no_third_party_source():
    """ncnn's onnx2ncnn.cpp and ONNX's onnx.proto are built from the user's checkout, never shipped."""
    root = Path(__file__).resolve().parent.parent
    foreign = [p for p in root.glob("kb/**/*") if p.suffix in (".cpp", ".cc", ".h", ".proto")]
    assert foreign == []


def test_without_ncnn_sources_the_build_says_how_to_get_them(monkeypatch):
    from kb.errors import KBError
    from kb.tools import build as tb

    monkeypatch.delenv("NCNN_SRC", raising=False)
    with pytest.raises(KBError) as e:
        tb.build_onnx2ncnn()
    assert "git clone https://github.com/Tencent/ncnn" in str(e.value) and tb.NCNN_COMMIT[:7] in str(e.value)
