"""kb matrix: cached per-version environments, failures recorded, resumable, history derived."""

import json
import os
import subprocess
import sys
import sysconfig
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kb.history import timelines
from kb.records import Record, RecordStore

ENTRY = "fake-custom-op-broadcast"  # KB901: a bug check that reproduces and a workaround that works, on onnxruntime
ENGINE = "onnxruntime"
SITE = Path(sysconfig.get_paths()["purelib"])
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "corpus"


def installed() -> str:
    from kb import engines

    return engines.version(ENGINE)


def cached_env(envs: Path, version: str, broken: bool = False) -> None:
    """A cached onnxruntime environment without the registry: links to the installed one, or a broken one."""
    d = envs / ENGINE / version
    d.mkdir(parents=True)
    if broken:
        (d / "onnxruntime").mkdir()
        (d / "onnxruntime" / "__init__.py").write_text(
            "raise ImportError('libonnxruntime.so: cannot open shared object file')")
    else:
        for p in SITE.iterdir():
            if p.name.lower().startswith("onnxruntime"):
                (d / p.name).symlink_to(p)
    (d / ".kb-complete").write_text(version)


@pytest.fixture(scope="module")
def offline_matrix(tmp_path_factory):
    """KB901 measured once on three versions of onnxruntime: the installed one (a cached environment that
    links to it), a broken cached one, and one that is neither cached nor installable (no index)."""
    import shutil

    corpus = tmp_path_factory.mktemp("corpus")
    shutil.copytree(FIXTURES / "repros" / ENTRY, corpus / "repros" / ENTRY, ignore=shutil.ignore_patterns("__pycache__"))
    envs = corpus / "envs"
    env = {**os.environ, "KB_ROOT": str(corpus), "KB_ENVS": str(envs), "KB_RECORDS": str(corpus / ".kb" / "records"),
           "KB_CACHE": str(ROOT / ".kb" / "cache"), "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_EXTRA_INDEX_URL": ""}  # no registry at test time

    def run(*versions):
        p = subprocess.run([sys.executable, "-m", "kb", "matrix", "--engine", ENGINE, "--versions", *versions,
                            "--entry", ENTRY, "--json", "--workers", "2"],
                           capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    cached_env(envs, installed())
    cached_env(envs, "0.0.1", broken=True)
    return corpus, run, run(installed(), "0.0.1", "9.9.9")


def test_offline_cached_versions_run_and_the_rest_are_unavailable(offline_matrix):
    _, _, rows = offline_matrix
    by = {}
    for r in rows:
        by.setdefault(r["engine_version"], set()).add(r["verdict"])
        assert {"entry", "check", "kind", "engine", "engine_version", "verdict", "detail"} <= set(r)
    assert by == {installed(): {"reproduces", "works"}, "0.0.1": {"error"}, "9.9.9": {"unavailable"}}
    bad = next(r for r in rows if r["engine_version"] == "0.0.1")
    assert "does not import" in bad["detail"] and "libonnxruntime.so" in bad["detail"]


def test_an_interrupted_matrix_resumes_without_duplicates(offline_matrix):
    corpus, run, first = offline_matrix
    store = RecordStore(corpus / ".kb" / "records")
    n = len(store.read()[0])
    again = run(installed())
    assert len(store.read()[0]) == n  # nothing measured twice
    assert [r["id"] for r in again] == [r["id"] for r in first if r["engine_version"] == installed()]


T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rec(version, verdict, signature=None, kind="bug", minutes=0):
    return Record(id=Record.new_id(), entry="e", check="c", kind=kind, engine="mnn", engine_version=version,
                  verdict=verdict, signature=signature, detail="", versions={"mnn": version}, platform="p",
                  started=T0 + timedelta(minutes=minutes), duration=0.0)


def test_first_fixed_and_last_affected():
    (t,) = timelines([rec("3.0.0", "reproduces", "s"), rec("3.1.0", "reproduces", "s"), rec("3.2.0", "fixed"),
                      rec("3.4.0", "fixed")], "mnn")
    assert (t.last_affected, t.first_fixed, t.inferred, t.regressions) == ("3.1.0", "3.2.0", False, [])
    assert t.summary() == "Last affected 3.1.0, first fixed 3.2.0"


def test_fix_range_is_inferred_only_when_versions_between_were_not_measured():
    (t,) = timelines([rec("3.0.0", "reproduces", "s"), rec("3.1.0", "unavailable"), rec("3.2.0", "fixed")], "mnn")
    assert t.first_fixed == "3.2.0" and t.inferred
    assert t.summary() == "Last affected 3.0.0, first fixed 3.2.0 (inferred: 3.1.0 was not measured)"


def test_versions_are_not_assumed_monotonic():
    (t,) = timelines([rec("3.0.0", "fixed"), rec("3.4.0", "reproduces", "segfault"), rec("3.5.0", "fixed"),
                      rec("3.6.0", "reproduces", "segfault")], "mnn")
    assert t.regressions == ["3.4.0", "3.6.0"]
    assert t.first_fixed is None and t.last_affected == "3.6.0"


def test_change_of_shape_and_newest_record_wins():
    (t,) = timelines([rec("3.2.0", "reproduces", "segfault"), rec("3.4.0", "reproduces", "segfault"),
                      rec("3.4.0", "differs", minutes=5)], "mnn")
    assert [p.verdict for p in t.points] == ["reproduces", "differs"]
    assert t.shape_changes == ["3.4.0"]


def test_checks_on_an_emulated_cpu_get_the_versions_aarch64_wheel(monkeypatch):
    """kb matrix fetches the aarch64 wheel of each version it measures for checks that run on an emulated ARM CPU
    (`kb tools build arm64` makes the installed version's only), and for no other check."""
    from types import SimpleNamespace

    from kb import matrix
    from kb.tools import arm64

    built = []
    monkeypatch.setattr(arm64, "build", lambda version, engine: built.append((engine, version)))
    check = SimpleNamespace(cpu="cortex-a76")
    plain = SimpleNamespace(cpu=None)
    matrix._arm64_site("ncnn", "1.0.20240102", [(None, plain)])
    assert built == []
    matrix._arm64_site("ncnn", "1.0.20240102", [(None, plain), (None, check)])
    matrix._arm64_site("onnxruntime", "1.30.0", [(None, check)])  # no aarch64 site for it
    assert built == [("ncnn", "1.0.20240102")]
