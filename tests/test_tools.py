"""onnx2ncnn built from ncnn's sources (kb.tools.build), and how the engine finds it.

The project ships no ncnn source: these tests build from CI's copy (../shared/ncnn-tools-onnx) or
$NCNN_SRC, and skip without either."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kb.engines.onnx2ncnn import Onnx2Ncnn
from kb.errors import KBError
from kb.tools import build as tb

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(os.environ.get("NCNN_SRC") or ROOT.parent / "shared" / "ncnn-tools-onnx")
if not SRC.is_dir():
    pytest.skip(f"no ncnn sources ({SRC}); {tb.GET_SOURCES}", allow_module_level=True)
SRC_DIR, SOURCES, COMMIT = tb.source(SRC)


@pytest.fixture(scope="session")
def onnx2ncnn() -> Path:
    """The real build, at most once per session: it is cached in <repo>/.kb/tools, so reruns are instant."""
    try:
        return tb.build_onnx2ncnn(SRC, root=ROOT)
    except tb.BuildToolsMissing as e:  # ./run test installs them when it runs as root
        pytest.skip(f"cannot build onnx2ncnn here: {e}")


@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    """A PATH of our own and a corpus root with no builds, so only what a test puts there is found."""
    bin = tmp_path / "bin"
    bin.mkdir()
    monkeypatch.setenv("PATH", str(bin))
    monkeypatch.setenv("KB_ROOT", str(tmp_path))
    monkeypatch.delenv("ONNX2NCNN", raising=False)
    return bin


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def leftovers(root: Path) -> list[str]:
    """What a failed build left under .kb/tools, beyond its lock file."""
    tools = root / ".kb" / "tools"
    return sorted(p.name for p in tools.iterdir() if not p.name.endswith(".lock")) if tools.exists() else []


def test_the_build_runs_and_says_its_commit(onnx2ncnn):
    assert onnx2ncnn.parent == ROOT / ".kb" / "tools" / f"onnx2ncnn-{tb.source_hash(SOURCES)}"
    assert (onnx2ncnn.parent / "ncnn-commit").read_text().strip() == COMMIT
    assert sorted(p.name for p in onnx2ncnn.parent.iterdir()) == ["ncnn-commit", "onnx2ncnn"]
    run = subprocess.run([onnx2ncnn], capture_output=True, text=True, timeout=30)
    assert run.returncode == 255 and "Usage:" in run.stderr + run.stdout  # what ncnn's README says it does


def test_building_twice_returns_the_cached_build(onnx2ncnn, no_tools):
    # no g++ or protoc on PATH now: a compile would fail, so returning at all proves there was none
    t0 = time.monotonic()
    assert tb.build_onnx2ncnn(SRC, root=ROOT) == onnx2ncnn
    assert time.monotonic() - t0 < 2
    assert tb.built(ROOT) == onnx2ncnn
    assert tb.built(no_tools.parent) is None  # a root with no builds


def test_a_missing_compiler_names_its_debian_package(no_tools):
    script(no_tools / "protoc", "exit 0")  # protoc is there, g++ is not
    with pytest.raises(tb.BuildToolsMissing) as e:
        tb.build_onnx2ncnn(SRC, root=no_tools.parent)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("g++: not found on PATH") and "apt-get install -y g++)" in msg
    assert "protobuf-compiler" not in msg and "libprotobuf-dev" not in msg
    assert leftovers(no_tools.parent) == []


def test_no_compiler_and_no_protoc_name_both_packages(no_tools):
    with pytest.raises(tb.BuildToolsMissing, match=r"^g\+\+, protoc: .*packages g\+\+ protobuf-compiler") as e:
        tb.build_onnx2ncnn(SRC, root=no_tools.parent)
    assert "\n" not in str(e.value)


FAKE_PROTOC = """for a in "$@"; do
  case "$a" in --cpp_out=*) d="${a#--cpp_out=}"; : > "$d/onnx.pb.cc"; : > "$d/onnx.pb.h";; esac
done"""


@pytest.mark.parametrize("gxx, expected, missing_package", [
    ('echo "${4%/*}/gen/onnx.pb.h:10:10: fatal error: google/protobuf/port_def.inc: No such file or directory"; '
     'echo "compilation terminated."; exit 1',
     "google/protobuf/port_def.inc: not found, needed to build onnx2ncnn; install the Debian package "
     "libprotobuf-dev (apt-get install -y libprotobuf-dev)", True),
    ('echo "/usr/bin/ld: cannot find -lprotobuf: No such file or directory"; '
     'echo "collect2: error: ld returned 1 exit status"; exit 1',
     "-lprotobuf: cannot be linked, needed to build onnx2ncnn; install the Debian package libprotobuf-dev", True),
    ('echo "$4: In function \'int main(int, char**)\':"; '
     'echo "$4:12:5: error: \'foo\' was not declared in this scope"; echo "   12 |     foo();"; '
     'echo "$4:20:1: error: expected \';\' before \'}\' token"; exit 1',
     "onnx2ncnn.cpp: line 12: g++ error: 'foo' was not declared in this scope", False),
], ids=["no-headers", "no-library", "compile-error"])
def test_a_failed_compile_is_one_line(no_tools, gxx, expected, missing_package):
    script(no_tools / "protoc", FAKE_PROTOC)
    script(no_tools / "g++", gxx)
    with pytest.raises(KBError) as e:
        tb.build_onnx2ncnn(SRC, root=no_tools.parent)
    msg = str(e.value)
    assert "\n" not in msg and expected in msg, msg
    assert isinstance(e.value, tb.BuildToolsMissing) == missing_package
    assert leftovers(no_tools.parent) == []


def test_protoc_failing_or_a_compile_hanging_is_one_line(no_tools):
    script(no_tools / "g++", "exit 1")
    script(no_tools / "protoc", 'echo "onnx.proto:5:1: Expected top-level statement (e.g. \\"message\\")."; exit 1')
    with pytest.raises(KBError, match=r"onnx\.proto: protoc failed \(exit code 1\): onnx\.proto:5:1: Expected top"):
        tb.build_onnx2ncnn(SRC, root=no_tools.parent)
    script(no_tools / "protoc", FAKE_PROTOC)
    script(no_tools / "g++", "exec /bin/sleep 60")
    t0 = time.monotonic()
    with pytest.raises(KBError, match=r"onnx2ncnn\.cpp: g\+\+ timed out after 1s$"):
        tb.build_onnx2ncnn(SRC, root=no_tools.parent, timeout=1)
    assert time.monotonic() - t0 < 10
    assert leftovers(no_tools.parent) == []


def test_a_folder_that_is_not_an_ncnn_checkout(tmp_path):
    src = tmp_path / "ncnn" / "tools" / "onnx"
    src.mkdir(parents=True)
    for name in tb.SOURCES:
        shutil.copy(SRC_DIR / name, src / name)
    with pytest.raises(KBError) as e:
        tb.build_onnx2ncnn(ncnn_src=tmp_path / "ncnn", root=tmp_path)
    assert "\n" not in str(e.value)
    assert "not an ncnn git checkout" in str(e.value) or "git: not found" in str(e.value)
    with pytest.raises(KBError, match=r"onnx2ncnn\.cpp: missing"):
        tb.build_onnx2ncnn(ncnn_src=tmp_path, root=tmp_path)


def test_onnx2ncnn_set_to_a_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX2NCNN", str(tmp_path))
    assert Onnx2Ncnn.missing() == f"ONNX2NCNN={tmp_path}: not an executable file"
    assert Onnx2Ncnn.version() is None
    plain = tmp_path / "onnx2ncnn"
    plain.write_text("not a program")
    monkeypatch.setenv("ONNX2NCNN", str(plain))
    assert Onnx2Ncnn.missing() == f"ONNX2NCNN={plain}: not an executable file"


def test_version_is_the_commit_not_a_path(onnx2ncnn, monkeypatch):
    monkeypatch.setenv("ONNX2NCNN", str(onnx2ncnn))
    assert Onnx2Ncnn.missing() is None
    assert Onnx2Ncnn.version() == COMMIT[:7]
    # without the setting, the cached build is the tool
    monkeypatch.delenv("ONNX2NCNN")
    monkeypatch.setenv("KB_ROOT", str(ROOT))
    assert Onnx2Ncnn.missing() is None and Onnx2Ncnn.version() == COMMIT[:7]


def test_a_tool_on_path_must_say_its_commit(no_tools, onnx2ncnn):
    tool = no_tools / "onnx2ncnn"
    shutil.copy(onnx2ncnn, tool)
    reason = Onnx2Ncnn.missing()
    assert f"write the commit into {no_tools / 'ncnn-commit'}" in reason and "kb tools build onnx2ncnn" in reason
    assert "\n" not in reason
    assert Onnx2Ncnn.version() is None
    (no_tools / "ncnn-commit").write_text(COMMIT.upper()[:10] + "\n")
    assert Onnx2Ncnn.missing() is None and Onnx2Ncnn.version() == COMMIT[:7]
    # a symlink on PATH into a build finds the build's ncnn-commit
    tool.unlink(), (no_tools / "ncnn-commit").unlink()
    tool.symlink_to(onnx2ncnn)
    assert Onnx2Ncnn.missing() is None and Onnx2Ncnn.version() == COMMIT[:7]


def test_nothing_found_says_how_to_build_it(no_tools):
    reason = Onnx2Ncnn.missing()
    assert reason.startswith("onnx2ncnn not found") and "kb tools build onnx2ncnn" in reason
    assert Onnx2Ncnn.version() is None


def test_a_bare_source_folder_builds_and_says_its_commit(tmp_path):
    """CI's copy (onnx2ncnn.cpp, onnx.proto, NCNN_COMMIT) is read as it is; the commit comes from its file."""
    folder, sources, commit = tb.source(SRC)
    assert commit == (SRC / "NCNN_COMMIT").read_text().strip() and set(sources) == set(tb.SOURCES)
