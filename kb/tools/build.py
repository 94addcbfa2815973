"""Build onnx2ncnn, ncnn's legacy ONNX converter, which is on neither PyPI nor Debian.

The sources are ncnn's tools/onnx, which this project does not ship: a user's ncnn git checkout
(`--ncnn-src`, or $NCNN_SRC), or a folder holding onnx2ncnn.cpp, onnx.proto and NCNN_COMMIT (CI's copy).
`kb tools build onnx2ncnn` without either says how to get ncnn at the pinned commit. The build is
ncnn's own two lines:

    protoc --cpp_out=GEN onnx.proto
    g++ -O2 -std=c++17 -IGEN onnx2ncnn.cpp GEN/onnx.pb.cc -lprotobuf -pthread -o onnx2ncnn

Each build lands in `<root>/.kb/tools/onnx2ncnn-<sha256 of the sources, 12 hex>/`, holding the
binary and `ncnn-commit` (the commit it was built from; the onnx2ncnn engine reports it as its
version). The folder is assembled in a temporary folder and renamed into place, so it either
exists whole or not at all, and a build whose folder exists is returned without compiling. The
key is the sources alone: a checkout whose tools/onnx is identical to an earlier build's reuses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from kb import paths
from kb.errors import KBError

NCNN_COMMIT = "a4d2ea1d4422c9e849f166fd7a4aefb52f942f6a"  # the ncnn the corpus's onnx2ncnn verdicts were measured on
GET_SOURCES = (f"git clone https://github.com/Tencent/ncnn && git -C ncnn checkout {NCNN_COMMIT[:7]}, "
               "then kb tools build onnx2ncnn --ncnn-src ncnn (or set NCNN_SRC=ncnn)")
SOURCES = ("onnx2ncnn.cpp", "onnx.proto")  # what the build reads; the hash covers exactly these
BINARY = "onnx2ncnn"
COMMIT_FILE = "ncnn-commit"
BUILD_TIMEOUT = 900.0  # about 30 s on 2 idle cores; generous for a loaded machine
COMMIT_RE = re.compile(r"[0-9a-f]{40}")


class BuildToolsMissing(KBError):
    """g++, protoc or protobuf's headers and library are not installed; the message names the package."""


def _install(packages: list[str]) -> str:
    noun = "package" if len(packages) == 1 else "packages"
    names = " ".join(packages)
    return f"install the Debian {noun} {names} (apt-get install -y {names})"


def tools_dir(root: Path | None = None) -> Path:
    return paths.state("tools", Path(root) if root else None)


def _read_sources(src_dir: Path) -> dict[str, bytes]:
    found = {}
    for name in SOURCES:
        path = src_dir / name
        if not path.is_file():
            raise KBError(path, "missing: onnx2ncnn is built from tools/onnx/onnx2ncnn.cpp and onnx.proto")
        found[name] = path.read_bytes()
    return found


def source_hash(sources: dict[str, bytes]) -> str:
    """12 hex digits of the sha256 over the sources' names and contents."""
    h = hashlib.sha256()
    for name in sorted(sources):
        data = sources[name]
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:12]


def _folder_commit(src_dir: Path) -> str:
    """The commit of a bare source folder (CI's copy), from its NCNN_COMMIT file."""
    path = src_dir / "NCNN_COMMIT"
    commit = path.read_text().strip() if path.is_file() else ""
    if not COMMIT_RE.fullmatch(commit):
        raise KBError(path, "must hold the 40-hex ncnn commit the sources come from")
    return commit


def source(ncnn_src: Path | None = None) -> tuple[Path, dict[str, bytes], str]:
    """(folder, sources, commit) from --ncnn-src, else $NCNN_SRC: an ncnn checkout or a bare source folder."""
    given = ncnn_src or (Path(os.environ["NCNN_SRC"]) if os.environ.get("NCNN_SRC") else None)
    if given is None:
        raise KBError("kb tools build", f"no ncnn sources to build onnx2ncnn from: {GET_SOURCES}")
    given = Path(given).expanduser()
    if not given.is_dir():
        raise KBError(given, "not a folder: pass the top folder of an ncnn checkout")
    if (given / "NCNN_COMMIT").is_file() and not (given / "tools").is_dir():
        return given, _read_sources(given), _folder_commit(given)
    src_dir = given / "tools" / "onnx"
    sources = _read_sources(src_dir)  # a clear error before asking git
    return src_dir, sources, _checkout_commit(given)


def _checkout_commit(ncnn_src: Path) -> str:
    """HEAD of a user's ncnn git checkout (its top folder)."""

    def git(*args: str) -> str | None:
        try:
            p = subprocess.run(["git", "-C", str(ncnn_src), *args], capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            raise BuildToolsMissing("git", f"not found on PATH, so the commit of {ncnn_src} cannot be read; "
                                           f"{_install(['git'])}") from None
        return p.stdout.strip() if p.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    commit = git("rev-parse", "HEAD")
    if top is None or commit is None or Path(top).resolve() != ncnn_src.resolve():
        raise KBError(ncnn_src, "not an ncnn git checkout, so the commit the tool is built from cannot be "
                                "read; pass the top folder of a `git clone` of Tencent/ncnn")
    if not COMMIT_RE.fullmatch(commit):
        raise KBError(ncnn_src, f"git rev-parse HEAD gave {commit!r}, not a commit hash")
    return commit


def _usable(folder: Path) -> bool:
    binary = folder / BINARY
    return binary.is_file() and os.access(binary, os.X_OK) and (folder / COMMIT_FILE).is_file()


@contextmanager
def _locked(path: Path):
    """One build per hash at a time (pytest-xdist workers, two terminals); the loser reuses the winner's."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _require_build_tools() -> None:
    missing = [pkg for exe, pkg in (("g++", "g++"), ("protoc", "protobuf-compiler")) if not shutil.which(exe)]
    if missing:
        exes = ", ".join("g++" if p == "g++" else "protoc" for p in missing)
        raise BuildToolsMissing(exes, f"not found on PATH, needed to build onnx2ncnn; {_install(missing)}")


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _first_error(output: str) -> str | None:
    lines = [line for line in output.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"\berror\b", line, re.IGNORECASE):
            return line
    return lines[-1] if lines else None


def _explain_compile_failure(output: str, fate: str, work: Path, src_dir: Path) -> KBError:
    """A one-line error: which package is missing, else the compiler's first error."""
    header = re.search(r"fatal error: (google/protobuf/[^\s:]+): No such file", output)
    if header:
        return BuildToolsMissing(header.group(1), f"not found, needed to build onnx2ncnn; "
                                                  f"{_install(['libprotobuf-dev'])}")
    if re.search(r"cannot find -lprotobuf\b", output):
        return BuildToolsMissing("-lprotobuf", f"cannot be linked, needed to build onnx2ncnn; "
                                               f"{_install(['libprotobuf-dev'])}")
    first = _first_error(output)
    if first is None:
        return KBError(src_dir / "onnx2ncnn.cpp", f"g++ failed ({fate}) and printed nothing")
    m = re.match(r"(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)?\s*(?P<msg>(?:fatal )?error:.*)", first)
    if m:
        file = Path(m["file"])
        where = src_dir / file.name if file.name in SOURCES else Path(f"{file.name} (written by protoc)")
        return KBError(where, f"line {m['line']}: g++ {_one_line(m['msg'])}")
    return KBError(src_dir / "onnx2ncnn.cpp", f"g++ failed ({fate}): {_one_line(first.replace(str(work) + '/', ''))}")


def _compile(sources: dict[str, bytes], src_dir: Path, out: Path, timeout: float) -> None:
    """protoc, then g++, each a child process with a timeout; the binary is written to out/onnx2ncnn."""
    from kb.child import run_command

    work = out / "build"
    gen = work / "gen"
    gen.mkdir(parents=True)
    for name, data in sources.items():  # compile the bytes that were hashed, not the folder as it is now
        (work / name).write_bytes(data)
    deadline = time.monotonic() + timeout

    step = run_command("protoc", ["protoc", f"--proto_path={work}", f"--cpp_out={gen}", str(work / "onnx.proto")],
                       timeout=timeout)
    if step.timed_out:
        raise KBError(src_dir / "onnx.proto", f"protoc timed out after {timeout:.0f}s")
    if not step.ok or not (gen / "onnx.pb.cc").is_file():
        first = _first_error(step.output) or "it wrote no onnx.pb.cc"
        first = _one_line(first.replace(str(work) + "/", ""))
        raise KBError(src_dir / "onnx.proto", f"protoc failed ({step.fate()}): {first}")

    left = max(deadline - time.monotonic(), 1.0)
    argv = ["g++", "-O2", "-std=c++17", f"-I{gen}", str(work / "onnx2ncnn.cpp"), str(gen / "onnx.pb.cc"),
            "-lprotobuf", "-pthread", "-o", str(out / BINARY)]
    step = run_command("g++", argv, timeout=left, cwd=work)
    if step.timed_out:
        raise KBError(src_dir / "onnx2ncnn.cpp", f"g++ timed out after {timeout:.0f}s")
    if not step.ok or not (out / BINARY).is_file():
        raise _explain_compile_failure(step.output, step.fate(), work, src_dir)
    shutil.rmtree(work)


def build_onnx2ncnn(ncnn_src: Path | None = None, root: Path | None = None, *,
                    timeout: float = BUILD_TIMEOUT) -> Path:
    """Build onnx2ncnn (or find it already built) and return the binary's path.

    `ncnn_src`: an ncnn git checkout (built from its tools/onnx) or a bare source folder; default
    $NCNN_SRC. Errors are one-line KBErrors; BuildToolsMissing names the Debian package to install.
    """
    src_dir, sources, commit = source(ncnn_src)
    tools = tools_dir(root)
    final = tools / f"onnx2ncnn-{source_hash(sources)}"
    if _usable(final):
        return final / BINARY

    _require_build_tools()
    tools.mkdir(parents=True, exist_ok=True)
    with _locked(tools / f".{final.name}.lock"):
        if _usable(final):  # built by someone else while we waited
            return final / BINARY
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=tools))
        try:
            _compile(sources, src_dir, tmp, timeout)
            (tmp / COMMIT_FILE).write_text(commit + "\n")
            tmp.chmod(0o755)  # mkdtemp makes it private
            if final.exists():  # a folder left incomplete by hand: replace it whole
                shutil.rmtree(final)
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final / BINARY


def built(root: Path | None = None) -> Path | None:
    """The newest complete build under `<root>/.kb/tools/`, or None. Never compiles."""
    try:
        found = [d / BINARY for d in tools_dir(root).glob("onnx2ncnn-*") if d.is_dir() and _usable(d)]
    except OSError:
        return None
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def main(argv: list[str] | None = None) -> int:
    """`python -m kb.tools.build [onnx2ncnn] [--ncnn-src DIR]`: build, print the binary's path."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m kb.tools.build", description="Build onnx2ncnn into .kb/tools/.")
    p.add_argument("tool", nargs="?", default="onnx2ncnn", choices=["onnx2ncnn"])
    p.add_argument("--ncnn-src", type=Path, help="an ncnn git checkout to build from (default: $NCNN_SRC)")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    try:
        binary = build_onnx2ncnn(args.ncnn_src)
    except KBError as e:
        print(e, file=sys.stderr)
        return e.code
    commit = (binary.parent / COMMIT_FILE).read_text().strip()
    print(binary)
    print(f"onnx2ncnn from ncnn {commit[:7]} ({time.monotonic() - t0:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":  # standard library only: ./run runs it with the system's Python, beside pip
    sys.exit(main())
