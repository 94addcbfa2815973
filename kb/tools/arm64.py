"""An emulated arm64 CPU for the engines' own ARM kernels: qemu-user runs an aarch64 Python with the engine's
aarch64 wheel, so a check can ask for the CPU a phone has (`s.ncnn.run(..., cpu="cortex-a76")`,
`s.mnn.run(..., cpu="cortex-a76", precision="low")`).

ncnn and MNN pick their ARM code paths from the CPU's features at run time (fp16 arithmetic from ARMv8.2,
bf16, dot products), and qemu reports the features of the model it emulates. The pieces, all under
`<root>/.kb/tools/arm64/`:

    root/                     Debian bookworm's aarch64 Python 3.11 and the libraries it links, unpacked
                              (debootstrap's first stage only: no binfmt_misc needed, qemu -L finds them)
    site-<engine>-<version>/  the engine's aarch64 wheel of that version and numpy's, unpacked

`kb tools build arm64` makes them for the installed ncnn and MNN (downloads: Debian's packages and the
wheels); `runner()` says how to start a worker on an emulated CPU, or raises Unavailable saying how.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from kb import paths
from kb.engines.base import Unavailable
from kb.errors import KBError

QEMU = "qemu-aarch64-static"
SUITE = "bookworm"  # its python3.11 is the 3.11 the wheels are built for
PACKAGES = "python3.11-minimal,libpython3.11-stdlib,libx11-6"  # libX11: ncnn 1.0.20231027's aarch64 wheel links it
PYTHON = "usr/bin/python3.11"
HOW = "kb tools build arm64 (needs qemu-user-static and debootstrap: apt-get install qemu-user-static debootstrap)"


def home(root: Path | None = None) -> Path:
    return paths.state("tools", root) / "arm64"


WHEELS = {"ncnn": "ncnn", "mnn": "MNN"}  # engine -> its PyPI distribution (kb.engines.ENGINES)


def site(engine: str, version: str, root: Path | None = None) -> Path:
    return home(root) / f"site-{engine}-{version}"


def runner(cpu: str, engine: str, version: str) -> dict[str, Any]:
    """kb.child.run_function's python and env for a kb worker in an aarch64 Python on `cpu` (a qemu CPU
    model, e.g. cortex-a76) with `engine` at `version`. Importing numpy and the engine there takes seconds: the
    drivers preload them (kb.forkserver)."""
    qemu = shutil.which(QEMU)
    sysroot, pkgs = home() / "root", site(engine, version)
    if qemu is None or not (sysroot / PYTHON).is_file() or not pkgs.is_dir():
        raise Unavailable(f"{engine}: no emulated arm64 CPU with {engine} {version} here: {HOW}")
    kb = str(Path(__file__).resolve().parents[2])  # kb.child and the workers are pure Python
    return {"python": [qemu, "-cpu", cpu, "-L", str(sysroot), str(sysroot / PYTHON)],
            "env": {"PYTHONPATH": f"{kb}:{pkgs}"}}


def _run(argv: list[str], what: str) -> None:
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise KBError("kb tools build arm64", f"{what} failed: {(p.stderr or p.stdout).strip().splitlines()[-1:]}")


def root() -> Path:
    """Make the aarch64 Python, once. It needs no package of kb's (standard library only): `./run` makes it with
    the system's Python while pip installs kb's."""
    for tool in (QEMU, "debootstrap", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise KBError("kb tools build arm64", f"{tool} is not installed: apt-get install qemu-user-static debootstrap")
    base = home()
    base.mkdir(parents=True, exist_ok=True)
    sysroot = base / "root"
    stamp = sysroot / ".packages"  # a root made with other packages is made again
    if not (sysroot / PYTHON).is_file() or not stamp.is_file() or stamp.read_text() != PACKAGES:
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            _run(["debootstrap", "--foreign", "--arch=arm64", "--variant=minbase", f"--include={PACKAGES}", SUITE,
                  tmp], "debootstrap")
            # the first stage downloads and unpacks the base; the included packages are only downloaded
            for deb in sorted(Path(tmp, "var/cache/apt/archives").glob("*.deb")):
                _run(["dpkg-deb", "-x", str(deb), tmp], f"unpacking {deb.name}")
            Path(tmp, ".packages").write_text(PACKAGES)
            shutil.rmtree(sysroot, ignore_errors=True)
            os.rename(tmp, sysroot)
            os.mkdir(tmp)  # for TemporaryDirectory's cleanup
    return sysroot


def build(version: str | None = None, engine: str = "ncnn") -> Path:
    """Make the aarch64 Python (once) and the site of `engine` at `version` (default: the installed one)."""
    if engine not in WHEELS:
        raise KBError("kb tools build arm64", f"no aarch64 site for {engine!r}; known: {', '.join(WHEELS)}")
    version = version or importlib.metadata.version(WHEELS[engine])
    base = root().parent
    pkgs = site(engine, version)
    if not pkgs.is_dir():
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            wheels = Path(tmp, "wheels")
            numpy = importlib.metadata.version("numpy")
            _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                  "--python-version", "3.11", "--platform", "manylinux2014_aarch64", "--platform",
                  "manylinux_2_17_aarch64", "--platform", "manylinux_2_28_aarch64", "-d", str(wheels),
                  f"{WHEELS[engine]}=={version}", f"numpy=={numpy}"], "pip download of the aarch64 wheels")
            unpacked = Path(tmp, "site")
            for whl in wheels.glob("*.whl"):
                with zipfile.ZipFile(whl) as z:
                    z.extractall(unpacked)
            # extractall drops the execute bits; the wheels' shared libraries need none
            os.rename(unpacked, pkgs)
    return pkgs


if __name__ == "__main__":  # `python3 -m kb.tools.arm64`: the root only (./run, before .venv has kb's packages)
    try:
        print(root())
    except KBError as e:
        sys.exit(str(e))
